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
	// 01-sectors/sectors-float: RIGHT (1 of 1 point, graded against the model)
	// A warp of coalesced_copy loads 32 consecutive 4-byte floats, one per lane. How many 32-byte sectors does that one load request touch?
	//   your prediction  4
	//   model            4 sectors per request, exact: right
	//   measured         none: lab: cuda: no measurement source: COALESCE_MEASURE=none
	//
	// One warp of coalesced_copy
	// Spec: {"kernel":"coalesced_copy","n":67108864,"block":256,"elem_bytes":4,"l2_fetch_granularity":64,"device":"h200"}
	// Warp 0 of block 0 (threads 0–31) issues 2 memory instructions:
	// load in[t], 4 bytes a lane; byte offsets from the start of in:
	//   lanes  0– 7:   0   4   8  12  16  20  24  28
	//   lanes  8–15:  32  36  40  44  48  52  56  60
	//   lanes 16–23:  64  68  72  76  80  84  88  92
	//   lanes 24–31:  96 100 104 108 112 116 120 124
	//   → 4 sectors (1 128-byte line): 0, 1, 2, 3
	//   → 32 of each sector's 32 bytes used (sector k holds bytes 32k to 32k+31)
	//   → 128 bytes used of 4 × 32 = 128 fetched: 100%
	// (1 more instruction not shown: the question counts loads only.)
	//
	// The arithmetic
	// coalesced_copy launches 67,108,864 threads in 262,144 blocks of 256: 2,097,152 warps.
	// The model counts 8,388,608 load sectors in 2,097,152 load requests: 8,388,608 ÷ 2,097,152 = 4 sectors per request.
	//
	// Model and measurement
	// No measured answer: lab: cuda: no measurement source: COALESCE_MEASURE=none.
}
