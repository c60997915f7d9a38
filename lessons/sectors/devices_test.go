package sectors

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coalescing-course/coalesce/lessons/devices"
	"github.com/coalescing-course/coalesce/lessons/metrics"
	"github.com/coalescing-course/coalesce/lessons/spec"
)

// predictFor predicts the launch in, its device set to device.
func predictFor(t *testing.T, in, device string) Launch {
	t.Helper()
	s, err := spec.Parse([]byte(in))
	require.NoError(t, err)
	s.Device = device
	// The device's own L2 fetch granularity, as a spec that leaves it
	// unsaid gets.
	d, err := devices.Lookup(device)
	require.NoError(t, err)
	s.L2Fetch = d.DefaultL2Fetch
	p, err := Model(s)
	require.NoError(t, err)
	return p
}

// TestL1SameOnEveryDevice: the L1's requests and sectors follow from the
// addresses alone, so a coalesced copy counts the same on every profile.
func TestL1SameOnEveryDevice(t *testing.T) {
	// n = 2^20 floats: 2^15 full warps, 4 sectors each way.
	want := l1{1 << 15, 4 << 15, 1 << 15, 4 << 15}
	for _, name := range devices.Names() {
		t.Run(name, func(t *testing.T) {
			assert.Equal(t, want, l1Of(predictFor(t, `{"kernel":"coalesced_copy","n":1048576}`, name)))
		})
	}
}

// TestTimeScalesWithCopyBandwidth: a large vectorized copy is bound by
// bandwidth on both GPUs, so its time is the launch plus its DRAM bytes
// at the profile's copy bandwidth. Per DRAM byte, the A100 80GB takes
// 4260 / 1809.612 = 2.354 times the H200's time: the H200's measured
// 4260 GB/s over the A100's estimated 2039 * 4260/4800 = 1809.612 GB/s.
// The whole launch moves about 1.06 GB (512 MiB read, as much written
// less the 18 MB or so the L2 keeps): 4.39 us + 1.06 GB / 4260 GB/s =
// 253 us on the H200 and 4.39 us + 1.06 GB / 1809.6 GB/s = 590 us on
// the A100, 2.33 times.
func TestTimeScalesWithCopyBandwidth(t *testing.T) {
	in := `{"kernel":"vectorized_copy","n":134217728}`
	h200, a100 := predictFor(t, in, "h200"), predictFor(t, in, "a100-80gb")
	require.Equal(t, "bandwidth", h200.Time.Bound)
	require.Equal(t, "bandwidth", a100.Time.Bound)
	perByte := func(p Launch) float64 {
		return p.Time.Bandwidth / (p.Metrics[metrics.DRAMRead] + p.Metrics[metrics.DRAMWrite])
	}
	assert.InDelta(t, 4260/1809.612, perByte(a100)/perByte(h200), 1e-9)
	assert.InDelta(t, 253e-6, h200.TimeSeconds, 4e-6)
	assert.InDelta(t, 590e-6, a100.TimeSeconds, 4e-6)
	assert.InEpsilon(t, 2.33, a100.TimeSeconds/h200.TimeSeconds, 0.01)
}

// TestDRAMWritesFollowTheL2: a copy of n = 5 * 2^20 floats touches
// 2 * 20 MiB = 41.9 MB. Its last written lines are still in the L2 when
// the launch ends, and never reach DRAM inside it, if their LRU stack
// distance is under the profile's dirty_l2_bytes (widened by spread
// 0.2). The H200's 32.5 MB keeps every written line whose distance is
// under 26 MB and some up to 39 MB; the A100's estimated 21.7 MB (its
// 40 MiB L2 scaled by the H200's ratio) keeps none past 26 MB: the A100
// writes more of the copy's 21 MB to DRAM. Reads are the same, each
// source byte once.
func TestDRAMWritesFollowTheL2(t *testing.T) {
	in := `{"kernel":"coalesced_copy","n":5242880}`
	h200, a100 := predictFor(t, in, "h200"), predictFor(t, in, "a100-80gb")
	assert.Equal(t, h200.Metrics[metrics.DRAMRead], a100.Metrics[metrics.DRAMRead])
	assert.Greater(t, a100.Metrics[metrics.DRAMWrite], h200.Metrics[metrics.DRAMWrite])
	assert.Less(t, a100.Metrics[metrics.DRAMWrite], float64(5242880*4), "the A100 keeps the last writes too")
	assert.Greater(t, a100.Metrics[metrics.DRAMWrite], 1.5*h200.Metrics[metrics.DRAMWrite])
}

func TestUnknownDevice(t *testing.T) {
	_, err := Model(spec.Spec{Kernel: spec.CoalescedCopy, N: 32, Block: 32, ElemBytes: 4, L2Fetch: 64, Device: "a100"})
	assert.ErrorContains(t, err, `"a100"`)
	assert.ErrorContains(t, err, "a100-40gb, a100-80gb, h100-sxm, h200, l4, rtx3090, rtx4090, t4")
}
