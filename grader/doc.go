// Package grader judges learners' predictions against the sector model
// and against measurements: it holds the question bank, computes each
// question's answer key, and turns a prediction into a verdict with the
// explanation built for its case. It runs no notebook and reads none: the
// notebook face (lab.Check) asks it for verdicts as a learner predicts,
// and batch grading (grader/gradebook) asks it for the same verdicts when
// an instructor grades the saved notebooks.
//
//	g, _ := grader.New(grader.Options{Measurer: m}) // m: a measure.Measurer
//	v := g.Grade("03-strided/sectors-stride-32", 32)
//	fmt.Print(v) // or v.HTML() in a notebook
//
// # The question bank
//
// The questions are data, questions.json, embedded and validated when first
// used (ParseBank): an id (LESSON/NAME, stable once published), its
// text, the spec(s) of lessons/spec the answer is computed from, the
// quantity computed (the name of a figure of lessons/figures: an ncu metric,
// or one such as ld_sectors_per_request, efficiency, useful_bandwidth; of
// one spec, or the ratio of two), which answer grades it (model or
// measurement), the tolerances and the points. No answer is typed in the
// bank: keys are computed by lessons/sectors and lessons/figures, and read
// from the measurement when grading.
//
// To add a question: one entry in questions.json. ParseBank refuses an
// unknown figure, a spec that does not parse, an exact tolerance on a
// figure the model only estimates, or a ratio without two specs, naming
// the question; TestPublishedIDs keeps published ids from disappearing.
//
// # Verdicts
//
// A verdict is right or wrong against the model, exactly for the L1 counts
// and within a stated relative tolerance otherwise; within tolerance or not
// against the measurement, naming where it comes from ("live: NVIDIA H200,
// ..." or "recorded on NVIDIA H200, <date>"); and an explanation: the
// addresses of one warp's lanes, the sectors they touch, the arithmetic
// that gives the answer, and where model and measurement disagree, why.
//
// A verdict opens with one line, Headline: right or wrong, the
// prediction, the answer that grades and the one reason; the rest (the
// other answer, for information, the hints and the explanation of the
// question's own quantity) is detail a notebook folds. A prediction may be
// written as text with its unit, "32 sectors", "50%", "3.1x":
// ReadPrediction is the one reader of it, for lab and the gradebook.
//
// # What gives an answer away
//
// Tells says whether a value a display shows (a Tell) gives a question's
// answer away: a figure of the question's figure's family on a launch
// with the same counts, one warp instruction that is the question's
// warp, or what its told_by lists. A Gate guards the questions of a
// lesson and the later ones that the learner has not answered; lab
// withholds what it says, and the leak test (cmd/leaks) holds executed
// notebooks to it. tells.json keeps the model's counts of every
// question's launches, which the relation compares.
//
// A question graded by the measurement when there is none is not graded:
// its verdict shows the model's answer for information, and it counts for
// neither points nor maximum.
package grader
