package sectors

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coalescing-course/coalesce/lessons/devices"
	"github.com/coalescing-course/coalesce/lessons/metrics"
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
		rewriteBin                int // the spacing bin of every rewritten sector
		rewritten                 float64
	}{
		// 32 warps, each a load and a store of one whole line: 64-byte
		// blocks back to back (spacing 64, bin 6), no partial sector.
		// It stores to another buffer than it loads: nothing rewritten.
		{"coalesced", `{"kernel":"coalesced_copy","n":1024}`, 32, 32, 32, 6, 64, -1, 0},
		// One warp, its 32 lanes 128 bytes apart: 32 lines, a 64-byte
		// block each, spanning 31 × 128 + 32 = 4000 bytes: spacing 125,
		// bin 6.
		{"stride 32", `{"kernel":"strided_read","n":1024,"stride":32}`, 32, 0, 0, 6, 32, -1, 0},
		// One warp storing 4 bytes every 32: 8 lines, 32 sectors each
		// written in part: 32 packets.
		{"write stride 8", `{"kernel":"strided_write","n":256,"stride":8}`, 0, 8, 32, -1, 0, -1, 0},
		// One warp reading and writing back one float in each of 32
		// 128-byte structs: the loads as strided_read's at stride 32, and
		// each of the 32 sectors stored lies in a line the load read, at
		// spacing 125 (bin 6).
		{"update aos 128", `{"kernel":"update_x_aos","n":32,"struct_bytes":128}`, 32, 32, 32, 6, 32, 6, 32},
		// One warp rewriting the 128 bytes it read: one line, its 4
		// sectors 32 bytes apart (bin 5), a 64-byte block each 64 apart
		// (bin 6).
		{"update soa", `{"kernel":"update_x_soa","n":32}`, 1, 1, 1, 6, 2, 5, 4},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := spec.Parse([]byte(c.spec))
			require.NoError(t, err)
			p, err := Model(s)
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
			for k, b := range tr.Rewrite.Blocks {
				if k == c.rewriteBin {
					assert.Equal(t, c.rewritten, b, "rewrite bin %d", k)
				} else {
					assert.Zero(t, b, "rewrite bin %d", k)
				}
			}
		})
	}
}

// TestLoadsAgain counts by hand the load sectors a request asks for while
// the request before it has them in flight.
func TestLoadsAgain(t *testing.T) {
	for _, c := range []struct {
		name, spec string
		again      int64
	}{
		// Warp 0 loads bytes 4 to 131 (sectors 0 to 4), warp 1 bytes 132
		// to 255 (sectors 4 to 7): sector 4 again. The store between them
		// goes to another buffer and changes nothing.
		{"offset", `{"kernel":"offset_copy","n":64,"offset":1}`, 1},
		// Aligned warps share no sector.
		{"coalesced", `{"kernel":"coalesced_copy","n":64}`, 0},
		// One warp loads x of 32 structs of 8 bytes (8 sectors), then y
		// from the same 8 sectors.
		{"fields", `{"kernel":"sum_fields_aos","n":32,"struct_bytes":8}`, 8},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := spec.Parse([]byte(c.spec))
			require.NoError(t, err)
			p, err := Model(s)
			require.NoError(t, err)
			assert.Equal(t, c.again, p.Traffic.LdAgain)
		})
	}
}

// TestAgainWaitsDRAM: a load sector asked for again while its fetch is in
// flight waits DRAM's latency, as the sectors DRAM sends do, not the L2's.
func TestAgainWaitsDRAM(t *testing.T) {
	s, err := spec.Parse([]byte(`{"kernel":"offset_copy","n":64,"offset":1}`))
	require.NoError(t, err)
	d := devices.Profile{SMs: 1, MaxBlocksPerSM: 1, MaxThreadsPerSM: 32,
		Time: devices.Time{CopyBandwidth: 1e12, LatencySeconds: 1e-6, L2LatencySeconds: 0.5e-6, BlockRate: 1e9}}
	// 4 load sectors, DRAM sending 2 of them (64 bytes).
	p := Launch{Spec: s, Metrics: metrics.Set{metrics.LdRequests: 1, metrics.LdSectors: 4, metrics.DRAMRead: 64}}
	// Half the sectors wait DRAM's 1 µs, half the L2's 0.5: 0.75 µs.
	assert.InDelta(t, 0.75e-6, EstimateTime(d, p).Latency1, 1e-15)
	// One more asked for again: three quarters wait 1 µs, 0.875 µs.
	p.Traffic.LdAgain = 1
	assert.InDelta(t, 0.875e-6, EstimateTime(d, p).Latency1, 1e-15)
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

// TestRewriteCost: a sector rewritten at spacing s costs DRAMRewriteBytes ×
// (1 - DRAMAccessSpacing / s) bytes' time on top of its access, spread
// over the bytes the stores write, and nothing where s is below
// DRAMAccessSpacing.
func TestRewriteCost(t *testing.T) {
	tm := devices.Time{CopyBandwidth: 1e12, DRAMAccessSpacing: 40, DRAMRewriteBytes: 100}
	var tr Traffic
	// 10 sectors stored 128 bytes apart (bin 7), all rewritten, and 10
	// stored 32 apart (bin 5), 5 of them rewritten.
	tr.St.Blocks[7], tr.St.Spread[7] = 10, 10*128
	tr.Rewrite.Blocks[7], tr.Rewrite.Spread[7] = 10, 10*128
	tr.St.Blocks[5], tr.St.Spread[5] = 10, 10*32
	tr.Rewrite.Blocks[5], tr.Rewrite.Spread[5] = 5, 5*32
	// 10 × 100 × (1 - 40/128) = 687.5 bytes' time over 20 × 32 = 640
	// bytes written; the dense ones add nothing.
	assert.InDelta(t, 687.5/640, tr.rewriteCost(tm), 1e-12)
	none := tm
	none.DRAMRewriteBytes = 0
	assert.Zero(t, tr.rewriteCost(none), "a profile without the parameter adds nothing")
	assert.Zero(t, (&Traffic{}).rewriteCost(tm), "no stores: nothing")

	// EstimateTime charges it on the DRAM bytes written: 6400 bytes, each
	// 687.5/640 bytes' time more, at 1e12 bytes a second.
	s, err := spec.Parse([]byte(`{"kernel":"update_x_aos","n":32,"struct_bytes":128}`))
	require.NoError(t, err)
	p := Launch{Spec: s, Metrics: metrics.Set{metrics.DRAMWrite: 6400}, Traffic: tr}
	d := devices.Profile{SMs: 1, MaxBlocksPerSM: 1, MaxThreadsPerSM: 32, Time: tm}
	with := EstimateTime(d, p)
	d.Time = none
	assert.InDelta(t, 6400*687.5/640/1e12, with.Bandwidth-EstimateTime(d, p).Bandwidth, 1e-24)
}

// TestInFlightPerSM: the bytes in flight are every sector of every request
// an SM has outstanding, while the queue that lengthens the latency counts
// a request only up to a line. On the H200 (2048 threads, 32 blocks an
// SM), blocks of 256 keep 8 blocks of 8 warps resident: 64 requests in
// flight for a copy with one load a thread, of 4, 8 and 16 sectors for
// float, float2 and float4 (128, 256 and 512 bytes): 8,192, 16,384 and
// 32,768 bytes. All three queue a line a request, so they wait alike.
func TestInFlightPerSM(t *testing.T) {
	d, err := devices.Lookup("h200")
	require.NoError(t, err)
	require.Equal(t, 2048, d.MaxThreadsPerSM, "the hand count assumes the H200's 64 warps an SM")
	var latency []float64
	for _, c := range []struct {
		spec  string
		bytes float64
	}{
		{`{"kernel":"coalesced_copy","n":67108864}`, 8192},
		{`{"kernel":"vectorized_copy","n":67108864,"width":2}`, 16384},
		{`{"kernel":"vectorized_copy","n":67108864,"width":4}`, 32768},
	} {
		s, err := spec.Parse([]byte(c.spec))
		require.NoError(t, err)
		p, err := Model(s)
		require.NoError(t, err)
		assert.Equal(t, 64.0, p.Time.RequestsInFlightPerSM, c.spec)
		assert.Equal(t, c.bytes, p.Time.InFlightPerSM, c.spec)
		latency = append(latency, p.Time.Latency1)
	}
	assert.InDelta(t, latency[0], latency[1], 1e-12, "a float request and a float2 request both queue one line")
	assert.InDelta(t, latency[1], latency[2], 1e-12, "float2 and float4 requests both queue one line")
}
