package plots

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coalescing-course/coalesce/lessons/sectors"
)

// A bank diagram counts what the bank rule counts: its busiest bank holds
// as many distinct words as sectors.Wavefronts gives the access, and its
// words say so. Expectations by hand: phase 2 of tile 32 reads a column,
// s[tx*(32+pad)+c], lane tx in bank (tx*(32+pad)+c) mod 32: pad 0 puts all
// 32 lanes in one bank, pad 1 one lane in each, pad 2 two lanes in each of
// 16 banks. Tile 16 (phase 2 is instruction 4) puts two rows of 16 lanes in
// one warp: words tx*16+ty, banks 0, 1, 16 and 17, 8 words each. Phase 1
// writes a row: 32 neighbouring words.
func TestBankDiagram(t *testing.T) {
	for _, tt := range []struct {
		spec       string
		instr      int
		wavefronts int
		banksUsed  int
		want       string
	}{
		{`{"kernel":"transpose_tiled","rows":4096,"cols":4096,"pad":0}`, 8, 32, 1, "The busiest bank, bank 0, holds 32 of the words: a bank serves one word a wavefront, so the access takes 32 wavefronts, 31 bank conflicts."},
		{`{"kernel":"transpose_tiled","rows":4096,"cols":4096,"pad":1}`, 8, 1, 32, "No bank holds two of the words: the banks serve the warp at once, 1 wavefront, no bank conflict."},
		{`{"kernel":"transpose_tiled","rows":4096,"cols":4096,"pad":2}`, 8, 2, 16, "takes 2 wavefronts, 1 bank conflict."},
		{`{"kernel":"transpose_tiled","rows":4096,"cols":4096,"tile":16}`, 4, 8, 4, "holds 8 of the words"},
		{`{"kernel":"transpose_tiled","rows":4096,"cols":4096,"pad":0}`, 1, 1, 32, "Dark: the words the warp's 32 active lanes write."},
	} {
		t.Run(fmt.Sprintf("%s instr %d", tt.spec, tt.instr), func(t *testing.T) {
			s := mustSpec(tt.spec)
			p, err := BankDiagram(s, 0, tt.instr)
			require.NoError(t, err)
			d, _, err := newBankDrawing(s, 0, tt.instr)
			require.NoError(t, err)
			ins, err := sectors.Instructions(s, 0)
			require.NoError(t, err)
			rule, err := sectors.Wavefronts(ins[tt.instr].Warp)
			require.NoError(t, err)
			require.Equal(t, tt.wavefronts, rule, "the hand count is the rule's")
			most, used := bankLoad(d.perBank)
			assert.Equal(t, rule, most, "the busiest bar is the wavefronts")
			assert.Equal(t, tt.banksUsed, used)
			for text, box := range textBoxes(t, p, Banks) {
				if text == p.Title.Text {
					continue // gonum places the title
				}
				for _, q := range box {
					assert.True(t, q.X >= -0.01 && q.X <= Banks.Width+0.01 && q.Y >= -0.01 && q.Y <= Banks.Height+0.01,
						"%q reaches %v, outside %v by %v", text, q, Banks.Width, Banks.Height)
				}
			}
			assert.Contains(t, d.header()+" "+d.summary(), tt.want)
			png, err := PNG(Banks, p)
			require.NoError(t, err)
			assert.NotEmpty(t, png)
		})
	}
}

func TestBankDiagramErrors(t *testing.T) {
	tiled := mustSpec(`{"kernel":"transpose_tiled","rows":64,"cols":64,"pad":1}`)
	_, err := BankDiagram(tiled, 0, 0)
	assert.True(t, errors.Is(err, ErrNotShared), "instruction 0 loads in[]: %v", err)
	assert.ErrorContains(t, err, "its shared ones are [1 3 5 7 8 10 12 14]")
	_, err = BankDiagram(tiled, 0, 99)
	assert.True(t, errors.Is(err, ErrInstr), "%v", err)
	_, err = BankDiagram(tiled, 1<<20, 1)
	assert.True(t, errors.Is(err, ErrWarp), "%v", err)
	_, err = BankDiagram(mustSpec(`{"kernel":"coalesced_copy","n":1024}`), 0, 0)
	assert.True(t, errors.Is(err, ErrNotShared), "%v", err)
	assert.ErrorContains(t, err, "has no shared tile")
}

// bankLoad returns, of a drawing's banks, the most distinct words one
// holds and how many hold any.
func bankLoad(perBank [sectors.Banks]int) (most, used int) {
	for _, k := range perBank {
		most = max(most, k)
		if k > 0 {
			used++
		}
	}
	return most, used
}
