package cuda

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coalescing-course/coalesce/cuda/reference"
	"github.com/coalescing-course/coalesce/cuda/toolkit"
	"github.com/coalescing-course/coalesce/internal/faketool"
	"github.com/coalescing-course/coalesce/lessons/measure"
	"github.com/coalescing-course/coalesce/lessons/metrics"
)

// deniedFake is a fake GPU named name whose ncu is refused the counters,
// exiting with status exit; it returns the file ncu's runs are counted in,
// a line each.
func deniedFake(t *testing.T, name, exit string) (*fake, string) {
	f := newFake(t)
	f.gpu.Info.GPU = name
	calls := filepath.Join(f.dir, "ncu-calls")
	// ncu --version (for the provenance) is not a profiling run.
	ncu := faketool.Script(t, f.dir, "ncu", `case "$*" in *--input*) echo run >> "`+calls+`";; esac; exec "`+f.ncu.Path+`" "$@"`)
	f.gpu.Ncu = &toolkit.Ncu{Path: ncu}
	f.stdout(faketool.NcuDenied)
	// The fake's runs with an input count up over both tools: odd runs
	// are the harness timing, even ones ncu profiling.
	for k := 2; k <= 8; k += 2 {
		t.Setenv("FAKE_EXIT_"+strconv.Itoa(k), exit)
	}
	return f, calls
}

func ncuRuns(t *testing.T, calls string) int {
	data, err := os.ReadFile(calls)
	if os.IsNotExist(err) {
		return 0
	}
	require.NoError(t, err)
	return strings.Count(string(data), "run\n")
}

// A GPU that refuses ncu its counters still times live, and takes the
// counters of a launch from the recording when it is the recording's GPU
// and the recording holds the launch, else from the model; ncu is tried
// once.
func TestCountersDenied(t *testing.T) {
	rec, err := reference.Recorded()
	require.NoError(t, err)
	require.Equal(t, "NVIDIA H200", rec.Origin.GPU)
	// Line 133 of the recording: ncu read 264,960 DRAM bytes for it; the
	// model's copy of 65,536 × 4 bytes reads 262,144 and a few lines more.
	recorded := mustParse(t, `{"kernel":"coalesced_copy","n":65536}`)[0]
	inRecording, ok := rec.Lookup(recorded)
	require.True(t, ok)
	require.Equal(t, 264960.0, inRecording.Metrics[metrics.DRAMRead])
	// Not recorded: 1024 threads of 4 bytes load 4096 bytes, 128 sectors,
	// in 32 warp requests.
	unrecorded := mustParse(t, `{"kernel":"coalesced_copy","n":1024}`)[0]
	_, ok = rec.Lookup(unrecorded)
	require.False(t, ok)

	tests := []struct {
		name, gpu, exit string
		// from is where the counters of the recorded and the unrecorded
		// launch come from.
		from [2]string
	}{
		{"the recording's GPU", "NVIDIA H200", "1", [2]string{rec.Label(), measure.CountersModel}},
		{"the recording's GPU, another status", "NVIDIA H200", "255", [2]string{rec.Label(), measure.CountersModel}},
		{"another GPU", "NVIDIA GeForce RTX 4090", "1", [2]string{measure.CountersModel, measure.CountersModel}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, calls := deniedFake(t, tt.gpu, tt.exit)
			specs := []measure.Launch{{Spec: recorded}, {Spec: unrecorded}}
			f.answer(good(1, specs[0].Spec, true), good(2, specs[1].Spec, true))
			for round := range 2 {
				set, err := f.gpu.Measure(context.Background(), mustParse(t, recorded.String(), unrecorded.String()), measure.Times|measure.Counters)
				require.NoError(t, err, "round %d", round)
				assert.Equal(t, 1, ncuRuns(t, calls), "ncu is refused once, and not run again")
				require.Len(t, set.Launches, 2)
				for i, l := range set.Launches {
					assert.Equal(t, 0.5, l.TimeMs, "the times are live")
					assert.Equal(t, tt.from[i], l.Counters)
					assert.True(t, l.CountersBorrowed())
				}
				if tt.from[0] == rec.Label() {
					assert.Equal(t, inRecording.Metrics, set.Launches[0].Metrics, "the recording's counts of the launch")
				} else {
					assert.NotEqual(t, 264960.0, set.Launches[0].Metrics[metrics.DRAMRead], "not the H200's recording on another GPU")
				}
				m := set.Launches[1].Metrics
				assert.Equal(t, 128.0, m[metrics.LdSectors])
				assert.Equal(t, 32.0, m[metrics.LdRequests])
				assert.Equal(t, "live: "+tt.gpu+", "+f.gpu.Opened.UTC().Format("2006-01-02 15:04 UTC"), set.Label())
				assert.Contains(t, set.Note, "ERR_NVGPUCTRPERM")
				var denied *toolkit.CountersDeniedError
				require.ErrorAs(t, set.CountersErr, &denied)
				assert.Equal(t, tt.gpu, denied.GPU)
				assert.ErrorIs(t, set.CountersErr, toolkit.ErrCountersDenied)
				assert.ErrorIs(t, set.CountersErr, measure.ErrNoCounters)
				assert.Contains(t, set.CountersErr.Error(), "echo 'options nvidia NVreg_RestrictProfilingToAdminUsers=0' | sudo tee /etc/modprobe.d/nvidia-profiling.conf")
				assert.Contains(t, set.CountersErr.Error(), "--cap-add SYS_ADMIN")
				assert.Contains(t, set.CountersErr.Error(), "Allow access to the GPU performance counters to all users")
				assert.Contains(t, set.CountersErr.Error(), "device 0. For instructions", "ncu's own line")
			}
			assert.ErrorIs(t, f.gpu.CountersDenied(), toolkit.ErrCountersDenied)
			assert.ErrorIs(t, f.gpu.ProbeCounters(context.Background()), toolkit.ErrCountersDenied)
			assert.Equal(t, 1, ncuRuns(t, calls), "the probe knows already")
		})
	}
}

// Asked for counters alone, a GPU that refuses them runs nothing more and
// gives borrowed counters, no times.
func TestCountersDeniedCountersAlone(t *testing.T) {
	f, calls := deniedFake(t, "NVIDIA H200", "1")
	t.Setenv("FAKE_EXIT_1", "1") // here the first run is ncu's
	specs := mustParse(t, `{"kernel":"coalesced_copy","n":1024}`)
	f.answer(good(1, specs[0], false))
	set, err := f.gpu.Measure(context.Background(), specs, measure.Counters)
	require.NoError(t, err)
	l := set.Launches[0]
	assert.False(t, l.Failed(), l.Error)
	assert.Zero(t, l.TimeMs)
	assert.Equal(t, measure.CountersModel, l.Counters)
	assert.Equal(t, 128.0, l.Metrics[metrics.LdSectors])
	assert.Equal(t, 1, ncuRuns(t, calls))
}

// The probe profiles one launch; readable counters are not a denial.
func TestProbeCounters(t *testing.T) {
	f := newFake(t)
	f.gpu.Ncu = &f.ncu
	s := mustParse(t, probeSpec)[0]
	f.answer(good(1, s, false))
	f.stdout(probeCSV(t, 1))
	assert.NoError(t, f.gpu.ProbeCounters(context.Background()))
	assert.NoError(t, f.gpu.CountersDenied())

	f = newFake(t)
	assert.ErrorIs(t, f.gpu.ProbeCounters(context.Background()), measure.ErrNoCounters, "no ncu: no counters, no denial")
	assert.NoError(t, f.gpu.CountersDenied())
}

// A strict GPU (COALESCE_MEASURE=strict) stands nothing in for ncu's
// counters: where a live GPU times only (no ncu) or borrows counters (ncu
// refused them), asking for counters fails, saying why; asking for times
// alone, or for counters that ncu reads, succeeds as live does.
func TestStrictRefusesStandIns(t *testing.T) {
	const s = `{"kernel":"coalesced_copy","n":1024}`
	tests := []struct {
		name string
		// setup makes the fake: no ncu, ncu denied or ncu reading.
		setup func(t *testing.T, f *fake)
		want  measure.Want
		// errs are the sentinels the error wraps; none: it succeeds.
		errs []error
		// not is a sentinel the error must not wrap: lab.Profile falls
		// back on the recording for measure.ErrNoCounters alone.
		not     error
		message string
	}{
		{"no ncu, times and counters", func(*testing.T, *fake) {}, measure.Times | measure.Counters,
			[]error{ErrStandIn}, measure.ErrNoCounters, "counters asked for, but ncu not found (fake)"},
		{"no ncu, counters", func(*testing.T, *fake) {}, measure.Counters,
			[]error{ErrStandIn}, measure.ErrNoCounters, "counters asked for, but ncu not found (fake)"},
		{"no ncu, times", func(*testing.T, *fake) {}, measure.Times, nil, nil, ""},
		{"counters denied", func(t *testing.T, f *fake) {
			d, _ := deniedFake(t, "NVIDIA H200", "1")
			*f = *d
		}, measure.Times | measure.Counters,
			[]error{ErrStandIn, toolkit.ErrCountersDenied}, nil, "ERR_NVGPUCTRPERM"},
		{"counters read", func(t *testing.T, f *fake) {
			// As in TestMeasureMergesMetrics: one answer for both runs.
			f.gpu.Ncu = &f.ncu
			f.stdout(probeCSV(t, 1))
		}, measure.Times | measure.Counters, nil, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t)
			tt.setup(t, f)
			f.gpu.Strict = true
			specs := mustParse(t, s)
			f.answer(good(1, specs[0], tt.want&measure.Times != 0))
			// Twice: a denial found on the first call fails the second
			// without running ncu again.
			for round := range 2 {
				set, err := f.gpu.Measure(context.Background(), specs, tt.want)
				if len(tt.errs) == 0 {
					require.NoError(t, err, "round %d", round)
					assert.Empty(t, set.Note)
					assert.Nil(t, set.CountersErr)
					assert.False(t, set.Launches[0].CountersBorrowed())
					continue
				}
				require.Error(t, err, "round %d", round)
				for _, e := range tt.errs {
					assert.ErrorIs(t, err, e)
				}
				if tt.not != nil {
					assert.NotErrorIs(t, err, tt.not)
				}
				assert.ErrorContains(t, err, "strict: no stand-in for a live measurement")
				assert.ErrorContains(t, err, tt.message)
			}
		})
	}
}
