// Package lab is the course's notebook face: what a lesson's cells call,
// so that each cell stays a few lines long and imports only course
// packages and the standard library. It is the one package that talks to
// the notebook (GoNB's gonbui): the packages below it predict (sectors),
// measure (measure, cuda), compute figures (figures), draw (plots) and
// judge (grader), and lab shows what they give.
//
// A cell that measures asks Measure for the launches it wants. On a
// machine with an NVIDIA GPU and nvcc (and, for the counters, ncu) they
// run live; elsewhere they come from the recording built into the course,
// made on its H200 (package cuda/reference). Either way the result says which: its
// label is "live: NVIDIA H200, ..." or "recorded on NVIDIA H200,
// 2026-11-29", and every table and caption made from it repeats that
// label. A launch that is in neither place is an error that names it and
// lists what the recording holds, never a silent gap:
//
//	m := lab.Must(lab.Measure(lab.Spec(`{"kernel":"strided_copy","n":67108864,"stride":32}`)))
//	m.Show()
//
// The environment variable COALESCE_MEASURE (cuda.ModeEnv) picks the
// source: "live" insists on this machine's GPU, "recorded" on the
// recording, "none" measures nothing, "auto" or unset takes the GPU when
// there is one; "strict" is live with no stand-in for ncu's counters (a
// cell that would borrow them fails: make test-gpu). The verdicts of Check use the same source, so that a
// lesson's tables and its grades agree.
//
// Compare and ModelTable put the sector model beside the measurement, one
// row per Case and a model and a measured column per Column, each column
// a figure of lessons/figures; Versus sets two launches side by side per
// useful byte; Counters lays the model's counts beside ncu's. A Table
// renders as HTML in a GoNB notebook (with a plain-text twin, so that
// headless checks and text exports can read it) and as aligned text
// elsewhere. Explain prints which sectors one warp's lanes touch; Show,
// ShowWarp and ShowInstruction display the charts of lessons/plots.
// Status says, at the top of a lesson, what the model describes and where
// this notebook's measurements come from. On a live GPU the model
// describes that GPU (calibrate.Adopt: its calibration, else the profile
// its name matches, else the H200's), chosen as the source opens, so that
// a lesson that calls Status first parses every spec for it; with the
// recording, the course's H200.
//
// Check(id, prediction) records a learner's prediction and shows the
// verdict at once, in one line with the detail folded; `coalesce grade`
// later reads the same call from the saved notebook, so the prediction is
// a number written in the call, or the number with its unit in quotes
// ("32 sectors", "50%"), which both read with grader.ReadPrediction.
// Planted grades an exercise's own answer and a wrong one, to show that
// the grader tells them apart.
//
// Nothing a cell shows gives an answer away before the learner has
// predicted it: every display goes through one gate (gate.go), built of
// values that know what they are (grader.Tell: a figure of a launch, one
// warp instruction, a device fact), and a value that tells a question of
// this lesson or a later one that has no recorded attempt shows as
// Hidden, with a short note saying what to answer first; the rest of the
// table or chart still shows, and the next run after the answer shows it
// all. A cell's own numbers go through it too: Printf with Modelled and
// MeasuredValue cells. COALESCE_REVEAL=all opens the gate, for an
// instructor. Every output carries what it showed (grader.Shown), which
// the leak test of make test (cmd/leaks) reads.
//
// Functions that can fail return an error; Must turns one into the end of
// the cell, with the error printed, which is what a notebook wants. Spec
// does the same for the spec a cell writes.
//
// Without a GPU the tests exercise the recorded path, the error paths and
// the live path against a fake harness; on a GPU machine,
// COALESCE_LIVE_TEST=1 runs the kernels for real.
package lab
