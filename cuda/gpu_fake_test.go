package cuda

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coalescing-course/coalesce/cuda/toolkit"
	"github.com/coalescing-course/coalesce/internal/faketool"
	"github.com/coalescing-course/coalesce/lessons/measure"
	"github.com/coalescing-course/coalesce/lessons/metrics"
	"github.com/coalescing-course/coalesce/lessons/spec"
)

// fakeTool stands in for the harness and for ncu: it copies its input
// (--input) to $FAKE_SEEN, writes $FAKE_RESULTS to its --output, prints
// $FAKE_STDOUT and $FAKE_STDERR, and exits with $FAKE_EXIT. Run with
// --info, it prints $FAKE_INFO instead. Its k-th run with an input
// (counted in the file $FAKE_COUNT; ncu --version is not one) also copies its input to $FAKE_SEEN.k, and takes
// $FAKE_RESULTS.k, $FAKE_STDOUT.k and $FAKE_EXIT_k in place of the plain
// ones where they are there.
const fakeTool = `
in=""; out=""; info=""; cal=""
while [ $# -gt 0 ]; do
  case "$1" in --input) in="$2"; shift;; --output) out="$2"; shift;; --info) info=1;; --calibrate) cal=1;; esac
  shift
done
k=0; [ -n "$in" ] && k=$(( $(cat "$FAKE_COUNT" 2>/dev/null || echo 0) + 1 )) && echo "$k" > "$FAKE_COUNT"
res="$FAKE_RESULTS"; [ -f "$FAKE_RESULTS.$k" ] && res="$FAKE_RESULTS.$k"
sout="$FAKE_STDOUT"; [ -f "$FAKE_STDOUT.$k" ] && sout="$FAKE_STDOUT.$k"
eval "code=\${FAKE_EXIT_$k:-\${FAKE_EXIT:-0}}"
if [ -n "$info" ]; then printf '%s\n' "$FAKE_INFO"; fi
if [ -n "$cal" ]; then printf '%s\n' "$FAKE_CALIBRATE"; fi
if [ -n "$in" ] && [ -n "$FAKE_SEEN" ]; then cp "$in" "$FAKE_SEEN"; cp "$in" "$FAKE_SEEN.$k"; fi
if [ -n "$out" ] && [ -n "$res" ]; then cp "$res" "$out"; fi
if [ -n "$sout" ]; then cat "$sout"; fi
if [ -n "$FAKE_STDERR" ]; then printf '%s\n' "$FAKE_STDERR" >&2; fi
exit "$code"
`

type fake struct {
	t    *testing.T
	dir  string
	gpu  *GPU
	ncu  toolkit.Ncu
	seen string
}

func newFake(t *testing.T) *fake {
	t.Helper()
	faketool.NeedSh(t)
	dir := t.TempDir()
	tool := faketool.Script(t, dir, "tool", fakeTool)
	f := &fake{t: t, dir: dir, ncu: toolkit.Ncu{Path: tool}, seen: filepath.Join(dir, "seen.jsonl"),
		gpu: &GPU{Harness: &Harness{Path: tool}, Info: measure.DeviceInfo{GPU: "Fake GPU", SMs: 132, MaxThreadsPerSM: 2048}, NoNcu: "ncu not found (fake)"}}
	for _, k := range []string{"FAKE_RESULTS", "FAKE_STDOUT", "FAKE_STDERR", "FAKE_EXIT", "FAKE_INFO", "FAKE_CALIBRATE"} {
		t.Setenv(k, "")
	}
	t.Setenv("FAKE_SEEN", f.seen)
	t.Setenv("FAKE_COUNT", filepath.Join(dir, "count"))
	return f
}

// answerRun sets what the fake writes as its results on its k-th run.
func (f *fake) answerRun(k int, lines ...string) {
	p := filepath.Join(f.dir, "results.jsonl")
	require.NoError(f.t, os.WriteFile(fmt.Sprintf("%s.%d", p, k), []byte(strings.Join(lines, "\n")+"\n"), 0o644))
	f.t.Setenv("FAKE_RESULTS", p)
}

// stdoutRun sets what the fake prints on its k-th run.
func (f *fake) stdoutRun(k int, text string) {
	p := filepath.Join(f.dir, "stdout.txt")
	require.NoError(f.t, os.WriteFile(fmt.Sprintf("%s.%d", p, k), []byte(text), 0o644))
	f.t.Setenv("FAKE_STDOUT", p)
}

// sentRun returns the lines the fake received on its k-th run; nil when
// there was none.
func (f *fake) sentRun(k int) []string {
	data, err := os.ReadFile(fmt.Sprintf("%s.%d", f.seen, k))
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(f.t, err)
	return strings.Split(strings.TrimSpace(string(data)), "\n")
}

// answer sets what the fake writes as its results, one line each.
func (f *fake) answer(lines ...string) {
	p := filepath.Join(f.dir, "results.jsonl")
	require.NoError(f.t, os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o644))
	f.t.Setenv("FAKE_RESULTS", p)
}

func (f *fake) stdout(text string) {
	p := filepath.Join(f.dir, "stdout.txt")
	require.NoError(f.t, os.WriteFile(p, []byte(text), 0o644))
	f.t.Setenv("FAKE_STDOUT", p)
}

// measure runs f's GPU for want and returns the launches.
func (f *fake) measure(specs []spec.Spec, want measure.Want) ([]measure.Launch, error) {
	set, err := f.gpu.Measure(context.Background(), specs, want)
	if err != nil {
		return nil, err
	}
	require.Len(f.t, set.Launches, len(specs))
	return set.Launches, nil
}

// sent returns the lines the fake received.
func (f *fake) sent() []string {
	data, err := os.ReadFile(f.seen)
	require.NoError(f.t, err)
	return strings.Split(strings.TrimSpace(string(data)), "\n")
}

func mustParse(t *testing.T, lines ...string) []spec.Spec {
	t.Helper()
	var out []spec.Spec
	for _, l := range lines {
		s, err := spec.Parse([]byte(l))
		require.NoError(t, err, l)
		out = append(out, s)
	}
	return out
}

// good is the harness's answer for s on line n: what the real harness
// writes for a verified launch, with made-up but consistent times.
func good(n int, s spec.Spec, timed bool) string {
	m := map[string]any{
		"line": n, "threads": s.Threads(), "grid_blocks": s.GridBlocks(),
		"block": s.Block, "l2_fetch_granularity": s.L2Fetch, "launched": true, "verified": true,
	}
	if timed {
		m["time_ms"], m["time_ms_min"], m["time_ms_max"], m["timed_launches"] = 0.5, 0.4, 0.7, 20
		m["memcpy_ms"], m["memcpy_bytes"] = 0.25, 1024
	}
	b, _ := json.Marshal(m)
	return string(b)
}

var threeSpecs = []string{
	`{"kernel":"coalesced_copy","n":1024}`,
	`{"kernel":"gather_copy","n":64,"index_pattern":"reverse"}`,
	`{"kernel":"strided_copy","n":1024,"stride":4}`,
}

func TestRunParsesResults(t *testing.T) {
	f := newFake(t)
	specs := mustParse(t, threeSpecs...)
	f.answer(good(1, specs[0], true), good(2, specs[1], true), good(3, specs[2], true))
	results, err := f.measure(specs, measure.Times)
	require.NoError(t, err)
	for i, r := range results {
		assert.False(t, r.Failed(), r.Error)
		assert.Equal(t, specs[i].String(), r.Spec.String(), "results carry the spec as given, pattern and all")
		assert.Equal(t, 0.5, r.TimeMs)
		assert.Equal(t, 0.4, r.TimeMsMin)
		assert.Equal(t, 20, r.TimedLaunches)
		assert.Equal(t, 0.25, r.MemcpyMs)
		assert.Equal(t, int64(1024), r.MemcpyBytes)
		// 2 × 1024 bytes in 0.25 ms.
		assert.Equal(t, 2*1024/0.25e-3, r.MemcpyBandwidth())
		assert.True(t, r.Verified)
		assert.Nil(t, r.Metrics, "timed, not profiled")
	}
	sent := f.sent()
	require.Len(t, sent, 3)
	// The harness gets the plan: the spec's fields and every size the
	// kernel table derives (1024 threads in 4 blocks of 256, 4096-byte
	// buffers), so that it computes none of them.
	assert.JSONEq(t, `{"kernel":"coalesced_copy","n":1024,"block":256,"elem_bytes":4,"l2_fetch_granularity":64,
		"blocks":4,"threads":1024,"block_x":256,"block_y":1,"grid_x":4,"grid_y":1,"shared_bytes":0,
		"bytes_in":4096,"bytes_out":4096,"memcpy_from":"in","memcpy_to":"out"}`, sent[0])
	// The gather goes out with an index file the Go side wrote, never a pattern.
	var g map[string]any
	require.NoError(t, json.Unmarshal([]byte(sent[1]), &g))
	assert.NotContains(t, g, "index_pattern")
	assert.NotContains(t, g, "seed")
	assert.Contains(t, g["index_file"], "idx-2.bin")
	_, err = os.Stat(g["index_file"].(string))
	assert.True(t, os.IsNotExist(err), "the index file is removed after the run")
}

func TestRunPerSpecErrors(t *testing.T) {
	f := newFake(t)
	specs := mustParse(t, threeSpecs...)
	bad := specs[0]
	bad.Stride = 0 // not a field of coalesced_copy: Validate does not mind
	bad.ElemBytes = 3
	specs = append([]spec.Spec{bad}, specs...)
	// The invalid first spec is never sent: the harness sees 3 lines.
	f.answer(
		good(1, specs[1], true),
		`{"line":2,"error":"verification failed: 3 output elements wrong, the first at index 7","launched":true}`,
		`{"line":3,"error":"spec needs 2.000 GiB of device memory for its buffers, but only 1.000 GiB of 80.000 GiB is free: make n smaller"}`,
	)
	t.Setenv("FAKE_EXIT", "1")
	results, err := f.measure(specs, measure.Times)
	require.NoError(t, err, "status 1 only means some line failed")
	assert.Contains(t, results[0].Error, "elem_bytes")
	assert.False(t, results[1].Failed())
	assert.Contains(t, results[2].Error, "verification failed")
	assert.Zero(t, results[2].TimeMs, "a wrong result has no time")
	assert.Contains(t, results[3].Error, "device memory")
	assert.Len(t, f.sent(), 3)
}

func TestRunWholeRunErrors(t *testing.T) {
	specs := mustParse(t, threeSpecs[0])
	tests := []struct {
		name    string
		exit    string
		stderr  string
		results []string
		check   func(t *testing.T, err error)
	}{
		{"no GPU", "3", `{"error":"no CUDA device: no CUDA-capable device is detected","cuda_error":"cudaErrorNoDevice"}`, nil,
			func(t *testing.T, err error) {
				assert.ErrorIs(t, err, toolkit.ErrNoGPU)
				assert.Equal(t, "cuda: no CUDA device: no CUDA-capable device is detected: run on a machine with an NVIDIA GPU, or use the recorded reference (coalesce compare falls back on it)", err.Error())
			}},
		{"no driver", "4", `{"error":"no usable CUDA device: CUDA driver version is insufficient for CUDA runtime version","cuda_error":"cudaErrorInsufficientDriver"}`, nil,
			func(t *testing.T, err error) {
				assert.ErrorIs(t, err, toolkit.ErrNoDriver)
				var me *toolkit.MissingError
				assert.ErrorAs(t, err, &me)
			}},
		{"usage error keeps stderr", "2", "harness: --reps: want at least 9 timed launches", nil,
			func(t *testing.T, err error) {
				var te *toolkit.ToolError
				require.ErrorAs(t, err, &te)
				assert.Equal(t, 2, te.ExitCode)
				assert.Contains(t, err.Error(), "want at least 9 timed launches")
			}},
		{"crash keeps stderr", "139", "Segmentation fault", []string{good(1, specs[0], true)},
			func(t *testing.T, err error) {
				assert.Contains(t, err.Error(), "status 139: Segmentation fault")
			}},
		{"malformed line", "0", "", []string{`{"line":1,"time_ms":`},
			func(t *testing.T, err error) {
				var oe *toolkit.OutputError
				require.ErrorAs(t, err, &oe)
				assert.Equal(t, 1, oe.Line)
			}},
		{"unknown field", "0", "", []string{strings.Replace(good(1, specs[0], true), `"line":1`, `"line":1,"surprise":2`, 1)},
			func(t *testing.T, err error) { assert.ErrorContains(t, err, "surprise") }},
		{"too many answers", "0", "", []string{good(1, specs[0], true), good(2, specs[0], true)},
			func(t *testing.T, err error) { assert.ErrorContains(t, err, "2 answers to 1 specs") }},
		{"no answer", "1", "", []string{""},
			func(t *testing.T, err error) { assert.ErrorContains(t, err, "empty line") }},
		{"no results file", "0", "", nil,
			func(t *testing.T, err error) { assert.ErrorContains(t, err, "reading the harness's answers") }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t)
			if tt.results != nil {
				f.answer(tt.results...)
			}
			t.Setenv("FAKE_EXIT", tt.exit)
			t.Setenv("FAKE_STDERR", tt.stderr)
			_, err := f.gpu.Measure(context.Background(), specs, measure.Times)
			require.Error(t, err)
			tt.check(t, err)
		})
	}
}

// The L2 fetch granularity is a hint the driver may decline: a launch
// that ran with another than its spec's is not reported as the spec's.
func TestRunChecksTheFetchGranularity(t *testing.T) {
	s := mustParse(t, `{"kernel":"coalesced_copy","n":1024,"l2_fetch_granularity":32}`)[0]
	f := newFake(t)
	line := good(1, s, true)
	require.Contains(t, line, `"l2_fetch_granularity":32`)
	f.answer(strings.Replace(line, `"l2_fetch_granularity":32`, `"l2_fetch_granularity":64`, 1))
	results, err := f.measure([]spec.Spec{s}, measure.Times)
	require.NoError(t, err)
	assert.Contains(t, results[0].Error, "read back as 64 after setting 32")
	assert.Zero(t, results[0].TimeMs)
}

// probeCSV returns the header, the units row and the first n kernel rows
// of the CSV ncu printed for the probe on the H200 (testdata/probe_ncu.csv),
// with the shared-memory columns the probe's ncu was not asked for added:
// in base units (instructions, wavefronts), each row's shared counts 0, as
// the copies, which use no shared memory, have.
func probeCSV(t *testing.T, n int) string {
	t.Helper()
	f, err := os.Open("testdata/probe_ncu.csv")
	require.NoError(t, err)
	defer f.Close()
	var b strings.Builder
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	rows := 0
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, `"`) {
			if rows >= n+2 {
				continue
			}
			for _, m := range append(slices.Clone(metrics.Shared), metrics.L2FromL1...) {
				switch rows {
				case 0:
					line += `,"` + m + `"`
				case 1:
					line += `,"` + sharedUnit(m) + `"`
				default:
					line += `,"0"`
				}
			}
			rows++
		}
		b.WriteString(line + "\n")
	}
	return b.String()
}

// sharedUnit is the base unit ncu prints for a shared-memory metric.
func sharedUnit(m string) string {
	switch m {
	case metrics.ShLdRequests, metrics.ShStRequests:
		return "inst"
	case metrics.ShLdWavefronts, metrics.ShStWavefronts:
		return "wavefront"
	case metrics.L2ReadSectors, metrics.L2WriteSectors:
		return "sector"
	}
	return ""
}

func TestProfilePairsKernelsWithSpecs(t *testing.T) {
	f := newFake(t)
	// The probe's lines 1, 2 and 3 are coalesced copies of 1-, 2- and 4-byte
	// elements: ncu's rows 0, 1, 2.
	specs := mustParse(t,
		`{"kernel":"coalesced_copy","n":1048576,"elem_bytes":1}`,
		`{"kernel":"coalesced_copy","n":1048576,"elem_bytes":4}`,
		`{"kernel":"coalesced_copy","n":1048576,"elem_bytes":2}`,
		`{"kernel":"coalesced_copy","n":1048576,"elem_bytes":4}`,
		`{"kernel":"coalesced_copy","n":1048576,"elem_bytes":8}`,
	)
	specs[1].ElemBytes = 99 // invalid: never sent
	f.answer(
		good(1, specs[0], false),
		`{"line":2,"error":"not run: the harness refused it","launched":false}`,
		good(3, specs[3], false),
		`{"line":4,"error":"verification failed: 1 output elements wrong, the first at index 0","launched":true}`,
	)
	f.stdout(probeCSV(t, 3))
	t.Setenv("FAKE_EXIT", "1")
	f.gpu.Ncu = &f.ncu
	results, err := f.measure(specs, measure.Counters)
	require.NoError(t, err)
	assert.Equal(t, 32768.0, results[0].Metrics[metrics.LdSectors], "ncu row 0: 1-byte copy")
	assert.Equal(t, 1051392.0, results[0].Metrics[metrics.DRAMRead])
	assert.Contains(t, results[1].Error, "elem_bytes", "invalid: never sent")
	assert.Contains(t, results[2].Error, "not run")
	assert.Equal(t, 65536.0, results[3].Metrics[metrics.LdSectors], "ncu row 1 belongs to the next launched spec (the fake's CSV row 1 is the probe's 2-byte copy)")
	assert.Contains(t, results[4].Error, "verification failed", "launched, profiled (row 2), but wrong: no figures")
	assert.Nil(t, results[4].Metrics)
}

func TestProfileErrors(t *testing.T) {
	specs := mustParse(t, threeSpecs[0], threeSpecs[2])
	tests := []struct {
		name, csv, want string
	}{
		{"more kernels than launches", "", "3 profiled kernels for 2 launched plans"},
		{"no table", "==PROF== Connected\n==WARNING== No kernels were profiled.\n", "no CSV table"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t)
			f.answer(good(1, specs[0], false), good(2, specs[1], false))
			csv := tt.csv
			if csv == "" {
				csv = probeCSV(t, 3)
			}
			f.stdout(csv)
			var raw strings.Builder
			f.gpu.Ncu, f.gpu.NcuOutput = &f.ncu, &raw
			_, err := f.gpu.Measure(context.Background(), specs, measure.Counters)
			assert.ErrorContains(t, err, tt.want)
			assert.Equal(t, csv, raw.String(), "the raw output is saved even when it cannot be used")
		})
	}
}

// ncu that fails says why on its standard output; the error carries it.
func TestProfileFailureKeepsNcusReason(t *testing.T) {
	specs := mustParse(t, threeSpecs[0])
	f := newFake(t)
	f.answer(good(1, specs[0], false))
	f.stdout("==PROF== Connected to process 42\n==ERROR== Failed to profile \"k_coalesced_copy\" in process 42\n\"ID\",\"Kernel Name\"\n")
	t.Setenv("FAKE_EXIT", "9")
	f.gpu.Ncu = &f.ncu
	_, err := f.gpu.Measure(context.Background(), specs, measure.Counters)
	require.Error(t, err)
	assert.ErrorContains(t, err, "exited with status 9")
	assert.ErrorContains(t, err, `==ERROR== Failed to profile "k_coalesced_copy"`)
	assert.NotContains(t, err.Error(), "==PROF==", "only ncu's diagnostics, not its chatter")
}

func TestMeasureMergesMetrics(t *testing.T) {
	f := newFake(t)
	specs := mustParse(t, `{"kernel":"coalesced_copy","n":1048576,"elem_bytes":1}`)
	// The same fake answers the timed run and the profiled one; the timed
	// answer carries times, which the profile parser ignores.
	f.answer(good(1, specs[0], true))
	f.stdout(probeCSV(t, 1))
	f.gpu.Ncu = &f.ncu
	set, err := f.gpu.Measure(context.Background(), specs, measure.Times|measure.Counters)
	require.NoError(t, err)
	r := set.Launches[0]
	require.False(t, r.Failed(), r.Error)
	assert.Equal(t, 0.5, r.TimeMs)
	assert.Equal(t, 32768.0, r.Metrics[metrics.LdRequests])
	assert.Empty(t, set.Note)
	assert.Equal(t, "live: Fake GPU, "+f.gpu.Opened.UTC().Format("2006-01-02 15:04 UTC"), set.Label())
}

// Without ncu a GPU still times launches, and says what it could not do.
func TestMeasureWithoutNcu(t *testing.T) {
	f := newFake(t)
	specs := mustParse(t, threeSpecs[0])
	f.answer(good(1, specs[0], true))
	set, err := f.gpu.Measure(context.Background(), specs, measure.Times|measure.Counters)
	require.NoError(t, err)
	assert.Equal(t, 0.5, set.Launches[0].TimeMs)
	assert.Nil(t, set.Launches[0].Metrics)
	assert.Contains(t, set.Note, "no ncu on this machine, so times only: ncu not found (fake)")

	_, err = f.gpu.Measure(context.Background(), specs, measure.Counters)
	assert.ErrorIs(t, err, measure.ErrNoCounters)
}

func TestDeviceInfo(t *testing.T) {
	f := newFake(t)
	info := `{"gpu":"NVIDIA H200","compute_capability":"9.0","sms":132,"l2_bytes":62914560,"max_threads_per_sm":2048,"memory_clock_khz":3201000,"sm_clock_khz":1980000,"memory_bus_bits":6016,"driver_version":13000,"runtime_version":13000,"free_bytes":149557477376,"total_bytes":150109880320,"default_l2_fetch_granularity":64}`
	t.Setenv("FAKE_INFO", info)
	got, err := f.gpu.Harness.DeviceInfo(context.Background())
	require.NoError(t, err)
	assert.Equal(t, measure.DeviceInfo{GPU: "NVIDIA H200", ComputeCapability: "9.0", SMs: 132, L2Bytes: 62914560, MaxThreadsPerSM: 2048,
		MemoryClockKHz: 3201000, SMClockKHz: 1980000, MemoryBusBits: 6016, DriverVersion: 13000, RuntimeVersion: 13000,
		FreeBytes: 149557477376, TotalBytes: 150109880320, DefaultL2Fetch: 64}, got)
	assert.Equal(t, "13.0", measure.CUDAVersion(got.RuntimeVersion))

	t.Setenv("FAKE_INFO", "garbage")
	_, err = f.gpu.Harness.DeviceInfo(context.Background())
	assert.ErrorContains(t, err, "--info")

	t.Setenv("FAKE_INFO", "")
	t.Setenv("FAKE_EXIT", "3")
	t.Setenv("FAKE_STDERR", `{"error":"no CUDA device","cuda_error":"cudaErrorNoDevice"}`)
	_, err = f.gpu.Harness.DeviceInfo(context.Background())
	assert.ErrorIs(t, err, toolkit.ErrNoGPU)
}

func TestLatencies(t *testing.T) {
	f := newFake(t)
	tests := []struct {
		name, out string
		want      Latencies
		err       string
	}{
		{"chased", `{"dram_latency_ns":612.5,"l2_latency_ns":268,"dram_chase_bytes":268435456,"l2_chase_bytes":15728640,"chase_steps":20000,"timed_chases":9}`,
			Latencies{DRAMLatencyNs: 612.5, L2LatencyNs: 268, DRAMChaseBytes: 268435456, L2ChaseBytes: 15728640, ChaseSteps: 20000, TimedChases: 9}, ""},
		{"unknown field", `{"dram_latency_ns":612.5,"l2_latency_ns":268,"hbm":1}`, Latencies{}, `unknown field "hbm"`},
		// An L2 hit slower than a miss: the chase did not measure a miss.
		{"hit slower", `{"dram_latency_ns":100,"l2_latency_ns":268}`, Latencies{}, "want 0 < L2 <= DRAM < 1 ms"},
		{"no time", `{"dram_latency_ns":0,"l2_latency_ns":0}`, Latencies{}, "want 0 < L2 <= DRAM < 1 ms"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("FAKE_CALIBRATE", tt.out)
			got, err := f.gpu.Harness.Latencies(context.Background())
			if tt.err != "" {
				assert.ErrorContains(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
	t.Setenv("FAKE_CALIBRATE", "")
	t.Setenv("FAKE_EXIT", "1")
	t.Setenv("FAKE_STDERR", `{"error":"cudaMalloc of 268435456 bytes for the chase: out of memory","cuda_error":"cudaErrorMemoryAllocation"}`)
	_, err := f.gpu.Harness.Latencies(context.Background())
	assert.ErrorContains(t, err, "out of memory")
}

// FuzzParseLatencies holds parseLatencies to an answer or an error,
// never a panic, and never latencies outside what it promises.
func FuzzParseLatencies(f *testing.F) {
	f.Add([]byte(`{"dram_latency_ns":612.5,"l2_latency_ns":268,"dram_chase_bytes":268435456,"l2_chase_bytes":15728640,"chase_steps":20000,"timed_chases":9}`))
	f.Add([]byte(`{"dram_latency_ns":1e400}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		l, err := parseLatencies(data)
		if err == nil && !(l.L2LatencyNs > 0 && l.DRAMLatencyNs >= l.L2LatencyNs) {
			t.Fatalf("accepted %+v", l)
		}
	})
}

func TestPrepare(t *testing.T) {
	dir := t.TempDir()
	own := filepath.Join(dir, "own.bin")
	require.NoError(t, spec.WriteIndexFile(own, []int32{3, 2, 1, 0}))
	badIdx := filepath.Join(dir, "bad.bin")
	require.NoError(t, spec.WriteIndexFile(badIdx, []int32{0, 9, 1, 2}))
	specs := mustParse(t,
		`{"kernel":"gather_copy","n":4,"index_pattern":"random_perm","seed":7}`,
		fmt.Sprintf(`{"kernel":"gather_copy","n":4,"index_file":%q}`, own),
		fmt.Sprintf(`{"kernel":"gather_copy","n":4,"index_file":%q}`, badIdx),
		`{"kernel":"update_x_soa","n":4}`,
	)
	p, err := Prepare(specs, &measure.DeviceInfo{SMs: 132, MaxThreadsPerSM: 2048}, "")
	require.NoError(t, err)
	require.Len(t, p.Lines, 3)
	assert.Equal(t, []int{0, 1, 3}, p.Index)
	assert.Contains(t, p.Errs[2].Error(), "out of range")
	var first struct {
		IndexFile string `json:"index_file"`
		Pattern   string `json:"index_pattern"`
	}
	require.NoError(t, json.Unmarshal(p.Lines[0], &first))
	assert.Empty(t, first.Pattern, "the harness reads indices from files only")
	written := specs[0]
	written.IndexPattern, written.Seed, written.IndexFile = "", 0, first.IndexFile
	got, err := written.Indices()
	require.NoError(t, err)
	want, err := specs[0].Indices()
	require.NoError(t, err)
	assert.Equal(t, want, got, "the index file holds the pattern's indices")
	assert.Contains(t, string(p.Lines[1]), own, "an index file given is passed on")
	// update_x_soa: n floats, updated in place; the ceiling copies them to scratch.
	assert.JSONEq(t, `{"kernel":"update_x_soa","n":4,"block":256,"l2_fetch_granularity":64,
		"blocks":1,"threads":4,"block_x":256,"block_y":1,"grid_x":1,"grid_y":1,"shared_bytes":0,
		"bytes_x":16,"memcpy_from":"x","memcpy_to":""}`, string(p.Lines[2]))
	require.NoError(t, p.Close())
	_, err = os.Stat(first.IndexFile)
	assert.True(t, os.IsNotExist(err))
	_, err = os.Stat(own)
	assert.NoError(t, err, "Close leaves the caller's files alone")
}

// faultLine is the harness's answer on line n to a kernel that faulted,
// and notRun its answer to every later line of that process.
func faultLine(n int) string {
	return fmt.Sprintf(`{"line":%d,"error":"cudaDeviceSynchronize(): misaligned address (cudaErrorMisalignedAddress)","launched":true,"cuda_error":"cudaErrorMisalignedAddress","context_failed":true}`, n)
}

func notRun(n int) string {
	return fmt.Sprintf(`{"line":%d,"error":"not run: the CUDA context failed on an earlier line"}`, n)
}

// faultSpecs are a good launch, a misaligned vectorized_copy (offset 3
// with float4 loads) and two more good launches.
var faultSpecs = []string{
	`{"kernel":"coalesced_copy","n":1024}`,
	`{"kernel":"vectorized_copy","n":1024,"width":4,"offset":3}`,
	`{"kernel":"strided_copy","n":1024,"stride":4}`,
	`{"kernel":"update_x_soa","n":1024}`,
}

// A kernel that faults loses the harness its context; the plans after it
// go to a fresh harness, so that only the faulting spec goes unmeasured,
// and its fault reaches the caller as a *measure.GPUError.
func TestRunAgainAfterAFault(t *testing.T) {
	specs := mustParse(t, faultSpecs...)
	tests := []struct {
		name   string
		order  []int      // the specs measured, by index into specs
		runs   [][]string // the answers of each harness run
		sends  [][]int    // the specs each run is sent
		faults []int      // the specs that fault
	}{
		{
			name:   "one fault",
			order:  []int{0, 1, 2, 3},
			runs:   [][]string{{good(1, specs[0], true), faultLine(2), notRun(3), notRun(4)}, {good(1, specs[2], true), good(2, specs[3], true)}},
			sends:  [][]int{{0, 1, 2, 3}, {2, 3}},
			faults: []int{1},
		},
		{
			name:   "a fault on the first line of the second run",
			order:  []int{0, 1, 2, 3},
			runs:   [][]string{{good(1, specs[0], true), faultLine(2), notRun(3), notRun(4)}, {faultLine(1), notRun(2)}, {good(1, specs[3], true)}},
			sends:  [][]int{{0, 1, 2, 3}, {2, 3}, {3}},
			faults: []int{1, 2},
		},
		{
			name:   "a fault on the last line needs no second run",
			order:  []int{0, 2, 3, 1},
			runs:   [][]string{{good(1, specs[0], true), good(2, specs[2], true), good(3, specs[3], true), faultLine(4)}},
			sends:  [][]int{{0, 2, 3, 1}},
			faults: []int{1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t)
			var ordered []spec.Spec
			for _, i := range tt.order {
				ordered = append(ordered, specs[i])
			}
			for k, answers := range tt.runs {
				f.answerRun(k+1, answers...)
			}
			t.Setenv("FAKE_EXIT", "1")
			set, err := f.gpu.Measure(context.Background(), ordered, measure.Times)
			require.NoError(t, err)
			for k, want := range tt.sends {
				sent := f.sentRun(k + 1)
				require.Len(t, sent, len(want), "run %d", k+1)
				for j, i := range want {
					assert.Contains(t, sent[j], `"kernel":"`+string(specs[i].Kernel)+`"`, "run %d, line %d", k+1, j+1)
				}
			}
			assert.Nil(t, f.sentRun(len(tt.runs)+1), "no more runs than faults need")
			for _, l := range set.Launches {
				i := slices.IndexFunc(specs, func(s spec.Spec) bool { return s.String() == l.Spec.String() })
				if slices.Contains(tt.faults, i) {
					assert.Equal(t, "cudaErrorMisalignedAddress", l.CUDAError, "spec %d", i)
					assert.Contains(t, l.Error, "misaligned address")
					continue
				}
				assert.False(t, l.Failed(), "spec %d: %s", i, l.Error)
				assert.Equal(t, 0.5, l.TimeMs, "spec %d", i)
			}
			var ge *measure.GPUError
			require.ErrorAs(t, set.Err(), &ge, "the fault reaches the caller typed")
			assert.Equal(t, "cudaErrorMisalignedAddress", ge.Name)
			assert.False(t, ge.Recorded(), "it happened live")
			assert.ErrorIs(t, set.Err(), measure.ErrNotMeasured)
		})
	}
}

// Under ncu a fault may end the run, CSV and all, or ncu may go on without
// a row for the kernel that faulted. Either way every other launch gets
// its counters.
//
// The fault here is one the model does not foresee (a spec it knows faults
// is never profiled: TestProfileSkipsAKnownFault), standing for any other.
func TestProfileAgainAfterAFault(t *testing.T) {
	specs := mustParse(t, faultSpecs[0], faultSpecs[3], faultSpecs[2])
	t.Run("ncu ends with the fault", func(t *testing.T) {
		f := newFake(t)
		f.gpu.Ncu = &f.ncu
		// Run 1: the harness answered lines 1 and 2 before ncu gave up,
		// printing no table. Run 2 is line 1 again, run 3 line 3.
		f.answerRun(1, good(1, specs[0], false), faultLine(2))
		f.stdoutRun(1, "==ERROR== An error was reported by the driver\n==ERROR== Failed to profile \"k_vectorized_copy\"\n")
		t.Setenv("FAKE_EXIT_1", "9")
		f.answerRun(2, good(1, specs[0], false))
		f.stdoutRun(2, probeCSV(t, 1))
		f.answerRun(3, good(1, specs[2], false))
		f.stdoutRun(3, probeCSV(t, 1))
		set, err := f.gpu.Measure(context.Background(), specs, measure.Counters)
		require.NoError(t, err)
		assert.Len(t, f.sentRun(2), 1)
		assert.Contains(t, f.sentRun(2)[0], `"kernel":"coalesced_copy"`)
		assert.Len(t, f.sentRun(3), 1)
		assert.Contains(t, f.sentRun(3)[0], `"kernel":"strided_copy"`)
		// probeCSV's row 0 is the probe's 1-byte coalesced copy: 32768 sectors.
		assert.Equal(t, 32768.0, set.Launches[0].Metrics[metrics.LdSectors])
		assert.Equal(t, "cudaErrorMisalignedAddress", set.Launches[1].CUDAError)
		assert.Equal(t, 32768.0, set.Launches[2].Metrics[metrics.LdSectors])
	})
	t.Run("ncu goes on without the fault's row", func(t *testing.T) {
		f := newFake(t)
		f.gpu.Ncu = &f.ncu
		f.answerRun(1, good(1, specs[0], false), faultLine(2), notRun(3))
		f.stdoutRun(1, probeCSV(t, 1))
		f.answerRun(2, good(1, specs[2], false))
		f.stdoutRun(2, probeCSV(t, 2)) // two rows for the one plan of run 2
		t.Setenv("FAKE_EXIT", "1")
		_, err := f.gpu.Measure(context.Background(), specs, measure.Counters)
		assert.ErrorContains(t, err, "2 profiled kernels for 1 launched plans", "the run after the fault is held to its own rows")
		f.stdoutRun(2, probeCSV(t, 1))
		require.NoError(t, os.Remove(filepath.Join(f.dir, "count")))
		set, err := f.gpu.Measure(context.Background(), specs, measure.Counters)
		require.NoError(t, err)
		assert.Len(t, f.sentRun(2), 1, "only the plan after the fault runs again")
		assert.Equal(t, 32768.0, set.Launches[0].Metrics[metrics.LdSectors], "row 0 of run 1")
		assert.Nil(t, set.Launches[1].Metrics)
		assert.Equal(t, 32768.0, set.Launches[2].Metrics[metrics.LdSectors], "row 0 of run 2")
	})
}

// ncu ends the whole profiled process at a fault (on the H200:
// "==ERROR== LaunchFailed", status 9, before the harness could answer), so
// a launch the model knows faults is never sent to it: the others are
// profiled in one run, and the faulting one says why it has no counters.
func TestProfileSkipsAKnownFault(t *testing.T) {
	specs := mustParse(t, faultSpecs[0], faultSpecs[1], faultSpecs[2])
	f := newFake(t)
	f.gpu.Ncu = &f.ncu
	f.answerRun(1, good(1, specs[0], false), good(2, specs[2], false))
	f.stdoutRun(1, probeCSV(t, 2))
	set, err := f.gpu.Measure(context.Background(), specs, measure.Counters)
	require.NoError(t, err)
	sent := f.sentRun(1)
	require.Len(t, sent, 2, "the misaligned vectorized_copy is not sent")
	assert.Contains(t, sent[0], `"kernel":"coalesced_copy"`)
	assert.Contains(t, sent[1], `"kernel":"strided_copy"`)
	assert.Nil(t, f.sentRun(2), "one run settles them all")
	assert.NotNil(t, set.Launches[0].Metrics)
	assert.NotNil(t, set.Launches[2].Metrics)
	assert.Contains(t, set.Launches[1].Error, "ncu cannot profile a kernel that faults")
	assert.Contains(t, set.Launches[1].Error, "cudaErrorMisalignedAddress")
}

// The fake writes its three answers at once, so a sweep's progress goes
// from none to all; the lines name the step and the count.
func TestMeasureProgress(t *testing.T) {
	f := newFake(t)
	var lines bytes.Buffer
	f.gpu.Progress = &lines
	specs := mustParse(t, threeSpecs...)
	f.answer(good(1, specs[0], true), good(2, specs[1], true), good(3, specs[2], true))
	_, err := f.measure(specs, measure.Times)
	require.NoError(t, err)
	got := strings.Split(strings.TrimSpace(lines.String()), "\n")
	require.GreaterOrEqual(t, len(got), 2, lines.String())
	assert.Equal(t, "cuda: timing: 0 of 3 launches", got[0], "said before the harness answers")
	assert.Equal(t, "cuda: timing: 3 of 3 launches", got[len(got)-1], "said once all answered")
}

// A cudaMalloc that fails (another process took the memory after the
// harness's own check) says what the launch needs and who may hold the
// rest: coalesced_copy of 1024 floats has 4 KiB in and 4 KiB out, which
// round to 0 MiB; the flush buffer is twice the fake's 60 MiB L2.
func TestRunOutOfMemoryHint(t *testing.T) {
	f := newFake(t)
	f.gpu.Info.L2Bytes, f.gpu.Info.FreeBytes, f.gpu.Info.TotalBytes = 60<<20, 1<<30, 80<<30
	specs := mustParse(t, threeSpecs[0])
	f.answer(`{"line":1,"error":"cudaMalloc of 4096 bytes for in: out of memory","cuda_error":"cudaErrorMemoryAllocation"}`)
	t.Setenv("FAKE_EXIT", "1")
	results, err := f.measure(specs, measure.Times)
	require.NoError(t, err)
	e := results[0].Error
	assert.Contains(t, e, "out of memory")
	assert.Contains(t, e, "the GPU's memory is full: this launch's buffers take 0 MiB (in 0 MiB, out 0 MiB)")
	assert.Contains(t, e, "120 MiB beside them")
	assert.Contains(t, e, "1024 MiB of 81920 MiB was free")
	assert.Contains(t, e, "other learners' notebooks")
}
