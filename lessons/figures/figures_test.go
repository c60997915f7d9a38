package figures

import (
	"bufio"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coalescing-course/coalesce/lessons/measure"
	"github.com/coalescing-course/coalesce/lessons/metrics"
	"github.com/coalescing-course/coalesce/lessons/sectors"
	"github.com/coalescing-course/coalesce/lessons/spec"
)

func predict(t *testing.T, text string) sectors.Launch {
	t.Helper()
	s, err := spec.Parse([]byte(text))
	require.NoError(t, err)
	p, err := sectors.Model(s)
	require.NoError(t, err)
	return p
}

func of(t *testing.T, f Figure, v Values) float64 {
	t.Helper()
	x, err := f.Of(v)
	require.NoError(t, err, f.Name)
	return x
}

func TestModelFigures(t *testing.T) {
	// update_x_aos, 16-byte structs: x of 32 structs spans 512 bytes, 16
	// sectors per request for 128 useful bytes (the seed's table).
	aos := Model(predict(t, `{"kernel":"update_x_aos","n":1024}`))
	assert.Equal(t, 16.0, of(t, LdSectorsPerRequest, aos))
	assert.Equal(t, 16.0, of(t, StSectorsPerRequest, aos))
	assert.Equal(t, 0.25, of(t, Efficiency, aos))
	assert.Equal(t, 128.0, of(t, UsefulBytesPerRequest, aos))
	// 32 warps × (16 load + 16 store sectors) × 32 bytes over 1024 × 8 useful bytes.
	assert.Equal(t, 4.0, of(t, SectorBytesPerUsefulByte, aos))

	// strided_read at stride 32: one sector per lane, 4 of its 32 bytes used.
	r := Model(predict(t, `{"kernel":"strided_read","n":1024,"stride":32}`))
	assert.Equal(t, 32.0, of(t, LdSectorsPerRequest, r))
	assert.Equal(t, 0.125, of(t, Efficiency, r))
	_, err := StSectorsPerRequest.Of(r)
	assert.ErrorIs(t, err, ErrNoData)
	assert.ErrorContains(t, err, "figures: st_sectors_per_request of strided_read, stride 32, n 2^10: 0/0: strided_read issues no stores")

	// The model's time gives the time figures; its copy bandwidth is the profile's.
	p := predict(t, `{"kernel":"vectorized_copy","n":67108864}`)
	v := Model(p)
	assert.Equal(t, p.TimeSeconds, of(t, TimeSeconds, v))
	assert.InDelta(t, 2*67108864*4/p.TimeSeconds, of(t, UsefulBandwidth, v), 1e-3)
	assert.InDelta(t, of(t, UsefulBandwidth, v)/4260e9, of(t, FractionOfMemcpy, v), 1e-12, "profiles.json: h200 copy_bandwidth 4260e9")
	dram := p.Metrics[metrics.DRAMRead] + p.Metrics[metrics.DRAMWrite]
	assert.InDelta(t, dram/float64(2*67108864*4), of(t, DRAMBytesPerUsefulByte, v), 1e-12)
}

func TestMeasuredFigures(t *testing.T) {
	s, err := spec.Parse([]byte(`{"kernel":"coalesced_copy","n":1024}`))
	require.NoError(t, err)
	p, err := sectors.Model(s)
	require.NoError(t, err)
	timed := measure.Launch{Spec: s, TimeMs: 0.002, MemcpyMs: 0.001, MemcpyBytes: 4096, Verified: true}
	v := Measured(timed, &p)
	// 8192 useful bytes in 2 µs; the memcpy moved 2 × 4096 bytes in 1 µs.
	assert.Equal(t, 2e-6, of(t, TimeSeconds, v))
	assert.InDelta(t, 8192/2e-6, of(t, UsefulBandwidth, v), 1e-3)
	assert.InDelta(t, 0.5, of(t, FractionOfMemcpy, v), 1e-12)
	_, err = Efficiency.Of(v)
	assert.ErrorIs(t, err, ErrNoData, "timed, not profiled")
	assert.ErrorContains(t, err, "no ncu counters: the launch was not profiled")

	profiled := measure.Launch{Spec: s, Verified: true, Metrics: metrics.Set{
		metrics.LdRequests: 32, metrics.LdSectors: 160, metrics.StRequests: 32, metrics.StSectors: 128,
		metrics.DRAMRead: 4096, metrics.DRAMWrite: 0,
	}}
	v = Measured(profiled, &p)
	// The model's 8192 bytes the lanes use, over 32 × (160 + 128) sector bytes ncu counted.
	assert.InDelta(t, 8192.0/(32*288), of(t, Efficiency, v), 1e-12)
	assert.Equal(t, 5.0, of(t, LdSectorsPerRequest, v))
	assert.Equal(t, 0.5, of(t, DRAMBytesPerUsefulByte, v))
	_, err = TimeSeconds.Of(v)
	assert.ErrorContains(t, err, "no time: the launch was not timed")
	_, err = Efficiency.Of(Measured(profiled, nil))
	assert.ErrorContains(t, err, "no count of the bytes the lanes use", "without the model, no efficiency")
}

// The first build's harness wrote useful_gbps, of_memcpy and memcpy_gbps
// beside what it measured (testdata/first_build.jsonl: every twelfth
// launch of the recording it made on the H200). The figures, computed
// from what was measured, give the same numbers: one definition, kept.
func TestFiguresAgreeWithTheFirstBuild(t *testing.T) {
	f, err := os.Open("testdata/first_build.jsonl")
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	n := 0
	for sc.Scan() {
		var legacy struct {
			UsefulGBps float64 `json:"useful_gbps"`
			MemcpyGBps float64 `json:"memcpy_gbps"`
			OfMemcpy   float64 `json:"of_memcpy"`
			MovedGBps  float64 `json:"moved_gbps"`
		}
		require.NoError(t, json.Unmarshal(sc.Bytes(), &legacy))
		set, err := measure.ReadSet(strings.NewReader(sc.Text()), "", measure.Origin{})
		require.NoError(t, err)
		l := set.Launches[0]
		v := Measured(l, nil)
		assert.InEpsilon(t, legacy.UsefulGBps*1e9, of(t, UsefulBandwidth, v), 1e-6, l.Spec.Brief())
		assert.InEpsilon(t, legacy.MemcpyGBps*1e9, l.MemcpyBandwidth(), 1e-6, l.Spec.Brief())
		assert.InEpsilon(t, legacy.OfMemcpy, of(t, FractionOfMemcpy, v), 1e-6, l.Spec.Brief())
		if legacy.MovedGBps > 0 {
			assert.InEpsilon(t, legacy.MovedGBps*1e9, of(t, DRAMBandwidth, v), 1e-6, l.Spec.Brief())
		}
		n++
	}
	require.NoError(t, sc.Err())
	assert.Equal(t, 12, n)
}

func TestRegistry(t *testing.T) {
	seen := map[string]bool{}
	for _, f := range All() {
		assert.False(t, seen[f.Name], "%s twice", f.Name)
		seen[f.Name] = true
		assert.NotEmpty(t, f.Label, f.Name)
		assert.NotZero(t, f.Unit, f.Name)
		assert.NotZero(t, f.Level, f.Name)
		assert.Equal(t, f.Level == L1, f.Exact, "%s: the L1 figures, and only they, are exact", f.Name)
		got, ok := Lookup(f.Name)
		assert.True(t, ok)
		assert.Equal(t, f.Name, got.Name)
	}
	for _, m := range metrics.All {
		assert.True(t, seen[m], "metric %s is a figure", m)
	}
	_, ok := Lookup("sectors")
	assert.False(t, ok)
}

// TestMetricLabels: every profiled metric has a short header of its own
// (a table of several counters must fit a notebook, and two columns must
// not read alike), and a metric the course does not know keeps its name.
func TestMetricLabels(t *testing.T) {
	labels := map[string]string{}
	for _, m := range metrics.Profiled {
		l := Metric(m).Label
		assert.NotEqual(t, m, l, "%s has a short label", m)
		assert.LessOrEqual(t, len(l), 30, "%s: %q is short", m, l)
		if other, ok := labels[l]; ok {
			t.Errorf("%s and %s are both labelled %q", m, other, l)
		}
		labels[l] = m
	}
	assert.Equal(t, "ld sectors", Metric(metrics.LdSectors).Label)
	assert.Equal(t, "gpu__time_duration.sum", Metric("gpu__time_duration.sum").Label)
}

func TestApplies(t *testing.T) {
	w, err := spec.Parse([]byte(`{"kernel":"strided_write","n":4096,"stride":2}`))
	require.NoError(t, err)
	assert.ErrorContains(t, LdSectorsPerRequest.Applies(w), "strided_write issues no loads")
	assert.NoError(t, StSectorsPerRequest.Applies(w))
	assert.NoError(t, Efficiency.Applies(w))
	g, err := spec.Parse([]byte(`{"kernel":"gather_copy","n":4096,"index_pattern":"sorted_random"}`))
	require.NoError(t, err)
	assert.NoError(t, LdSectorsPerRequest.Applies(g))
	assert.ErrorContains(t, ShLdWavefrontsPerRequest.Applies(g), "gather_copy issues no shared loads")
	tiled, err := spec.Parse([]byte(`{"kernel":"transpose_tiled","rows":64,"cols":64}`))
	require.NoError(t, err)
	for _, f := range []Figure{ShLdWavefrontsPerRequest, ShStWavefrontsPerRequest, ShLdConflictsPerRequest, ShStConflictsPerRequest, LdSectorsPerRequest} {
		assert.NoError(t, f.Applies(tiled), f.Name)
	}
}

func TestSharedFigures(t *testing.T) {
	s, err := spec.Parse([]byte(`{"kernel":"transpose_tiled","rows":64,"cols":64}`))
	require.NoError(t, err)
	// Made-up counts, as ncu might report them: 128 shared loads of 32
	// wavefronts each (31 conflicts), 128 stores of one.
	v := Values{Spec: s, Metrics: metrics.Set{
		metrics.ShLdRequests: 128, metrics.ShLdWavefronts: 4096, metrics.ShLdBankConflicts: 3968,
		metrics.ShStRequests: 128, metrics.ShStWavefronts: 128, metrics.ShStBankConflicts: 0,
	}, L1UsefulBytes: -1}
	tests := []struct {
		f    Figure
		want float64
	}{
		{ShLdWavefrontsPerRequest, 32}, // 4096/128
		{ShLdConflictsPerRequest, 31},  // 3968/128
		{ShStWavefrontsPerRequest, 1},  // 128/128
		{ShStConflictsPerRequest, 0},   // 0/128
		{Metric(metrics.ShLdWavefronts), 4096},
	}
	for _, tt := range tests {
		got, err := tt.f.Of(v)
		require.NoError(t, err, tt.f.Name)
		assert.Equal(t, tt.want, got, tt.f.Name)
		assert.Equal(t, Shared, tt.f.Level, tt.f.Name)
		assert.False(t, tt.f.Exact, "%s: how ncu follows the bank rule is measured", tt.f.Name)
	}
	v.Metrics[metrics.ShStRequests] = 0
	_, err = ShStWavefrontsPerRequest.Of(v)
	assert.ErrorIs(t, err, ErrNoData)
}

// TestFormat holds each figure to its unit of units: a table, a
// verdict and a chart write a figure's value as the figure says.
func TestFormat(t *testing.T) {
	tests := []struct {
		f    Figure
		v    float64
		want string
	}{
		{Metric(metrics.LdSectors), 8388608, "8,388,608"},
		{LdSectorsPerRequest, 4.4196, "4.42"},
		{Efficiency, 1.0 / 32, "3.13%"},
		{DRAMBytesPerUsefulByte, 8, "8"},
		{DRAMBytesPerUsefulByte, 16.69, "16.7"},
		{UsefulBandwidth, 2725.4e9, "2.73 TB/s"},
		{TimeSeconds, 197e-6, "197 µs"},
		// 1e6 useful bytes at 2.5 TB/s take 0.4 µs.
		{TimePerUsefulMB, 1e6 / 2.5e12, "400 ns"},
	}
	for _, tt := range tests {
		t.Run(tt.f.Name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.f.Format(tt.v))
		})
	}
	assert.Equal(t, "NaN", Efficiency.Format(nan()))
}

func nan() float64 {
	var zero float64
	return zero / zero
}

// A figure computed from counters ncu did not read says whose they are;
// one that needs no counter (a time) does not.
func TestBorrowed(t *testing.T) {
	s, err := spec.Parse([]byte(`{"kernel":"coalesced_copy","n":1024}`))
	require.NoError(t, err)
	l := measure.Launch{Spec: s, TimeMs: 0.01, Metrics: metrics.Set{metrics.LdSectors: 128, metrics.LdRequests: 32, metrics.DRAMRead: 4096, metrics.DRAMWrite: 4096}}
	tests := []struct {
		counters string
		fig      Figure
		want     string
	}{
		{"", LdSectorsPerRequest, ""},
		{measure.CountersModel, LdSectorsPerRequest, "model"},
		{measure.CountersModel, DRAMBytesPerUsefulByte, "model"},
		{measure.CountersModel, DRAMBandwidth, "model"},
		{measure.CountersModel, TimeSeconds, ""},
		{measure.CountersModel, UsefulBandwidth, ""},
		{"recorded on NVIDIA H200, 2026-11-29", Metric(metrics.DRAMRead), "recorded on NVIDIA H200, 2026-11-29"},
	}
	for _, tt := range tests {
		t.Run(tt.counters+" "+tt.fig.Name, func(t *testing.T) {
			l.Counters = tt.counters
			assert.Equal(t, tt.want, tt.fig.Borrowed(Measured(l, nil)))
		})
	}
}
