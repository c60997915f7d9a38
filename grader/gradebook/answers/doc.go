// Package answers reads what a learner answered out of a saved notebook's
// source, without running it: each lab.Check call's prediction (a number
// valued as the Go compiler values it), each lab.Try call's kernel (the
// declarations it needs, collected from every cell), the attempt records
// lab.Check left in the outputs, and the mentions of a call that would not
// run (in a comment, a markdown cell, a cell that does not compile). The
// gradebook grades what it finds (FindCalls); the calls it looks for are
// lab's, and TestReaderMatchesLab holds the two together.
//
// # What counts as a prediction
//
// A prediction is one call in a code cell, the question's id and a number
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
// Numbers are written with every digit they have (FormatNumber): a
// prediction of 123456789.125 is never rounded to 1.23457e+08.
package answers
