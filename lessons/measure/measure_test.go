package measure

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coalescing-course/coalesce/lessons/metrics"
	"github.com/coalescing-course/coalesce/lessons/spec"
)

func mustSpec(t testing.TB, text string) spec.Spec {
	t.Helper()
	s, err := spec.Parse([]byte(text))
	require.NoError(t, err)
	return s
}

var when = time.Date(2026, 11, 29, 21, 30, 5, 0, time.UTC)

func TestOriginString(t *testing.T) {
	tests := []struct {
		o    Origin
		want string
	}{
		{Origin{Kind: Live, GPU: "NVIDIA H200", When: when}, "live: NVIDIA H200, 2026-11-29 21:30 UTC"},
		{Origin{Kind: Recorded, GPU: "NVIDIA H200", When: when}, "recorded on NVIDIA H200, 2026-11-29"},
		{Origin{Kind: FromFile, GPU: "NVIDIA A100", When: when, File: "run.jsonl"}, "recorded on NVIDIA A100, 2026-11-29 (run.jsonl)"},
		{Origin{Kind: FromFile, File: "run.jsonl"}, "measured in run.jsonl (no provenance)"},
		{Origin{}, "no measurement"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, tt.o.String())
	}
	o := Origin{Kind: Recorded, GPU: "NVIDIA H200", When: when, Why: "no GPU here"}
	assert.Equal(t, "recorded on NVIDIA H200, 2026-11-29 (no GPU here)", o.Caption())
	o.Why = ""
	assert.Equal(t, o.String(), o.Caption())
}

func testSet(t testing.TB) *Set {
	t.Helper()
	return &Set{
		Provenance: &Provenance{Device: DeviceInfo{GPU: "NVIDIA H200", SMs: 132}, CUDA: "13.0",
			Date: "2026-11-29T21:30:05Z", Command: "coalesce run -ncu sweep.jsonl"},
		Launches: []Launch{
			{Line: 1, Spec: mustSpec(t, `{"kernel":"coalesced_copy","n":1024}`), TimeMs: 0.5, TimeMsMin: 0.4, TimeMsMax: 0.6,
				TimedLaunches: 20, MemcpyMs: 0.25, MemcpyBytes: 4096, Threads: 1024, GridBlocks: 4, L2Fetch: 64, Verified: true,
				Metrics: metrics.Set{metrics.LdSectors: 128, metrics.DRAMRead: 4096}},
			{Line: 2, Error: "spec: field \"n\": value 0 not allowed"},
			{Line: 3, Spec: mustSpec(t, `{"kernel":"strided_copy","n":1024,"stride":4}`), Error: "verification failed"},
		},
	}
}

func TestRoundTrip(t *testing.T) {
	in := testSet(t)
	var b bytes.Buffer
	require.NoError(t, WriteSet(&b, in))
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	require.Len(t, lines, 4, "the provenance, then one line a launch")
	assert.True(t, strings.HasPrefix(lines[0], `{"provenance":{"device":{"gpu":"NVIDIA H200"`))
	assert.Equal(t, `{"line":2,"error":"spec: field \"n\": value 0 not allowed"}`, lines[2], "a bad input line has no spec")

	out, err := ReadSet(&b, "run.jsonl", Origin{Kind: FromFile, File: "run.jsonl"})
	require.NoError(t, err)
	assert.Equal(t, in.Provenance, out.Provenance)
	require.Len(t, out.Launches, 3)
	assert.Equal(t, in.Launches[0].Spec.String(), out.Launches[0].Spec.String())
	assert.Equal(t, in.Launches[0].Metrics, out.Launches[0].Metrics)
	assert.Equal(t, in.Launches[0].TimeMs, out.Launches[0].TimeMs)
	assert.Equal(t, "recorded on NVIDIA H200, 2026-11-29 (run.jsonl)", out.Label(), "the label comes from the provenance")
}

// Where a launch's counters come from survives a run file, and a file
// without the field (every file before it) reads as ncu's.
func TestCountersRoundTrip(t *testing.T) {
	in := testSet(t)
	ncu := in.Launches[0]
	model, recorded := ncu, ncu
	model.Counters = CountersModel
	recorded.Counters = "recorded on NVIDIA H200, 2026-11-29"
	in.Launches = []Launch{ncu, model, recorded}
	var b bytes.Buffer
	require.NoError(t, WriteSet(&b, in))
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	require.Len(t, lines, 4)
	assert.NotContains(t, lines[1], `"counters"`, "ncu's own counters are written as before")
	assert.Contains(t, lines[2], `"counters":"model"`)
	out, err := ReadSet(&b, "run.jsonl", Origin{Kind: FromFile, File: "run.jsonl"})
	require.NoError(t, err)
	require.Len(t, out.Launches, 3)
	tests := []struct {
		from     string
		borrowed bool
	}{{"ncu", false}, {"model", true}, {"recorded on NVIDIA H200, 2026-11-29", true}}
	for i, tt := range tests {
		t.Run(tt.from, func(t *testing.T) {
			assert.Equal(t, tt.from, out.Launches[i].CountersFrom())
			assert.Equal(t, tt.borrowed, out.Launches[i].CountersBorrowed())
			assert.Equal(t, in.Launches[i].Metrics, out.Launches[i].Metrics)
		})
	}
	assert.Empty(t, Launch{Spec: ncu.Spec, TimeMs: 1}.CountersFrom(), "a launch without counters has no source of them")
}

// The course's first build wrote a reference as one object, with derived
// fields beside each launch; they are read and dropped.
func TestReadFirstBuildReference(t *testing.T) {
	doc := `{
  "provenance": {"device": {"gpu": "NVIDIA H200"}, "cuda": "13.0", "nvcc": "", "harness_arch": "", "harness_key": "", "timing": "",
    "date": "2026-11-29T21:10:08Z", "command": "coalesce run -ncu -record h200.json sweep.jsonl"},
  "records": [
    {"spec":{"kernel":"strided_copy","n":65536,"stride":2},"time_ms":0.0071,"useful_bytes":65536,"useful_gbps":9.2,"memcpy_ms":0.003,"memcpy_gbps":2,"memcpy_bytes":262144,"of_memcpy":0.5,"moved_gbps":1,"verified":true},
    {"spec":{"kernel":"coalesced_copy","n":64},"time_ms":0.002}
  ]
}
`
	set, err := ReadSet(strings.NewReader(doc), "h200.json", Origin{Kind: Recorded})
	require.NoError(t, err)
	require.Len(t, set.Launches, 2)
	assert.Equal(t, 0.0071, set.Launches[0].TimeMs)
	assert.Equal(t, int64(262144), set.Launches[0].MemcpyBytes)
	assert.Equal(t, "recorded on NVIDIA H200, 2026-11-29", set.Label())
}

func TestReaderErrors(t *testing.T) {
	prov := `{"provenance":{"device":{"gpu":"g"},"date":"2026-11-29T21:10:08Z","command":"c"}}`
	launch := `{"spec":{"kernel":"coalesced_copy","n":64},"time_ms":1}`
	tests := []struct {
		name, in string
		line     int
		want     string
	}{
		{"not JSON", launch + "\n{\"spec\":", 2, "not a JSON object"},
		{"provenance late", launch + "\n" + prov, 2, "a provenance line after the first line"},
		{"provenance twice", prov + "\n" + prov, 2, "a provenance line after the first line"},
		{"provenance and more", `{"provenance":{"device":{"gpu":"g"},"date":"2026-11-29T21:10:08Z","command":"c"},"x":1}`, 1, "holds the provenance alone"},
		{"provenance without a date", `{"provenance":{"device":{"gpu":"g"},"command":"c"}}`, 1, "provenance needs device.gpu, date and command"},
		{"provenance with a bad date", `{"provenance":{"device":{"gpu":"g"},"date":"yesterday","command":"c"}}`, 1, "want RFC 3339"},
		{"a launch without a spec", `{"time_ms":1}`, 1, `a launch without "spec"`},
		{"an unknown field", `{"spec":{"kernel":"coalesced_copy","n":64},"speed":1}`, 1, `unknown field "speed"`},
		{"a bad spec", `{"spec":{"kernel":"strided_copy","n":64,"stride":0}}`, 1, `field "stride"`},
		{"a string for a time", `{"spec":{"kernel":"coalesced_copy","n":64},"time_ms":"1"}`, 1, "not a launch"},
		{"a CUDA error on a measured launch", `{"spec":{"kernel":"coalesced_copy","n":64},"time_ms":1,"cuda_error":"cudaErrorMisalignedAddress"}`, 1, `"cuda_error" without "error"`},
		{"counters without metrics", `{"spec":{"kernel":"coalesced_copy","n":64},"time_ms":1,"counters":"model"}`, 1, `"counters" "model" without "metrics"`},
		{"a reference without provenance", `{"records":[]}`, 1, "a recorded reference without provenance"},
		{"a reference with a bad record", `{"provenance":{"device":{"gpu":"g"},"date":"2026-11-29T21:10:08Z","command":"c"},"records":[{"time_ms":1}]}`, 1, "record 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ReadSet(strings.NewReader(tt.in), "run.jsonl", Origin{})
			var se *SyntaxError
			require.ErrorAs(t, err, &se)
			assert.Equal(t, "run.jsonl", se.File)
			assert.Equal(t, tt.line, se.Line)
			assert.ErrorContains(t, err, tt.want)
			assert.True(t, strings.HasPrefix(err.Error(), "measure: run.jsonl:"), "error %q names the file and line", err)
		})
	}
}

func TestWriterRefusesALateProvenance(t *testing.T) {
	w := NewWriter(io.Discard)
	require.NoError(t, w.Write(Launch{Spec: mustSpec(t, `{"kernel":"coalesced_copy","n":64}`)}))
	assert.ErrorContains(t, w.WriteProvenance(*testSet(t).Provenance), "must be the first line")
	assert.ErrorContains(t, NewWriter(io.Discard).WriteProvenance(Provenance{}), "provenance needs device.gpu")
}

func TestLaunch(t *testing.T) {
	l := testSet(t).Launches[0]
	assert.True(t, l.Timed())
	assert.True(t, l.Profiled())
	assert.Equal(t, 0.5e-3, l.Seconds())
	// 2 × 4096 bytes in 0.25 ms.
	assert.Equal(t, 2*4096/0.25e-3, l.MemcpyBandwidth())
	failed := testSet(t).Launches[2]
	assert.True(t, failed.Failed())
	assert.False(t, failed.Timed())
	assert.Zero(t, Launch{}.MemcpyBandwidth())
}

func TestSetLookupAndErr(t *testing.T) {
	set := testSet(t)
	set.Origin = Origin{Kind: Live, GPU: "NVIDIA H200", When: when}
	l, ok := set.Lookup(mustSpec(t, `{"n":1024,"kernel":"coalesced_copy","block":256}`))
	require.True(t, ok, "the same launch, written another way")
	assert.Equal(t, 0.5, l.TimeMs)
	_, ok = set.Lookup(mustSpec(t, `{"kernel":"strided_copy","n":1024,"stride":4}`))
	assert.False(t, ok, "a failed launch is not found")
	assert.Len(t, set.Measured(), 1)

	err := set.Err()
	assert.ErrorIs(t, err, ErrNotMeasured)
	var nm *NotMeasuredError
	require.ErrorAs(t, err, &nm)
	assert.Len(t, nm.Failed, 2)
	assert.Nil(t, nm.Near, "live measurements suggest nothing")
	assert.Contains(t, err.Error(), "measure: 2 launches not measured (live: NVIDIA H200, 2026-11-29 21:30 UTC):")
	assert.Contains(t, err.Error(), "verification failed")
	assert.NoError(t, (&Set{Launches: set.Launches[:1]}).Err())
}

func TestFromSet(t *testing.T) {
	rec := testSet(t)
	rec.Origin = Origin{Kind: Recorded, GPU: "NVIDIA H200", When: when, Why: "no GPU here"}
	rec.Launches = append(rec.Launches, Launch{Spec: mustSpec(t, `{"kernel":"update_x_soa","n":64}`), TimeMs: 1, Verified: true})
	src := FromSet(rec)
	assert.Equal(t, rec.Origin, src.Origin())

	copy64 := mustSpec(t, `{"kernel":"coalesced_copy","n":64}`)
	soa := mustSpec(t, `{"kernel":"update_x_soa","n":64}`)
	copy1024 := mustSpec(t, `{"kernel":"coalesced_copy","n":1024}`)
	got, err := src.Measure(context.Background(), []spec.Spec{copy1024, copy64, soa}, Times|Counters)
	require.NoError(t, err)
	require.Len(t, got.Launches, 3)
	assert.False(t, got.Launches[0].Failed())
	assert.Contains(t, got.Launches[1].Error, "not among the recorded launches")
	assert.False(t, got.Launches[2].Failed(), "times and counters: what the recording has")
	assert.Equal(t, rec.Provenance, got.Provenance)

	var nm *NotMeasuredError
	require.ErrorAs(t, got.Err(), &nm)
	assert.Equal(t, []spec.Spec{copy1024}, nm.Near[spec.CoalescedCopy], "a recording suggests what it holds")
	assert.Contains(t, got.Err().Error(), "The recording holds 1 launch of coalesced_copy, for example:")

	got, err = src.Measure(context.Background(), []spec.Spec{soa}, Counters)
	require.NoError(t, err)
	assert.Contains(t, got.Launches[0].Error, "recorded without ncu's counters", "counters alone: a launch without them fails")
}

func TestErrorsWrap(t *testing.T) {
	assert.True(t, errors.Is(&NotMeasuredError{}, ErrNotMeasured))
	assert.Equal(t, "measure: line 3: boom", (&SyntaxError{Line: 3, Err: errors.New("boom")}).Error())
}

// FuzzReader holds the reader to its contract on any input: a launch it
// returns has a valid spec (or is the answer to a bad line), and an error
// is a *SyntaxError with a line.
func FuzzReader(f *testing.F) {
	f.Add(`{"provenance":{"device":{"gpu":"g"},"date":"2026-11-29T21:10:08Z","command":"c"}}` + "\n" + `{"spec":{"kernel":"coalesced_copy","n":64},"time_ms":1}`)
	f.Add(`{"line":2,"error":"x"}`)
	f.Add(`{"provenance":{"device":{"gpu":"g"},"date":"2026-11-29T21:10:08Z","command":"c"},"records":[{"spec":{"kernel":"update_x_soa","n":3}}]}`)
	f.Add("{\n")
	f.Add(`{"spec":{"kernel":"coalesced_copy","n":64},"time_ms":1,"metrics":{"dram__bytes_read.sum":256},"counters":"model"}`)
	f.Add(`{"line":3,"spec":{"kernel":"vectorized_copy","n":1024,"offset":3},"error":"misaligned address","cuda_error":"cudaErrorMisalignedAddress"}`)
	f.Fuzz(func(t *testing.T, in string) {
		set, err := ReadSet(strings.NewReader(in), "fuzz", Origin{})
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) || se.Line < 1 {
				t.Fatalf("error %v is not a positioned *SyntaxError", err)
			}
			return
		}
		for _, l := range set.Launches {
			if l.Spec.Kernel == "" && l.Error == "" {
				t.Fatalf("a launch without spec or error: %+v", l)
			}
			if l.CUDAError != "" && !l.Failed() {
				t.Fatalf("a CUDA error on a launch that did not fail: %+v", l)
			}
			if l.Counters != "" && l.Metrics == nil {
				t.Fatalf("a source of counters on a launch without them: %+v", l)
			}
			if l.Spec.Kernel != "" && l.Spec.Validate() != nil {
				t.Fatalf("an invalid spec accepted: %+v", l.Spec)
			}
		}
		var b bytes.Buffer
		if err := WriteSet(&b, set); err != nil {
			t.Fatalf("what was read cannot be written: %v", err)
		}
		again, err := ReadSet(&b, "again", Origin{})
		if err != nil || len(again.Launches) != len(set.Launches) {
			t.Fatalf("round trip: %v, %d launches, want %d", err, len(again.Launches), len(set.Launches))
		}
	})
}

// A fault the GPU reported is kept in a run file with its CUDA error name,
// and a recording hands it out for its spec as the same typed error,
// labelled recorded; files without the field read as before.
func TestRecordedFaultReadsBackTyped(t *testing.T) {
	bad := mustSpec(t, `{"kernel":"vectorized_copy","n":1024,"width":4,"offset":3}`)
	msg := "cudaDeviceSynchronize(): misaligned address (cudaErrorMisalignedAddress)"
	in := testSet(t)
	in.Launches = append(in.Launches, Launch{Line: 4, Spec: bad, Error: msg, CUDAError: "cudaErrorMisalignedAddress"})
	var b bytes.Buffer
	require.NoError(t, WriteSet(&b, in))
	assert.Contains(t, b.String(), `"cuda_error":"cudaErrorMisalignedAddress"`)

	out, err := ReadSet(&b, "run.jsonl", Origin{Kind: FromFile, File: "run.jsonl"})
	require.NoError(t, err)
	assert.Empty(t, out.Launches[2].CUDAError, "a launch written without cuda_error reads back without it")
	_, measured := out.Lookup(bad)
	assert.False(t, measured, "a fault is no measurement")

	got, err := FromSet(out).Measure(context.Background(), []spec.Spec{bad}, Times|Counters)
	require.NoError(t, err)
	var ge *GPUError
	require.ErrorAs(t, got.Err(), &ge)
	assert.Equal(t, "cudaErrorMisalignedAddress", ge.Name)
	assert.Equal(t, msg, ge.Message)
	assert.True(t, ge.Recorded())
	assert.Equal(t, out.Origin, ge.Origin)
	assert.ErrorIs(t, got.Err(), ErrNotMeasured)
	assert.Contains(t, ge.Error(), "the GPU reported cudaErrorMisalignedAddress (recorded on NVIDIA H200, 2026-11-29 (run.jsonl))")
	// The set's own message says the GPU refused it, and suggests no other
	// launch: the fault is what was recorded for exactly this one.
	text := got.Err().Error()
	assert.True(t, strings.HasPrefix(text, "measure: the GPU stopped 1 launch with a fault ("), text)
	assert.Contains(t, text, msg)
	assert.NotContains(t, text, "Pick launches")
	assert.NotContains(t, text, "not measured")

	// A launch that failed for another reason is not handed out, and is
	// no GPUError.
	other, err := FromSet(out).Measure(context.Background(), []spec.Spec{out.Launches[2].Spec}, Times)
	require.NoError(t, err)
	assert.Contains(t, other.Launches[0].Error, "not among the recorded launches")
	assert.False(t, errors.As(other.Err(), &ge))
}

func TestLaunchErr(t *testing.T) {
	live := Origin{Kind: Live, GPU: "NVIDIA H200", When: when}
	s := mustSpec(t, `{"kernel":"coalesced_copy","n":1024}`)
	assert.NoError(t, Launch{Spec: s, TimeMs: 1}.Err(live))
	assert.EqualError(t, Launch{Spec: s, Error: "verification failed"}.Err(live), "verification failed")
	err := Launch{Spec: s, Error: "boom", CUDAError: "cudaErrorIllegalAddress"}.Err(live)
	var ge *GPUError
	require.ErrorAs(t, err, &ge)
	assert.False(t, ge.Recorded())
	assert.Equal(t, "measure: "+s.Brief()+": the GPU reported cudaErrorIllegalAddress (live: NVIDIA H200, 2026-11-29 21:30 UTC): boom", err.Error())
}
