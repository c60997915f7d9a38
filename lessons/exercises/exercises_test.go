package exercises

import (
	"reflect"

	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coalescing-course/coalesce/lessons/exercises/exercisestest"
	"github.com/coalescing-course/coalesce/lessons/metrics"
	"github.com/coalescing-course/coalesce/lessons/simt"
)

// learners are the variants every exercise is held to: the default and
// three seeded ones.
var learners = []string{"", "ada", "grace", "edsger"}

// Every exercise, on every variant: the starter is right and misses a
// target (the aligned copy's faults instead), the solution is right and
// meets every target, the wrong kernel's output is wrong.
func TestStarterSolutionWrong(t *testing.T) {
	for _, id := range IDs() {
		e, err := Lookup(id)
		require.NoError(t, err)
		for _, learner := range learners {
			v := e.Variant(learner)
			t.Run(id+"/"+v.String(), func(t *testing.T) {
				start, err := e.Run(v, e.Starter)
				require.NoError(t, err)
				if id == "10-kernels/aligned-vector" {
					assert.ErrorIs(t, start.Fault, simt.ErrAccess)
					assert.ErrorContains(t, start.Fault, "cudaErrorMisalignedAddress")
					assert.False(t, start.Pass)
				} else {
					require.NoError(t, start.Fault)
					assert.True(t, start.Correct, "starter: %v", start.Mismatch)
					assert.False(t, start.Pass, "the starter meets every target: %+v", start.Targets)
				}
				t.Logf("starter %+v", start.Targets)
				sol, err := e.Run(v, answers[id].solution)
				require.NoError(t, err)
				require.NoError(t, sol.Fault)
				assert.True(t, sol.Correct, "solution: %v", sol.Mismatch)
				assert.True(t, sol.Pass, "solution: %+v", sol.Targets)
				t.Logf("solution %+v", sol.Targets)
				wrong, err := e.Run(v, answers[id].wrong)
				require.NoError(t, err)
				require.NoError(t, wrong.Fault)
				assert.False(t, wrong.Correct)
				assert.False(t, wrong.Pass)
				if assert.NotNil(t, wrong.Mismatch) {
					t.Logf("wrong: %v", wrong.Mismatch)
				}
			})
		}
	}
}

// The targets and the starters' counts of the default variants, worked
// out by hand; the solutions meet the targets exactly, which holds the
// formulas (span, rowSectors, vectorTargets) to the model.
func TestDefaultVariantCounts(t *testing.T) {
	tests := []struct {
		id      string
		want    []float64 // the targets, in Exercise.Metrics' order
		starter []float64 // the starter's counts of the same metrics (nil: it faults)
		sol     []float64
	}{
		// n=100000, k=8: n floats fill 100000*4/32 = 12500 sectors. The
		// starter's lanes are 8 floats = 32 B apart: every access its own
		// sector, 100000 of each.
		{"10-kernels/strided-copy", []float64{12500, 12500}, []float64{100000, 100000}, []float64{12500, 12500}},
		// n=32768, fields=4: two arrays of 32768 floats fill 2*4096
		// sectors, out 4096. The starter's lanes are 16 B apart, 512 B a
		// warp: 16 sectors a load, 2 loads for each of 1024 warps.
		{"10-kernels/aos-soa", []float64{8192, 4096}, []float64{32768, 4096}, []float64{8192, 4096}},
		// 500x300: rows of 1200 B (16 mod 32), so even rows start on a
		// sector, odd ones half-way: 9 runs of 128 B and one of 48 B, 38
		// sectors an even row and 47 an odd one: 250*38 + 250*47 = 21250.
		// out is 300 rows of 2000 B (16 mod 32): 15 runs of 128 B and one
		// of 80 B, 63 and 78: 150*63 + 150*78 = 21150. The starter stores
		// each of the 150000 floats 2000 B from its neighbour lane's.
		{"10-kernels/transpose", []float64{21250, 21150, 0, 0}, []float64{21250, 150000, 0, 0}, []float64{21250, 21150, 0, 0}},
		// off=3, n=100001: a head of 1 float (bytes 12-16, 1 sector),
		// 25000 float4s from byte 16, no tail. 782 warps of float4s, 781
		// of them full: 512 B from 16 mod 32, 17 sectors; the last 8
		// float4s, 128 B, 5 sectors. Sectors 1 + 781*17 + 5 = 13283;
		// requests allowed 782 + 2, taken 782 + 1.
		{"10-kernels/aligned-vector", []float64{784, 13283, 784, 13283}, nil, []float64{783, 13283, 783, 13283}},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			e, err := Lookup(tt.id)
			require.NoError(t, err)
			v := e.Variant("")
			start, err := e.Run(v, e.Starter)
			require.NoError(t, err)
			sol, err := e.Run(v, answers[tt.id].solution)
			require.NoError(t, err)
			for i, m := range e.Metrics {
				assert.Equal(t, m, sol.Targets[i].Metric)
				assert.Equal(t, tt.want[i], sol.Targets[i].Want, m)
				assert.Equal(t, tt.sol[i], sol.Targets[i].Got, m)
				if tt.starter != nil {
					assert.Equal(t, tt.starter[i], start.Targets[i].Got, m)
				}
			}
		})
	}
}

// The solutions meet every target exactly, on every variant tested: the
// targets are what the fix gives, not a margin above it. (The aligned
// copy's requests allow for a head and a tail, which not every variant
// has.)
func TestSolutionsMeetTargetsExactly(t *testing.T) {
	for _, id := range IDs() {
		e, _ := Lookup(id)
		for _, learner := range learners[1:] {
			v := e.Variant(learner)
			t.Run(id+"/"+v.String(), func(t *testing.T) {
				sol, err := e.Run(v, answers[id].solution)
				require.NoError(t, err)
				for _, tg := range sol.Targets {
					if tg.Metric == metrics.LdRequests || tg.Metric == metrics.StRequests {
						assert.InDelta(t, tg.Want-0.5, tg.Got, 0.5, tg.Metric)
						continue
					}
					assert.Equal(t, tg.Want, tg.Got, tg.Metric)
				}
			})
		}
	}
}

// sortedSectors on keys worked by hand: sorted, 0 1 2 9 are sectors 0 0 0
// 1 (two), and with 40 keys the second warp's 8 keys 100..107 are sector
// 12 and 13 (two): 32 keys 0..31 are 4 sectors.
func TestSortedSectors(t *testing.T) {
	assert.Equal(t, int64(2), sortedSectors([]int32{9, 2, 0, 1}))
	var keys []int32
	for k := range int32(32) {
		keys = append(keys, 31-k)
	}
	keys = append(keys, 107, 106, 105, 104, 103, 102, 101, 100)
	assert.Equal(t, int64(4+2), sortedSectors(keys))
}

// Other right answers pass; near misses fail the target they miss, and
// say why.
func TestAlternatives(t *testing.T) {
	tests := []struct {
		id     string
		kernel any
		pass   bool
		missed string // the metric missed
		why    []string
	}{
		{"10-kernels/gather", gatherBucketed, true, "", nil},
		{"10-kernels/aligned-vector", AlignedVectorKernel(alignedVector32), true, "", nil},
		{"10-kernels/aligned-vector", AlignedVectorKernel(alignedVectorScalar), false, metrics.LdRequests,
			[]string{"in.Load at solutions_test.go:", "(4 B a lane)", "simt.As[[4]float32]"}},
		{"10-kernels/transpose", TransposeKernel(exercisestest.TransposeUnpadded), false, metrics.ShLdBankConflicts,
			[]string{"tile.Load at exercisestest.go:44 ", "wavefronts an instruction", "words are 32 apart, which puts 32 lanes in 1 bank(s)"}},
		{"10-kernels/strided-copy", e0(t, "10-kernels/strided-copy").Starter, false, metrics.LdSectors,
			[]string{"in.Load at starters.go:15 (4 B a lane): ", " sectors a request, where its 32 lanes' bytes fill 4: in warp 0 the lanes are ", " B apart, so "}},
		{"10-kernels/gather", e0(t, "10-kernels/gather").Starter, false, metrics.LdSectors,
			[]string{"table.Load at starters.go:", "follow no stride", "sort or bucket"}},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			e := e0(t, tt.id)
			for _, learner := range learners {
				out, err := e.Run(e.Variant(learner), tt.kernel)
				require.NoError(t, err)
				require.NoError(t, out.Fault)
				assert.True(t, out.Correct, "%v", out.Mismatch)
				assert.Equal(t, tt.pass, out.Pass, "%+v", out.Targets)
				for _, tg := range out.Targets {
					if tg.Metric == tt.missed {
						assert.False(t, tg.Pass)
						for _, w := range tt.why {
							assert.Contains(t, tg.Why, w)
						}
					}
				}
			}
		})
	}
}

// e0 looks an exercise up, or fails the test.
func e0(t *testing.T, id string) *Exercise {
	t.Helper()
	e, err := Lookup(id)
	require.NoError(t, err)
	return e
}

// The aligned copy's starter is right but for its alignment: on a window
// that starts on a float4 (off=8, which no variant has), it copies it.
func TestAlignedStarterRightWhenAligned(t *testing.T) {
	e := e0(t, "10-kernels/aligned-vector")
	v := e.Variant("ada")
	v.Params["off"] = 8
	require.Error(t, e.check(v), "off=8 is no variant")
	in := e.impl.prepare(v)
	k, err := in.bind(reflect.ValueOf(e.Starter))
	require.NoError(t, err)
	_, err = in.launch.Run(k)
	require.NoError(t, err)
	assert.Nil(t, in.check(in.outputs))
}
