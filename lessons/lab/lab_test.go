package lab

import (
	"bytes"
	"context"
	"errors"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coalescing-course/coalesce/cuda"
	"github.com/coalescing-course/coalesce/internal/words"
	"github.com/coalescing-course/coalesce/lessons/metrics"
	"github.com/coalescing-course/coalesce/lessons/spec"
)

// capture sends the package's text output to a buffer for the test.
func capture(t *testing.T) *bytes.Buffer {
	t.Helper()
	var b bytes.Buffer
	old := Output
	Output = &b
	t.Cleanup(func() { Output = old })
	return &b
}

// exited makes Must record the exit status instead of ending the test
// binary, and collects what it prints.
func exited(t *testing.T) (code *int, stderr *bytes.Buffer) {
	t.Helper()
	code = new(int)
	*code = -1
	stderr = new(bytes.Buffer)
	oldExit, oldErr := exit, Stderr
	exit = func(c int) { *code = c }
	Stderr = stderr
	t.Cleanup(func() { exit, Stderr = oldExit, oldErr })
	return code, stderr
}

// noGPU makes OpenSource see a machine without nvcc, as CI is.
func noGPU(t *testing.T) {
	t.Helper()
	old := openGPU
	openGPU = func(context.Context) (*cuda.GPU, error) {
		return nil, &cuda.MissingError{Err: cuda.ErrNoNvcc, Detail: "nvcc not found on PATH", Hint: "install the CUDA toolkit"}
	}
	t.Cleanup(func() { openGPU = old })
}

// recordedSource is the source a machine without a GPU gets.
func recordedSource(t *testing.T) *Source {
	t.Helper()
	noGPU(t)
	src, err := OpenSource(context.Background(), "auto")
	require.NoError(t, err)
	return src
}

func TestMust(t *testing.T) {
	code, stderr := exited(t)
	assert.Equal(t, 7, Must(7, nil))
	assert.Equal(t, -1, *code, "no error, no exit")

	Must(0, errors.New("lab: something broke"))
	assert.Equal(t, 1, *code)
	assert.Equal(t, "error: lab: something broke\n", stderr.String())
}

func TestParseSpec(t *testing.T) {
	s, err := ParseSpec(`{"kernel":"strided_copy","n":1024,"stride":%d}`, 32)
	require.NoError(t, err)
	assert.Equal(t, int64(32), s.Stride)
	assert.Equal(t, spec.DefaultBlock, s.Block, "defaults filled in")

	_, err = ParseSpec(`{"kernel":"strided_copy","n":1024,"stride":"32"}`)
	require.Error(t, err)
	assert.ErrorIs(t, err, spec.ErrValue)
	assert.Contains(t, err.Error(), `lab: {"kernel":"strided_copy"`, "the error quotes the spec")

	_, err = ParseSpec(`{"kernel":"strided_copy","n":1024,"width":4}`)
	assert.ErrorIs(t, err, spec.ErrNotApplicable)
}

func TestSpecEndsTheCellOnABadSpec(t *testing.T) {
	code, stderr := exited(t)
	Spec(`{"kernel":"no_such_kernel","n":1}`)
	assert.Equal(t, 1, *code)
	assert.Contains(t, stderr.String(), "unknown kernel")
}

func TestExplain(t *testing.T) {
	tests := []struct {
		name      string
		warp      [3]uint64 // base, step, size
		wantLines []string
	}{
		// The seed's best case: 32 floats side by side, one line, four full sectors.
		{"coalesced floats", [3]uint64{0, 4, 4}, []string{
			"sector (bytes)  line  lanes  bytes used",
			"0-31            0     0-7    32 of 32",
			"96-127          0     24-31  32 of 32",
			"4 sectors in 1 line: 128 bytes fetched for 128 bytes used, efficiency 100%",
		}},
		// The seed's worst case: floats 32 apart, a line each.
		{"stride 32", [3]uint64{0, 128, 4}, []string{
			"128-159              1     1      4 of 32",
			"... and 21 sectors more",
			"32 sectors in 32 lines: 1024 bytes fetched for 128 bytes used, efficiency 12.5%",
		}},
		// x of 16-byte structs: two lanes per sector.
		{"AoS 16", [3]uint64{0, 16, 4}, []string{
			"0-31            0     0-1    8 of 32",
			"16 sectors in 4 lines: 512 bytes fetched for 128 bytes used, efficiency 25%",
		}},
		// One float late: the 128 bytes straddle five sectors.
		{"misaligned", [3]uint64{4, 4, 4}, []string{
			"0-31            0     0-6    28 of 32",
			"128-159         1     31     4 of 32",
			"5 sectors in 2 lines: 160 bytes fetched for 128 bytes used, efficiency 80%",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := capture(t)
			a, err := Explain(Lanes(tt.warp[0], tt.warp[1], int(tt.warp[2])))
			require.NoError(t, err)
			assert.Equal(t, 128, a.UsefulBytes)
			for _, l := range tt.wantLines {
				// Columns are aligned by tabwriter: any run of spaces matches.
				rx := "(?m)^" + strings.Join(strings.Fields(regexp.QuoteMeta(l)), " +") + "$"
				assert.Regexp(t, rx, out.String())
			}
		})
	}
}

func TestExplainRefusesOddSizes(t *testing.T) {
	_, err := Explain(Lanes(0, 12, 12))
	assert.ErrorContains(t, err, "1, 2, 4, 8 or 16")
}

func TestLaneList(t *testing.T) {
	assert.Equal(t, "0-7", laneList(0xff))
	assert.Equal(t, "0, 2, 4-5, 31", laneList(1|1<<2|1<<4|1<<5|1<<31))
	assert.Equal(t, "", laneList(0))
}

func TestOpenSource(t *testing.T) {
	noGPU(t)
	ctx := context.Background()

	src, err := OpenSource(ctx, "")
	require.NoError(t, err)
	assert.False(t, src.Live)
	assert.Regexp(t, `^recorded on NVIDIA H200, \d{4}-\d{2}-\d{2}$`, src.Label)
	assert.Equal(t, "no GPU here: nvcc not found on PATH", src.Why)

	src, err = OpenSource(ctx, "Recorded")
	require.NoError(t, err)
	assert.Equal(t, MeasureEnv+"=recorded", src.Why)

	_, err = OpenSource(ctx, "live")
	assert.ErrorIs(t, err, ErrNoSource)
	assert.ErrorContains(t, err, "nvcc not found")

	_, err = OpenSource(ctx, "none")
	assert.ErrorIs(t, err, ErrNoSource)

	_, err = OpenSource(ctx, "sometimes")
	assert.ErrorIs(t, err, ErrNoSource)
	assert.ErrorContains(t, err, "want live, recorded, auto or none")
}

func TestOpenSourceWithoutReference(t *testing.T) {
	noGPU(t)
	old := recordedRef
	recordedRef = func() (*cuda.Reference, error) { return nil, cuda.ErrNoReference }
	t.Cleanup(func() { recordedRef = old })
	_, err := OpenSource(context.Background(), "auto")
	assert.ErrorIs(t, err, ErrNoSource)
	assert.ErrorContains(t, err, "no recorded reference")
}

func TestOpenSourceGPUThatFails(t *testing.T) {
	old := openGPU
	openGPU = func(context.Context) (*cuda.GPU, error) { return nil, errors.New("cuda: nvcc exited with status 1") }
	t.Cleanup(func() { openGPU = old })
	src, err := OpenSource(context.Background(), "auto")
	require.NoError(t, err, "auto falls back on the reference, saying why")
	assert.Contains(t, src.Why, "the GPU could not be used: cuda: nvcc exited with status 1")
}

func TestMeasureRecorded(t *testing.T) {
	src := recordedSource(t)
	s1 := Spec(`{"kernel":"strided_copy","n":67108864,"stride":1}`)
	s32 := Spec(`{"kernel":"strided_copy","n":67108864,"stride":32}`)
	m, err := src.Measure(s32, s1)
	require.NoError(t, err)
	assert.Equal(t, src.Label, m.Source)
	require.Len(t, m.Results, 2)
	assert.Equal(t, s32, m.Results[0].Spec, "results in the order asked")
	r, ok := m.Result(s1)
	require.True(t, ok)
	assert.Greater(t, r.UsefulGBps, 0.0)
	assert.Equal(t, 4.0, r.Metrics[metrics.LdSectors]/r.Metrics[metrics.LdRequests])

	caption := m.Caption()
	assert.Regexp(t, `^Measured: recorded on NVIDIA H200, \d{4}-\d{2}-\d{2} \(no GPU here: nvcc not found on PATH\)\.$`, caption)

	pm, err := m.Plots()
	require.NoError(t, err)
	assert.Equal(t, m.Source, pm.Source)
	assert.Len(t, pm.Points, 2)
	assert.InDelta(t, r.TimeMs/1e3, pm.Points[1].Seconds, 1e-15)
}

func TestMeasureNotRecorded(t *testing.T) {
	src := recordedSource(t)
	known := Spec(`{"kernel":"strided_copy","n":67108864,"stride":32}`)
	unknown := Spec(`{"kernel":"strided_copy","n":1048576,"stride":32}`)
	_, err := src.Measure(known, unknown)
	require.Error(t, err)
	assert.ErrorIs(t, err, ErrNotRecorded)
	var nre *NotRecordedError
	require.ErrorAs(t, err, &nre)
	assert.Equal(t, []spec.Spec{unknown}, nre.Specs)
	assert.NotEmpty(t, nre.Near[spec.StridedCopy], "the error offers recorded launches of the same kernel")

	msg := err.Error()
	assert.Contains(t, msg, "1 launch is not in the recorded reference (recorded on NVIDIA H200")
	assert.Contains(t, msg, "this machine does not measure live (no GPU here: nvcc not found on PATH)")
	assert.Contains(t, msg, unknown.String())
	assert.Contains(t, msg, "The reference holds")
	assert.Contains(t, msg, "cuda/reference/sweep.jsonl")
}

func TestMeasureErrors(t *testing.T) {
	src := recordedSource(t)
	_, err := src.Measure()
	assert.ErrorContains(t, err, "no launch to measure")

	bad := Spec(`{"kernel":"strided_copy","n":1024,"stride":2}`)
	bad.Stride = 0
	_, err = src.Measure(bad)
	assert.ErrorIs(t, err, spec.ErrValue)
	assert.ErrorContains(t, err, "launch 1")

	useSource(nil, ErrNoSource)
	t.Cleanup(func() { useSource(nil, nil) })
	_, err = Measure(Spec(`{"kernel":"coalesced_copy","n":1024}`))
	assert.ErrorIs(t, err, ErrNoSource)
	_, err = Compare([]Case{{"x", Spec(`{"kernel":"coalesced_copy","n":1024}`)}}, UsefulGBps)
	assert.ErrorIs(t, err, ErrNoSource)
}

func TestProfileRecorded(t *testing.T) {
	src := recordedSource(t)
	s := Spec(`{"kernel":"strided_write","n":67108864,"stride":4}`)
	m, err := src.Profile(s)
	require.NoError(t, err)
	assert.Contains(t, m.Command, "ncu ")
	assert.Contains(t, m.Command, metrics.StSectors)
	out := m.Counters().String()
	assert.Regexp(t, `(?m)^strided_write, stride 4, n 2\^26 +0 +0 +524,288 +8,388,608 `, out)
	assert.Contains(t, out, "Counters: ncu ")
}

// A GPU machine without ncu reads its counters from the reference.
func TestProfileLiveWithoutNcu(t *testing.T) {
	ref := recordedSource(t).Ref
	old := findNcu
	findNcu = func() (cuda.Ncu, error) { return cuda.Ncu{}, errors.New("ncu not found on PATH") }
	t.Cleanup(func() { findNcu = old })
	live := &Source{Label: "live: NVIDIA H200, now", Live: true, Ref: ref}
	m, err := live.Profile(Spec(`{"kernel":"coalesced_copy","n":67108864}`))
	require.NoError(t, err)
	assert.False(t, m.Live)
	assert.Equal(t, ref.Label(), m.Source)
	assert.Contains(t, m.Why, "no ncu on this machine")
}

func TestStatus(t *testing.T) {
	out := capture(t)
	src := recordedSource(t)
	useSource(src, nil)
	t.Cleanup(func() { useSource(nil, nil) })
	Status()
	assert.Contains(t, out.String(), "Model: the sector model of the NVIDIA H200 (device \"h200\"): 132 SMs, 60 MiB of L2, 32-byte sectors in 128-byte lines")
	assert.Contains(t, out.String(), "Measurements: "+src.Label+" (the course's reference; no GPU here: nvcc not found on PATH).")

	out.Reset()
	useSource(nil, ErrNoSource)
	Status()
	assert.Contains(t, out.String(), "Measurements: none: lab: no measurement source")
}

func TestWithIndices(t *testing.T) {
	base := Spec(`{"kernel":"gather_copy","n":64,"index_pattern":"random"}`)
	idx := make([]int32, 128)
	for i := range idx {
		idx[i] = int32(len(idx) - 1 - i)
	}
	s, err := WithIndices(base, idx)
	require.NoError(t, err)
	assert.Equal(t, int64(128), s.N)
	assert.Empty(t, s.IndexPattern)
	t.Cleanup(func() { os.Remove(s.IndexFile) })
	got, err := s.Indices()
	require.NoError(t, err)
	assert.Equal(t, idx, got)

	again, err := WithIndices(base, idx)
	require.NoError(t, err)
	assert.Equal(t, s.IndexFile, again.IndexFile, "the same indices, the same file")

	idx[3] = 500
	_, err = WithIndices(base, idx)
	assert.ErrorIs(t, err, spec.ErrIndices)

	_, err = WithIndices(Spec(`{"kernel":"coalesced_copy","n":64}`), idx)
	assert.ErrorContains(t, err, "gather_copy")
}

func TestPlural(t *testing.T) {
	assert.Equal(t, "1 launch", words.Plural(1, "launch"))
	assert.Equal(t, "2 launches", words.Plural(2, "launch"))
	assert.Equal(t, "3 sectors", words.Plural(3, "sector"))
}

func TestShowOutsideANotebook(t *testing.T) {
	out := capture(t)
	code, _ := exited(t)
	ShowWarp(Lanes(0, 4, 4), "a warp")
	ShowInstruction(Spec(`{"kernel":"coalesced_copy","n":1024}`), 0, 0)
	assert.Equal(t, -1, *code, "no picture outside GoNB is not an error")
	assert.Equal(t, 2, strings.Count(out.String(), "not in a notebook"))

	ShowWarp(Lanes(0, 12, 12), "no 12-byte loads")
	assert.Equal(t, 1, *code, "a warp the model refuses ends the cell")
}
