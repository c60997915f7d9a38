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
// # Learner kernels, bounded
//
// Try runs a learner's Go kernel (and TryCUDA its Go twin) in a process
// of its own, so that no kernel can stall or take down the notebook's
// server, or a hub node's other learners: the cell's program started
// again (os.Executable, its arguments), with GoNB's pipes, the spec log
// and the attempt store left out of its environment, measuring from the
// recording only, on one processor. It runs the cell up to the same call
// (what that code prints again is dropped; it records and displays
// nothing), and there runs only the kernel, under limits it sets on
// itself before the kernel's first instruction (internal/rlimit):
//
//   - memory: TryLimits.Memory (COALESCE_TRY_MEMORY, default 512MiB) of
//     address space on top of what the Go runtime had mapped (RLIMIT_AS);
//     the heap's soft limit is three quarters of it, the stack's a
//     quarter;
//   - time: TryLimits.Timeout (COALESCE_TRY_TIMEOUT, default 10s) of wall
//     clock, watched from inside; its CPU time a little more
//     (RLIMIT_CPU); and, from outside, the process group killed at the
//     timeout plus ten seconds (to start, and to run the cell's code
//     before the call) and two;
//   - output: 64 KiB of each stream shown, the rest counted; files of at
//     most 64 MiB (RLIMIT_FSIZE), 256 descriptors, no core file.
//
// The child reports what the kernel did (the Outcome) on a pipe of its
// own, and the cell shows it as it would have in-process. A kernel the
// limits stop has an Outcome whose Fault is a *Stopped (ErrStopped),
// verdict "stopped", which says what happened and where the kernel was,
// read from its goroutine's stack: "The kernel did not finish after 10s
// and 0 accesses, none in its last 10s: a loop that never ends? It was
// at MyCopy line 4: for j := 0; j < k; j += 0 {". A loop that keeps
// accessing memory is simt's to stop, sooner (simt.ErrRunaway); a kernel
// that works outside its launch or hides a fault fails it there too
// (simt.ErrEscape, lessons/simt's doc). The child dies with the cell's
// program (an interrupted cell takes it along).
//
// The cell's code before the call runs twice, once in each process: a
// cell that calls Try after code with effects of its own (files it
// writes) repeats them; the course's cells call Try alone. A test binary
// runs Try in-process (started again, it would run its tests again), and
// so does a system other than Linux, where Try's kernel is unbounded.
//
// Without a GPU the tests exercise the recorded path, the error paths and
// the live path against a fake harness; on a GPU machine,
// COALESCE_LIVE_TEST=1 runs the kernels for real.
package lab
