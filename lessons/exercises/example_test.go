package exercises_test

import (
	"encoding/json"
	"fmt"

	"github.com/coalescing-course/coalesce/lessons/exercises"
	"github.com/coalescing-course/coalesce/lessons/simt"
)

// A learner's fix of the strided copy, run on the default variant: each
// thread takes the elements a grid apart, so a warp's 32 lanes copy 32
// neighbouring floats at each step.
func Example() {
	e, err := exercises.Lookup("10-kernels/strided-copy")
	if err != nil {
		fmt.Println(err)
		return
	}
	fix := func(t *simt.Thread, in, out *simt.Global[float32], n, k int) {
		i := t.BlockIdx.X*t.BlockDim.X + t.ThreadIdx.X
		for j := range k {
			if e := j*t.GridDim.X*t.BlockDim.X + i; e < n {
				out.Store(t, e, in.Load(t, e))
			}
		}
	}
	v := e.Variant("")
	for _, kernel := range []any{e.Starter, fix} {
		out, err := e.Run(v, kernel)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(v, "correct:", out.Correct, "pass:", out.Pass)
		for _, t := range out.Targets {
			fmt.Printf("  %s: %.0f, want at most %.0f\n", t.Metric, t.Got, t.Want)
		}
	}
	// Output:
	// n=100000 k=8 correct: true pass: false
	//   l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum: 100000, want at most 12500
	//   l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum: 100000, want at most 12500
	// n=100000 k=8 correct: true pass: true
	//   l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum: 12500, want at most 12500
	//   l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum: 12500, want at most 12500
}

// Grade's report on the starter of the AoS exercise, as a sandbox prints
// it: right output, the load target missed, and why.
func ExampleGrade() {
	e, _ := exercises.Lookup("10-kernels/aos-soa")
	rep := exercises.Grade(e.ID, "", e.Starter)
	rep.Targets = rep.Targets[:1]
	b, _ := json.MarshalIndent(rep, "", "  ")
	fmt.Println(string(b))
	// Output:
	// {
	//   "id": "10-kernels/aos-soa",
	//   "learner": "",
	//   "params": {
	//     "fields": 4,
	//     "fv": 3,
	//     "fx": 0,
	//     "n": 32768
	//   },
	//   "correct": true,
	//   "mismatch": null,
	//   "targets": [
	//     {
	//       "metric": "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
	//       "want": 8192,
	//       "got": 32768,
	//       "pass": false,
	//       "why": "aos.Load at starters.go:24 (4 B a lane): 16 sectors a request, where its 32 lanes' bytes fill 4: in warp 0 the lanes are 16 B apart, so a 32-byte sector holds 2 lanes' bytes where it could hold 8"
	//     }
	//   ],
	//   "pass": false,
	//   "points": 2,
	//   "max_points": 3,
	//   "error": ""
	// }
}

// A kernel of the wrong type is refused with both types named.
func ExampleExercise_Run_wrongSignature() {
	e, _ := exercises.Lookup("10-kernels/strided-copy")
	_, err := e.Run(e.Variant("ada"), func(t *simt.Thread, in, out *simt.Global[float32], n int) {})
	fmt.Println(err)
	// Output:
	// exercises: 10-kernels/strided-copy: kernel is func(*simt.Thread, *simt.Global[float32], *simt.Global[float32], int), want func(t *simt.Thread, in, out *simt.Global[float32], n, k int)
}
