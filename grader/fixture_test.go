package grader

import (
	"bytes"
	"flag"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/coalescing-course/coalesce/lessons/measure"
	"github.com/coalescing-course/coalesce/lessons/metrics"
	"github.com/coalescing-course/coalesce/lessons/sectors"
	"github.com/coalescing-course/coalesce/lessons/spec"
)

var updateFixture = flag.Bool("update-fixture", false, "rewrite testdata/reference.jsonl, the invented measurements the tests grade against")

// fixtureFile is a run file (package measure) whose numbers are invented
// (the model's counts; DRAM bytes and times set by hand below), so that
// the tests see every case: measurements that agree with the model, ones
// that do not, a spec timed but not profiled, a spec not measured.
const fixtureFile = "testdata/reference.jsonl"

// fixtureMemcpy is the invented cudaMemcpy beside every launch: 2 × 256
// MiB in 0.1377 ms, 3900 GB/s.
const (
	fixtureMemcpyBytes = 268435456
	fixtureMemcpyMs    = 2 * fixtureMemcpyBytes / 3900e9 * 1e3
)

// fixtureTimes are the invented times, in milliseconds, of the specs the
// measured questions compare; the comments give the ratio the tests expect.
var fixtureTimes = map[string]float64{
	`{"kernel":"strided_copy","n":67108864,"stride":1}`:                            0.150, // stride 1 vs 32: 16x per useful byte
	`{"kernel":"strided_copy","n":67108864,"stride":32}`:                           0.075,
	`{"kernel":"gather_copy","n":33554432,"index_pattern":"sorted_random"}`:        0.110, // sorted 4.73x faster
	`{"kernel":"gather_copy","n":33554432,"index_pattern":"random"}`:               0.520,
	`{"kernel":"update_x_soa","n":16777216}`:                                       0.045, // SoA 2.78x faster: the model says 4.5x
	`{"kernel":"update_x_aos","n":16777216,"struct_bytes":16}`:                     0.125,
	`{"kernel":"coalesced_copy","n":67108864}`:                                     0.150, // 0.918 of memcpy at 3900 GB/s
	`{"kernel":"coalesced_copy","n":67108864,"block":32}`:                          0.190, // block 32 1.27x longer
	`{"kernel":"strided_read","n":67108864,"stride":32,"l2_fetch_granularity":64}`: 0.040,
	`{"kernel":"strided_read","n":67108864,"stride":32,"l2_fetch_granularity":32}`: 0.025,
}

// fixtureDRAMRead overrides the model's DRAM read bytes.
var fixtureDRAMRead = map[string]float64{
	`{"kernel":"strided_read","n":67108864,"stride":32,"l2_fetch_granularity":64}`: 140e6, // 16.7 per useful byte
	`{"kernel":"strided_read","n":67108864,"stride":32,"l2_fetch_granularity":32}`: 68e6,  // 2.06x less than at 64
}

// fixtureNotProfiled are timed only: no ncu metrics.
var fixtureNotProfiled = map[string]bool{
	`{"kernel":"strided_write","n":67108864,"stride":4}`: true,
}

// fixtureMissing are left out of the reference altogether.
var fixtureMissing = map[string]bool{
	`{"kernel":"coalesced_copy","n":33554432,"elem_bytes":8}`: true,
}

func TestWriteReferenceFixture(t *testing.T) {
	if !*updateFixture {
		t.Skip("run with -update-fixture to rewrite " + fixtureFile)
	}
	b, err := Questions()
	require.NoError(t, err)
	ref := &measure.Set{Provenance: &measure.Provenance{
		Device:  measure.DeviceInfo{GPU: "NVIDIA H200 (test fixture)", SMs: 132},
		CUDA:    "13.0",
		Timing:  "invented: not a measurement",
		Date:    "2026-01-01T00:00:00Z",
		Command: "go test ./grader -run TestWriteReferenceFixture -update-fixture (the model's counts, times and some DRAM bytes set by hand)",
	}}
	times, dramRead := norm(t, fixtureTimes), norm(t, fixtureDRAMRead)
	notProfiled, missing := norm(t, fixtureNotProfiled), norm(t, fixtureMissing)
	seen := map[string]bool{}
	for _, e := range b.Questions {
		for _, s := range e.Specs {
			key := s.String()
			if seen[key] {
				continue
			}
			seen[key] = true
			if missing[key] {
				continue
			}
			p, err := sectors.Model(s)
			require.NoError(t, err)
			ms := p.TimeSeconds * 1e3 * 1.2
			if v, ok := times[key]; ok {
				ms = v
			}
			r := measure.Launch{
				Spec: s, TimeMs: ms, TimeMsMin: ms * 0.98, TimeMsMax: ms * 1.03, TimedLaunches: 20,
				MemcpyMs: fixtureMemcpyMs, MemcpyBytes: fixtureMemcpyBytes,
				Threads: s.Threads(), GridBlocks: s.GridBlocks(), L2Fetch: s.L2Fetch, Verified: true,
			}
			if !notProfiled[key] {
				r.Metrics = metrics.Set{}
				for k, v := range p.Metrics {
					r.Metrics[k] = v
				}
				if v, ok := dramRead[key]; ok {
					r.Metrics[metrics.DRAMRead] = v
				}
			}
			ref.Launches = append(ref.Launches, r)
		}
	}
	var buf bytes.Buffer
	require.NoError(t, measure.WriteSet(&buf, ref))
	require.NoError(t, os.WriteFile(fixtureFile, buf.Bytes(), 0o644))
}

// norm rewrites the keys of a fixture table as Spec.String writes specs.
func norm[T any](t *testing.T, tbl map[string]T) map[string]T {
	t.Helper()
	out := map[string]T{}
	for k, v := range tbl {
		s, err := spec.Parse([]byte(k))
		require.NoError(t, err, k)
		out[s.String()] = v
	}
	return out
}

// fixture returns the invented measurements, as a recording.
func fixture(t testing.TB) measure.Measurer {
	t.Helper()
	f, err := os.Open(fixtureFile)
	require.NoError(t, err)
	defer f.Close()
	set, err := measure.ReadSet(f, fixtureFile, measure.Origin{Kind: measure.Recorded})
	require.NoError(t, err)
	return measure.FromSet(set)
}
