// Package reference is the course's recording: the sweep the lessons use
// (sweep.jsonl), measured on the course's NVIDIA H200 with the harness and
// Nsight Compute, kept as a run file with its provenance (h200.jsonl) and
// built into every binary, so that a machine without a GPU shows real
// measurements, labelled as recorded:
//
//	set, err := reference.Recorded() // "recorded on NVIDIA H200, 2026-11-29"
//	m, err := reference.Measurer("no GPU here: nvcc not found on PATH")
//
// h200.jsonl is written by
//
//	coalesce run -ncu -record cuda/reference/h200.jsonl cuda/reference/sweep.jsonl
//
// on a machine with an H200, nvcc and ncu (make reference), and never
// edited by hand. Its readers are the live GPU (package cuda, which takes
// a launch's counters from it when the driver refuses them to ncu), the
// choice of live or recorded (cuda.OpenMeasurer), and what grades or
// compares without a GPU. The other files here are recordings that tests
// and the calibration read by path: l2edge.jsonl, time.jsonl and
// writeback.jsonl (runs/ has the scripts that made them).
package reference

import (
	"bytes"
	_ "embed"
	"fmt"
	"sync"

	"github.com/coalescing-course/coalesce/lessons/measure"
)

// name is the recording's file name in its messages, as it was when the
// recording was read from package cuda's folder.
const name = "reference/h200.jsonl"

//go:embed h200.jsonl
var h200 []byte

// Recorded returns the recording built into the course: launches measured
// on its H200, whose origin is measure.Recorded.
var Recorded = sync.OnceValues(func() (*measure.Set, error) {
	set, err := measure.ReadSet(bytes.NewReader(h200), name, measure.Origin{Kind: measure.Recorded})
	if err != nil {
		return nil, err
	}
	if set.Provenance == nil {
		return nil, fmt.Errorf("reference: %s has no provenance", name)
	}
	return set, nil
})

// Measurer returns the recording as a measure.Measurer that looks launches
// up instead of running them; why, when not "", says why it stands in for
// a live GPU (the Origin's Why).
func Measurer(why string) (measure.Measurer, error) {
	set, err := Recorded()
	if err != nil {
		return nil, err
	}
	with := *set
	with.Origin.Why = why
	return measure.FromSet(&with), nil
}
