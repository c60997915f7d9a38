package cuda

import (
	"context"
	"encoding/json"
	"os"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coalescing-course/coalesce/cuda/reference"
	"github.com/coalescing-course/coalesce/cuda/toolkit"
	"github.com/coalescing-course/coalesce/lessons/measure"
	"github.com/coalescing-course/coalesce/lessons/metrics"
	"github.com/coalescing-course/coalesce/lessons/sectors"
	"github.com/coalescing-course/coalesce/lessons/spec"
)

func TestOpenMeasurer(t *testing.T) {
	// No nvcc here, whatever the machine has.
	t.Setenv(toolkit.NvccEnv, "/nonexistent/nvcc")
	ctx := context.Background()

	src, err := OpenMeasurer(ctx, "", Builder{})
	require.NoError(t, err, "auto falls back on the recording")
	o := src.Origin()
	assert.Equal(t, measure.Recorded, o.Kind)
	assert.Equal(t, "recorded on NVIDIA H200, 2026-12-01", o.String())
	assert.Contains(t, o.Why, "no GPU here: ")
	assert.Contains(t, o.Why, "/nonexistent/nvcc")

	s := mustParse(t, `{"kernel":"strided_copy","n":67108864,"stride":32}`, `{"kernel":"strided_copy","n":67108864,"stride":31}`)
	set, err := src.Measure(ctx, s, measure.Times|measure.Counters)
	require.NoError(t, err)
	assert.Greater(t, set.Launches[0].TimeMs, 0.0, "the sweep holds stride 32")
	assert.True(t, set.Launches[1].Failed(), "but not stride 31")
	var nm *measure.NotMeasuredError
	require.ErrorAs(t, set.Err(), &nm)
	assert.NotEmpty(t, nm.Near[spec.StridedCopy], "it suggests the strided copies it holds")

	rec, err := OpenMeasurer(ctx, "recorded", Builder{})
	require.NoError(t, err)
	assert.Equal(t, "COALESCE_MEASURE=recorded", rec.Origin().Why)

	for mode, want := range map[string]string{
		"none":   "COALESCE_MEASURE=none",
		"live":   "COALESCE_MEASURE=live, but cuda: nvcc not found",
		"strict": "COALESCE_MEASURE=strict, but cuda: nvcc not found",
		"bogus":  `COALESCE_MEASURE="bogus": want live, strict, recorded, auto or none`,
	} {
		_, err := OpenMeasurer(ctx, mode, Builder{})
		assert.ErrorIs(t, err, ErrNoMeasurer, mode)
		assert.ErrorContains(t, err, want, mode)
	}
}

// A grid of "one full wave" is the wave of the GPU the harness runs on,
// not of the spec's device: the plan carries the live GPU's.
func TestPlanUsesTheLiveGPUsWave(t *testing.T) {
	s := mustParse(t, `{"kernel":"grid_stride_copy","n":4096,"block":512}`)[0]
	line, err := plan(s, &measure.DeviceInfo{SMs: 108, MaxThreadsPerSM: 2048}, "")
	require.NoError(t, err)
	var got map[string]any
	require.NoError(t, json.Unmarshal(line, &got))
	// 108 SMs × 2048/512 blocks each, of 512 threads.
	assert.Equal(t, 432.0, got["blocks"])
	assert.Equal(t, 432.0*512, got["threads"])
	assert.Equal(t, 4.0, got["width"])
	assert.Equal(t, 4.0, got["unroll"])
	assert.Equal(t, 0.0, got["grid"])
	assert.NotContains(t, got, "device", "the harness runs on the GPU at hand")
}

// The sweep was measured by three harnesses on the same H200: check runs 1
// and 2 of issue 10 (runs/check.sh; NOTES.md, the second after
// grid_stride_copy's loop became warp-uniform), and the recording itself,
// made again with the matrix kernels and the shared counters added
// (runs/matrix.sh, 2026-12-01). Every launch the earlier runs
// measured must count the same in the recording and run no slower or
// faster than the spread of two runs.
func TestRebuiltHarnessReproducesTheRecording(t *testing.T) {
	rec, err := reference.Recorded()
	require.NoError(t, err)
	for _, file := range []string{"testdata/sweep_check1.jsonl", "testdata/sweep_check2.jsonl"} {
		t.Run(file, func(t *testing.T) {
			old, err := measure.ReadFile(file)
			require.NoError(t, err)
			require.NotNil(t, old.Provenance)
			assert.Equal(t, rec.Provenance.Device.GPU, old.Provenance.Device.GPU, "the same kind of GPU")

			var ratios []float64
			for _, l := range old.Measured() {
				a, ok := rec.Lookup(l.Spec)
				if !assert.True(t, ok, "not in the recording: %s", l.Spec.Brief()) {
					continue
				}
				for _, m := range metrics.L1 {
					assert.Equal(t, l.Metrics[m], a.Metrics[m], "%s: %s", l.Spec.Brief(), m)
				}
				// DRAM counts of launches that stream (over 4 MB) move by a
				// few kilobytes between runs: refreshes, the flush before
				// each launch.
				if rd := l.Metrics[metrics.DRAMRead]; rd > 4e6 {
					assert.InEpsilon(t, rd, a.Metrics[metrics.DRAMRead], 0.01, "%s: DRAM read", l.Spec.Brief())
				}
				ratios = append(ratios, a.TimeMs/l.TimeMs)
			}
			require.Len(t, ratios, len(old.Measured()))
			slices.Sort(ratios)
			assert.InDelta(t, 1, ratios[len(ratios)/2], 0.02, "median time ratio, the recording over the earlier run")
			assert.InDelta(t, 1, ratios[0], 0.15, "fastest ratio")
			assert.InDelta(t, 1, ratios[len(ratios)-1], 0.15, "slowest ratio")
		})
	}
}

// What ncu counted for grid_stride_copy launches whose end falls inside a
// warp (testdata/grid_stride_tail.jsonl), before and after the kernel's
// loop became warp-uniform (runs/gridstride.sh, logs in
// runs/log/gridstride_{before,after}*). Before, the one straddling warp
// ran lanes of two rounds in one instruction. By hand, for unroll 6 (n =
// 247666, T = 19968 threads, 8050 vectors in the last round, so warp 251
// has 18 lanes there): the model's warp makes 6+6+1 = 13 loads touching
// 6×4 + 6×4 + 3 = 51 sectors; ptxas peeled the odd trip for lanes 0-17
// (6 loads of 3 sectors), then ran rounds 1 and 2 of lanes 0-17 with
// rounds 0 and 1 of lanes 18-31 (6 loads of 3+2 sectors, then one of 3+2
// and five of 2): 18 loads, 63 sectors. After, every launch equals the
// model.
func TestGridStrideTailCounts(t *testing.T) {
	lines := readSpecFile(t, "testdata/grid_stride_tail.jsonl")
	read := func(file string) []toolkit.KernelMetrics {
		data, err := os.ReadFile(file)
		require.NoError(t, err)
		rows, err := toolkit.ParseNcuCSV(data, metrics.L1)
		require.NoError(t, err)
		require.Len(t, rows, len(lines), "one profiled kernel a spec")
		return rows
	}
	before, after := read("../runs/log/gridstride_before_ncu.csv"), read("../runs/log/gridstride_after_ncu.csv")
	for i, l := range lines {
		s := l.Spec
		p, err := sectors.Model(s)
		require.NoError(t, err)
		for _, m := range metrics.L1 {
			assert.Equal(t, p.Metrics[m], after[i].Metrics[m], "after, %s: %s", s.Brief(), m)
		}
		if i == 0 {
			require.Equal(t, 6, s.Unroll)
			assert.Equal(t, p.Metrics[metrics.LdRequests]+18-13, before[i].Metrics[metrics.LdRequests], "before: 18 loads for the model's 13")
			assert.Equal(t, p.Metrics[metrics.LdSectors]+63-51, before[i].Metrics[metrics.LdSectors], "before: 63 sectors for the model's 51")
		}
	}
}

// readSpecFile reads a file of specs, one a line, every one valid.
func readSpecFile(t *testing.T, path string) []spec.Line {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	lines, err := spec.ReadAll(f)
	require.NoError(t, err)
	for _, l := range lines {
		require.NoError(t, l.Err, "%s:%d", path, l.Num)
	}
	return lines
}

// Live and strict open the same GPU; only strict makes it refuse stand-ins
// (TestStrictRefusesStandIns).
func TestOpenMeasurerStrict(t *testing.T) {
	f := newFakeBuild(t)
	h, err := f.b.Build(context.Background())
	require.NoError(t, err)
	// The cached harness, made to answer --info as a GPU's would.
	require.NoError(t, os.WriteFile(h.Path, []byte("#!/bin/sh\necho '{\"gpu\":\"Fake GPU\",\"sms\":132,\"max_threads_per_sm\":2048}'\n"), 0o755))
	for mode, strict := range map[string]bool{"live": false, "strict": true, " Strict ": true, "auto": false} {
		src, err := OpenMeasurer(context.Background(), mode, f.b)
		require.NoError(t, err, mode)
		g, ok := src.(*GPU)
		require.True(t, ok, "%q opens the GPU, not %T", mode, src)
		assert.Equal(t, "Fake GPU", g.Info.GPU)
		assert.Equal(t, strict, g.Strict, mode)
	}
	assert.Len(t, f.builds(t), 1, "the harness was built once, then found in the cache")
}
