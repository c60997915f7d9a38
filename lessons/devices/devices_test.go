package devices

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLookup(t *testing.T) {
	p, err := Lookup("h200")
	require.NoError(t, err)
	assert.Equal(t, "NVIDIA H200", p.GPU)
	// The L2 the driver reports on the device machine: 60 MiB (harness --info).
	assert.Equal(t, int64(62914560), p.L2Bytes)
	assert.NotEmpty(t, p.Provenance)
	assert.NotContains(t, p.Provenance, "PROVISIONAL")

	_, err = Lookup("a100")
	assert.ErrorIs(t, err, ErrUnknown)
	assert.ErrorContains(t, err, `"a100": want one of a100-40gb, a100-80gb, h100-sxm, h200, l4, rtx3090, rtx4090, t4`)
	assert.Equal(t, []string{"a100-40gb", "a100-80gb", "h100-sxm", "h200", "l4", "rtx3090", "rtx4090", "t4"}, Names())
}

// TestShipped holds each shipped profile to the numbers its sources cite:
// SMs and L2 as deviceQuery reports them, the per-SM limits of the CUDA
// C++ Programming Guide's table for the compute capability.
func TestShipped(t *testing.T) {
	tests := []struct {
		name, gpu, cc   string
		sms             int
		l2              int64
		threads, blocks int
	}{
		{"h200", "NVIDIA H200", "9.0", 132, 60 << 20, 2048, 32},
		{"a100-40gb", "NVIDIA A100-SXM4-40GB", "8.0", 108, 40 << 20, 2048, 32},
		{"a100-80gb", "NVIDIA A100-SXM4-80GB", "8.0", 108, 40 << 20, 2048, 32},
		{"h100-sxm", "NVIDIA H100 80GB HBM3", "9.0", 132, 50 << 20, 2048, 32},
		{"l4", "NVIDIA L4", "8.9", 58, 48 << 20, 1536, 24},
		{"t4", "Tesla T4", "7.5", 40, 4 << 20, 1024, 16},
		{"rtx4090", "NVIDIA GeForce RTX 4090", "8.9", 128, 72 << 20, 1536, 24},
		{"rtx3090", "NVIDIA GeForce RTX 3090", "8.6", 82, 6 << 20, 1536, 16},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Lookup(tt.name)
			require.NoError(t, err)
			assert.Equal(t, tt.gpu, p.GPU)
			assert.Contains(t, p.Match, tt.gpu, "a profile matches the name it is for")
			assert.Equal(t, tt.cc, p.ComputeCapability)
			assert.Equal(t, tt.sms, p.SMs)
			assert.Equal(t, tt.l2, p.L2Bytes)
			assert.Equal(t, tt.threads, p.MaxThreadsPerSM)
			assert.Equal(t, tt.blocks, p.MaxBlocksPerSM)
			for _, path := range Paths() {
				src := p.Citations[path]
				if strings.HasPrefix(src, "estimate") {
					assert.Contains(t, p.Estimated, path, "a value whose source is an estimate is listed as estimated")
				}
			}
			for _, path := range p.Estimated {
				assert.True(t, strings.HasPrefix(p.Citations[path], "estimate: "), "%s: an estimate says how it was derived: %q", path, p.Citations[path])
			}
			if tt.name == Course {
				assert.Empty(t, p.Estimated, "the course's H200 is measured")
			} else {
				assert.Contains(t, p.Estimated, "time.copy_bandwidth")
				assert.Contains(t, p.Estimated, "dram.reuse_l2_bytes")
			}
		})
	}
}

// TestEstimates checks two derived numbers by hand.
func TestEstimates(t *testing.T) {
	a100, err := Lookup("a100-80gb")
	require.NoError(t, err)
	// The A100 80GB SXM datasheet's 2039 GB/s times the H200's measured
	// 4260 over its datasheet's 4800 GB/s: 2039 * 0.8875 = 1809.6125,
	// kept to 1 MB/s.
	assert.InDelta(t, 1809.612e9, a100.Time.CopyBandwidth, 1)
	// The H200 keeps data for reuse up to 35651584 of its 62914560 L2
	// bytes (0.5667); of the A100's 41943040, that is 23767723.
	assert.Equal(t, int64(23767723), a100.DRAM.ReuseL2Bytes)
}

func TestPaths(t *testing.T) {
	assert.Equal(t, []string{
		"match", "compute_capability", "sms", "max_threads_per_sm", "max_blocks_per_sm", "warp_size", "sector_bytes", "line_bytes", "l2_bytes", "default_l2_fetch_granularity",
		"dram.reuse_l2_bytes", "dram.dirty_l2_bytes", "dram.sparse_dirty_l2_bytes", "dram.dirty_watermark_bytes", "dram.fill_l2_bytes", "dram.busy_dirty_l2_bytes", "dram.profiled_dirty_bytes",
		"dram.spread", "dram.partial_write_fill",
		"time.copy_bandwidth", "time.launch_seconds", "time.latency_seconds", "time.latency_per_byte", "time.block_rate",
		"time.dram_access_bytes", "time.dram_access_spacing", "time.dram_rewrite_bytes", "time.l2_latency_seconds", "time.l1_line_rate", "time.l2_store_rate", "time.shared_wavefront_rate",
	}, Paths())
}

func TestValidate(t *testing.T) {
	good, err := Lookup("h200")
	require.NoError(t, err)
	require.NoError(t, good.Validate())
	tests := []struct {
		name   string
		mutate func(*Profile)
		msg    string
	}{
		{"no name", func(p *Profile) { p.Name = "" }, "without a name"},
		{"no SMs", func(p *Profile) { p.SMs = 0 }, "sms >= 1"},
		{"64-byte sectors", func(p *Profile) { p.SectorBytes = 64 }, "32-byte sectors"},
		{"no L2", func(p *Profile) { p.L2Bytes = 0 }, "positive l2_bytes"},
		{"fetch 16", func(p *Profile) { p.DefaultL2Fetch = 16 }, "32, 64 or 128"},
		{"spread 1", func(p *Profile) { p.DRAM.Spread = 1 }, "0 <= spread < 1"},
		{"no bandwidth", func(p *Profile) { p.Time.CopyBandwidth = 0 }, "positive copy_bandwidth"},
		{"cc without minor", func(p *Profile) { p.ComputeCapability = "9" }, `compute_capability "9", want major.minor`},
		{"cc not a number", func(p *Profile) { p.ComputeCapability = "sm_90" }, `compute_capability "sm_90", want major.minor`},
		{"empty match", func(p *Profile) { p.Match = []string{" "} }, "empty match entry"},
		{"match twice", func(p *Profile) { p.Match = []string{"NVIDIA H200", "nvidia h200"} }, `match "nvidia h200" twice`},
		{"estimate of no field", func(p *Profile) { p.Estimated = []string{"dram.size"} }, `estimated "dram.size", want one of match, compute_capability`},
		{"source of no field", func(p *Profile) { p.Citations["clock"] = "a guess" }, `sources has "clock", want one of`},
		{"unsourced", func(p *Profile) { delete(p.Citations, "time.block_rate") }, "no source for time.block_rate"},
		{"negative L1 line rate", func(p *Profile) { p.Time.L1LineRate = -1 }, "l1_line_rate -1"},
		{"negative access bytes", func(p *Profile) { p.Time.DRAMAccessBytes = -5 }, "dram_access_bytes -5"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := good.clone()
			tt.mutate(&p)
			assert.ErrorContains(t, p.Validate(), tt.msg)
		})
	}
}

func TestMatchFree(t *testing.T) {
	h200, err := Lookup("h200")
	require.NoError(t, err)
	other := h200.clone()
	other.Name = "mine"
	other.Match = []string{" nvidia H200"}
	assert.ErrorContains(t, matchFree([]Profile{h200}, other), `mine: match " nvidia H200" is h200's already`)
	assert.NoError(t, matchFree([]Profile{h200}, h200), "a profile does not clash with itself")
}

// Number and SetNumber reach every number of Paths by its path, the
// integers truncated as int64(v) truncates, and refuse a path that is not
// a number of the profile.
func TestNumberByPath(t *testing.T) {
	p, err := Lookup(Course)
	require.NoError(t, err)
	got, err := p.Number("dram.reuse_l2_bytes")
	require.NoError(t, err)
	assert.Equal(t, float64(p.DRAM.ReuseL2Bytes), got)
	require.NoError(t, p.SetNumber("dram.reuse_l2_bytes", 1234.9))
	assert.Equal(t, int64(1234), p.DRAM.ReuseL2Bytes)
	require.NoError(t, p.SetNumber("time.latency_seconds", 5e-7))
	assert.Equal(t, 5e-7, p.Time.LatencySeconds)
	for _, path := range Paths() {
		if _, err := p.Number(path); err != nil {
			assert.ErrorContains(t, err, "not a number", "%s: only a path that is not a number is refused", path)
		}
	}
	_, err = p.Number("dram.no_such")
	assert.ErrorContains(t, err, `no path "dram.no_such"`)
	_, err = p.Number("match")
	assert.ErrorContains(t, err, "match is a slice, not a number")
}
