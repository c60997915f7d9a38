package lab

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coalescing-course/coalesce/cuda"
	"github.com/coalescing-course/coalesce/cuda/toolkit"
	"github.com/coalescing-course/coalesce/lessons/devices"
	"github.com/coalescing-course/coalesce/lessons/measure"
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

// recorded makes the notebook's source the recording a machine without a
// GPU gets, as CI is, and returns it.
func recorded(t *testing.T) measure.Measurer {
	t.Helper()
	t.Setenv(toolkit.NvccEnv, "/nonexistent/nvcc")
	src, err := openMeasurer()
	require.NoError(t, err)
	useMeasurer(src, nil)
	t.Cleanup(resetMeasurer)
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

func TestSource(t *testing.T) {
	src := recorded(t)
	o := src.Origin()
	assert.Equal(t, measure.Recorded, o.Kind)
	assert.Regexp(t, `^recorded on NVIDIA H200, \d{4}-\d{2}-\d{2}$`, o.String())
	assert.Equal(t, "no GPU here: nvcc not found at /nonexistent/nvcc (set by COALESCE_NVCC)", o.Why)

	t.Setenv(cuda.ModeEnv, "none")
	_, err := openMeasurer()
	assert.ErrorIs(t, err, cuda.ErrNoMeasurer)
	assert.ErrorContains(t, err, "lab: cuda: no measurement source: COALESCE_MEASURE=none")
}

func TestMeasureRecorded(t *testing.T) {
	recorded(t)
	s1 := Spec(`{"kernel":"strided_copy","n":67108864,"stride":1}`)
	s32 := Spec(`{"kernel":"strided_copy","n":67108864,"stride":32}`)
	m, err := Measure(s32, s1)
	require.NoError(t, err)
	require.Len(t, m.Launches, 2)
	assert.Equal(t, s32, m.Launches[0].Spec, "launches in the order asked")
	l, ok := m.Lookup(s1)
	require.True(t, ok)
	assert.Greater(t, l.TimeMs, 0.0)
	assert.Equal(t, "4", LdSectorsPerRequest.measuredValue(l))
	assert.Regexp(t, `^Measured: recorded on NVIDIA H200, \d{4}-\d{2}-\d{2} \(no GPU here: nvcc not found at /nonexistent/nvcc \(set by COALESCE_NVCC\)\)\.$`, m.Caption())
}

func TestMeasureNotRecorded(t *testing.T) {
	recorded(t)
	known := Spec(`{"kernel":"strided_copy","n":67108864,"stride":32}`)
	unknown := Spec(`{"kernel":"strided_copy","n":1048576,"stride":32}`)
	_, err := Measure(known, unknown)
	require.Error(t, err)
	assert.ErrorIs(t, err, measure.ErrNotMeasured)
	var nm *measure.NotMeasuredError
	require.ErrorAs(t, err, &nm)
	require.Len(t, nm.Failed, 1)
	assert.Equal(t, unknown, nm.Failed[0].Spec)
	assert.NotEmpty(t, nm.Near[spec.StridedCopy], "the error offers recorded launches of the same kernel")

	msg := err.Error()
	assert.Contains(t, msg, "1 launch not measured (recorded on NVIDIA H200")
	assert.Contains(t, msg, "(no GPU here: nvcc not found")
	assert.Contains(t, msg, unknown.String())
	assert.Contains(t, msg, "The recording holds")
	assert.Contains(t, msg, "cuda/reference/sweep.jsonl")
}

func TestMeasureErrors(t *testing.T) {
	recorded(t)
	_, err := Measure()
	assert.ErrorContains(t, err, "no launch to measure")

	bad := Spec(`{"kernel":"strided_copy","n":1024,"stride":2}`)
	bad.Stride = 0
	_, err = Measure(bad)
	assert.ErrorIs(t, err, spec.ErrValue)
	assert.ErrorContains(t, err, "launch 1")

	useMeasurer(nil, cuda.ErrNoMeasurer)
	_, err = Measure(Spec(`{"kernel":"coalesced_copy","n":1024}`))
	assert.ErrorIs(t, err, cuda.ErrNoMeasurer)
	_, err = Compare([]Case{{"x", Spec(`{"kernel":"coalesced_copy","n":1024}`)}}, UsefulGBps)
	assert.ErrorIs(t, err, cuda.ErrNoMeasurer)
}

func TestProfileRecorded(t *testing.T) {
	recorded(t)
	m, err := Profile(Spec(`{"kernel":"strided_write","n":67108864,"stride":4}`))
	require.NoError(t, err)
	out := m.Counters().String()
	assert.Regexp(t, `(?m)^strided_write, stride 4, n 2\^26 +0 +0 +524,288 +8,388,608 `, out)
	assert.Contains(t, out, "Counters: ncu --clock-control none --metrics l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum")
}

func TestStatus(t *testing.T) {
	out := capture(t)
	src := recorded(t)
	Status()
	assert.Contains(t, out.String(), "Model: the sector model of the NVIDIA H200 (device \"h200\"): 132 SMs, 60 MiB of L2, 32-byte sectors in 128-byte lines")
	assert.Contains(t, out.String(), "\nProfile: the course's H200: no GPU of this machine chosen.\n", "a measured profile claims no estimate")
	assert.Contains(t, out.String(), "Measurements: "+src.Origin().String()+" (the course's recording; no GPU here: nvcc not found at /nonexistent/nvcc (set by COALESCE_NVCC)).")

	out.Reset()
	useMeasurer(nil, cuda.ErrNoMeasurer)
	Status()
	assert.Contains(t, out.String(), "Measurements: none: no measurement source")
}

// TestStatusEstimate shows a datasheet profile chosen for this machine:
// Status says why, and that its numbers wait for coalesce calibrate.
func TestStatusEstimate(t *testing.T) {
	out := capture(t)
	recorded(t)
	t.Cleanup(func() { require.NoError(t, devices.Use(devices.Course, devices.CourseWhy)) })
	require.NoError(t, devices.Use("rtx4090", "this machine's NVIDIA GeForce RTX 4090, by its name"))
	d, err := devices.Lookup("rtx4090")
	require.NoError(t, err)
	Status()
	// 72 MiB: the 75497472 bytes deviceQuery reports, over 2^20.
	assert.Contains(t, out.String(), "Model: the sector model of the NVIDIA GeForce RTX 4090 (device \"rtx4090\"): 128 SMs, 72 MiB of L2,")
	assert.Contains(t, out.String(), fmt.Sprintf("\nProfile: this machine's NVIDIA GeForce RTX 4090, by its name; %d fields estimated, not measured on this GPU (coalesce calibrate measures what it can).\n", len(d.Estimated)))
	// A datasheet profile estimates every value only a measurement gives:
	// the DRAM level's and the time model's, and the L2 fetch granularity.
	var measurable []string
	for _, path := range devices.Paths() {
		if strings.HasPrefix(path, "dram.") || strings.HasPrefix(path, "time.") || path == "default_l2_fetch_granularity" {
			measurable = append(measurable, path)
		}
	}
	assert.ElementsMatch(t, measurable, d.Estimated)
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

func TestShowOutsideANotebook(t *testing.T) {
	out := capture(t)
	code, _ := exited(t)
	ShowWarp(Lanes(0, 4, 4), "a warp")
	ShowInstruction(Spec(`{"kernel":"coalesced_copy","n":1024}`), 0, 0)
	ShowBanks(Spec(`{"kernel":"transpose_tiled","rows":64,"cols":64,"pad":1}`), 0, 8)
	assert.Equal(t, -1, *code, "no picture outside GoNB is not an error")
	assert.Equal(t, 3, strings.Count(out.String(), "not in a notebook"))

	ShowWarp(Lanes(0, 12, 12), "no 12-byte loads")
	assert.Equal(t, 1, *code, "a warp the model refuses ends the cell")
	*code = -1
	ShowBanks(Spec(`{"kernel":"transpose_tiled","rows":64,"cols":64,"pad":1}`), 0, 0)
	assert.Equal(t, 1, *code, "a global instruction has no banks: the cell ends with why")
}
