package grader

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coalescing-course/coalesce/lessons/figures"
	"github.com/coalescing-course/coalesce/lessons/measure"
	"github.com/coalescing-course/coalesce/lessons/sectors"
	"github.com/coalescing-course/coalesce/lessons/spec"
	"github.com/coalescing-course/coalesce/units"
)

// TestTimeMissesPointTheWay holds the time explanation to the direction of
// the miss: a GPU faster than the model must not be told the reasons a GPU
// is slower (the 04 sorted-gather speedup was, before).
func TestTimeMissesPointTheWay(t *testing.T) {
	s, err := spec.Parse([]byte(`{"kernel":"gather_copy","n":1048576,"index_pattern":"sorted_random"}`))
	require.NoError(t, err)
	const modelSeconds = 100e-6
	tests := []struct {
		name     string
		measured float64 // seconds
		want     []string
		not      []string
	}{
		// 40 µs / 100 µs = 0.4: faster by more than the 25 % tolerance.
		{"faster", 40e-6, []string{"0.4× the model's time (faster", "faster than the model: loads that hit"}, []string{"slower than the model: "}},
		// 200 µs / 100 µs = 2: slower.
		{"slower", 200e-6, []string{"2× the model's time (slower", "slower than the model: sparse accesses"}, []string{"faster than the model: "}},
		// 110 µs / 100 µs = 1.1: within 25 %.
		{"within", 110e-6, []string{"1.1× the model's time (slower"}, []string{"faster than the model: ", "slower than the model: "}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			k := &Key{
				Question: &Question{Specs: []spec.Spec{s}, Tolerance: Tolerance{Measured: 0.25}},
				Parts: []Part{{
					Spec:        s,
					Modelled:    sectors.Launch{TimeSeconds: modelSeconds, Time: sectors.TimeParts{Bound: "latency"}},
					HasMeasured: true,
					Launch:      measure.Launch{Spec: s, TimeMs: tc.measured * 1e3, Verified: true},
				}},
			}
			text := strings.Join(timeMisses(k), "\n")
			for _, w := range tc.want {
				assert.Contains(t, text, w)
			}
			for _, n := range tc.not {
				assert.NotContains(t, text, n)
			}
		})
	}
}

// TestTimeArithmeticNamesRewrites: where the model charges DRAM time above
// the bytes, the arithmetic says why: sparse accesses, and for a
// read-modify-write the write-backs of the lines just read as well.
func TestTimeArithmeticNamesRewrites(t *testing.T) {
	for _, c := range []struct {
		name, spec string
		rewrite    bool
	}{
		// One float a line read: charged for its sparse reads alone.
		{"strided read", `{"kernel":"strided_read","n":67108864,"stride":32}`, false},
		// One float a line read and written back, over 128 MB (twice the
		// L2, so DRAM sees it): charged for both.
		{"read-modify-write", `{"kernel":"update_x_aos","n":1048576,"struct_bytes":128}`, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := spec.Parse([]byte(c.spec))
			require.NoError(t, err)
			pr, err := sectors.Model(s)
			require.NoError(t, err)
			e := &Question{Quantity: figures.TimeSeconds.Name, Specs: []spec.Spec{s}}
			text := strings.Join(partArithmetic(e, &Part{Spec: s, Modelled: pr, Model: pr.TimeSeconds}), "\n")
			assert.Contains(t, text, "DRAM longer than their bytes")
			if c.rewrite {
				assert.Contains(t, text, "the write-backs of lines its warps have just read")
			} else {
				assert.NotContains(t, text, "write-backs")
			}
		})
	}
}

// TestEquationsHoldAsPrinted reads every equation in every exercise's
// verdict, as a learner would (units.FindEquations), and holds it true as
// printed: its terms worked out round to its result. A line that rounds a
// factor and then multiplies it out fails here.
func TestEquationsHoldAsPrinted(t *testing.T) {
	g, _ := graders(t)
	total := 0
	for _, e := range g.Bank().Questions {
		t.Run(e.ID, func(t *testing.T) {
			k, err := g.Key(e.ID)
			require.NoError(t, err)
			text := k.Verdict(k.Model).String()
			for _, f := range units.FindEquations(text) {
				total++
				assert.True(t, f.Holds, "%s: %q works out to %v", e.ID, f.Text, f.Worked)
			}
		})
	}
	assert.Greater(t, total, len(g.Bank().Questions), "the explanations state equations")
}
