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

// sharedTraced is a traced shared load of warp 0 whose lane l reads the
// word word(l) of the array tile.
func sharedTraced(word func(l int) uint64) simt.Traced {
	w := sectors.Warp{Active: ^uint32(0), Size: sectors.BankBytes}
	for l := range sectors.WarpSize {
		w.Addr[l] = sectors.BankBytes * word(l)
	}
	return simt.Traced{Instruction: sectors.Instruction{Shared: true, Buffer: "tile", Access: "MyKernel line 9", Warp: w}}
}

// A traced shared instruction is drawn by its banks, as the bank rule
// counts it. By hand: lane l at word 32*l is in bank 0, 32 words there (32
// wavefronts), words 0 to 992, 31 rows and the 32nd; word 2*l puts two
// lanes in each even bank (2 wavefronts, 16 banks), words 0 to 62 in two
// rows; every lane at word 5 is a broadcast, 1 word in 1 bank.
func TestTracedBankDiagram(t *testing.T) {
	for _, tt := range []struct {
		name                    string
		word                    func(l int) uint64
		wavefronts, banks, rows int
		want                    string
	}{
		{"column of an unpadded tile", func(l int) uint64 { return uint64(32 * l) }, 32, 1, 32,
			"The busiest bank, bank 0, holds 32 of the words: a bank serves one word a wavefront, so the access takes 32 wavefronts, 31 bank conflicts."},
		{"stride 2", func(l int) uint64 { return uint64(2 * l) }, 2, 16, 2, "so the access takes 2 wavefronts, 1 bank conflict."},
		{"broadcast", func(int) uint64 { return 5 }, 1, 1, 1, "(32 lanes share 1 distinct word: lanes that access one word share it)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tr := sharedTraced(tt.word)
			rule, err := sectors.Wavefronts(tr.Instruction.Warp)
			require.NoError(t, err)
			require.Equal(t, tt.wavefronts, rule, "the hand count is the rule's")
			p, err := TracedBankDiagram(tr)
			require.NoError(t, err)
			assert.Equal(t, "warp 0: shared load tile at MyKernel line 9", p.Title.Text)
			d, _, err := newTracedBankDrawing(tr)
			require.NoError(t, err)
			most, used := bankLoad(d.perBank)
			assert.Equal(t, rule, most, "the busiest bar is the wavefronts")
			assert.Equal(t, tt.banks, used)
			n, rows := d.words()
			assert.Equal(t, tt.rows, rows)
			assert.Equal(t, 32*tt.rows, n, "whole bank rows")
			assert.Contains(t, d.header(), "The shared array tile from its word 0, in rows of 32 words, one per bank")
			assert.Contains(t, d.header(), "not known here")
			assert.Contains(t, d.summary(), tt.want)
			for text, box := range textBoxes(t, p, Banks) {
				if text == p.Title.Text {
					continue
				}
				for _, q := range box {
					assert.True(t, q.X >= -0.01 && q.X <= Banks.Width+0.01 && q.Y >= -0.01 && q.Y <= Banks.Height+0.01,
						"%q reaches %v, outside %v by %v", text, q, Banks.Width, Banks.Height)
				}
			}
		})
	}
}

func TestTracedBankDiagramErrors(t *testing.T) {
	var global *simt.Traced
	for _, tr := range traceOf(t, 1) {
		if !tr.Instruction.Shared {
			global = &tr
			break
		}
	}
	require.NotNil(t, global)
	_, err := TracedBankDiagram(*global)
	assert.True(t, errors.Is(err, ErrNotShared), "%v", err)
	assert.ErrorContains(t, err, "the load of in at traced_test.go:")
	assert.ErrorContains(t, err, "TracedDiagram draws its sectors")

	wide := sharedTraced(func(l int) uint64 { return uint64(2 * l) })
	wide.Instruction.Warp.Size = 8
	_, err = TracedBankDiagram(wide)
	assert.ErrorContains(t, err, "plots: the shared load of tile at MyKernel line 9")
	assert.ErrorContains(t, err, "modelled for 4-byte shared accesses, got 8 bytes")
}
