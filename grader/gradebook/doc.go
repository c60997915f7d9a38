// Package gradebook grades a class's saved notebooks at once, for the
// instructor (`coalesce grade`): it finds every learner's predictions in
// their notebooks' source, asks the grader for each verdict, and writes a
// gradebook (CSV and JSON), the totals, the class's item analysis and
// summary, and a feedback file per learner.
//
// Grading never runs learner code, except with Options.RunKernels (see
// "Kernel exercises"). The notebooks are read as JSON, the Go
// in their code cells parsed with go/parser, and the predictions read from
// the source: a submission cannot change its own grade or touch the
// grading machine. Of the outputs saved in a notebook (which a learner
// could edit) only the attempt records are read (see "First attempts").
//
// # What counts as a prediction
//
// A prediction is one call in a code cell, the exercise's id and a number
// written in the call (lab.Check; grader.Check in notebooks saved from the
// course's first build):
//
//	%%
//	lab.Check("03-strided/sectors-stride-32", 32)
//
// The prediction is the call's second argument, read from the source and
// valued as the Go compiler valued it for the running notebook (the
// argument is a float64: package internal/constexpr does the compiler's
// constant arithmetic, and its tests hold it to go/types'), so that the
// gradebook agrees with what the learner's notebook showed:
//
//   - a number, signed or not, in any Go form: 32, -0.5, 1e3, 0x20, 1_000;
//   - a constant expression of numbers: + - * / % & | ^ &^ << >>,
//     parentheses, conversions to Go's numeric types and min and max, by
//     Go's rules for constants: 1<<5 is 32, 64/2 is 32, and 1/8 is 0
//     (untyped integer division; the note says so), while 1.0/8 and
//     float64(1)/8 are 0.125;
//   - anything else is unreadable, with the reason: a variable, a function
//     call, a string, a predeclared name the notebook declares anew (a
//     func max of its own), and what Go would not compile as a float64
//     (1<<600, 1e400, 1/0, int(3)): never a different number;
//   - a call that never ran is unreadable too: in a cell that does not
//     compile, or among statements with no %% (or %main) line above them,
//     which GoNB compiles as declarations and so fails. A call in a
//     function or a package-level var of a cell that compiles counts: GoNB
//     runs every cell that compiles (func main when the cell declares one);
//   - a call with other than two arguments, or an id that is not a string
//     literal, is unreadable.
//
// Calls are found wherever they are in a code cell (after %%, in a
// function, as an argument), under the name lab (or grader), any name a
// cell imports the package as, or bare after a dot import. A call in a comment,
// a markdown or raw cell, or a cell GoNB does not compile as Go
// (%%writefile, %%bash...) is not graded; the gradebook's note points to
// it. Cells are found in any order and split any way: only their source
// matters, not their place.
//
// The placeholder a lesson ships, lab.Check(id, lab.YourPrediction), is no
// prediction: the exercise is missing, and the note says the placeholder
// is still there. So is a 0 that is the course's first build's template:
// those notebooks shipped lab.Check(id, 0) (grader.Check in the very
// first), and a 0 counts as "missing (untouched template)" when the cell
// is byte for byte as shipped (firstbuild.go lists the cells) and the
// notebook holds no attempt record showing an attempt at the exercise.
// A 0 in a cell the learner changed, or one the attempt record shows was
// run, is a prediction.
//
// Numbers are written as lessons/units writes them: a prediction with
// every digit it has (units.Exact in the CSV and JSON files,
// units.AsWritten, with separators, in the markdown), so that
// 123456789.125 is never rounded to 1.23457e+08; points and percentages
// as units.Points and units.Percent.
//
// # First attempts
//
// Every lab.Check that ran with a real prediction puts an attempt record
// in its cell's output (package internal/attempt, MIME type
// application/vnd.coalesce.attempt+json): the exercise's first prediction
// and time, the number of attempts, the last. The gradebook reports the
// record's first prediction and count (columns first_attempt and
// attempts; the note says when the first differs from the graded one:
// a learner who ran 0 and then copied the answer). With
// Options.FirstAttempt (`coalesce grade -first-attempt`) the first
// attempt is what is graded. A record is evidence, not proof: it lives in
// the notebook's outputs, which the learner can edit or clear; a notebook
// saved without outputs has none, and its source's prediction is graded.
//
// When a learner has several calls for one exercise (in one notebook or
// across notebooks), the first whose prediction can be read counts, in the
// order of notebooks (see "Who a submission belongs to"), then cells, then
// lines; the note lists the others. The first is the prediction made before the answer was seen.
//
// # Kernel exercises
//
// A kernel exercise is a call lab.Try("10-kernels/ID", myKernel) whose
// second argument names a func of the notebook: the learner's kernel. Its
// grade comes from running it, which only Options.RunKernels (`coalesce
// grade -kernels`) does, through package sandbox: the kernel's source is
// the top-level declarations it names, transitively (a type with its
// methods), collected from every code cell that compiles as declarations,
// the last definition of a name winning as in GoNB, with the imports they
// use (Try.Source); the sandbox vets it, builds it and runs it in a child
// process with limits, and its report is the row: right when it passes,
// with its points; wrong when it does not, or runs out of time or memory,
// or crashes; unreadable when refused or not compiling; ungraded when the
// grading machine fails. Each of Options.KernelExercises has a row per
// learner and counts in the points possible; the first Try call of a
// learner's that can be graded, in the order of their notebooks, counts.
//
// # Who a submission belongs to
//
// Where the file is, never what it says (Identify): in the layout of a hub,
// SUBMISSIONS/<learner>/..., the first folder below the directory given to
// `coalesce grade` is the learner (SUBMISSIONS/ada/03-strided.ipynb and
// SUBMISSIONS/ada/old/x.ipynb are ada's); in a flat one the file name is
// (SUBMISSIONS/ada.ipynb is ada's), except a lesson's own file name or
// Untitled, which are the folder's (`coalesce grade SUBMISSIONS/ada`).
// The names in a notebook's metadata (metadata.coalesce.learner,
// metadata.authors) are kept as Submission.Claimed: one that is another
// learner, or not this one, flags the notebook (FlagPossibleCopy, "possible
// copy: metadata names bob" in its rows' notes) and changes nothing else.
// Every learner found in the tree has rows.
//
// Of a learner's notebooks of one lesson, the lesson's own (01-sectors.ipynb)
// is graded (RoleGraded); the others (01-sectors-Copy1.ipynb, an
// Untitled.ipynb whose calls are lesson 01's) are duplicates
// (RoleDuplicate): listed in the graded rows' notes, flagged, and used
// only for an exercise the lesson's notebook has no readable call for.
// "First" among a learner's calls means graded notebooks first, then the
// earliest first attempt recorded, then path; never path alone.
//
// # What is opened
//
// Only regular files, and symbolic links to regular files inside the
// directory given: a named pipe, socket, device, directory named *.ipynb,
// a link out of the directory, dangling or looping, is a bad-notebook row
// (FlagNotRegular) and is never opened, so that nothing can hang the batch.
// Files are read as a stream: outputs (plots, logs) pass without being held,
// except the small attempt records; a file over DefaultMaxBytes (256 MiB, a
// safety bound) is a row saying so (FlagTooLarge). The batch has a deadline
// (`coalesce grade -timeout`, DefaultTimeout): a notebook not read by then
// is a row saying so (FlagTimeout).
//
// # The assignment and the totals
//
// The exercises graded are those of Options.Lessons, or of the whole bank:
// never only the lessons a batch happened to touch, so that the points
// possible (Gradebook.PointsPossible, every total's max_points) are the
// assignment's, and a learner who did not submit a lesson has 0 of its
// points. totals.csv opens with a "Points Possible" row (Canvas's layout;
// delete it for an importer that wants learners only), then one row per
// learner, the id first. Each total has a status (LearnerStatus: missing,
// unreadable, flagged, partial, graded, the first that applies) and flags
// saying why; one function, learnerStatus, decides it, from the rows, the
// submissions and the roster. submitted is the newest file modification
// time of the learner's notebooks; last_run the latest time an attempt
// record of theirs holds (the saved outputs: learner-editable, and empty
// when cleared). Both RFC 3339, UTC.
//
// With Options.Roster (ReadRoster) the class is the roster's: a learner
// on it without a notebook has a missing row per exercise and 0 points; a
// learner found but not on it is graded and flagged. Options.Overrides
// (ReadOverrides) set a learner's points on an exercise after grading: the
// verdict stays the grader's, the note and the feedback say "points set
// by the instructor: P of M — reason"; Grade refuses an override of an
// unknown learner or exercise, or with points outside 0 to the exercise's.
//
// # CSV and spreadsheets
//
// Every text cell of the CSV files (names, paths, notes, predictions as
// written) that a spreadsheet would run as a formula — it starts, after
// any spaces, with =, +, -, @, a tab or a carriage return — gets a leading
// single quote and is quoted (SafeText; OWASP's advice on CSV injection).
// Numbers are written from the gradebook's float64s, never from learner
// text, as the shortest decimal that reads back the same: -0.5 stays a
// number. Markdown (feedback, summary) shows learner text as text: HTML's
// < > & and table pipes are escaped.
//
// # JSON schema
//
// gradebook.json, written by (*Gradebook).WriteJSON, is one object:
//
//	{
//	  "course": "coalesce",
//	  "measurement_source": "recorded on NVIDIA H200, 2026-11-29",  // or "none: <why>"
//	  "lessons": ["03-strided", ...],           // the lessons graded
//	  "assignment": "03-strided+05-aos-soa",   // Options.Assignment, or the lessons joined
//	  "points_possible": number,                // the graded exercises' points
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
//	    "measurement_source", "verdict", "points", "max_points", "note",
//	    "first_attempt": number | null, "attempts": int, // from the attempt record; 0: none
//	    "override": null | {"learner", "exercise", "points", "reason", "line"}
//	  }],
//	  "totals": [{"learner", "identity_from", "assignment", "points", "max_points", "percent",
//	    "status": "graded" | "partial" | "flagged" | "unreadable" | "missing",
//	    "flags": [string] | null,
//	    "submitted": "2026-12-01T10:00:00Z" | "", "last_run": RFC 3339 | "",
//	    "notebooks": int}],
//	  "items": [{                               // item_analysis.csv, one per exercise
//	    "exercise", "lesson", "max_points", "learners", "answered", "right", "wrong",
//	    "missing", "unreadable", "overridden",
//	    "median_prediction": number | null, "model_answer", "measured_answer": number | null,
//	    "common_wrong": number | null, "common_wrong_count": int,
//	    "misconception": string                 // the grader's hints on common_wrong; "" none
//	  }],
//	  "notebooks": int, "bad_notebooks": int
//	}
//
// verdict is one of right, wrong, ungraded, missing, unreadable,
// unknown-exercise, bad-notebook (see Status).
package gradebook
