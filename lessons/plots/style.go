package plots

import (
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/coalescing-course/coalesce/units"
)

// Font sizes of the course's charts, in points. At the notebook size
// (Notebook) they print at least 11 points tall.
const (
	TitleFontSize = 13
	LabelFontSize = 12
	TickFontSize  = 11
)

// Font is the course's typeface: Liberation Sans, which gonum/plot embeds,
// so a chart renders the same on every machine (and golden images hold).
// Liberation Sans has the metrics of Arial, which SVG output names as its
// fallback.
var Font = font.Font{Typeface: "Liberation", Variant: "Sans"}

func fontOf(size vg.Length) font.Font { return font.From(Font, size) }

// newPlot returns a plot in the course's style: sans-serif text at the
// course's sizes, a light grid, the legend at the top right.
func newPlot(title, xLabel, yLabel string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font = fontOf(TitleFontSize)
	p.Title.Padding = vg.Points(6)
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font = fontOf(LabelFontSize)
		a.Tick.Label.Font = fontOf(TickFontSize)
		a.Label.Padding = vg.Points(3)
	}
	p.X.Label.Text = xLabel
	p.Y.Label.Text = yLabel
	p.Legend.TextStyle.Font = fontOf(TickFontSize)
	p.Legend.Top = true
	p.Legend.Padding = vg.Points(2)
	p.Legend.ThumbnailWidth = vg.Points(28)
	p.Legend.XOffs = -vg.Points(6)
	p.Legend.YOffs = -vg.Points(4)
	g := plotter.NewGrid()
	g.Vertical.Color, g.Horizontal.Color = GridColor, GridColor
	g.Vertical.Width, g.Horizontal.Width = vg.Points(0.5), vg.Points(0.5)
	p.Add(g)
	return p
}

// Every chart of this package has log2 axes on both sides: strides,
// struct sizes, sectors, efficiencies and bandwidths all move by factors
// of two. The charts plot log2 of the data on linear axes whose ticks are
// labelled with the powers of two (rather than use plot.LogScale, whose
// axis label gonum places by the data's linear midpoint); the helpers
// below take data in its own units and take the logarithms.

// lg returns xys with log2 of both coordinates.
func lg(xys plotter.XYs) plotter.XYs {
	out := make(plotter.XYs, len(xys))
	for i, xy := range xys {
		out[i] = plotter.XY{X: math.Log2(xy.X), Y: math.Log2(xy.Y)}
	}
	return out
}

// log2Axis makes a a log2 axis from lo to hi (powers of two, lo < hi),
// ticked at every power of two. The ticks are labelled with one scaler
// of u (units) for all of them, a tick's value being its data
// value times per (1e9 for data in GB/s); the scaler is returned, so that
// an axis of a prefixed unit names its prefix in its label (Header).
func log2Axis(a *plot.Axis, lo, hi float64, u units.Unit, per float64) units.Scaler {
	a.Min, a.Max = math.Log2(lo), math.Log2(hi)
	var vals []float64
	for k := math.Round(a.Min); k <= a.Max+1e-9; k++ {
		vals = append(vals, math.Exp2(k)*per)
	}
	s := u.Scale(vals...)
	ticks := make([]plot.Tick, len(vals))
	for i, v := range vals {
		ticks[i] = plot.Tick{Value: math.Round(a.Min) + float64(i), Label: s.Cell(v)}
	}
	a.Tick.Marker = plot.ConstantTicks(ticks)
	return s
}

// pow2Range returns the powers of two just below lo and just above hi.
func pow2Range(lo, hi float64) (float64, float64) {
	return math.Exp2(math.Floor(math.Log2(lo) + 1e-9)), math.Exp2(math.Ceil(math.Log2(hi) - 1e-9))
}

// lineStyle is the course's line of series i in colour c.
func lineStyle(c color.Color, i int, width vg.Length) draw.LineStyle {
	return draw.LineStyle{Color: c, Width: width, Dashes: Dashes(i)}
}

// addLine adds a line with glyphs at its points, and its legend entry
// unless name is empty.
func addLine(p *plot.Plot, name string, xys plotter.XYs, c color.Color, i int, width vg.Length, glyph vg.Length) error {
	// A hidden point leaves a gap: each stretch between gaps is a line of
	// its own, the first named in the legend.
	segs := segments(xys)
	if len(segs) == 0 {
		return nil
	}
	for _, seg := range segs[1:] {
		if err := addLine(p, "", seg, c, i, width, glyph); err != nil {
			return err
		}
	}
	xys = segs[0]
	l, s, err := plotter.NewLinePoints(lg(xys))
	if err != nil {
		return wrap(err)
	}
	l.LineStyle = lineStyle(c, i, width)
	s.GlyphStyle = draw.GlyphStyle{Color: c, Radius: glyph, Shape: Glyph(i)}
	if glyph == 0 {
		p.Add(l)
		if name != "" {
			p.Legend.Add(name, l)
		}
		return nil
	}
	p.Add(l, s)
	if name != "" {
		p.Legend.Add(name, l, s)
	}
	return nil
}

// addPoints adds measured points: filled glyphs with a white rim, so they
// stand out on top of a model line of any colour.
func addPoints(p *plot.Plot, name string, xys plotter.XYs, c color.Color, shape draw.GlyphDrawer) error {
	return addPointsSized(p, name, xys, c, shape, vg.Points(4))
}

// addPointsSized is addPoints with glyphs of radius r.
func addPointsSized(p *plot.Plot, name string, xys plotter.XYs, c color.Color, shape draw.GlyphDrawer, r vg.Length) error {
	if xys = shown(xys); len(xys) == 0 {
		return nil
	}
	rim, err := plotter.NewScatter(lg(xys))
	if err != nil {
		return wrap(err)
	}
	rim.GlyphStyle = draw.GlyphStyle{Color: color.White, Radius: r + vg.Points(1.5), Shape: shape}
	if _, hollow := shape.(thickRing); hollow {
		// A ring's rim is a thicker ring under it.
		rim.GlyphStyle.Radius = r
		rim.GlyphStyle.Shape = thickRing{Width: shape.(thickRing).Width + vg.Points(2)}
	}
	s, err := plotter.NewScatter(lg(xys))
	if err != nil {
		return wrap(err)
	}
	s.GlyphStyle = draw.GlyphStyle{Color: c, Radius: r, Shape: shape}
	p.Add(rim, s)
	p.Legend.Add(name, s)
	return nil
}

// thickRing is a hollow circle drawn with a line Width wide: a marker
// that leaves what lies under its middle visible (draw.RingGlyph's line,
// half a point, is too faint for a measured point).
type thickRing struct{ Width vg.Length }

// DrawGlyph draws the ring of radius sty.Radius around pt.
func (g thickRing) DrawGlyph(c *draw.Canvas, sty draw.GlyphStyle, pt vg.Point) {
	c.SetLineStyle(draw.LineStyle{Color: sty.Color, Width: g.Width})
	var path vg.Path
	path.Move(vg.Point{X: pt.X + sty.Radius, Y: pt.Y})
	path.Arc(pt, sty.Radius, 0, 2*math.Pi)
	path.Close()
	c.Stroke(path)
}

// addHLine adds a horizontal reference line at y across the x range.
func addHLine(p *plot.Plot, name string, y, xlo, xhi float64, c color.Color, dashes []vg.Length) error {
	if hiddenValue(y) {
		return nil
	}
	l, err := plotter.NewLine(lg(plotter.XYs{{X: xlo, Y: y}, {X: xhi, Y: y}}))
	if err != nil {
		return wrap(err)
	}
	l.LineStyle = draw.LineStyle{Color: c, Width: vg.Points(2), Dashes: dashes}
	p.Add(l)
	if name != "" {
		p.Legend.Add(name, l)
	}
	return nil
}
