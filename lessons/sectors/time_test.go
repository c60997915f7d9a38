package sectors

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coalescing-course/coalesce/lessons/devices"
	"github.com/coalescing-course/coalesce/lessons/spec"
)

// TestTraffic counts by hand what the time model reads of three small
// launches: the lines each request touches, the store packets, and the
// spacing of the DRAM blocks.
func TestTraffic(t *testing.T) {
	for _, c := range []struct {
		name, spec                string
		ldLines, stLines, packets int64
		ldBin                     int // the spacing bin of every load block
		ldBlocks                  float64
	}{
		// 32 warps, each a load and a store of one whole line: 64-byte
		// blocks back to back (spacing 64, bin 6), no partial sector.
		{"coalesced", `{"kernel":"coalesced_copy","n":1024}`, 32, 32, 32, 6, 64},
		// One warp, its 32 lanes 128 bytes apart: 32 lines, a 64-byte
		// block each, spanning 31 × 128 + 32 = 4000 bytes: spacing 125,
		// bin 6.
		{"stride 32", `{"kernel":"strided_read","n":1024,"stride":32}`, 32, 0, 0, 6, 32},
		// One warp storing 4 bytes every 32: 8 lines, 32 sectors each
		// written in part: 32 packets.
		{"write stride 8", `{"kernel":"strided_write","n":256,"stride":8}`, 0, 8, 32, -1, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := spec.Parse([]byte(c.spec))
			require.NoError(t, err)
			p, err := Predict(s)
			require.NoError(t, err)
			tr := p.Traffic
			assert.Equal(t, c.ldLines, tr.LdLines)
			assert.Equal(t, c.stLines, tr.StLines)
			assert.Equal(t, c.packets, tr.StPackets)
			for k, b := range tr.Ld.Blocks {
				if k == c.ldBin {
					assert.Equal(t, c.ldBlocks, b, "bin %d", k)
				} else {
					assert.Zero(t, b, "bin %d", k)
				}
			}
		})
	}
}

// TestSpacingCost: a 64-byte block at spacing s costs DRAMAccessBytes ×
// (1 - DRAMAccessSpacing / s) bytes' time where that is more than 64.
func TestSpacingCost(t *testing.T) {
	tm := devices.Time{DRAMAccessBytes: 100, DRAMAccessSpacing: 50}
	var sp Spacing
	assert.Equal(t, 1.0, sp.cost(tm, 64), "no blocks: the bytes")
	sp.Blocks[6], sp.Spread[6] = 10, 10*125 // 100 × (1 - 50/125) = 60 < 64
	assert.Equal(t, 1.0, sp.cost(tm, 64))
	sp.Blocks[9], sp.Spread[9] = 10, 10*512 // 100 × (1 - 50/512) = 90.23
	assert.InDelta(t, (10*64+10*90.234375)/(20*64), sp.cost(tm, 64), 1e-12)
	assert.Equal(t, 1.0, sp.cost(devices.Time{}, 64), "a profile without the parameter charges bytes")
}
