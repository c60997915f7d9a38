package calibrate

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coalescing-course/coalesce/cuda"
	"github.com/coalescing-course/coalesce/lessons/devices"
	"github.com/coalescing-course/coalesce/lessons/measure"
	"github.com/coalescing-course/coalesce/lessons/spec"
)

// h200Info is the H200 as the recording's harness --info saw it.
var h200Info = measure.DeviceInfo{GPU: "NVIDIA H200", ComputeCapability: "9.0", SMs: 132, L2Bytes: 62914560, MaxThreadsPerSM: 2048,
	FreeBytes: 149557477376, DefaultL2Fetch: 64}

// t4Info is a T4 as its datasheet describes it: 40 SMs, 4 MiB of L2,
// 1024 threads per SM, 16 GB.
var t4Info = measure.DeviceInfo{GPU: "Tesla T4", ComputeCapability: "7.5", SMs: 40, L2Bytes: 4 << 20, MaxThreadsPerSM: 1024,
	FreeBytes: 15 << 30, DefaultL2Fetch: 64}

func TestSpecsScaleWithTheGPU(t *testing.T) {
	h200, err := Specs(h200Info)
	require.NoError(t, err)
	t4, err := Specs(t4Info)
	require.NoError(t, err)
	require.Equal(t, len(h200), len(t4))
	// The lines of specs.jsonl: 5 bandwidth, 9 bytes in flight (4
	// grid-stride copies, a gather, sum_fields_aos and three transposes),
	// 5 fetch granularity (4 strided reads and update_x_aos) and 12
	// footprint sweep launches; 14 profiled (the first two fetch
	// granularity reads and the sweep).
	assert.Len(t, h200, 31)
	counted := 0
	for i := range h200 {
		h, s := h200[i], t4[i]
		assert.Equal(t, h.Step, s.Step)
		assert.Equal(t, h.Spec.Kernel, s.Spec.Kernel)
		if h.Counters {
			counted++
		}
		if h.Spec.Kernel == spec.GridStrideCopy {
			// The grid is in blocks per SM: 132 and 40 SMs.
			assert.Equal(t, h.Spec.Grid*40, s.Spec.Grid*132, h.Spec.Brief())
		}
	}
	assert.Equal(t, 14, counted)

	// The first line: a vectorized copy over 8 L2s, in and out buffers of
	// 4 bytes a float: 8 × 62914560 / 8 = 62914560 floats, a multiple of
	// 2^16 (960 × 2^16); 8 × 4 MiB / 8 = 4 Mi floats on the T4.
	assert.Equal(t, spec.VectorizedCopy, h200[0].Spec.Kernel)
	assert.Equal(t, int64(62914560), h200[0].Spec.N)
	assert.Equal(t, int64(4<<20), t4[0].Spec.N)
	// The tiny launch keeps its own n.
	assert.Equal(t, int64(65536), h200[3].Spec.N)
	assert.Equal(t, int64(65536), t4[3].Spec.N)
}

func TestSpecsFitInMemory(t *testing.T) {
	small := t4Info
	small.FreeBytes = 64 << 20 // 64 MiB free: a quarter is 16 MiB
	ps, err := Specs(small)
	require.NoError(t, err)
	for _, p := range ps {
		assert.LessOrEqual(t, footprint(p.Spec), int64(16<<20), p.Spec.Brief())
		assert.Equal(t, 64, p.Spec.L2Fetch, "the GPU's default fetch")
	}
	_, err = Specs(measure.DeviceInfo{GPU: "x"})
	assert.ErrorContains(t, err, "want both positive")
}

func TestSlug(t *testing.T) {
	tests := map[string]string{
		"NVIDIA H200":                  "nvidia-h200",
		"NVIDIA GeForce RTX 4090":      "nvidia-geforce-rtx-4090",
		"NVIDIA A100-SXM4-80GB":        "nvidia-a100-sxm4-80gb",
		"  NVIDIA H100 80GB HBM3 (x) ": "nvidia-h100-80gb-hbm3-x",
		"--":                           "",
	}
	for in, want := range tests {
		assert.Equal(t, want, Slug(in), in)
	}
}

// A quadratic bowl in two parameters: the search finds its bottom within
// a step of the last round's grid.
func TestSearch(t *testing.T) {
	// dirty_l2_bytes, 0.1 to 1 L2 (linear), and latency_seconds (log); a
	// new slice, so that the tables stay as they are.
	latency := param{path: "time.latency_seconds", lo: fixed(1e-7), hi: fixed(3e-6), log: true}
	ps := []param{dramParams[1], latency}
	info := measure.DeviceInfo{L2Bytes: 1000}
	// Bottom at dirty 437 B and latency 5.3e-7 s.
	cost := func(p devices.Profile) float64 {
		return math.Pow(float64(p.DRAM.DirtyL2Bytes)-437, 2)/1e4 + math.Pow(math.Log(p.Time.LatencySeconds/5.3e-7), 2)
	}
	got, c := search(devices.Profile{}, ps, info, 4, 5, cost)
	// After 4 rounds of 5 points the step is (900/4)/2^3 = 28 B wide
	// linear, (ln 30 / 4)/8 = 0.11 in log latency.
	assert.InDelta(t, 437, float64(got.DRAM.DirtyL2Bytes), 28)
	assert.InDelta(t, 0, math.Log(got.Time.LatencySeconds/5.3e-7), 0.11)
	assert.Equal(t, cost(got), c)
}

func testCache(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	t.Setenv(cuda.CacheEnv, dir)
	return dir
}

func calibrated(t *testing.T, info measure.DeviceInfo) Calibration {
	t.Helper()
	p, err := devices.Lookup("h200")
	require.NoError(t, err)
	p.Name, p.GPU, p.Match, p.SMs, p.L2Bytes = CalibratedName(info.GPU), info.GPU, nil, info.SMs, info.L2Bytes
	p.Citations["sms"] = "measured on " + info.GPU + " by a test"
	return Calibration{Profile: p, Calibrated: "2026-12-01"}
}

func TestCache(t *testing.T) {
	dir := testCache(t)
	_, ok, err := Cached("Tesla T4")
	require.NoError(t, err)
	assert.False(t, ok, "an empty cache holds nothing")

	c := calibrated(t, t4Info)
	path, err := Save(c)
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(dir, "profiles", "tesla-t4.json"), path)
	got, ok, err := Cached("Tesla T4")
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, c, got)
	entries, err := os.ReadDir(filepath.Dir(path))
	require.NoError(t, err)
	assert.Len(t, entries, 1, "no temporary file left behind")

	bad := c
	bad.SMs = 0
	_, err = Save(bad)
	assert.ErrorContains(t, err, "not caching an invalid profile")

	// A profile of another GPU under this GPU's name is refused as corrupt.
	other := calibrated(t, h200Info)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	_, err = Save(other)
	require.NoError(t, err)
	require.NoError(t, os.Rename(filepath.Join(dir, "profiles", "nvidia-h200.json"), path))
	_, ok, err = Cached("Tesla T4")
	assert.False(t, ok)
	var ce *CorruptError
	require.ErrorAs(t, err, &ce)
	assert.ErrorContains(t, err, `a profile of "NVIDIA H200", want "Tesla T4"`)
	assert.FileExists(t, path+".corrupt")
	assert.NoFileExists(t, path)

	for name, text := range map[string]string{
		"truncated":     string(data[:len(data)/2]),
		"unknown field": `{"name":"tesla-t4","gpu":"Tesla T4","colour":"green"}`,
		"invalid":       `{"name":"tesla-t4","gpu":"Tesla T4","sms":0}`,
	} {
		t.Run(name, func(t *testing.T) {
			require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
			_, ok, err := Cached("Tesla T4")
			assert.False(t, ok)
			assert.ErrorAs(t, err, &ce)
			assert.ErrorContains(t, err, "run coalesce calibrate again")
		})
	}
}

func TestCalibratedName(t *testing.T) {
	for gpu, want := range map[string]string{
		"Tesla T4":         "t4-calibrated",   // the shipped t4 matches it
		"NVIDIA H200":      "h200-calibrated", // and h200 this one
		"NVIDIA Quadro RX": "nvidia-quadro-rx-calibrated",
	} {
		assert.Equal(t, want, CalibratedName(gpu), gpu)
	}
}

// quadroInfo is a GPU no shipped profile matches.
var quadroInfo = measure.DeviceInfo{GPU: "NVIDIA Quadro RX", ComputeCapability: "8.6", SMs: 48, L2Bytes: 6 << 20, MaxThreadsPerSM: 1536, DefaultL2Fetch: 64}

// Choose looks in the cache, then for a shipped profile that matches the
// driver's name, then falls back on the H200's.
func TestChoose(t *testing.T) {
	testCache(t)
	h200, err := devices.Lookup("h200")
	require.NoError(t, err)
	t4, err := devices.Lookup("t4")
	require.NoError(t, err)

	p, why := Choose(h200Info)
	assert.Equal(t, h200, p)
	assert.Equal(t, "the course's H200, this machine's GPU", why)

	p, why = Choose(t4Info)
	assert.Equal(t, t4, p, "the shipped t4 matches Tesla T4")
	assert.Equal(t, "this machine's Tesla T4, by its name", why)

	p, why = Choose(quadroInfo)
	assert.Equal(t, h200, p)
	assert.Equal(t, "no profile for NVIDIA Quadro RX: the model describes the H200; run coalesce calibrate", why)

	c := calibrated(t, t4Info)
	_, err = Save(c)
	require.NoError(t, err)
	p, why = Choose(t4Info)
	assert.Equal(t, c.Profile, p)
	assert.Equal(t, "calibrated on this Tesla T4, 2026-12-01", why)

	// A MIG slice of the calibrated GPU: fewer SMs, the calibration passed
	// over for the shipped profile.
	slice := t4Info
	slice.SMs = 20
	p, why = Choose(slice)
	assert.Equal(t, t4, p)
	assert.Equal(t, "this machine's Tesla T4, by its name (the cached calibration is of 40 SMs and 4194304 B of L2, this GPU has 20 and 4194304: run coalesce calibrate -force)", why)

	// A calibration of the H200 wins over the shipped profile.
	ch := calibrated(t, h200Info)
	ch.Time.LaunchSeconds = 4e-6
	_, err = Save(ch)
	require.NoError(t, err)
	p, why = Choose(h200Info)
	assert.Equal(t, ch.Profile, p)
	assert.Equal(t, "calibrated on this NVIDIA H200, 2026-12-01", why)
}

// Adopt registers a cached calibration and makes it the profile a spec
// without "device" gets; a shipped one it only chooses.
func TestAdopt(t *testing.T) {
	testCache(t)
	t.Cleanup(func() { require.NoError(t, devices.Use(devices.Course, devices.CourseWhy)) })

	p, why, err := Adopt(t4Info)
	require.NoError(t, err)
	assert.Equal(t, "t4", p.Name)
	cur, curWhy := devices.Current()
	assert.Equal(t, "t4", cur.Name)
	assert.Equal(t, why, curWhy)

	c := calibrated(t, t4Info)
	_, err = Save(c)
	require.NoError(t, err)
	_, why, err = Adopt(t4Info)
	require.NoError(t, err)
	cur, curWhy = devices.Current()
	assert.Equal(t, c.Profile, cur)
	assert.Equal(t, "calibrated on this Tesla T4, 2026-12-01", curWhy)
	assert.Equal(t, why, curWhy)
	got, err := devices.Lookup("t4-calibrated")
	require.NoError(t, err)
	assert.Equal(t, c.Profile, got, "registered under its own name")
	m, ok := devices.Match("Tesla T4")
	require.True(t, ok)
	assert.Equal(t, "t4", m.Name, "the calibration claims no driver name: the shipped t4 keeps it")
}

// A fit without counters estimates the DRAM level from the H200's shares
// of its L2 and says so; without timed copies it fails.
func TestFitWithoutCounters(t *testing.T) {
	set := recordedSet(t)
	var timed []measure.Launch
	for _, l := range set.Measured() {
		if l.Spec.Kernel == spec.CoalescedCopy || l.Spec.Kernel == spec.GridStrideCopy {
			l.Metrics = nil
			timed = append(timed, l)
		}
	}
	noCounters := &measure.Set{Provenance: set.Provenance, Launches: timed}
	p, rep, err := Fit(h200Info, noCounters, &cuda.Latencies{DRAMLatencyNs: 600, L2LatencyNs: 250})
	require.NoError(t, err)
	ref, err := devices.Lookup("h200")
	require.NoError(t, err)
	// The H200's own L2, so its own capacities.
	assert.Equal(t, ref.DRAM, p.DRAM)
	assert.Zero(t, rep.DRAMLaunches)
	estimated := map[string]bool{}
	for _, q := range rep.Params {
		estimated[q.Path] = q.Estimated
	}
	assert.True(t, estimated["dram.reuse_l2_bytes"])
	assert.False(t, estimated["time.latency_seconds"])
	// Every value of the DRAM level is an estimate, and only those: the
	// geometry is the device's and the times were measured.
	var dram []string
	for _, path := range devices.Paths() {
		if strings.HasPrefix(path, "dram.") {
			dram = append(dram, path)
		}
	}
	assert.ElementsMatch(t, dram, p.Estimated)
	for _, path := range devices.Paths() {
		switch {
		case path == "match":
			assert.Empty(t, p.Citations[path], "a calibration claims no driver name")
		case strings.HasPrefix(path, "time."):
			assert.Regexp(t, `^measured on NVIDIA H200 by coalesce run .*, \d{4}-\d\d-\d\d: `, p.Citations[path], path)
		default:
			assert.NotEmpty(t, p.Citations[path], path)
		}
	}
	assert.Equal(t, "h200-calibrated", p.Name)
	assert.Empty(t, p.Match)
	assert.Contains(t, p.Provenance, "Pointer chase (harness --calibrate): DRAM 600 ns, L2 250 ns.")

	_, _, err = Fit(h200Info, &measure.Set{Provenance: set.Provenance}, nil)
	assert.ErrorIs(t, err, ErrNoData)
}

// FuzzDecode holds the cache's reader to a valid profile of the GPU asked
// for, or an error: never a panic, never a profile the model cannot use.
func FuzzDecode(f *testing.F) {
	ref, err := devices.Lookup("h200")
	require.NoError(f, err)
	good, err := json.Marshal(Calibration{Profile: ref, Calibrated: "2026-12-01"})
	require.NoError(f, err)
	f.Add(good)
	f.Add([]byte(`{"name":"h200","gpu":"NVIDIA H200","sms":-1}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var c Calibration
		if decode(data, "NVIDIA H200", &c) == nil {
			require.NoError(t, c.Validate())
			require.Equal(t, "NVIDIA H200", c.GPU)
		}
	})
}
