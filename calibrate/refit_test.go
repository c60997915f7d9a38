package calibrate

import (
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coalescing-course/coalesce/cuda/reference"
	"github.com/coalescing-course/coalesce/lessons/devices"
	"github.com/coalescing-course/coalesce/lessons/measure"
	"github.com/coalescing-course/coalesce/lessons/metrics"
	"github.com/coalescing-course/coalesce/lessons/sectors"
	"github.com/coalescing-course/coalesce/lessons/spec"
)

// recordedSet is the course's recording with the probe's launches added:
// the data the h200 profile was fitted to (its provenance names both),
// under the recording's provenance.
func recordedSet(t *testing.T) *measure.Set {
	t.Helper()
	rec, err := reference.Recorded()
	require.NoError(t, err)
	set := &measure.Set{Origin: rec.Origin, Provenance: rec.Provenance}
	set.Launches = append(set.Launches, rec.Launches...)
	for _, f := range []string{"../cuda/testdata/probe_metrics.jsonl"} {
		more, err := measure.ReadFile(f)
		require.NoError(t, err)
		set.Launches = append(set.Launches, more.Launches...)
	}
	return set
}

// seedInFlight is the bytes of loads one H200 SM keeps in flight in the
// seed's copy: 64 warps of 32 floats, 64 × 128 B.
const seedInFlight = 64 * 128

// TestRefitH200 refits the h200 profile from the committed recording with
// the Fit coalesce calibrate runs, and holds it to the shipped one: each
// parameter within its tolerance, and the accuracy on the recording no
// worse.
func TestRefitH200(t *testing.T) {
	set := recordedSet(t)
	info := set.Provenance.Device
	got, rep, err := Fit(info, set, nil)
	require.NoError(t, err)
	want, err := devices.Lookup("h200")
	require.NoError(t, err)

	// From the device: exact.
	assert.Equal(t, want.SMs, got.SMs)
	assert.Equal(t, want.MaxThreadsPerSM, got.MaxThreadsPerSM)
	assert.Equal(t, want.MaxBlocksPerSM, got.MaxBlocksPerSM)
	assert.Equal(t, want.L2Bytes, got.L2Bytes)
	assert.Equal(t, want.DefaultL2Fetch, got.DefaultL2Fetch)

	rel := func(path string, g, w, tol float64) {
		t.Helper()
		assert.InEpsilon(t, w, g, tol, "%s: fitted %g, shipped %g", path, g, w)
	}
	// The median memcpy rate of the launches larger than the L2; the
	// shipped one is the whole sweep's median: 4.21 against 4.238 TB/s.
	rel("time.copy_bandwidth", got.Time.CopyBandwidth, want.Time.CopyBandwidth, 0.02)
	// The capacities: within one step of the fine search (a fifth of the
	// coarse step, 0.04 to 0.05 of the L2) of the shipped ones, the sparse
	// one, fitted to one strided_write, within a third.
	rel("dram.reuse_l2_bytes", float64(got.DRAM.ReuseL2Bytes), float64(want.DRAM.ReuseL2Bytes), 0.15)
	rel("dram.dirty_l2_bytes", float64(got.DRAM.DirtyL2Bytes), float64(want.DRAM.DirtyL2Bytes), 0.10)
	// The sparse capacity is all but free in the recording: only
	// strided_write at strides 32 and 128 over 256 MB depends on it, and
	// there 6 to 16 MB give the same counts within 15 %. The shipped 15.4
	// MB comes from the L2-edge sweep's stride-8 writes of 12 to 64 MB
	// (cuda/reference/l2edge.jsonl), which the calibration's launches do
	// not hold: the refit finds 6.3 MB. Held to a factor of 2.5, and to
	// the accuracy below.
	rel("dram.sparse_dirty_l2_bytes", float64(got.DRAM.SparseDirtyL2Bytes), float64(want.DRAM.SparseDirtyL2Bytes), 0.6)
	assert.InDelta(t, want.DRAM.Spread, got.DRAM.Spread, 0.15, "dram.spread")
	// The watermark and the profiled residue: within one step of the last
	// round's grid (two rounds of 5 points: half the coarse step), 0.7 L2
	// / 4 / 2 = 5.5 MB of the shipped 27 MB, and 0.1 L2 / 4 / 2 = 0.79 MB
	// of its 2.4 MB.
	rel("dram.dirty_watermark_bytes", float64(got.DRAM.DirtyWatermarkBytes), float64(want.DRAM.DirtyWatermarkBytes), 0.21)
	rel("dram.profiled_dirty_bytes", float64(got.DRAM.ProfiledDirtyBytes), float64(want.DRAM.ProfiledDirtyBytes), 0.33)
	assert.Equal(t, want.DRAM.BusyDirtyL2Bytes, got.DRAM.BusyDirtyL2Bytes, "dram.busy_dirty_l2_bytes: the shipped share of the same L2")
	rel("time.launch_seconds", got.Time.LaunchSeconds, want.Time.LaunchSeconds, 0.2)
	rel("time.block_rate", got.Time.BlockRate, want.Time.BlockRate, 0.2)
	// Latency and its growth per byte trade off along the copies' bytes
	// in flight: the data fixes their sum at the seed's, not each alone.
	at := func(p devices.Profile) float64 { return p.Time.LatencySeconds + p.Time.LatencyPerByte*seedInFlight }
	rel("latency at the seed's bytes in flight", at(got), at(want), 0.15)

	// Every parameter says where it came from, and none is an estimate:
	// the recording has counters and times.
	for _, p := range rep.Params {
		// No launch tells partial_write_fill, and the recording holds no
		// float4 copy near the L2's size for busy_dirty_l2_bytes
		// (writeback.jsonl does: TestFitBusyH200), which stays the
		// shipped share of the L2.
		if p.Path == "dram.partial_write_fill" || p.Path == busyParam.path {
			assert.True(t, p.Estimated, p.Path)
			continue
		}
		assert.False(t, p.Estimated, p.Path)
		assert.NotEmpty(t, p.Citation, p.Path)
	}
	assert.Contains(t, got.Provenance, "Calibrated on NVIDIA H200 (132 SMs, L2 62914560 B, compute capability 9.0), driver 580.159.04, CUDA 13.0")

	// Accuracy on the recording's launches the model predicts quickly (2^23
	// threads or fewer), traced once and replayed on both profiles: the
	// refit may lose at most 3 % of either share.
	rec, err := reference.Recorded()
	require.NoError(t, err)
	sample := accuracySample(rec.Measured())
	traces, err := traceAll(want, specsOf(sample))
	require.NoError(t, err)
	shipped, refit := score(sample, replayAll(traces, want)), score(sample, replayAll(traces, got))
	t.Logf("shipped: %v\nrefit:   %v", shipped, refit)
	require.Positive(t, shipped.DRAMOf)
	require.Positive(t, shipped.TimeOf)
	assert.GreaterOrEqual(t, refit.DRAMShare(), shipped.DRAMShare()-0.03)
	assert.GreaterOrEqual(t, refit.TimeShare(), shipped.TimeShare()-0.03)
	assert.False(t, math.IsNaN(rep.TimeCost))
}

// TestFitBusyH200 fits dram.busy_dirty_l2_bytes with FitBusy, the shipped
// h200's other parameters held, to the runs that measured it: the copies
// of cuda/reference/writeback.jsonl and the L2-edge sweep's float4 copies
// but for its held-out sizes. The shipped value is that fit's, exactly;
// and it must earn its place: the float4 copies' write bytes within 15 %
// (or 1 MB) of ncu on more launches with it than without it, and the other
// copies' and the gathers' on no fewer.
func TestFitBusyH200(t *testing.T) {
	h200, err := devices.Lookup("h200")
	require.NoError(t, err)
	var launches []measure.Launch
	for _, f := range []string{"../cuda/reference/writeback.jsonl", "../cuda/reference/l2edge.jsonl"} {
		set, err := measure.ReadFile(f)
		require.NoError(t, err)
		for _, l := range set.Launches {
			if !strings.HasSuffix(f, "l2edge.jsonl") || !heldOutN(l.Spec.N) {
				launches = append(launches, l)
			}
		}
	}
	got, err := FitBusy(h200, launches)
	require.NoError(t, err)
	assert.Equal(t, h200.DRAM.BusyDirtyL2Bytes, got, "dram.busy_dirty_l2_bytes: fitted %d, shipped %d", got, h200.DRAM.BusyDirtyL2Bytes)

	// Written back within 15 % (or 1 MB) of ncu, of the launches of kernel.
	within := func(p devices.Profile, kernel spec.Kernel) int {
		n := 0
		for _, l := range launches {
			if l.Spec.Kernel != kernel || !l.Profiled() {
				continue
			}
			pred, err := sectors.ModelOn(l.Spec, p)
			require.NoError(t, err)
			if dramError(pred.Metrics[metrics.DRAMWrite], l.Metrics[metrics.DRAMWrite]) <= 0.15 {
				n++
			}
		}
		return n
	}
	without := h200
	without.DRAM.BusyDirtyL2Bytes = 0
	for _, k := range []spec.Kernel{spec.VectorizedCopy, spec.CoalescedCopy, spec.GridStrideCopy, spec.GatherCopy} {
		with, none := within(h200, k), within(without, k)
		t.Logf("%s: writes within 15 %% on %d launches with dram.busy_dirty_l2_bytes, %d without", k, with, none)
		if k == spec.VectorizedCopy {
			assert.Greater(t, with, none, k)
		} else {
			assert.GreaterOrEqual(t, with, none, k)
		}
	}
}
