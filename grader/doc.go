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
// A question graded by the measurement when there is none is not graded:
// its verdict shows the model's answer for information, and it counts for
// neither points nor maximum.
package grader
