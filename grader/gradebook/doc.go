// Package gradebook grades a class's saved notebooks at once, for the
// instructor (`coalesce grade`): given the learners' submissions (package
// intake: which files, whose, read) and what each answered (package
// answers: the predictions and kernels in their notebooks' source), it
// asks the grader for each verdict, runs the kernels in the sandbox when
// asked, and totals the class: a Gradebook of rows, totals and the item
// analysis, which package report writes out (the gradebook as CSV and
// JSON, the totals, the items, the summary and a feedback file per
// learner).
//
// Grading never runs learner code, except with Options.RunKernels (see
// "Kernel exercises"). The notebooks are read as JSON, the Go
// in their code cells parsed with go/parser, and the predictions read from
// the source: a submission cannot change its own grade or touch the
// grading machine. Of the outputs saved in a notebook (which a learner
// could edit) only the attempt records and the learner names lab prints
// are read (see "First attempts" and "Who a submission belongs to").
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
package gradebook
