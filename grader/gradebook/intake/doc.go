// Package intake decides which files of a batch are a class's notebooks,
// whose each one is, and reads them within limits, for the gradebook: the
// files given (Collect), the learner each belongs to (Identify), each
// notebook read and its answers found (Reader, package answers), and the
// roles of a learner's notebooks of one lesson (Settle).
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
// So does what the saved outputs carry of another learner's run (what the
// course writes, where the metadata is the notebook tool's): the same
// attempt record, a first prediction stamped to the nanosecond, in two
// learners' notebooks flags both, each naming the other; outputs showing
// another learner of the batch by name, lab's "(learner ada)" under a
// kernel exercise, flag the notebook that shows it.
// Every learner found in the tree has rows.
//
// A notebook that is not the course's (no metadata.coalesce, no import of
// the course, no Check call: JupyterLab's Untitled.ipynb; or a notebook of
// another kernel that names nothing of the course) is not graded and is no
// failure: Submission.Ignored, a row with verdict ignored, and a learner
// with only such notebooks is missing, not unreadable.
//
// Of a learner's notebooks of one lesson, the lesson's own (01-sectors.ipynb)
// is graded (RoleGraded); the others (01-sectors-Copy1.ipynb, an
// Untitled.ipynb whose calls are lesson 01's) are duplicates
// (RoleDuplicate): listed in the graded rows' notes, flagged, and used
// only for an exercise the lesson's notebook has no readable call for. A
// duplicate with nothing of the learner's in it (placeholders only, no
// attempt record, no kernel: the course's new version that
// scripts/course_home.sh offers beside an edited lesson) is not flagged.
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
// except the small attempt records and text/plain within 1 MiB (the names
// lab prints); a file over DefaultMaxBytes (256 MiB, a
// safety bound) is a row saying so (FlagTooLarge). The batch has a deadline
// (`coalesce grade -timeout`, DefaultTimeout): a notebook not read by then
// is a row saying so (FlagTimeout).
package intake
