package simt_test

import (
	"fmt"

	"github.com/coalescing-course/coalesce/lessons/metrics"
	"github.com/coalescing-course/coalesce/lessons/simt"
)

// A strided copy, thread t copying element t*stride: the lanes of a warp
// spread over stride times the bytes, and each request touches more
// sectors, until every lane has a sector of its own (stride 8 floats = 32
// bytes).
func Example_stridedCopy() {
	const n = 1 << 14
	in, out := simt.NewGlobal("in", make([]float32, n)), simt.NewGlobal("out", make([]float32, n))
	for _, stride := range []int{1, 2, 4, 8, 32} {
		kernel := func(t *simt.Thread) {
			if i := (t.BlockIdx.X*t.BlockDim.X + t.ThreadIdx.X) * stride; i < n {
				out.Store(t, i, in.Load(t, i))
			}
		}
		threads := n / stride
		r, err := simt.Launch{Grid: simt.Dim{X: (threads + 255) / 256}, Block: simt.Dim{X: 256}}.Run(kernel)
		if err != nil {
			fmt.Println(err)
			return
		}
		m := r.Modelled.Metrics
		fmt.Printf("stride %2d: %4.0f requests, %4.1f sectors per request\n", stride, m[metrics.LdRequests], m[metrics.LdSectors]/m[metrics.LdRequests])
	}
	// Output:
	// stride  1:  512 requests,  4.0 sectors per request
	// stride  2:  256 requests,  8.0 sectors per request
	// stride  4:  128 requests, 16.0 sectors per request
	// stride  8:   64 requests, 32.0 sectors per request
	// stride 32:   16 requests, 32.0 sectors per request
}

// Divergence: odd and even lanes take different branches, so each branch's
// load is an instruction of 16 lanes, issued once per warp for each side.
func Example_divergence() {
	in, out := simt.NewGlobal("in", make([]float32, 64)), simt.NewGlobal("out", make([]float32, 64))
	r, err := simt.Launch{Grid: simt.Dim{X: 1}, Block: simt.Dim{X: 64}}.Run(func(t *simt.Thread) {
		i := t.ThreadIdx.X
		if i%2 == 0 {
			out.Store(t, i, in.Load(t, i))
		} else {
			out.Store(t, i, -in.Load(t, i))
		}
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, s := range r.Divergent() {
		fmt.Printf("%s.Store=%v: %d instructions, %d lanes each, first mask %#08x\n",
			s.Buffer, s.Store, s.Instructions, s.Lanes/s.Instructions, s.FirstPartial.Active)
	}
	// Output:
	// in.Store=false: 2 instructions, 16 lanes each, first mask 0x55555555
	// out.Store=true: 2 instructions, 16 lanes each, first mask 0x55555555
	// in.Store=false: 2 instructions, 16 lanes each, first mask 0xaaaaaaaa
	// out.Store=true: 2 instructions, 16 lanes each, first mask 0xaaaaaaaa
}

// A tiled transpose reads its shared tile down a column: 32 floats a row
// apart. With rows of 32 floats they all sit in bank 0, 32 wavefronts a
// request; one float of padding spreads them over the 32 banks.
func Example_bankConflicts() {
	const n, tile = 64, 32
	in, out := simt.NewGlobal("in", make([]float32, n*n)), simt.NewGlobal("out", make([]float32, n*n))
	for _, pad := range []int{0, 1} {
		s := simt.NewShared[float32]("tile", tile*(tile+pad))
		r, err := simt.Launch{Grid: simt.Dim{X: n / tile, Y: n / tile}, Block: simt.Dim{X: tile, Y: 8}}.Run(
			transposeTiled(in, out, s, n, n, tile, 8, pad))
		if err != nil {
			fmt.Println(err)
			return
		}
		m := r.Modelled.Metrics
		fmt.Printf("pad %d: %.0f wavefronts per shared load\n", pad, m[metrics.ShLdWavefronts]/m[metrics.ShLdRequests])
	}
	// Output:
	// pad 0: 32 wavefronts per shared load
	// pad 1: 1 wavefronts per shared load
}
