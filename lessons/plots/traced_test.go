package plots

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coalescing-course/coalesce/lessons/sectors"
	"github.com/coalescing-course/coalesce/lessons/simt"
)

// traceOf runs a kernel that copies every stride-th float of in through
// a shared array to out, on one block of 40 threads (a full warp and a
// warp of 8), and returns the first two warps' instructions.
func traceOf(t *testing.T, stride int) []simt.Traced {
	t.Helper()
	const threads = 40
	in, out := make([]float32, threads*stride), make([]float32, threads)
	gin, gout := simt.NewGlobal("in", in), simt.NewGlobal("out", out)
	s := simt.NewShared[float32]("s", threads)
	r, err := simt.Launch{Grid: simt.Dim{X: 1}, Block: simt.Dim{X: threads}, Trace: 2}.Run(func(th *simt.Thread) {
		i := th.ThreadIdx.X
		s.Store(th, i, gin.Load(th, i*stride))
		gout.Store(th, i, s.Load(th, i))
	})
	require.NoError(t, err)
	return r.Trace
}

func TestTracedDiagram(t *testing.T) {
	for _, tt := range []struct {
		name    string
		stride  int
		warp    int64
		op, buf string
		store   bool
		// sectors: warp 0's 32 lanes 4*stride bytes apart cover
		// 32*4*stride/32 = 4*stride sectors when stride <= 8, one each
		// beyond; warp 1's 8 lanes (threads 32..39) a quarter of that.
		sectors int
	}{
		{name: "coalesced load", stride: 1, warp: 0, op: "load", buf: "in", sectors: 4},
		{name: "stride 2 load", stride: 2, warp: 0, op: "load", buf: "in", sectors: 8},
		{name: "stride 16 load", stride: 16, warp: 0, op: "load", buf: "in", sectors: 32},
		{name: "partial warp store", stride: 2, warp: 1, op: "store", buf: "out", store: true, sectors: 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var found bool
			for _, tr := range traceOf(t, tt.stride) {
				in := tr.Instruction
				if tr.Warp != tt.warp || in.Shared || in.Store != tt.store {
					continue
				}
				found = true
				p, err := TracedDiagram(tr)
				require.NoError(t, err)
				assert.True(t, strings.HasPrefix(p.Title.Text, "warp "), p.Title.Text)
				assert.Contains(t, p.Title.Text, tt.op+" "+tt.buf+" at traced_test.go:")
				acc, err := sectors.Coalesce(in.Warp)
				require.NoError(t, err)
				assert.Len(t, acc.Sectors, tt.sectors)
				png, err := PNG(Diagram, p)
				require.NoError(t, err)
				assert.NotEmpty(t, png)
			}
			assert.True(t, found, "no %s instruction of warp %d traced", tt.op, tt.warp)
		})
	}
}

func TestTracedDiagramShared(t *testing.T) {
	var n int
	for _, tr := range traceOf(t, 1) {
		if !tr.Instruction.Shared {
			continue
		}
		n++
		_, err := TracedDiagram(tr)
		assert.True(t, errors.Is(err, ErrShared), "%v", err)
	}
	assert.Equal(t, 4, n, "two shared instructions (a store and a load) in each of the two warps")
}
