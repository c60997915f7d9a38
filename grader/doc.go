// Package grader checks learners' predictions against the sector model and
// against measurements, at once in the notebook and afterwards for the
// instructor.
//
// Grading never runs learner code. In the notebook, Check is called by the
// learner's own cell and judges the number it is given. For the instructor,
// `coalesce grade` reads saved notebooks as JSON, parses the Go in their code
// cells with go/parser and reads the predictions from the source: a
// submission cannot change its own grade or touch the grading machine, and
// the outputs saved in a notebook (which a learner could edit) are never
// read.
//
// # In a notebook
//
// A prediction is one call, with the exercise's id and a number written in
// the call:
//
//	%%
//	grader.Check("03-strided/sectors-stride-32", 32)
//
// The verdict shows at once (HTML in GoNB, text elsewhere): right or wrong
// against the model, exactly for the L1 counts and within a stated relative
// tolerance otherwise; within tolerance or not against the measurement,
// naming it ("live GPU: NVIDIA H200" or "recorded on NVIDIA H200, <date>");
// and an explanation built for the case: the addresses of one warp's lanes,
// the sectors they touch, the arithmetic that gives the answer, and where
// model and measurement disagree, why. The measurement comes from this
// machine's GPU when it can measure, else from the H200 reference built
// into the course; COALESCE_MEASURE (MeasureEnv) picks one.
//
// # The exercise bank
//
// The exercises are data, exercises.json, embedded and validated when first
// used (ParseBank): an id (LESSON/NAME, stable once published), the
// question, the spec(s) of lessons/spec the answer is computed from, the
// quantity computed (an ncu metric of lessons/metrics, or one of
// ld_sectors_per_request, st_sectors_per_request, efficiency,
// dram_bytes_per_useful_byte, time_seconds, useful_bandwidth,
// fraction_of_memcpy; of one spec, or the ratio of two), which answer grades
// it (model or measurement), the tolerances and the points. No answer is
// typed in the bank: keys are computed by lessons/sectors and read from the
// measurement when grading.
//
// An exercise graded by the measurement when there is none is not graded:
// its verdict shows the model's answer for information, and it counts for
// neither points nor maximum.
//
// # What counts as a prediction
//
// The second argument of a Check call, read from the source:
//
//   - a number, signed or not: 32, -0.5, 1e3, 0x20;
//   - arithmetic on numbers (+ - * / % and parentheses), evaluated with Go's
//     own rules for untyped constants, so that the gradebook agrees with
//     what the learner's notebook showed: 64/2 is 32, and 1/8 is 0 (integer
//     division; the note says so), while 1.0/8 is 0.125;
//   - anything else is unreadable, with the reason: a variable, a function
//     call or conversion, a string, a call in a cell that does not compile
//     (such a call never ran), a call with other than two arguments, an id
//     that is not a string literal.
//
// Calls are found wherever they are in a code cell (after %%, in a
// function, as an argument), under the name grader, any name a cell
// imports the package as, or bare after a dot import. A call in a comment,
// a markdown or raw cell, or a cell GoNB does not compile as Go
// (%%writefile, %%bash...) is not graded; the gradebook's note points to
// it. Cells are found in any order and split any way: only their source
// matters, not their place.
//
// When a learner has several calls for one exercise (in one notebook or
// across notebooks), the first whose prediction can be read counts, in the
// order of notebook paths, then cells, then lines; the note lists the
// others. The first is the prediction made before the answer was seen.
//
// # Who a submission belongs to
//
// Identify: metadata.coalesce.learner, else the first name of
// metadata.authors, else the first folder below the directory given to
// `coalesce grade` (SUBMISSIONS/ada/03-strided.ipynb is ada's), else the
// file name without .ipynb (SUBMISSIONS/ada.ipynb is ada's). A notebook
// named by its folder (one that cannot be read has no metadata) takes the
// name its folder's other notebooks agree on.
//
// # JSON schema
//
// gradebook.json, written by (*Gradebook).WriteJSON, is one object:
//
//	{
//	  "course": "coalesce",
//	  "measurement_source": "recorded on NVIDIA H200, 2026-11-29",  // or "none: <why>"
//	  "lessons": ["03-strided", ...],           // the lessons graded
//	  "exercises": [{                           // their exercises, with the keys
//	    "id", "lesson", "question", "unit",
//	    "graded_by": "model" | "measurement",
//	    "graded": bool,                         // false: measured, no measurement
//	    "points", "model_answer",
//	    "measured_answer": number | null,
//	    "tolerance": number                     // of the answer that grades
//	  }],
//	  "rows": [{                                // as gradebook.csv, one per learner × exercise
//	    "learner", "notebook", "exercise", "lesson",
//	    "prediction": number | null, "prediction_text": "64/2",
//	    "model_answer": number | null, "measured_answer": number | null,
//	    "measurement_source", "verdict", "points", "max_points", "note"
//	  }],
//	  "totals": [{"learner", "identity_from", "points", "max_points", "percent"}],
//	  "notebooks": int, "bad_notebooks": int
//	}
//
// verdict is one of right, wrong, ungraded, missing, unreadable,
// unknown-exercise, bad-notebook (see Status).
package grader
