// Package lab is what the course's notebook cells call, so that each cell
// stays a few lines long and imports only course packages and the
// standard library.
//
// A cell that measures asks Measure for the launches it wants. On a
// machine with an NVIDIA GPU, nvcc (and, for the counters, ncu) the
// launches run live; elsewhere they come from the reference recorded on the
// course's H200 (cuda.Recorded). Either way the result says which: its
// Source is "live: NVIDIA H200, ..." or "recorded on NVIDIA H200,
// 2026-11-29", and every table and caption made from it repeats that label.
// A launch that is in neither place is an error that names it and lists
// what the reference holds, never a silent gap:
//
//	m := lab.Must(lab.Measure(lab.Spec(`{"kernel":"strided_copy","n":67108864,"stride":32}`)))
//	m.Show()
//
// The environment variable COALESCE_MEASURE (the grader's, MeasureEnv)
// picks the source: "live" insists on this machine's GPU, "recorded" on the
// reference, "auto" or unset takes the GPU when there is one.
//
// Compare and ModelTable put the sector model (lessons/sectors) beside the
// measurement, one row per Case and a model and a measured column per
// Column; Table renders as HTML in a GoNB notebook (with a plain-text twin,
// so that headless checks and text exports can read it) and as aligned text
// elsewhere. Explain prints which sectors one warp's lanes touch. Status
// says, at the top of a lesson, what the model describes and where this
// notebook's measurements come from; Planted grades an exercise's own
// answer and a wrong one, to show that the grader tells them apart.
//
// Without a GPU the tests exercise the recorded path and the error paths
// (and the live path against a fake harness); on a GPU machine,
// COALESCE_LIVE_TEST=1 runs the kernels for real (testdata/gpu_live_run.txt
// is such a run on the course's H200).
//
// Functions that can fail return an error; Must turns one into the end of
// the cell, with the error printed, which is what a notebook wants. Spec
// does the same for the spec a cell writes.
package lab
