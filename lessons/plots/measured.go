package plots

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/coalescing-course/coalesce/lessons/figures"
	"github.com/coalescing-course/coalesce/lessons/measure"
	"github.com/coalescing-course/coalesce/lessons/sectors"
	"github.com/coalescing-course/coalesce/lessons/spec"
)

// The charts that set a measurement beside the model take it as a
// *measure.Set (nil: the model alone), whose label names where it comes
// from in the chart's title.

// ErrMeasured is a measured launch that cannot be drawn: a time or a
// count that is not a finite number, 0 or more.
var ErrMeasured = errors.New("plots: bad measurement")

// measured returns the launches of m that were measured (none for a nil
// m), after checking that their numbers can be drawn.
func measured(m *measure.Set) ([]measure.Launch, error) {
	if m == nil {
		return nil, nil
	}
	out := m.Measured()
	for i, l := range out {
		if math.IsNaN(l.TimeMs) || math.IsInf(l.TimeMs, 0) || l.TimeMs < 0 {
			return nil, fmt.Errorf("%w: launch %d (%s): time %v ms, want a finite time, 0 or more", ErrMeasured, i, l.Spec.Brief(), l.TimeMs)
		}
		for name, v := range l.Metrics {
			if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
				return nil, fmt.Errorf("%w: launch %d (%s): metric %s = %v, want a finite count, 0 or more", ErrMeasured, i, l.Spec.Brief(), name, v)
			}
		}
	}
	return out, nil
}

// like returns the launches whose spec equals base once vary has cleared,
// in both, the fields that may differ: like(ls, base, clearStride) keeps
// the launches of base at every stride.
func like(ls []measure.Launch, base spec.Spec, vary func(*spec.Spec)) []measure.Launch {
	want := base
	vary(&want)
	var out []measure.Launch
	for _, l := range ls {
		s := l.Spec
		vary(&s)
		if s == want {
			out = append(out, l)
		}
	}
	return out
}

// model returns the model's value of f for p, NaN when it has none (which
// checkValue then refuses).
func model(f figures.Figure, p sectors.Launch) float64 {
	v, err := f.Of(figures.Model(p))
	if err != nil {
		return math.NaN()
	}
	return v
}

// measuredValue returns the measured value of f for l, and whether l has it.
func measuredValue(f figures.Figure, l measure.Launch) (float64, bool) {
	v, err := f.Of(figures.Measured(l, nil))
	return v, err == nil
}

// sortedBy returns a copy of xs sorted, stably, by key of each one's spec.
func sortedBy[T any](xs []T, specOf func(T) spec.Spec, key func(spec.Spec) float64) []T {
	out := slices.Clone(xs)
	slices.SortStableFunc(out, func(a, b T) int { return cmp.Compare(key(specOf(a)), key(specOf(b))) })
	return out
}

func launchSpec(l measure.Launch) spec.Spec { return l.Spec }
func modelSpec(p sectors.Launch) spec.Spec  { return p.Spec }
