package sectors

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coalescing-course/coalesce/lessons/metrics"
	"github.com/coalescing-course/coalesce/lessons/spec"
)

// Small launches are tracked whole (no sampling), so their DRAM counts are
// exact consequences of the L2 rules in dram.go; each expectation is
// worked out in its comment.
func TestDRAMSmallLaunches(t *testing.T) {
	tests := []struct {
		name        string
		spec        string
		read, write float64
	}{
		// 4 KB in, read once; the 4 KB written stay in the L2.
		{"copy that fits", `{"kernel":"coalesced_copy","n":1024}`, 4096, 0},
		// 1024 reads one line apart: each fetches its granularity block.
		{"sparse read, 32-byte fetch", `{"kernel":"strided_read","n":32768,"stride":32,"l2_fetch_granularity":32}`, 1024 * 32, 0},
		{"sparse read, 64-byte fetch", `{"kernel":"strided_read","n":32768,"stride":32,"l2_fetch_granularity":64}`, 1024 * 64, 0},
		{"sparse read, 128-byte fetch", `{"kernel":"strided_read","n":32768,"stride":32,"l2_fetch_granularity":128}`, 1024 * 128, 0},
		// stride 16 floats = 64 bytes: two reads per line, each in its own
		// 64-byte block, so a 128-byte fetch serves both reads of a line.
		{"two reads per line, 128-byte fetch", `{"kernel":"strided_read","n":32768,"stride":16,"l2_fetch_granularity":128}`, 1024 * 128, 0},
		// The store hits the line the load brought in: no extra read.
		{"AoS update", `{"kernel":"update_x_aos","n":1024,"struct_bytes":128}`, 1024 * 64, 0},
		// Writes only, one sector per line, all still in the L2 at the end:
		// no fill, no write-back (ncu: 0 and 0 at n = 2^20).
		{"sparse writes that fit", `{"kernel":"strided_write","n":32768,"stride":32}`, 0, 0},
		// The gather reads idx (4 KB) and the 4 KB of in it permutes, once.
		{"gather that fits", `{"kernel":"gather_copy","n":1024,"index_pattern":"random_perm"}`, 8192, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := predict(t, tt.spec)
			assert.Equal(t, tt.read, p.Metrics[metrics.DRAMRead], "read")
			assert.Equal(t, tt.write, p.Metrics[metrics.DRAMWrite], "write")
		})
	}
}

// Large launches, past the L2: the mechanisms the package documentation
// reports, each checked against the arithmetic of its rule.
func TestDRAMMechanisms(t *testing.T) {
	const mb = 1 << 20
	t.Run("a copy past the L2 writes back all but what stays", func(t *testing.T) {
		p := predict(t, `{"kernel":"coalesced_copy","n":67108864}`)
		assert.InEpsilon(t, float64(256*mb), p.Metrics[metrics.DRAMRead], 0.01)
		w := p.Metrics[metrics.DRAMWrite]
		// Between DirtyL2Bytes*(1±Spread)/2 of the 256 MB stay: half the
		// recent lines are the copy's reads.
		assert.Greater(t, w, float64(256*mb-20*mb))
		assert.Less(t, w, float64(256*mb-10*mb))
	})
	t.Run("partly written sectors are filled when evicted, and before", func(t *testing.T) {
		p := predict(t, `{"kernel":"strided_write","n":67108864,"stride":2}`)
		// Every sector is half written, so each one written back is read
		// first; so are those still in the L2 past the newest FillL2Bytes
		// (8.8 MB) of them, which stay unwritten: reads exceed writes by
		// less than what stays (the H200: 261 MB read, 253 MB written).
		read, write := p.Metrics[metrics.DRAMRead], p.Metrics[metrics.DRAMWrite]
		assert.Greater(t, write, 200.0*mb)
		assert.Greater(t, read, write)
		assert.Less(t, read-write, 256*mb-write)
	})
	t.Run("a launch that only reads writes back what the L2 held before it", func(t *testing.T) {
		// 256 MB read, far past DirtyL2Bytes*(1+Spread): all of the
		// profile's ProfiledDirtyBytes goes back (ncu: 2.1 to 2.9 MB).
		p := predict(t, `{"kernel":"strided_read","n":67108864,"stride":4}`)
		assert.Equal(t, 2400000.0, p.Metrics[metrics.DRAMWrite])
		// 4 MB read: none of it does.
		small := predict(t, `{"kernel":"strided_read","n":1048576,"stride":1}`)
		assert.Zero(t, small.Metrics[metrics.DRAMWrite])
	})
	t.Run("a read-modify-write keeps no more dirty data than the watermark", func(t *testing.T) {
		// update_x_soa dirties every line it reads; counting from the
		// newest, the L2 keeps about DirtyWatermarkBytes (27 MB; the
		// spread's draws keep lines up to 1.28 times it, and the count
		// stops a little past 27: 29 MB) where a copy, half clean
		// lines, keeps DirtyL2Bytes/2 (20.5 MB). The H200 kept 26.8 MB and
		// 19.5 MB (l2edge.jsonl, n = 2^26); 2.4 MB from before each launch
		// goes back besides.
		rmw := predict(t, `{"kernel":"update_x_soa","n":67108864}`)
		copied := predict(t, `{"kernel":"coalesced_copy","n":67108864}`)
		const written = 4 * 67108864
		assert.InDelta(t, 27e6, written+2.4e6-rmw.Metrics[metrics.DRAMWrite], 2.5e6)
		assert.InDelta(t, 41059200/2, written+2.4e6-copied.Metrics[metrics.DRAMWrite], 1.5e6)
	})
	t.Run("sparse written lines leave the L2 early", func(t *testing.T) {
		p := predict(t, `{"kernel":"strided_write","n":67108864,"stride":32}`)
		// 2^21 sectors of 32 bytes = 64 MB written; about 2 MB stays.
		assert.InDelta(t, float64(64*mb-2*mb), p.Metrics[metrics.DRAMWrite], 2*mb)
	})
	t.Run("reuse is lost as the gather outgrows the L2", func(t *testing.T) {
		small := predict(t, `{"kernel":"gather_copy","n":1048576,"index_pattern":"random_perm"}`)
		large := predict(t, `{"kernel":"gather_copy","n":33554432,"index_pattern":"random_perm"}`)
		perElem := func(p Launch) float64 {
			return (p.Metrics[metrics.DRAMRead] - 4*float64(p.Spec.N)) / float64(p.Spec.N)
		}
		// 4 MB fits: each element of in is read once, 4 bytes.
		assert.InDelta(t, 4, perElem(small), 0.01)
		// 128 MB does not: most gathered reads miss and fetch 64 bytes.
		assert.Greater(t, perElem(large), 50.0)
		assert.Less(t, perElem(large), 64.0)
	})
}

func TestFenwick(t *testing.T) {
	var f fenwick
	w := []float64{3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5}
	for i, x := range w {
		assert.Equal(t, i+1, f.push(x))
	}
	sum := 0.0
	for i, x := range w {
		sum += x
		assert.Equal(t, sum, f.prefix(i+1), "prefix(%d)", i+1)
	}
	f.drop(3, 4)
	assert.Equal(t, 3+1+0.0, f.prefix(3))
	assert.Equal(t, sum-4, f.total())
	// Growing past the first capacity keeps every sum.
	for range 3000 {
		f.push(1)
	}
	assert.Equal(t, sum-4+3000, f.total())
	assert.Equal(t, sum-4+3000, f.prefix(len(w)+3000))
}

// The line table must find every line it was given, in any number, with
// the state last written there: it grows (doubling, rehashing) from 64
// slots as lines come, and lines 0 and 2^40 apart (its key is the line
// plus one, its hash folds the high bits in) must not collide.
func TestLineTable(t *testing.T) {
	var tab lineTable
	lines := []uint64{0, 1 << 40, 1<<40 + 1}
	for i := range 5000 {
		lines = append(lines, uint64(i)*7919+3)
	}
	for i, line := range lines {
		l, w, seen := tab.get(line)
		require.False(t, seen, "line %d before it was added", line)
		l.last, l.dirty, w[1] = i, uint8(i%16), uint32(i)
	}
	assert.Equal(t, len(lines), tab.n)
	assert.LessOrEqual(t, 4*tab.n, 3*len(tab.slots), "three quarters full at most")
	for i, line := range lines {
		l, w, seen := tab.get(line)
		require.True(t, seen, "line %d", line)
		assert.Equal(t, l2Line{last: i, dirty: uint8(i % 16)}, *l, "line %d", line)
		assert.Equal(t, lineWrites{0, uint32(i), 0, 0}, *w, "line %d", line)
	}
}

func TestColdWarp(t *testing.T) {
	tests := []struct {
		spec          string
		fetched, used int64
	}{
		// 32 floats in one 128-byte line: two 64-byte fetch blocks.
		{`{"kernel":"coalesced_copy","n":4096}`, 128, 128},
		// floats 32 apart: a line each, and a 64-byte block for each lane's 4 bytes.
		{`{"kernel":"strided_read","n":65536,"stride":32}`, 32 * 64, 32 * 4},
		// a launch large enough to be sampled by Model: ColdWarp tracks its one warp whole.
		{`{"kernel":"strided_read","n":67108864,"stride":32}`, 32 * 64, 32 * 4},
		// the same at a fetch granularity of 32 bytes: a sector each.
		{`{"kernel":"strided_read","n":65536,"stride":32,"l2_fetch_granularity":32}`, 32 * 32, 32 * 4},
		// 16-byte structs, x of each: 512 bytes in 4 lines, every 64-byte block touched.
		{`{"kernel":"update_x_aos","n":4096}`, 512, 128},
		// a store-only kernel loads nothing.
		{`{"kernel":"strided_write","n":4096,"stride":2}`, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.spec, func(t *testing.T) {
			s, err := spec.Parse([]byte(tt.spec))
			require.NoError(t, err)
			fetched, used, err := ColdWarp(s, nil, 0)
			require.NoError(t, err)
			assert.Equal(t, tt.fetched, fetched, "fetched")
			assert.Equal(t, tt.used, used, "used")
		})
	}
	s, err := spec.Parse([]byte(`{"kernel":"coalesced_copy","n":64}`))
	require.NoError(t, err)
	_, _, err = ColdWarp(s, nil, 8) // one block of 256 threads: warps 0 to 7
	assert.ErrorIs(t, err, ErrWarp)
}
