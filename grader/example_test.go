package grader_test

import (
	"fmt"

	"github.com/coalescing-course/coalesce/grader"
	"github.com/coalescing-course/coalesce/lessons/measure"
	"github.com/coalescing-course/coalesce/lessons/metrics"
	"github.com/coalescing-course/coalesce/lessons/spec"
)

// A verdict against the model alone, as text: the judgement, then the
// explanation built for the case.
func ExampleGrader_modelOnly() {
	g, _ := grader.New(grader.Options{NoMeasurer: "COALESCE_MEASURE=none"})
	fmt.Print(g.Grade("01-sectors/sectors-float", 4))
	// Output:
	// RIGHT 01-sectors/sectors-float (1 of 1 point): your 4; the answer is 4 sectors per request (the model's, exact): warp 0's load touches 4 sectors for its 128 bytes.
	// A warp of coalesced_copy loads 32 consecutive 4-byte floats, one per lane. How many 32-byte sectors does that one load request touch?
	//   model            4 sectors per request: grades, exact: right
	//   measured         none: COALESCE_MEASURE=none
	//
	// One warp of coalesced_copy
	// Warp 0 (threads 0–31) issues 1 load:
	// load in[t], 4 bytes a lane; byte offsets from the start of in:
	//   lanes  0– 7:   0   4   8  12  16  20  24  28
	//   lanes  8–15:  32  36  40  44  48  52  56  60
	//   lanes 16–23:  64  68  72  76  80  84  88  92
	//   lanes 24–31:  96 100 104 108 112 116 120 124
	//   → 4 sectors (1 128-byte line): 0, 1, 2, 3
	//   → 32 of each sector's 32 bytes used (sector k holds bytes 32k to 32k+31)
	//   → 128 bytes used of 4 × 32 = 128 fetched: 100%
	//
	// The arithmetic
	// coalesced_copy: 1 load request a warp, touching 4 sectors a warp: 4 sectors per request.
	//
	// Model and measurement
	// No measured answer: COALESCE_MEASURE=none.
}

// A Grader takes its measurements from any source; here a recording of
// what ncu counted for one launch.
func ExampleGrader_Grade() {
	s, _ := spec.Parse([]byte(`{"kernel":"strided_copy","n":67108864,"stride":32}`))
	gpu := measure.FromSet(&measure.Set{
		Origin:   measure.Origin{Kind: measure.FromFile, File: "example.jsonl"},
		Launches: []measure.Launch{{Spec: s, Verified: true, Metrics: metrics.Set{metrics.LdRequests: 65536, metrics.LdSectors: 2097152}}},
	})
	g, _ := grader.New(grader.Options{Measurer: gpu})

	v := g.Grade("03-strided/sectors-stride-32", 8)
	fmt.Println("right:", v.Right, "points:", v.Points, "of", v.MaxPoints)
	fmt.Println("model:", v.Model.Value, "measured:", v.Measurement.Value, "from", v.Origin)
	// Output:
	// right: false points: 0 of 1
	// model: 32 measured: 32 from measured in example.jsonl (no provenance)
}
