package plots

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"

	"github.com/coalescing-course/coalesce/lessons/figures"
	"github.com/coalescing-course/coalesce/lessons/measure"
	"github.com/coalescing-course/coalesce/lessons/sectors"
	"github.com/coalescing-course/coalesce/lessons/spec"
)

// A chart of this package knows what it draws: each of its points is one
// figure of one launch, the model's or a measurement's (Point). The
// notebook face shows a chart without the points that would give away an
// answer the learner owes (Hide): a hidden point leaves a gap in its line,
// a hidden measured point is not drawn, a hidden reference line is left
// out, and the rest of the chart still shows.

// Point is one value a chart draws.
type Point struct {
	Spec spec.Spec
	// Figure is what the value is of; Measured says whether it is the
	// measurement's value rather than the model's.
	Figure   figures.Figure
	Measured bool
	Value    float64
	// Values are what the value was computed from: a launch's counts.
	Values figures.Values
}

// Hide says whether a chart must leave a point out; nil hides nothing.
type Hide func(Point) bool

// ErrAllHidden is a chart every point of which Hide hides: nothing is
// left to draw.
var ErrAllHidden = errors.New("plots: every point of the chart is hidden")

// Chart is a chart, ready to draw.
type Chart struct {
	title  string
	points []Point
	draw   func(h *hider) (*plot.Plot, error)
}

// Title is the chart's title, as drawn.
func (c *Chart) Title() string { return c.title }

// Points returns every point the chart draws.
func (c *Chart) Points() []Point { return append([]Point(nil), c.points...) }

// Plot draws the chart whole.
func (c *Chart) Plot() (*plot.Plot, error) { return c.draw(&hider{}) }

// PlotWithout draws the chart leaving out the points hide hides; it fails
// with ErrAllHidden when that leaves nothing.
func (c *Chart) PlotWithout(hide Hide) (*plot.Plot, error) {
	h := &hider{hide: hide}
	p, err := c.draw(h)
	if err != nil {
		return nil, err
	}
	if h.hidden > 0 && h.drawn == 0 {
		return nil, ErrAllHidden
	}
	return p, nil
}

// newChart makes a chart of draw, drawing it once whole so that a chart
// that cannot be drawn is an error where it is made, as it always was.
func newChart(draw func(h *hider) (*plot.Plot, error)) (*Chart, error) {
	c := &Chart{}
	rec := &hider{record: &c.points}
	p, err := draw(rec)
	if err != nil {
		return nil, err
	}
	c.title = p.Title.Text
	c.draw = draw
	return c, nil
}

// hider answers, while a chart is drawn, whether each point shows; it
// notes every point when the chart is first drawn.
type hider struct {
	hide          Hide
	record        *[]Point
	hidden, drawn int
}

// model returns the model's value of f for p, NaN when it is hidden.
func (h *hider) model(f figures.Figure, p sectors.Launch) float64 {
	v := model(f, p)
	return h.value(Point{Spec: p.Spec, Figure: f, Value: v, Values: figures.Model(p)})
}

// measured returns the measured value of f for l and whether l has it;
// a hidden one is not had.
func (h *hider) measured(f figures.Figure, l measure.Launch) (float64, bool) {
	v, ok := measuredValue(f, l)
	if !ok {
		return v, false
	}
	v = h.value(Point{Spec: l.Spec, Figure: f, Measured: true, Value: v, Values: figures.Measured(l, nil)})
	return v, !math.IsNaN(v)
}

func (h *hider) value(pt Point) float64 {
	if h.record != nil {
		*h.record = append(*h.record, pt)
	}
	if h.hide != nil && h.hide(pt) {
		h.hidden++
		return math.NaN()
	}
	h.drawn++
	return pt.Value
}

// hiddenValue reports whether v is a hidden point's.
func hiddenValue(v float64) bool { return math.IsNaN(v) }

// segments splits a line at its hidden points: a gap, not a line drawn
// through where the hidden value would be.
func segments(xys plotter.XYs) []plotter.XYs {
	var out []plotter.XYs
	var cur plotter.XYs
	for _, xy := range xys {
		if hiddenValue(xy.Y) {
			if len(cur) > 0 {
				out = append(out, cur)
			}
			cur = nil
			continue
		}
		cur = append(cur, xy)
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

// shown returns the points of xys that are not hidden.
func shown(xys plotter.XYs) plotter.XYs {
	var out plotter.XYs
	for _, xy := range xys {
		if !hiddenValue(xy.Y) {
			out = append(out, xy)
		}
	}
	return out
}

// checkShown is checkValue for a point that may be hidden.
func checkShown(what string, s spec.Spec, v float64) error {
	if hiddenValue(v) {
		return nil
	}
	return checkValue(what, s, v)
}

// allHidden reports whether no point of any series shows.
func allHidden(series ...plotter.XYs) bool {
	for _, s := range series {
		if len(shown(s)) > 0 {
			return false
		}
	}
	return true
}

func errAllHidden(what string) error { return fmt.Errorf("%w: %s", ErrAllHidden, what) }
