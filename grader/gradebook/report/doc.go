// Package report writes a graded class (a *gradebook.Gradebook) out for
// the instructor: gradebook.csv (a row per learner and question or kernel
// exercise), totals.csv, item_analysis.csv, gradebook.json, the class
// summary and a feedback file per learner (WriteDir writes them all).
// Learner text is shown, never run: CSV cells go through package csvsafe,
// markdown escapes HTML and table pipes.
//
// # CSV and spreadsheets
//
// Every text cell of the CSV files (names, paths, notes, predictions as
// written) that a spreadsheet would run as a formula — it starts, after
// any spaces, with =, +, -, @, a tab or a carriage return — gets a leading
// single quote and is quoted (csvsafe.Safe; OWASP's advice on CSV injection).
// Numbers are written from the gradebook's float64s, never from learner
// text, as the shortest decimal that reads back the same: -0.5 stays a
// number. Markdown (feedback, summary) shows learner text as text: HTML's
// < > & and table pipes are escaped.
//
// # JSON schema
//
// gradebook.json, written by WriteJSON, is one object:
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
// unknown-exercise, bad-notebook, ignored (see Status).
package report
