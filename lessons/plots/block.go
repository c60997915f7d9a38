package plots

import (
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/coalescing-course/coalesce/lessons/devices"
	"github.com/coalescing-course/coalesce/lessons/figures"
	"github.com/coalescing-course/coalesce/lessons/measure"
	"github.com/coalescing-course/coalesce/lessons/sectors"
	"github.com/coalescing-course/coalesce/lessons/spec"
	"github.com/coalescing-course/coalesce/units"
)

func clearBlock(s *spec.Spec)              { s.Block = 0 }
func blockKey(s spec.Spec) float64         { return float64(s.Block) }
func microseconds(seconds float64) float64 { return seconds * 1e6 }

// TimeVsBlock draws the time of one launch against its threads per block,
// on log2 axes: the model's line through its launches of that launch at
// several block sizes, each stretch of it named by the limit that sets
// the model's time there (sectors.TimeParts.Bound: "block starts",
// "latency", ...); the measured launches of that launch at any block size
// as points; and, as the floor, the time the launch's useful bytes take at
// the device's copy bandwidth. The title names the launch, the GPU and
// where m comes from. With no measurement (m nil) it draws the model
// alone; measurements none of which is the launch are an error wrapping
// ErrNoMatch.
func TimeVsBlock(preds []sectors.Launch, m *measure.Set) (*Chart, error) {
	base, preds, err := sweep(preds, clearBlock, blockKey, "block sizes")
	if err != nil {
		return nil, err
	}
	all, err := measured(m)
	if err != nil {
		return nil, err
	}
	pts := timed(like(all, base, clearBlock))
	if len(all) > 0 && len(pts) == 0 {
		return nil, noMatch(m, len(all), base, "block size", "timed")
	}
	dev, err := devices.Lookup(base.Device)
	if err != nil {
		return nil, wrap(err)
	}
	return newChart(func(h *hider) (*plot.Plot, error) {
		var line, meas plotter.XYs
		var notes []note
		for i, p := range preds {
			if err := checkValue("predicted time", p.Spec, p.TimeSeconds); err != nil {
				return nil, err
			}
			y := h.model(figures.TimeSeconds, p)
			if hiddenValue(y) {
				continue
			}
			xy := plotter.XY{X: blockKey(p.Spec), Y: microseconds(y)}
			line = append(line, xy)
			if i == 0 || p.Time.Bound != preds[i-1].Time.Bound {
				notes = append(notes, note{x: xy.X, y: xy.Y, text: "set by " + p.Time.Bound, color: ModelColor,
					xAlign: draw.XLeft, yAlign: draw.YBottom, dy: 6})
			}
		}
		for _, l := range sortedBy(pts, launchSpec, blockKey) {
			if t, ok := h.measured(figures.TimeSeconds, l); ok {
				meas = append(meas, plotter.XY{X: blockKey(l.Spec), Y: microseconds(t)})
			}
		}
		floor := microseconds(float64(base.UsefulBytes()) / dev.Time.CopyBandwidth)
		title := bandwidthTitle("Time against block size", base.Brief(spec.FieldBlock), dev.GPU, m)
		p := newPlot(title, "threads per block", "time (µs)")
		lo, hi := pow2Range(blockKey(preds[0].Spec), blockKey(preds[len(preds)-1].Spec))
		if lo == hi {
			hi = 2 * lo
		}
		if err := addHLine(p, "", floor, lo, hi, Black, []vg.Length{vg.Points(1), vg.Points(3)}); err != nil {
			return nil, err
		}
		notes = append(notes, note{x: hi, y: floor, text: "at the device's copy bandwidth, " + units.Seconds.Format(floor*1e-6),
			color: Black, xAlign: draw.XRight, yAlign: draw.YTop, dy: -3})
		if len(line) > 0 {
			if err := addLine(p, "model", line, ModelColor, 0, vg.Points(2.5), vg.Points(2.5)); err != nil {
				return nil, err
			}
		}
		if len(meas) > 0 {
			if err := addPoints(p, "measured", meas, MeasuredColor, draw.CircleGlyph{}); err != nil {
				return nil, err
			}
		}
		if err := addNotes(p, notes); err != nil {
			return nil, err
		}
		ylo, yhi := yRange([]plotter.XYs{line, meas, {{Y: floor}}})
		ylo, yhi = pow2Range(ylo, yhi)
		log2Axis(&p.X, lo, hi, units.Count, 1)
		// The points are in µs: the ticks are powers of two of them.
		p.Y.Label.Text = log2Axis(&p.Y, ylo/2, 2*yhi, units.Seconds, 1e-6).Header("time")
		p.Legend.Top = true
		p.Legend.XOffs, p.Legend.YOffs = -vg.Points(8), -vg.Points(6)
		return p, nil
	})
}
