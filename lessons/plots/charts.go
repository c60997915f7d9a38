package plots

import (
	"errors"
	"fmt"
	"image/color"
	"math"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/coalescing-course/coalesce/lessons/figures"
	"github.com/coalescing-course/coalesce/lessons/sectors"
	"github.com/coalescing-course/coalesce/lessons/spec"
	"github.com/coalescing-course/coalesce/units"
)

// ErrNoData is a chart asked to draw nothing: no launch, no stride.
var ErrNoData = errors.New("plots: no data to draw")

// ErrNoMatch is a set of measurements none of which is a launch the chart
// draws.
var ErrNoMatch = errors.New("plots: no measurement matches the chart")

// checkValue rejects what a log axis cannot draw.
func checkValue(what string, s spec.Spec, v float64) error {
	if math.IsNaN(v) || math.IsInf(v, 0) || v <= 0 {
		return fmt.Errorf("plots: %s of %s is %v, want a positive number", what, s, v)
	}
	return nil
}

// strideSeries groups stride launches by element size, each group in
// stride order, the groups by element size.
func strideSeries(preds []sectors.Launch) ([][]sectors.Launch, error) {
	if len(preds) == 0 {
		return nil, fmt.Errorf("%w: no launch", ErrNoData)
	}
	byElem := map[int][]sectors.Launch{}
	var elems []int
	for _, p := range preds {
		if !isStrided(p.Spec.Kernel) {
			return nil, fmt.Errorf("plots: stride chart of %s: want strided_copy, strided_read or strided_write launches", p.Spec.Kernel)
		}
		if _, ok := byElem[p.Spec.ElemBytes]; !ok {
			elems = append(elems, p.Spec.ElemBytes)
		}
		byElem[p.Spec.ElemBytes] = append(byElem[p.Spec.ElemBytes], p)
	}
	slices.Sort(elems)
	out := make([][]sectors.Launch, len(elems))
	for i, e := range elems {
		g := byElem[e]
		slices.SortStableFunc(g, func(a, b sectors.Launch) int { return int(a.Spec.Stride - b.Spec.Stride) })
		out[i] = g
	}
	return out, nil
}

// sectorsPerRequest is the load's ratio, or the store's when the kernel
// only stores.
func sectorsPerRequest(h *hider, p sectors.Launch) float64 {
	if v := model(figures.LdSectorsPerRequest, p); !math.IsNaN(v) {
		return h.model(figures.LdSectorsPerRequest, p)
	}
	return h.model(figures.StSectorsPerRequest, p)
}

func efficiency(h *hider, p sectors.Launch) float64 { return h.model(figures.Efficiency, p) }

// strideXYs returns, for each element size, (stride, y) points; a hidden
// point's y is NaN.
func strideXYs(h *hider, preds []sectors.Launch, what string, y func(*hider, sectors.Launch) float64) ([]int, []plotter.XYs, error) {
	groups, err := strideSeries(preds)
	if err != nil {
		return nil, nil, err
	}
	elems := make([]int, len(groups))
	out := make([]plotter.XYs, len(groups))
	for i, g := range groups {
		elems[i] = g[0].Spec.ElemBytes
		for _, p := range g {
			v := y(h, p)
			if err := checkShown(what, p.Spec, v); err != nil {
				return nil, nil, err
			}
			out[i] = append(out[i], plotter.XY{X: float64(p.Spec.Stride), Y: v})
		}
	}
	return elems, out, nil
}

// EfficiencyVsStride draws the model's L1 efficiency (useful ÷ fetched
// bytes) against stride, on log2 axes, one line per element size,
// labelled at its end. The launches are of strided kernels, as
// StrideSpecs makes them.
func EfficiencyVsStride(preds []sectors.Launch) (*Chart, error) {
	return newChart(func(h *hider) (*plot.Plot, error) {
		elems, xys, err := strideXYs(h, preds, "efficiency", efficiency)
		if err != nil {
			return nil, err
		}
		p := newPlot("Efficiency by stride and element size (model)",
			"stride between neighbouring threads (elements)", "useful ÷ fetched bytes")
		if allHidden(xys...) {
			return p, nil
		}
		if err := stackedLines(p, elems, xys); err != nil {
			return nil, err
		}
		// Each line ends apart from the others: label it there.
		if err := directLabels(p, elems, xys, true); err != nil {
			return nil, err
		}
		setStrideAxis(p, xys)
		lo, hi := yRange(xys)
		lo, hi = pow2Range(lo, hi)
		log2Axis(&p.Y, lo, max(hi, 1), units.Percent, 1)
		return p, nil
	})
}

// SectorsVsStride draws the model's sectors per request (per warp-wide
// load) against stride, on log2 axes, one line per element size,
// labelled at its start.
func SectorsVsStride(preds []sectors.Launch) (*Chart, error) {
	return newChart(func(h *hider) (*plot.Plot, error) {
		elems, xys, err := strideXYs(h, preds, "sectors per request", sectorsPerRequest)
		if err != nil {
			return nil, err
		}
		p := newPlot("Sectors per request by stride and element size (model)",
			"stride between neighbouring threads (elements)", "sectors per request")
		if allHidden(xys...) {
			return p, nil
		}
		if err := stackedLines(p, elems, xys); err != nil {
			return nil, err
		}
		// Each line starts apart from the others: label it there.
		if err := directLabels(p, elems, xys, false); err != nil {
			return nil, err
		}
		setStrideAxis(p, xys)
		lo, hi := yRange(xys)
		lo, hi = pow2Range(lo, hi)
		log2Axis(&p.Y, lo, hi, units.Ratio, 1)
		return p, nil
	})
}

// directLabels writes "4 B" in each line's colour beside its last point
// (atEnd) or before its first; the plot makes room for them.
func directLabels(p *plot.Plot, elems []int, xys []plotter.XYs, atEnd bool) error {
	var pts plotter.XYs
	var names []string
	var shownElems []int
	for i, s := range xys {
		s = shown(s)
		if len(s) == 0 {
			continue
		}
		pt := s[0]
		if atEnd {
			pt = s[len(s)-1]
		}
		pts = append(pts, pt)
		names = append(names, fmt.Sprintf("%d B", elems[i]))
		shownElems = append(shownElems, elems[i])
	}
	elems = shownElems
	l, err := plotter.NewLabels(plotter.XYLabels{XYs: lg(pts), Labels: names})
	if err != nil {
		return wrap(err)
	}
	for i := range l.TextStyle {
		sty := text.Style{Color: ElemColor(elems[i]), Font: fontOf(LabelFontSize), Handler: plot.DefaultTextHandler}
		sty.XAlign, sty.YAlign = draw.XLeft, draw.YCenter
		if !atEnd {
			sty.XAlign = draw.XRight
		}
		l.TextStyle[i] = sty
	}
	l.Offset = vg.Point{X: vg.Points(9)}
	if !atEnd {
		l.Offset.X = -l.Offset.X
	}
	p.Add(l)
	return nil
}

// stackedLines draws one line per element size. Where the lines coincide
// (efficiency is 1/stride for every element size until each lane has a
// sector to itself) the earlier lines are drawn wider underneath, so every
// one stays visible.
func stackedLines(p *plot.Plot, elems []int, xys []plotter.XYs) error {
	k := len(xys)
	for i := range xys {
		width := vg.Points(2 + 1.6*float64(k-1-i))
		c := ElemColor(elems[i])
		for _, seg := range segments(xys[i]) {
			l, err := plotter.NewLine(lg(seg))
			if err != nil {
				return wrap(err)
			}
			l.LineStyle = draw.LineStyle{Color: c, Width: width}
			s, err := plotter.NewScatter(lg(seg))
			if err != nil {
				return wrap(err)
			}
			s.GlyphStyle = draw.GlyphStyle{Color: c, Radius: width/2 + vg.Points(1.5), Shape: draw.CircleGlyph{}}
			p.Add(l, s)
		}
	}
	return nil
}

func setStrideAxis(p *plot.Plot, xys []plotter.XYs) {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, s := range xys {
		for _, xy := range s {
			lo, hi = min(lo, xy.X), max(hi, xy.X)
		}
	}
	lo, hi = pow2Range(lo, hi)
	if lo == hi {
		hi = 2 * lo
	}
	log2Axis(&p.X, lo, hi, units.Ratio, 1)
}

func yRange(xys []plotter.XYs) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, s := range xys {
		for _, xy := range shown(s) {
			lo, hi = min(lo, xy.Y), max(hi, xy.Y)
		}
	}
	return lo, hi
}

// EfficiencyVsStruct draws the model's L1 efficiency of updating one
// 4-byte field of an array of structs against the struct's size, on log2
// axes, with the struct of arrays (soa, update_x_soa) as the reference
// line. aos are update_x_aos launches, as StructSpecs makes them.
func EfficiencyVsStruct(aos []sectors.Launch, soa sectors.Launch) (*Chart, error) {
	return newChart(func(h *hider) (*plot.Plot, error) { return efficiencyVsStruct(h, aos, soa) })
}

func efficiencyVsStruct(h *hider, aos []sectors.Launch, soa sectors.Launch) (*plot.Plot, error) {
	xy, err := structXYs(h, aos, "efficiency", efficiency)
	if err != nil {
		return nil, err
	}
	if soa.Spec.Kernel != spec.UpdateXSoA {
		return nil, fmt.Errorf("plots: reference line of %s: want an update_x_soa launch", soa.Spec.Kernel)
	}
	ref := efficiency(h, soa)
	if err := checkShown("efficiency", soa.Spec, ref); err != nil {
		return nil, err
	}
	p := newPlot("Updating one 4-byte field: array of structs vs struct of arrays (model)",
		"struct size (bytes)", "useful ÷ fetched bytes")
	if allHidden(xy, plotter.XYs{{Y: ref}}) {
		return p, nil
	}
	xlo, xhi := pow2Range(xy[0].X, xy[len(xy)-1].X)
	if err := addHLine(p, "", ref, xlo, xhi, ReferenceColor, []vg.Length{vg.Points(7), vg.Points(4)}); err != nil {
		return nil, err
	}
	if err := addLine(p, "", xy, ModelColor, 0, vg.Points(2.5), vg.Points(3)); err != nil {
		return nil, err
	}
	notes := []note{
		{x: xhi, y: ref, text: "SoA (update_x_soa): x[t] contiguous", color: ReferenceColor, xAlign: draw.XRight, yAlign: draw.YBottom, dy: 4},
	}
	if sh := shown(xy); len(sh) > 0 {
		last := sh[len(sh)-1]
		notes = append(notes, note{x: last.X, y: last.Y, text: "AoS (update_x_aos): p[t].x", color: ModelColor, xAlign: draw.XRight, yAlign: draw.YBottom, dy: 6})
	}
	// The seed's ParticleAoS: 16 bytes, a quarter of each sector used.
	for _, pt := range shown(xy) {
		if pt.X == 16 {
			notes = append(notes, note{x: pt.X, y: pt.Y, text: fmt.Sprintf("ParticleAoS, 16 B: %s", units.Percent.Format(pt.Y)), color: Black, xAlign: draw.XLeft, yAlign: draw.YBottom, dx: 6, dy: 4})
		}
	}
	if err := addNotes(p, notes); err != nil {
		return nil, err
	}
	log2Axis(&p.X, xlo, xhi, units.Ratio, 1)
	lo, hi := yRange([]plotter.XYs{xy, {{Y: ref}}})
	lo, hi = pow2Range(lo, hi)
	log2Axis(&p.Y, lo, hi, units.Percent, 1)
	return p, nil
}

// note is a text written at a data point, offset by dx, dy points.
type note struct {
	x, y   float64
	text   string
	color  color.Color
	xAlign draw.XAlignment
	yAlign draw.YAlignment
	dx, dy float64
}

// addNotes writes the notes on the plot; the plot makes room for them. A
// note at a hidden value is left out.
func addNotes(p *plot.Plot, notes []note) error {
	for _, n := range notes {
		if hiddenValue(n.y) {
			continue
		}
		l, err := plotter.NewLabels(plotter.XYLabels{XYs: lg(plotter.XYs{{X: n.x, Y: n.y}}), Labels: []string{n.text}})
		if err != nil {
			return wrap(err)
		}
		l.TextStyle[0] = text.Style{Color: n.color, Font: fontOf(TickFontSize), Handler: plot.DefaultTextHandler, XAlign: n.xAlign, YAlign: n.yAlign}
		l.Offset = vg.Point{X: vg.Points(n.dx), Y: vg.Points(n.dy)}
		p.Add(l)
	}
	return nil
}

func structXYs(h *hider, aos []sectors.Launch, what string, y func(*hider, sectors.Launch) float64) (plotter.XYs, error) {
	if len(aos) == 0 {
		return nil, fmt.Errorf("%w: no launch", ErrNoData)
	}
	sorted := slices.Clone(aos)
	slices.SortStableFunc(sorted, func(a, b sectors.Launch) int { return a.Spec.StructBytes - b.Spec.StructBytes })
	var xy plotter.XYs
	for _, p := range sorted {
		if p.Spec.Kernel != spec.UpdateXAoS {
			return nil, fmt.Errorf("plots: struct chart of %s: want update_x_aos launches", p.Spec.Kernel)
		}
		v := y(h, p)
		if err := checkShown(what, p.Spec, v); err != nil {
			return nil, err
		}
		xy = append(xy, plotter.XY{X: float64(p.Spec.StructBytes), Y: v})
	}
	return xy, nil
}
