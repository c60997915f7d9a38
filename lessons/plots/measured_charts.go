package plots

import (
	"fmt"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/coalescing-course/coalesce/lessons/devices"
	"github.com/coalescing-course/coalesce/lessons/figures"
	"github.com/coalescing-course/coalesce/lessons/measure"
	"github.com/coalescing-course/coalesce/lessons/metrics"
	"github.com/coalescing-course/coalesce/lessons/sectors"
	"github.com/coalescing-course/coalesce/lessons/spec"
	"github.com/coalescing-course/coalesce/units"
)

// The charts of model beside measurement take the model's launches for
// one launch swept over one field (stride, or struct size) and the
// measurements; they draw the measured launches that are that launch at
// some value of the field, and say which GPU and which run they come from.

// clearStride and clearStruct blank the swept field, for like.
func clearStride(s *spec.Spec) { s.Stride = 0 }
func clearStruct(s *spec.Spec) { s.StructBytes = 0 }

// WithMeasuredStrides returns strides and every stride at which m holds a
// launch of base, sorted and without repeats: the strides at which to
// predict, so that the model's line passes by every measured point.
func WithMeasuredStrides(strides []int64, base spec.Spec, m *measure.Set) []int64 {
	all := slices.Clone(strides)
	ls, _ := measured(m)
	for _, p := range like(ls, base, clearStride) {
		all = append(all, p.Spec.Stride)
	}
	return sortedUnique(all)
}

// WithMeasuredStructSizes is WithMeasuredStrides for struct sizes.
func WithMeasuredStructSizes(sizes []int, base spec.Spec, m *measure.Set) []int {
	all := slices.Clone(sizes)
	ls, _ := measured(m)
	for _, p := range like(ls, base, clearStruct) {
		all = append(all, p.Spec.StructBytes)
	}
	return sortedUnique(all)
}

// sweep checks that model is one launch swept over the field clear blanks,
// and returns that launch (the field blanked) and the launches ordered
// by key.
func sweep(model []sectors.Launch, clear func(*spec.Spec), key func(spec.Spec) float64, what string) (spec.Spec, []sectors.Launch, error) {
	if len(model) == 0 {
		return spec.Spec{}, nil, fmt.Errorf("%w: no launch", ErrNoData)
	}
	base := model[0].Spec
	clear(&base)
	for _, p := range model {
		s := p.Spec
		clear(&s)
		if s != base {
			return spec.Spec{}, nil, fmt.Errorf("plots: the launches are not one launch at several %s: %s and %s", what, model[0].Spec, p.Spec)
		}
	}
	return base, sortedBy(model, modelSpec, key), nil
}

func strideKey(s spec.Spec) float64 { return float64(s.Stride) }
func structKey(s spec.Spec) float64 { return float64(s.StructBytes) }

// bandwidthData is what a bandwidth chart draws, in GB/s.
type bandwidthData struct {
	base            spec.Spec
	model, measured plotter.XYs
	// ref and refMeasured are the SoA lines of the struct chart (0: none).
	ref, refMeasured float64
	copyGBps         float64
	gpu              string
}

// timed returns the launches of ls that were timed.
func timed(ls []measure.Launch) []measure.Launch {
	var out []measure.Launch
	for _, l := range ls {
		if l.Timed() {
			out = append(out, l)
		}
	}
	return out
}

func noMatch(m *measure.Set, n int, base spec.Spec, vary, what string) error {
	return fmt.Errorf("%w: none of the %d measurements (%s) is a %s launch of %s at some %s",
		ErrNoMatch, n, m.Label(), what, base, vary)
}

// gbps is a useful bandwidth in GB/s (10^9 bytes), the charts' unit.
func gbps(bytesPerSecond float64) float64 { return bytesPerSecond / 1e9 }

// deviceOf fills in the device's copy bandwidth and name.
func (d *bandwidthData) deviceOf(s spec.Spec) error {
	dev, err := devices.Lookup(s.Device)
	if err != nil {
		return wrap(err)
	}
	d.copyGBps, d.gpu = dev.Time.CopyBandwidth/1e9, dev.GPU
	return nil
}

// strideBandwidth is the data of BandwidthVsStride.
// strideSweep checks that model is one launch swept over strides, of a
// strided kernel, and returns its base and its launches in stride order.
func strideSweep(model []sectors.Launch) (spec.Spec, []sectors.Launch, error) {
	base, preds, err := sweep(model, clearStride, strideKey, "strides")
	if err != nil {
		return base, nil, err
	}
	if !isStrided(base.Kernel) {
		return base, nil, fmt.Errorf("plots: stride charts draw strided_copy, strided_read or strided_write, not %s", base.Kernel)
	}
	return base, preds, nil
}

func strideBandwidth(h *hider, preds []sectors.Launch, m *measure.Set) (bandwidthData, error) {
	var d bandwidthData
	base, preds, err := strideSweep(preds)
	if err != nil {
		return d, err
	}
	d.base = base
	all, err := measured(m)
	if err != nil {
		return d, err
	}
	pts := timed(like(all, base, clearStride))
	if len(all) > 0 && len(pts) == 0 {
		return d, noMatch(m, len(all), base, "stride", "timed")
	}
	for _, p := range preds {
		if err := checkValue("predicted time", p.Spec, p.TimeSeconds); err != nil {
			return d, err
		}
		d.model = append(d.model, plotter.XY{X: strideKey(p.Spec), Y: gbps(h.model(figures.UsefulBandwidth, p))})
	}
	for _, l := range sortedBy(pts, launchSpec, strideKey) {
		if bw, ok := h.measured(figures.UsefulBandwidth, l); ok {
			d.measured = append(d.measured, plotter.XY{X: strideKey(l.Spec), Y: gbps(bw)})
		}
	}
	return d, d.deviceOf(base)
}

// BandwidthVsStride draws useful bandwidth (spec.UsefulBytes over the
// time, GB/s) against stride, on log2 axes: the model's line through its
// launches for one strided launch at several strides, the measured
// launches of that launch at any stride as points over it, and the
// device's copy bandwidth as the ceiling. The title names the launch, the
// GPU and where m comes from. With no measurement (m nil) it draws the
// model alone; measurements none of which is the launch are an error
// wrapping ErrNoMatch.
func BandwidthVsStride(preds []sectors.Launch, m *measure.Set) (*Chart, error) {
	return newChart(func(h *hider) (*plot.Plot, error) { return bandwidthVsStride(h, preds, m) })
}

func bandwidthVsStride(h *hider, preds []sectors.Launch, m *measure.Set) (*plot.Plot, error) {
	d, err := strideBandwidth(h, preds, m)
	if err != nil {
		return nil, err
	}
	p := newPlot(bandwidthTitle("Useful bandwidth against stride", d.base.Brief(spec.FieldStride), d.gpu, m),
		"stride between neighbouring threads (elements)", "useful bandwidth")
	if err := drawBandwidth(p, d, "model"); err != nil {
		return nil, err
	}
	return p, nil
}

// structBandwidth is the data of BandwidthVsStruct.
func structBandwidth(h *hider, aos []sectors.Launch, soa sectors.Launch, m *measure.Set) (bandwidthData, error) {
	var d bandwidthData
	base, preds, err := sweep(aos, clearStruct, structKey, "struct sizes")
	if err != nil {
		return d, err
	}
	if base.Kernel != spec.UpdateXAoS {
		return d, fmt.Errorf("plots: struct charts draw update_x_aos, not %s", base.Kernel)
	}
	if soa.Spec.Kernel != spec.UpdateXSoA {
		return d, fmt.Errorf("plots: reference line of %s: want an update_x_soa launch", soa.Spec.Kernel)
	}
	d.base = base
	all, err := measured(m)
	if err != nil {
		return d, err
	}
	pts := timed(like(all, base, clearStruct))
	soaPts := timed(like(all, soa.Spec, func(*spec.Spec) {}))
	if len(all) > 0 && len(pts) == 0 && len(soaPts) == 0 {
		return d, noMatch(m, len(all), base, "struct size", "timed")
	}
	for _, p := range append(preds, soa) {
		if err := checkValue("predicted time", p.Spec, p.TimeSeconds); err != nil {
			return d, err
		}
	}
	for _, p := range preds {
		d.model = append(d.model, plotter.XY{X: structKey(p.Spec), Y: gbps(h.model(figures.UsefulBandwidth, p))})
	}
	d.ref = gbps(h.model(figures.UsefulBandwidth, soa))
	for _, l := range sortedBy(pts, launchSpec, structKey) {
		if bw, ok := h.measured(figures.UsefulBandwidth, l); ok {
			d.measured = append(d.measured, plotter.XY{X: structKey(l.Spec), Y: gbps(bw)})
		}
	}
	// The median of the SoA launches, should there be several.
	var vs []float64
	for _, l := range soaPts {
		if bw, ok := h.measured(figures.UsefulBandwidth, l); ok {
			vs = append(vs, gbps(bw))
		}
	}
	if len(vs) > 0 {
		slices.Sort(vs)
		d.refMeasured = vs[len(vs)/2]
	}
	return d, d.deviceOf(base)
}

// BandwidthVsStruct draws useful bandwidth (GB/s) against struct size for
// the single-field update of an array of structs, on log2 axes: the
// model's line through its update_x_aos launches, the measured
// launches of that launch as points, and the struct of arrays (soa, an
// update_x_soa launch, and its measured launches) as reference lines.
func BandwidthVsStruct(aos []sectors.Launch, soa sectors.Launch, m *measure.Set) (*Chart, error) {
	return newChart(func(h *hider) (*plot.Plot, error) { return bandwidthVsStruct(h, aos, soa, m) })
}

func bandwidthVsStruct(h *hider, aos []sectors.Launch, soa sectors.Launch, m *measure.Set) (*plot.Plot, error) {
	d, err := structBandwidth(h, aos, soa, m)
	if err != nil {
		return nil, err
	}
	p := newPlot(bandwidthTitle("Useful bandwidth against struct size", d.base.Brief(spec.FieldStructBytes), d.gpu, m),
		"struct size (bytes)", "useful bandwidth")
	lo, hi := pow2Range(d.model[0].X, d.model[len(d.model)-1].X)
	if err := addHLine(p, "SoA, model", d.ref, lo, hi, ReferenceColor, []vg.Length{vg.Points(7), vg.Points(4)}); err != nil {
		return nil, err
	}
	if d.refMeasured > 0 && !hiddenValue(d.ref) {
		if err := addHLine(p, "SoA, measured", d.refMeasured, lo, hi, MeasuredColor, []vg.Length{vg.Points(2), vg.Points(3)}); err != nil {
			return nil, err
		}
		// The two SoA lines lie within a few per cent of each other, one
		// over the other: each gets its name and value written beside it,
		// the higher one above, the lower one below, at the right end,
		// where the AoS line has fallen far below (the copy bandwidth's
		// note stands above its own line).
		model, meas := note{x: hi, y: d.ref, text: soaLabel("model", d.ref), color: ReferenceColor, xAlign: draw.XRight},
			note{x: hi, y: d.refMeasured, text: soaLabel("measured", d.refMeasured), color: MeasuredColor, xAlign: draw.XRight}
		above, below := &model, &meas
		if d.refMeasured > d.ref {
			above, below = below, above
		}
		above.yAlign, above.dy = draw.YBottom, 3
		below.yAlign, below.dy = draw.YTop, -3
		if err := addNotes(p, []note{model, meas}); err != nil {
			return nil, err
		}
	}
	if err := drawBandwidth(p, d, "AoS, model"); err != nil {
		return nil, err
	}
	return p, nil
}

// soaLabel writes the name and value (in GB/s) of a SoA reference line:
// "SoA model: 2.72 TB/s".
func soaLabel(what string, gbps float64) string {
	return fmt.Sprintf("SoA %s: %s", what, units.Bandwidth.Format(gbps*1e9))
}

func drawBandwidth(p *plot.Plot, d bandwidthData, modelName string) error {
	lo, hi := pow2Range(d.model[0].X, d.model[len(d.model)-1].X)
	if lo == hi {
		hi = 2 * lo
	}
	if err := addHLine(p, "", d.copyGBps, lo, hi, Black, []vg.Length{vg.Points(1), vg.Points(3)}); err != nil {
		return err
	}
	if err := addNotes(p, []note{{x: hi, y: d.copyGBps, text: "device copy bandwidth, " + units.Bandwidth.Format(d.copyGBps*1e9),
		color: Black, xAlign: draw.XRight, yAlign: draw.YBottom, dy: 3}}); err != nil {
		return err
	}
	if err := addLine(p, modelName, d.model, ModelColor, 0, vg.Points(2.5), vg.Points(2.5)); err != nil {
		return err
	}
	if len(d.measured) > 0 {
		name := "measured"
		if d.ref > 0 || hiddenValue(d.ref) {
			name = "AoS, measured"
		}
		if err := addPoints(p, name, d.measured, MeasuredColor, draw.CircleGlyph{}); err != nil {
			return err
		}
	}
	all := []plotter.XYs{d.model, d.measured, {{Y: d.copyGBps}}}
	if d.ref > 0 {
		all = append(all, plotter.XYs{{Y: d.ref}})
	}
	if d.refMeasured > 0 {
		all = append(all, plotter.XYs{{Y: d.refMeasured}})
	}
	ylo, yhi := yRange(all)
	ylo, yhi = pow2Range(ylo, yhi)
	// Room above the copy bandwidth for its label.
	if yhi < 1.3*d.copyGBps {
		yhi *= 2
	}
	log2Axis(&p.X, lo, hi, units.Ratio, 1)
	p.Y.Label.Text = log2Axis(&p.Y, ylo/2, yhi, units.Bandwidth, 1e9).Header("useful bandwidth")
	// Bandwidth falls as stride or struct size grows: low values at the
	// left never happen, and the legend goes there.
	p.Legend.Top, p.Legend.Left = false, true
	p.Legend.XOffs, p.Legend.YOffs = vg.Points(8), vg.Points(6)
	return nil
}

// bandwidthTitle is the title of a chart of model and measurement: what,
// for which launch, on which GPU, measured where and when.
func bandwidthTitle(what, launch, gpu string, m *measure.Set) string {
	src := "no measurement given"
	if ls, _ := measured(m); len(ls) > 0 {
		src = "measured: " + m.Label()
	}
	return fmt.Sprintf("%s: %s\nmodel of the %s; %s", what, launch, gpu, src)
}

// dramData is what the DRAM chart draws: bytes moved per useful byte at
// the L1 (sectors) and at DRAM, modelled and measured.
type dramData struct {
	base                         spec.Spec
	sectorModel, dramModel       plotter.XYs
	sectorMeasured, dramMeasured plotter.XYs
	gpu                          string
}

func strideDRAM(h *hider, preds []sectors.Launch, m *measure.Set) (dramData, error) {
	var d dramData
	base, preds, err := strideSweep(preds)
	if err != nil {
		return d, err
	}
	d.base = base
	all, err := measured(m)
	if err != nil {
		return d, err
	}
	var pts []measure.Launch
	for _, l := range like(all, base, clearStride) {
		if _, ok := measuredValue(figures.DRAMBytesPerUsefulByte, l); ok {
			pts = append(pts, l)
		}
	}
	if len(all) > 0 && len(pts) == 0 {
		return d, noMatch(m, len(all), base, "stride", "profiled (ncu "+metrics.DRAMRead+")")
	}
	for _, p := range preds {
		x := strideKey(p.Spec)
		sec, dram := h.model(figures.SectorBytesPerUsefulByte, p), h.model(figures.DRAMBytesPerUsefulByte, p)
		if err := checkShown("fetched bytes per useful byte", p.Spec, sec); err != nil {
			return d, err
		}
		if err := checkShown("DRAM bytes per useful byte", p.Spec, dram); err != nil {
			return d, err
		}
		d.sectorModel = append(d.sectorModel, plotter.XY{X: x, Y: sec})
		d.dramModel = append(d.dramModel, plotter.XY{X: x, Y: dram})
	}
	for _, l := range sortedBy(pts, launchSpec, strideKey) {
		x := strideKey(l.Spec)
		if dram, ok := h.measured(figures.DRAMBytesPerUsefulByte, l); ok {
			if err := checkValue("measured DRAM bytes per useful byte (the launch stayed in the L2?)", l.Spec, dram); err != nil {
				return d, err
			}
			d.dramMeasured = append(d.dramMeasured, plotter.XY{X: x, Y: dram})
		}
		if sec, ok := h.measured(figures.SectorBytesPerUsefulByte, l); ok && sec > 0 {
			d.sectorMeasured = append(d.sectorMeasured, plotter.XY{X: x, Y: sec})
		}
	}
	dev, err := devices.Lookup(base.Device)
	if err != nil {
		return d, wrap(err)
	}
	d.gpu = dev.GPU
	return d, nil
}

// DRAMVsStride draws, against stride, the bytes moved per useful byte at
// two levels: the L1's sectors (fetched ÷ useful bytes, the seed's
// arithmetic) and DRAM ((dram__bytes_read.sum + dram__bytes_write.sum) ÷
// spec.UsefulBytes), each modelled (a line through the model's launches
// for one strided launch at several strides) and, for the launches of m
// that ncu profiled, measured (points). The gap between the two lines is
// what the L2 adds or saves: fetch granularity, partial writes, reuse.
func DRAMVsStride(preds []sectors.Launch, m *measure.Set) (*Chart, error) {
	return newChart(func(h *hider) (*plot.Plot, error) { return dramVsStride(h, preds, m) })
}

func dramVsStride(h *hider, preds []sectors.Launch, m *measure.Set) (*plot.Plot, error) {
	d, err := strideDRAM(h, preds, m)
	if err != nil {
		return nil, err
	}
	p := newPlot(bandwidthTitle("Bytes moved per useful byte", d.base.Brief(spec.FieldStride), d.gpu, m),
		"stride between neighbouring threads (elements)", "bytes moved per useful byte")
	sectorColor, dramColor := Blue, ReddishPurple
	xlo, xhi := pow2Range(d.sectorModel[0].X, d.sectorModel[len(d.sectorModel)-1].X)
	if xlo == xhi {
		xhi = 2 * xlo
	}
	if err := addHLine(p, "", 1, xlo, xhi, Black, []vg.Length{vg.Points(1), vg.Points(3)}); err != nil {
		return nil, err
	}
	if err := addNotes(p, []note{{x: xhi, y: 1, text: "ideal: each useful byte moved once", color: Black, xAlign: draw.XRight, yAlign: draw.YTop, dy: -3}}); err != nil {
		return nil, err
	}
	if err := addLine(p, "L1 sectors fetched ÷ useful, model", d.sectorModel, sectorColor, 0, vg.Points(2.5), 0); err != nil {
		return nil, err
	}
	if err := addLine(p, "DRAM read+write ÷ useful, model", d.dramModel, dramColor, 1, vg.Points(2.5), 0); err != nil {
		return nil, err
	}
	// Where DRAM moves what the L1 fetched (stride 1, and the strides
	// where the fetch granularity adds nothing) the two measured points
	// coincide: DRAM's are rings, drawn first, the L1's smaller filled
	// squares on top, so a square shows inside its ring.
	if len(d.dramMeasured) > 0 {
		if err := addPointsSized(p, "DRAM, measured (ncu)", d.dramMeasured, dramColor, thickRing{Width: vg.Points(2)}, vg.Points(6)); err != nil {
			return nil, err
		}
	}
	if len(d.sectorMeasured) > 0 {
		if err := addPointsSized(p, "L1 sectors, measured (ncu)", d.sectorMeasured, sectorColor, draw.BoxGlyph{}, vg.Points(3)); err != nil {
			return nil, err
		}
	}
	log2Axis(&p.X, xlo, xhi, units.Ratio, 1)
	all := []plotter.XYs{d.sectorModel, d.dramModel, d.sectorMeasured, d.dramMeasured, {{Y: 1}}}
	lo, hi := yRange(all)
	lo, hi = pow2Range(lo, hi)
	// Room at the top left, where the lines never go, for the legend.
	log2Axis(&p.Y, lo, hi*2, units.Multiple, 1)
	p.Legend.Top, p.Legend.Left = true, true
	p.Legend.XOffs = vg.Points(6)
	return p, nil
}
