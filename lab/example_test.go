package lab_test

import (
	"os"

	"github.com/coalescing-course/coalesce/cuda"
	"github.com/coalescing-course/coalesce/lab"
)

// A learner's cell is one call: the exercise and the prediction, a number
// written in the call. Outside a notebook the verdict prints as text.
func ExampleCheck() {
	os.Setenv(cuda.ModeEnv, "none") // this example shows the model's verdict only
	lab.Check("01-sectors/sectors-float", 4)
	// Output:
	// RIGHT 01-sectors/sectors-float (1 of 1 point): your 4; the answer is 4 sectors per request (the model's, exact): warp 0's load touches 4 sectors for its 128 bytes.
	// A warp of coalesced_copy loads 32 consecutive 4-byte floats, one per lane. How many 32-byte sectors does that one load request touch?
	//   model            4 sectors per request: grades, exact: right
	//   measured         none: lab: cuda: no measurement source: COALESCE_MEASURE=none
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
	// No measured answer: lab: cuda: no measurement source: COALESCE_MEASURE=none.
}
