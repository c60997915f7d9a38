package sectors

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coalescing-course/coalesce/lessons/metrics"
	"github.com/coalescing-course/coalesce/lessons/spec"
)

func TestWavefronts(t *testing.T) {
	lanes := func(word func(l int) uint64) [WarpSize]uint64 {
		var a [WarpSize]uint64
		for l := range WarpSize {
			a[l] = 4 * word(l)
		}
		return a
	}
	tests := []struct {
		name   string
		addr   [WarpSize]uint64
		active uint32
		want   int
	}{
		// word l: one lane per bank.
		{"a row of floats", lanes(func(l int) uint64 { return uint64(l) }), AllLanes, 1},
		// word 32*l+5: every lane in bank 5, 32 distinct words.
		{"a column of s[32][32]", lanes(func(l int) uint64 { return uint64(32*l + 5) }), AllLanes, 32},
		// word 33*l+5: bank (l+5)%32, one lane each.
		{"a column of s[32][33]", lanes(func(l int) uint64 { return uint64(33*l + 5) }), AllLanes, 1},
		// word 2*l: banks 0, 2, ..., 30 twice each, words 2l and 2l+32.
		{"stride 2", lanes(func(l int) uint64 { return uint64(2 * l) }), AllLanes, 2},
		// every lane word 7: one word, broadcast.
		{"broadcast", lanes(func(int) uint64 { return 7 }), AllLanes, 1},
		// the column again, lanes 0-3 only: 4 words in bank 5.
		{"four lanes of a column", lanes(func(l int) uint64 { return uint64(32*l + 5) }), 0xF, 4},
		{"no lane", lanes(func(l int) uint64 { return uint64(32 * l) }), 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Wavefronts(Warp{Addr: tt.addr, Size: 4, Active: tt.active})
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
	_, err := Wavefronts(Warp{Size: 8, Active: 1})
	assert.ErrorContains(t, err, "4-byte shared accesses, got 8")
}

// perRequest is the model's ratio of two of its counts.
func perRequest(t *testing.T, p Launch, num, den string) float64 {
	t.Helper()
	require.NotZero(t, p.Metrics[den], den)
	return p.Metrics[num] / p.Metrics[den]
}

// TestMatrixPerRequest holds each 2D kernel's sectors and wavefronts per
// request to what its addresses give, worked out by hand.
func TestMatrixPerRequest(t *testing.T) {
	tests := []struct {
		name string
		in   string
		// global sectors per load and store request; shared wavefronts
		// per load and store request (0 when none)
		ld, st, shLd, shSt float64
	}{
		// x walks a row: 32 consecutive floats, 128 aligned bytes, 4 sectors.
		{"copy_rows", `{"kernel":"copy_rows","rows":4096,"cols":4096}`, 4, 4, 0, 0},
		// x walks a column: lanes 4096*4 bytes apart, a sector each.
		{"copy_columns", `{"kernel":"copy_columns","rows":4096,"cols":4096}`, 32, 32, 0, 0},
		// rows read (4), columns written: lane tx writes out[c*rows+r], c = bx*32+tx.
		{"naive transpose, coalesced read", `{"kernel":"transpose_coalesced_read","rows":4096,"cols":4096}`, 4, 32, 0, 0},
		{"naive transpose, coalesced write", `{"kernel":"transpose_coalesced_write","rows":4096,"cols":4096}`, 32, 4, 0, 0},
		// phase 1 stores a row of s (one word per bank); phase 2 loads the
		// column tx*32+ty+j: all 32 lanes in bank (ty+j)%32.
		{"tiled, tile 32, pad 0", `{"kernel":"transpose_tiled","rows":4096,"cols":4096}`, 4, 4, 32, 1},
		// column tx*33+ty+j: bank (tx+ty+j)%32, one lane each; the row store
		// (ty+j)*33+tx is 32 consecutive words.
		{"tiled, tile 32, pad 1", `{"kernel":"transpose_tiled","rows":4096,"cols":4096,"pad":1}`, 4, 4, 1, 1},
		// tile 16: a warp is rows ty, ty+1 of 16 lanes. Global: 16 floats =
		// 64 aligned bytes per row, 2 rows: 4 sectors. Phase 2 word
		// tx*16+ty+j: even tx in bank (ty+j)%32, odd in +16, lanes 16-31
		// (ty+1) one bank on: 8 distinct words in each of 4 banks, 8.
		// Phase 1 (ty+j)*16+tx: 32 consecutive words, 1.
		{"tiled, tile 16, pad 0", `{"kernel":"transpose_tiled","rows":4096,"cols":4096,"tile":16}`, 4, 4, 8, 1},
		// pad 1: phase 2 word 17*tx+c: 17*tx%32 = 0,17,2,19,...,14,31, all
		// distinct for the 16 lanes of one ty; lanes 16-31 add 1 to each:
		// 1,18,3,...,15,0, and only bank 0 is met twice: 2. Phase 1 rows
		// 17 words apart: lanes 16-31 reach banks base+17..base+32, the
		// last one bank base again: 2.
		{"tiled, tile 16, pad 1", `{"kernel":"transpose_tiled","rows":4096,"cols":4096,"tile":16,"pad":1}`, 4, 4, 2, 2},
		// tile 8: a warp is 4 rows of 8. Global: 32 bytes a row, aligned, 4
		// sectors. Phase 2 word 8*tx+c, c = ty+j over 4 values: banks
		// 8*(tx%4)+c, each holding tx and tx+4: 2. Phase 1: 32
		// consecutive words: 1.
		{"tiled, tile 8, pad 0", `{"kernel":"transpose_tiled","rows":4096,"cols":4096,"tile":8}`, 4, 4, 2, 1},
		// pad 1: 9*tx%32 = 0,9,18,27,4,13,22,31 plus c over 4 values: 31+c
		// meets 0+c in banks 0, 1, 2: 2. Phase 1 rows 9 words apart:
		// 27..34 wraps onto 0..2: 2.
		{"tiled, tile 8, pad 1", `{"kernel":"transpose_tiled","rows":4096,"cols":4096,"tile":8,"pad":1}`, 4, 4, 2, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := spec.Parse([]byte(tt.in))
			require.NoError(t, err)
			p, err := Model(s)
			require.NoError(t, err)
			assert.Equal(t, tt.ld, perRequest(t, p, metrics.LdSectors, metrics.LdRequests), "ld sectors/request")
			assert.Equal(t, tt.st, perRequest(t, p, metrics.StSectors, metrics.StRequests), "st sectors/request")
			// 4096*4096 floats, one per lane: 2^24/32 = 2^19 requests each side.
			assert.Equal(t, float64(1<<19), p.Metrics[metrics.LdRequests])
			if tt.shLd == 0 {
				for _, m := range metrics.Shared {
					assert.NotContains(t, p.Metrics, m, "a kernel without shared memory has no shared counts")
				}
				return
			}
			assert.Equal(t, tt.shLd, perRequest(t, p, metrics.ShLdWavefronts, metrics.ShLdRequests), "shared ld wavefronts/request")
			assert.Equal(t, tt.shSt, perRequest(t, p, metrics.ShStWavefronts, metrics.ShStRequests), "shared st wavefronts/request")
			assert.Equal(t, p.Metrics[metrics.ShLdWavefronts]-p.Metrics[metrics.ShLdRequests], p.Metrics[metrics.ShLdBankConflicts])
			assert.Equal(t, p.Metrics[metrics.ShStWavefronts]-p.Metrics[metrics.ShStRequests], p.Metrics[metrics.ShStBankConflicts])
		})
	}
}

// TestMatrixEdges holds the bounds masks, the partial warps and the j
// loop to counts worked out by hand.
func TestMatrixEdges(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want l1
	}{
		// grid 4x2 tiles; 64 rows x 4 column tiles = 256 row pieces each
		// side. Row r starts at byte 400r: even rows 32-aligned, odd rows
		// 16 past. Full tiles (bx 0-2): 128 bytes, 4 sectors even, 5 odd:
		// 32*3*4 + 32*3*5 = 864; the edge tile holds cols 96-99, 16 bytes
		// at 400r+384, within one sector either way: 64. 928 in all.
		{"cols 100", `{"kernel":"copy_rows","rows":64,"cols":100}`, l1{256, 928, 256, 928}},
		// rows 40: the second tile row holds rows 32-39, the first j of its
		// block; j = 8, 16, 24 mask every lane and send nothing. 40 rows of
		// 128 aligned bytes: 40 requests, 160 sectors.
		{"rows 40", `{"kernel":"copy_rows","rows":40,"cols":32}`, l1{40, 160, 40, 160}},
		// tile 8, block_rows 2: a block of 16 threads is one partial warp;
		// each j covers rows r, r+1 of 8 floats, 64 contiguous bytes: 2
		// sectors, 4 j steps.
		{"partial warp", `{"kernel":"copy_rows","rows":8,"cols":8,"tile":8,"block_rows":2}`, l1{4, 8, 4, 8}},
		// copy_columns on 3x5: one 32x32 tile, x down the 3 rows (lanes
		// 0-2), warp 0's ty+j walks columns 0-7, then 8-15, ...: only
		// columns 0-4 exist, all in warp 0 (ty 0-7, j 0): 5 requests of 3
		// lanes 20 bytes apart (rows of 5 floats). Column c: bytes 4c,
		// 20+4c, 40+4c: sectors 0,0,1 for c=0..2 (2 sectors), c=3: 12, 32,
		// 52 -> sectors 0,1,1 (2), c=4: 16,36,56 -> 0,1,1 (2): 10 sectors.
		{"copy_columns 3x5", `{"kernel":"copy_columns","rows":3,"cols":5}`, l1{5, 10, 5, 10}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := spec.Parse([]byte(tt.in))
			require.NoError(t, err)
			p, err := Model(s)
			require.NoError(t, err)
			assert.Equal(t, tt.want, l1Of(p))
		})
	}
}

func TestTransposeTiledEdgeShared(t *testing.T) {
	// 100x100, tile 32, pad 1: 4x4 blocks. Phase 1 per row piece: 100 rows
	// x 4 column tiles = 400 store requests, each a row of s: 1 wavefront.
	// Phase 2 the same pieces transposed: 400 load requests, a column of
	// s[32][33]: 1 each. The global sides: 400 requests each.
	s, err := spec.Parse([]byte(`{"kernel":"transpose_tiled","rows":100,"cols":100,"pad":1}`))
	require.NoError(t, err)
	p, err := Model(s)
	require.NoError(t, err)
	for _, m := range []string{metrics.LdRequests, metrics.StRequests, metrics.ShLdRequests, metrics.ShLdWavefronts, metrics.ShStWavefronts, metrics.ShStBankConflicts, metrics.ShLdBankConflicts} {
		want := 400.0
		if m == metrics.ShStBankConflicts || m == metrics.ShLdBankConflicts {
			want = 0 // one wavefront a request
		}
		assert.Equal(t, want, p.Metrics[m], m)
	}
	// Phase 1's shared store is predicated (@!P STS), so every warp executes
	// it on every trip, lanes or none: 16 blocks x 8 warps x 4 trips = 512
	// instructions, as ncu counted on the H200 (an 8x10 transpose, one
	// block: 8 warps x 4 trips = 32 where 8 warp-trips have a lane).
	assert.Equal(t, 512.0, p.Metrics[metrics.ShStRequests])
	small, err := spec.Parse([]byte(`{"kernel":"transpose_tiled","rows":8,"cols":10}`))
	require.NoError(t, err)
	p, err = Model(small)
	require.NoError(t, err)
	assert.Equal(t, 32.0, p.Metrics[metrics.ShStRequests], "ncu: 32 on the H200")
	assert.Equal(t, 8.0, p.Metrics[metrics.ShStWavefronts], "rows 0-7 at j=0: one warp-row each, 1 wavefront")
}

func TestSumFieldsSoA(t *testing.T) {
	// n = 1024, 8 fields: 32 warps, each 8 loads of 32 consecutive floats
	// (4 sectors) and a store of 4 sectors.
	s, err := spec.Parse([]byte(`{"kernel":"sum_fields_soa","n":1024,"struct_bytes":32}`))
	require.NoError(t, err)
	p, err := Model(s)
	require.NoError(t, err)
	assert.Equal(t, l1{32 * 8, 32 * 8 * 4, 32, 32 * 4}, l1Of(p))
	ins, err := Instructions(s, 1)
	require.NoError(t, err)
	require.Len(t, ins, 9)
	// warp 1, field 2: float 2*1024 + 32, byte 8320.
	assert.Equal(t, uint64(4*(2*1024+32)), ins[2].Warp.Addr[0])
}

func TestMisaligned(t *testing.T) {
	s, err := spec.Parse([]byte(`{"kernel":"vectorized_copy","n":1024,"width":4,"offset":3}`))
	require.NoError(t, err)
	_, err = Model(s)
	require.ErrorIs(t, err, ErrMisaligned)
	// offset 3 floats = 12 bytes, 12 mod 16 = 12.
	assert.ErrorContains(t, err, "12 bytes past a 16-byte boundary")
	assert.ErrorContains(t, err, "cudaErrorMisalignedAddress")
	ins, err := Instructions(s, 0)
	require.NoError(t, err, "the instructions of a faulting launch can still be drawn")
	assert.Equal(t, uint64(12), ins[0].Warp.Addr[0])

	// offset 4 floats is 16 bytes: aligned; (1024-4)/4 = 255 threads, 8
	// warps, the last of 31 lanes. Warp w loads 512 bytes from 16+512w,
	// half a sector past a boundary: 17 sectors for each of the first 7;
	// the last loads bytes 3600..4095, sectors 112..127: 16. 7*17+16 = 135.
	s, err = spec.Parse([]byte(`{"kernel":"vectorized_copy","n":1024,"width":4,"offset":4}`))
	require.NoError(t, err)
	p, err := Model(s)
	require.NoError(t, err)
	assert.Equal(t, 135.0, p.Metrics[metrics.LdSectors])
	// out from byte 0: 16 sectors a warp, 496 bytes (16 sectors) the last: 128.
	assert.Equal(t, 128.0, p.Metrics[metrics.StSectors])
}

func TestInstructionsShowShared(t *testing.T) {
	s, err := spec.Parse([]byte(`{"kernel":"transpose_tiled","rows":64,"cols":64}`))
	require.NoError(t, err)
	ins, err := Instructions(s, 0)
	require.NoError(t, err)
	// 4 j steps of (ld in, st s), then 4 of (ld s, st out).
	require.Len(t, ins, 16)
	assert.True(t, ins[1].Shared)
	assert.True(t, ins[1].Store)
	assert.Equal(t, SharedBuffer, ins[1].Buffer)
	assert.True(t, ins[8].Shared)
	assert.False(t, ins[8].Store)
	assert.False(t, ins[9].Shared)
	// phase 2, j = 0, warp 0 (ty 0): lane l reads s[l*32]: byte 128*l.
	assert.Equal(t, uint64(128*5), ins[8].Warp.Addr[5])
	n, err := Wavefronts(ins[8].Warp)
	require.NoError(t, err)
	assert.Equal(t, 32, n)
}
