package lab

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coalescing-course/coalesce/calibrate"
	"github.com/coalescing-course/coalesce/cuda"
	"github.com/coalescing-course/coalesce/cuda/toolkit"
	"github.com/coalescing-course/coalesce/lessons/devices"
	"github.com/coalescing-course/coalesce/lessons/measure"
	"github.com/coalescing-course/coalesce/lessons/spec"
)

// fakeGPU makes the notebook's source a GPU whose harness is a shell
// script that writes answer to the file named by its --output flag: the
// live path, without a GPU. It has no ncu.
func fakeGPU(t *testing.T, answer string) *cuda.GPU {
	t.Helper()
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh to run a fake harness with")
	}
	dir := t.TempDir()
	results := filepath.Join(dir, "results.jsonl")
	require.NoError(t, os.WriteFile(results, []byte(answer+"\n"), 0o644))
	script := filepath.Join(dir, "harness")
	body := "#!/bin/sh\nwhile [ $# -gt 0 ]; do\n  if [ \"$1\" = --output ]; then cp " + results + " \"$2\"; fi\n  shift\ndone\n"
	require.NoError(t, os.WriteFile(script, []byte(body), 0o755))
	t.Setenv(cuda.CacheEnv, t.TempDir()) // no calibration of this machine's GPUs
	gpu := &cuda.GPU{
		Harness: &cuda.Harness{Path: script},
		Info:    measure.DeviceInfo{GPU: "Fake GPU", SMs: 132, MaxThreadsPerSM: 2048},
		NoNcu:   "ncu not found on PATH",
		Opened:  time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC),
	}
	useMeasurer(gpu, nil)
	t.Cleanup(resetMeasurer)
	return gpu
}

func TestMeasureLive(t *testing.T) {
	// coalesced_copy of 1024 floats: 1024 threads in 4 blocks; 8192
	// useful bytes in 4 µs, a memcpy of 2 × 4096 bytes in 3 µs.
	fakeGPU(t, `{"line":1,"time_ms":0.004,"time_ms_min":0.0039,"time_ms_max":0.0041,"timed_launches":20,`+
		`"memcpy_ms":0.003,"memcpy_bytes":4096,`+
		`"threads":1024,"grid_blocks":4,"block":256,"l2_fetch_granularity":64,"launched":true,"verified":true}`)
	s := Spec(`{"kernel":"coalesced_copy","n":1024}`)
	m, err := Measure(s)
	require.NoError(t, err)
	assert.Equal(t, "live: Fake GPU, 2026-12-01 10:00 UTC", m.Label())
	assert.Contains(t, m.Note, "no ncu on this machine, so times only")
	l, ok := m.Lookup(s)
	require.True(t, ok)
	assert.Equal(t, 0.004, l.TimeMs)
	assert.Nil(t, l.Metrics)
	text := m.Table().String()
	assert.Contains(t, text, "Measured: live: Fake GPU, 2026-12-01 10:00 UTC. no ncu on this machine")
	// 8192 B / 4 µs = 2 GB/s; over 8192 B / 3 µs of memcpy: 75%.
	assert.Regexp(t, `(?m)^coalesced_copy, n 2\^10 +4\.0 +2 +75% +— +— +—$`, text)

	// Compare fills the measured columns from the live run.
	tb, err := Compare([]Case{{"copy", s}}, UsefulGBps, LdSectorsPerRequest)
	require.NoError(t, err)
	assert.Equal(t, []string{"copy", tb.Rows[0][1], "2", "4", Missing}, tb.Rows[0])

	// Without ncu the counters come from the recording, which says so.
	t.Setenv(toolkit.NvccEnv, "/nonexistent/nvcc")
	p, err := Profile(Spec(`{"kernel":"coalesced_copy","n":67108864}`))
	require.NoError(t, err)
	assert.Equal(t, measure.Recorded, p.Origin.Kind)
	assert.Contains(t, p.Caption(), "no ncu on this machine, so its counters come from the recording")
}

func TestMeasureLiveFailure(t *testing.T) {
	fakeGPU(t, `{"line":1,"error":"needs 4096 GiB, 139 GiB free"}`)
	_, err := Measure(Spec(`{"kernel":"coalesced_copy","n":1024}`))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "lab: measure: 1 launch not measured (live: Fake GPU, 2026-12-01 10:00 UTC)")
	assert.Contains(t, err.Error(), "needs 4096 GiB, 139 GiB free")
	assert.NotContains(t, err.Error(), "The recording holds", "a live run suggests no recorded launches")
}

// A live GPU makes the model describe it: the shipped profile its driver's
// name matches, then its calibration once coalesce calibrate cached one;
// the recording brings back the course's H200. Status says which and why.
func TestLiveChoosesTheProfile(t *testing.T) {
	out := capture(t)
	t.Setenv(cuda.CacheEnv, t.TempDir())
	t.Cleanup(resetMeasurer)
	t4, err := devices.Lookup("t4")
	require.NoError(t, err)
	gpu := &cuda.GPU{
		Harness: &cuda.Harness{Path: "/nonexistent/harness"},
		Info:    measure.DeviceInfo{GPU: "Tesla T4", ComputeCapability: "7.5", SMs: 40, L2Bytes: 4 << 20, MaxThreadsPerSM: 1024, DefaultL2Fetch: 64},
		NoNcu:   "ncu not found on PATH",
		Opened:  time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC),
	}

	useMeasurer(gpu, nil)
	d, why := devices.Current()
	assert.Equal(t, "t4", d.Name)
	assert.Equal(t, "this machine's Tesla T4, by its name", why)
	assert.Equal(t, "t4", Spec(`{"kernel":"coalesced_copy","n":1024}`).Device, "a spec without device predicts for this GPU")
	Status()
	assert.Contains(t, out.String(), "Model: the sector model of the Tesla T4 (device \"t4\"): 40 SMs, 4 MiB of L2,")
	assert.Contains(t, out.String(), fmt.Sprintf("\nProfile: this machine's Tesla T4, by its name; %d fields estimated, not measured on this GPU (coalesce calibrate measures what it can).\n", len(t4.Estimated)))

	// A calibration of this T4, all measured: the shipped t4's numbers
	// under the calibration's name, with no estimate and no driver name.
	cal := t4
	cal.Name, cal.Match, cal.Estimated = calibrate.CalibratedName(gpu.Info.GPU), nil, nil
	cal.Time.LaunchSeconds = 5e-6
	_, err = calibrate.Save(calibrate.Calibration{Profile: cal, Calibrated: "2026-12-01"})
	require.NoError(t, err)
	out.Reset()
	useMeasurer(gpu, nil)
	d, why = devices.Current()
	assert.Equal(t, cal, d)
	assert.Equal(t, "calibrated on this Tesla T4, 2026-12-01", why)
	assert.Equal(t, "t4-calibrated", Spec(`{"kernel":"coalesced_copy","n":1024}`).Device)
	Status()
	assert.Contains(t, out.String(), "Model: the sector model of the Tesla T4 (device \"t4-calibrated\"): 40 SMs, 4 MiB of L2,")
	assert.Contains(t, out.String(), "\nProfile: calibrated on this Tesla T4, 2026-12-01.\n")

	// The recording was measured on the course's H200: its profile again.
	recorded(t)
	d, why = devices.Current()
	assert.Equal(t, devices.Course, d.Name)
	assert.Equal(t, devices.CourseWhy, why)
}

// Under COALESCE_MEASURE=strict a GPU without ncu fails a cell that asks
// for counters, where live mode times only (Measure) or takes the
// recording's counters (Profile); times alone are still measured.
func TestStrictFailsInsteadOfFallingBack(t *testing.T) {
	gpu := fakeGPU(t, `{"line":1,"time_ms":0.004,"time_ms_min":0.0039,"time_ms_max":0.0041,"timed_launches":20,`+
		`"memcpy_ms":0.003,"memcpy_bytes":4096,`+
		`"threads":1024,"grid_blocks":4,"block":256,"l2_fetch_granularity":64,"launched":true,"verified":true}`)
	gpu.Strict = true
	s := Spec(`{"kernel":"coalesced_copy","n":1024}`)
	for name, call := range map[string]func() (*Measurements, error){
		"Measure": func() (*Measurements, error) { return Measure(s) },
		"Profile": func() (*Measurements, error) { return Profile(s) },
		"Compare": func() (*Measurements, error) {
			_, err := Compare([]Case{{"copy", s}}, UsefulGBps)
			return nil, err
		},
	} {
		m, err := call()
		require.Error(t, err, name)
		assert.Nil(t, m, name)
		assert.ErrorIs(t, err, cuda.ErrStandIn, name)
		assert.ErrorContains(t, err, "counters asked for, but ncu not found on PATH", name)
	}
	set, err := gpu.Measure(t.Context(), []spec.Spec{s}, measure.Times)
	require.NoError(t, err, "times need no stand-in")
	assert.Equal(t, 0.004, set.Launches[0].TimeMs)
}

// Status on a strict GPU that cannot count says so on stderr, failing the
// lesson's first cell in a headless run; on a live one the captions say
// it later, and Status is silent about a missing ncu.
func TestStatusStrictWithoutCounters(t *testing.T) {
	for _, strict := range []bool{false, true} {
		t.Run(fmt.Sprint("strict=", strict), func(t *testing.T) {
			out := capture(t)
			_, errOut := exited(t)
			gpu := fakeGPU(t, `{"line":1,"error":"not measured"}`)
			gpu.Strict = strict
			useMeasurer(logSpecs(gpu, filepath.Join(t.TempDir(), "specs.jsonl")), nil) // through the spec log, as run_notebooks.py opens it
			Status()
			assert.Contains(t, out.String(), "Measurements: live: Fake GPU, 2026-12-01 10:00 UTC: this machine's GPU runs the kernels.\n")
			if !strict {
				assert.Empty(t, errOut.String())
				assert.NotContains(t, out.String(), "Counters:")
				return
			}
			assert.Equal(t, "Counters: COALESCE_MEASURE=strict, but Nsight Compute cannot read this GPU's counters: cuda: strict: no stand-in for a live measurement: counters asked for, but ncu not found on PATH\n", errOut.String())
		})
	}
}
