package plots

import (
	"bytes"
	"image/color"
	"maps"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"

	"github.com/coalescing-course/coalesce/lessons/devices"
	"github.com/coalescing-course/coalesce/lessons/measure"
	"github.com/coalescing-course/coalesce/lessons/metrics"
	"github.com/coalescing-course/coalesce/lessons/sectors"
	"github.com/coalescing-course/coalesce/lessons/spec"
	"github.com/coalescing-course/coalesce/units"
)

// at returns the y of xys at x, or NaN.
func at(xys plotter.XYs, x float64) float64 {
	for _, xy := range xys {
		if xy.X == x {
			return xy.Y
		}
	}
	return math.NaN()
}

// The data behind the stride charts, from the live model. Expected values:
// the seed's table (4-byte elements: stride 1 is 4 sectors and 100 %,
// stride 32 is 32 sectors and 12.5 %) and its arithmetic carried to other
// element sizes: a warp of e-byte elements at stride s spans 32*e*s bytes,
// touching min(32, e*s) sectors, of which it uses 32*e bytes.
func TestStrideData(t *testing.T) {
	specs, err := StrideSpecs(StrideBase, ElemSizes, Strides)
	require.NoError(t, err)
	require.Len(t, specs, len(ElemSizes)*len(Strides))
	preds, err := sectors.ModelAll(specs...)
	require.NoError(t, err)
	elems, eff, err := strideXYs(&hider{}, preds, "efficiency", efficiency)
	require.NoError(t, err)
	_, sec, err := strideXYs(&hider{}, preds, "sectors", sectorsPerRequest)
	require.NoError(t, err)
	require.Equal(t, ElemSizes, elems)
	idx := map[int]int{1: 0, 2: 1, 4: 2, 8: 3, 16: 4}
	for _, tt := range []struct {
		name       string
		elem       int
		stride     float64
		efficiency float64
		sectors    float64
	}{
		{"seed: coalesced floats", 4, 1, 1, 4},
		{"seed: floats 32 apart", 4, 32, 0.125, 32},
		{"floats 2 apart", 4, 2, 0.5, 8},
		{"floats 128 apart", 4, 128, 0.125, 32},
		{"bytes, coalesced", 1, 1, 1, 1},
		{"bytes 32 apart", 1, 32, 1.0 / 32, 32},
		{"float4 coalesced", 16, 1, 1, 16},
		{"float4 2 apart", 16, 2, 0.5, 32},
		{"doubles 4 apart", 8, 4, 0.25, 32},
	} {
		t.Run(tt.name, func(t *testing.T) {
			i := idx[tt.elem]
			assert.InDelta(t, tt.efficiency, at(eff[i], tt.stride), 1e-12, "efficiency")
			assert.Equal(t, tt.sectors, at(sec[i], tt.stride), "sectors per request")
		})
	}
}

// The data behind the struct chart. Expected: the seed's table (AoS with a
// 16-byte struct: 16 sectors, 25 %; SoA: 100 %) and the same arithmetic
// for other sizes: 32 lanes b bytes apart span 32*b bytes, min(32, b)
// sectors, for 128 useful bytes.
func TestStructData(t *testing.T) {
	specs, err := StructSpecs(StructBase, StructSizes)
	require.NoError(t, err)
	preds, err := sectors.ModelAll(append(specs, SoAOf(StructBase))...)
	require.NoError(t, err)
	aos, soa := preds[:len(specs)], preds[len(specs)]
	xy, err := structXYs(&hider{}, aos, "efficiency", efficiency)
	require.NoError(t, err)
	for _, tt := range []struct {
		bytes float64
		want  float64
	}{{4, 1}, {8, 0.5}, {12, 1.0 / 3}, {16, 0.25}, {20, 0.2}, {32, 0.125}, {64, 0.125}, {128, 0.125}} {
		assert.InDelta(t, tt.want, at(xy, tt.bytes), 1e-12, "struct of %v bytes", tt.bytes)
	}
	assert.Equal(t, 1.0, efficiency(&hider{}, soa))
	assert.Equal(t, spec.UpdateXSoA, soa.Spec.Kernel)
	assert.Equal(t, StructBase.N, soa.Spec.N)
}

// The data behind the bandwidth and DRAM charts, from the testdata snapshot
// and recording. Expected values are the recording's own: the first harness
// printed useful_gbps 2692.10775 for strided_copy at stride 1 (useful bytes
// 536870912 over 0.199424006 ms), and its ncu counts.
func TestMeasuredData(t *testing.T) {
	snap := readSnapshot(t)
	m := readRecorded(t)

	d, err := strideBandwidth(&hider{}, snap[spec.StridedCopy], m)
	require.NoError(t, err)
	assert.InDelta(t, 2692.10775, at(d.measured, 1), 1e-3, "measured GB/s at stride 1")
	assert.Len(t, d.measured, 13, "every recorded stride")
	assert.Equal(t, "NVIDIA H200", d.gpu)
	h200, err := devices.Lookup("h200")
	require.NoError(t, err)
	assert.Equal(t, h200.Time.CopyBandwidth/1e9, d.copyGBps, "the profile's copy bandwidth")
	p1 := snap[spec.StridedCopy][0]
	require.Equal(t, int64(1), p1.Spec.Stride)
	assert.InDelta(t, float64(p1.Spec.UsefulBytes())/p1.TimeSeconds/1e9, at(d.model, 1), 1e-9)

	s, err := structBandwidth(&hider{}, snap[spec.UpdateXAoS], snap[spec.UpdateXSoA][0], m)
	require.NoError(t, err)
	assert.InDelta(t, 1047.00555, at(s.measured, 16), 1e-3, "AoS 16 B, as recorded")
	assert.Greater(t, s.refMeasured, 0.0, "the SoA launch is in the recording")

	r, err := strideDRAM(&hider{}, snap[spec.StridedCopy], m)
	require.NoError(t, err)
	// Stride 1: (268463104 + 249598720) / 536870912 DRAM bytes, and
	// 32 * (8388608 + 8388608) / 536870912 = 1 sector byte per useful byte.
	assert.InDelta(t, (268463104.0+249598720.0)/536870912, at(r.dramMeasured, 1), 1e-12)
	assert.InDelta(t, 1, at(r.sectorMeasured, 1), 1e-12)
	// The sector view of the model is the seed's: 8 bytes fetched per
	// useful byte once each float has its own sector.
	assert.InDelta(t, 8, at(r.sectorModel, 32), 1e-12)
	assert.InDelta(t, 1, at(r.sectorModel, 1), 1e-12)

	// No measurement: the model alone.
	d, err = strideBandwidth(&hider{}, snap[spec.StridedCopy], nil)
	require.NoError(t, err)
	assert.Empty(t, d.measured)
	assert.Len(t, d.model, len(snap[spec.StridedCopy]))
}

func TestChartErrors(t *testing.T) {
	snap := readSnapshot(t)
	m := readRecorded(t)
	strided := snap[spec.StridedCopy]
	nan := append([]sectors.Launch(nil), strided...)
	nan[2].L1UsefulBytes = 0 // an efficiency of 0 cannot go on a log axis
	nan[3].TimeSeconds = math.NaN()
	zero := append([]sectors.Launch(nil), strided...)
	zero[1].Metrics = maps.Clone(zero[1].Metrics)
	zero[1].Metrics[metrics.DRAMRead], zero[1].Metrics[metrics.DRAMWrite] = 0, 0
	mixed := append([]sectors.Launch(nil), strided...)
	mixed[1].Spec.N = 1024
	other, err := sectors.ModelAll(mustSpec(`{"kernel":"strided_copy","n":4096}`))
	require.NoError(t, err)
	for _, tt := range []struct {
		name string
		draw func() error
		want error
		msg  string
	}{
		{"no launch", func() error { _, err := EfficiencyVsStride(nil); return err }, ErrNoData, ""},
		{"no sectors launch", func() error { _, err := SectorsVsStride(nil); return err }, ErrNoData, ""},
		{"NaN efficiency", func() error { _, err := EfficiencyVsStride(nan); return err }, nil, "efficiency of"},
		{"NaN time", func() error { _, err := BandwidthVsStride(nan, nil); return err }, nil, "predicted time"},
		{"zero DRAM", func() error { _, err := DRAMVsStride(zero, nil); return err }, nil, "want a positive number"},
		{"not a stride sweep", func() error { _, err := BandwidthVsStride(mixed, nil); return err }, nil, "not one launch at several strides"},
		{"wrong kernel", func() error { _, err := EfficiencyVsStride(snap[spec.UpdateXAoS]); return err }, nil, "want strided_copy"},
		{"struct of strided", func() error { _, err := EfficiencyVsStruct(strided, snap[spec.UpdateXSoA][0]); return err }, nil, "want update_x_aos"},
		{"SoA reference not SoA", func() error { _, err := EfficiencyVsStruct(snap[spec.UpdateXAoS], strided[0]); return err }, nil, "want an update_x_soa"},
		{"no struct launch", func() error { _, err := BandwidthVsStruct(nil, snap[spec.UpdateXSoA][0], m); return err }, ErrNoData, ""},
		{"measurements of another launch", func() error { _, err := BandwidthVsStride(other, m); return err }, ErrNoMatch, "none of the 30 measurements"},
		{"no block launch", func() error { _, err := TimeVsBlock(nil, m); return err }, ErrNoData, ""},
		{"not a block sweep", func() error { _, err := TimeVsBlock(strided, nil); return err }, nil, "not one launch at several block sizes"},
		{"block sweep of another launch", func() error {
			copies := append([]sectors.Launch(nil), snap[spec.CoalescedCopy]...)
			for i := range copies {
				copies[i].Spec.N = 1 << 20
			}
			_, err := TimeVsBlock(copies, m)
			return err
		}, ErrNoMatch, "at some block size"},
		{"NaN block time", func() error {
			copies := append([]sectors.Launch(nil), snap[spec.CoalescedCopy]...)
			copies[2].TimeSeconds = math.NaN()
			_, err := TimeVsBlock(copies, nil)
			return err
		}, nil, "predicted time"},
		{"unprofiled measurements", func() error {
			bare := &measure.Set{Origin: measure.Origin{Kind: measure.FromFile, File: "test"}, Launches: []measure.Launch{{Spec: strided[0].Spec, TimeMs: 1}}}
			_, err = DRAMVsStride(strided, bare)
			return err
		}, ErrNoMatch, "profiled"},
		{"stride specs of a copy", func() error {
			_, err := StrideSpecs(mustSpec(`{"kernel":"coalesced_copy","n":64}`), nil, Strides)
			return err
		}, nil, "stride charts sweep"},
		{"no strides", func() error { _, err := StrideSpecs(StrideBase, nil, nil); return err }, nil, "no strides"},
		{"bad stride", func() error { _, err := StrideSpecs(StrideBase, nil, []int64{0}); return err }, spec.ErrValue, ""},
		{"bad element size", func() error { _, err := StrideSpecs(StrideBase, []int{3}, Strides); return err }, spec.ErrValue, ""},
		{"struct too small for its field", func() error {
			_, err := StructSpecs(mustSpec(`{"kernel":"update_x_aos","n":64,"struct_bytes":16,"field_offset":12}`), []int{8})
			return err
		}, spec.ErrValue, ""},
		{"no plot to render", func() error { _, err := PNG(Notebook); return err }, ErrNoPlot, ""},
		{"nil plot", func() error { _, err := SVG(Notebook, nil); return err }, ErrNoPlot, ""},
		{"bad format", func() error { return Render(&bytes.Buffer{}, "gif", Notebook, newPlot("", "", "")) }, ErrFormat, ""},
		{"empty size", func() error { _, err := PNG(Size{}, newPlot("", "", "")); return err }, nil, "want each side above 0"},
		{"NaN size", func() error {
			_, err := PNG(Size{Width: Notebook.Width, Height: vgNaN()}, newPlot("", "", ""))
			return err
		}, nil, "want each side above 0"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.draw()
			require.Error(t, err)
			assert.True(t, strings.HasPrefix(err.Error(), "plots: "), "error %q lacks the package prefix", err)
			if tt.want != nil {
				assert.ErrorIs(t, err, tt.want)
			}
			assert.Contains(t, err.Error(), tt.msg)
		})
	}
}

func TestMeasuredRefusesBadNumbers(t *testing.T) {
	s := mustSpec(`{"kernel":"coalesced_copy","n":1024}`)
	for _, tt := range []struct {
		name   string
		launch measure.Launch
		msg    string
	}{
		{"NaN time", measure.Launch{Spec: s, TimeMs: math.NaN()}, "want a finite time"},
		{"negative time", measure.Launch{Spec: s, TimeMs: -1}, "want a finite time"},
		{"infinite time", measure.Launch{Spec: s, TimeMs: math.Inf(1)}, "want a finite time"},
		{"NaN metric", measure.Launch{Spec: s, TimeMs: 1, Metrics: metrics.Set{metrics.DRAMRead: math.NaN()}}, "metric dram__bytes_read.sum"},
		{"negative metric", measure.Launch{Spec: s, TimeMs: 1, Metrics: metrics.Set{metrics.LdSectors: -4}}, "want a finite count"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := measured(&measure.Set{Launches: []measure.Launch{tt.launch}})
			require.ErrorIs(t, err, ErrMeasured)
			assert.Contains(t, err.Error(), tt.msg)
		})
	}
	// Failed launches are left out; no set is no measurement.
	ls, err := measured(&measure.Set{Launches: []measure.Launch{{Spec: s, Error: "boom", TimeMs: math.NaN()}}})
	require.NoError(t, err)
	assert.Empty(t, ls)
	ls, err = measured(nil)
	require.NoError(t, err)
	assert.Empty(t, ls)
}

func TestLike(t *testing.T) {
	m := readRecorded(t)
	ls, err := measured(m)
	require.NoError(t, err)
	strided := like(ls, MeasuredStrideBase, clearStride)
	assert.Len(t, strided, 13)
	assert.Len(t, like(ls, MeasuredStructBase, clearStruct), 7)
	assert.Len(t, like(ls, SoAOf(MeasuredStructBase), func(*spec.Spec) {}), 1)
	assert.Equal(t, []int64{1, 2, 3, 4, 5, 7, 8, 16, 17, 32, 33, 64, 128},
		WithMeasuredStrides([]int64{1, 2, 4, 8, 16, 32, 64, 128}, MeasuredStrideBase, m))
	assert.Equal(t, []int{4, 8, 12, 16, 24, 32, 64, 128},
		WithMeasuredStructSizes([]int{4, 8, 16, 32}, MeasuredStructBase, m))
}

func TestFormatOf(t *testing.T) {
	for _, tt := range []struct{ name, want string }{
		{"a.png", "png"}, {"dir/b.PNG", "png"}, {"c.svg", "svg"}, {"d.pdf", ""}, {"e", ""}, {"f.png.txt", ""},
	} {
		got, err := FormatOf(tt.name)
		if tt.want == "" {
			assert.ErrorIs(t, err, ErrFormat, tt.name)
			assert.Contains(t, err.Error(), ".png or .svg")
			continue
		}
		require.NoError(t, err, tt.name)
		assert.Equal(t, tt.want, got, tt.name)
	}
}

// TestLog2AxisLabels holds an axis's ticks to units, one scaler
// for all: a percentage axis writes 1/32 as 3.13%, as a verdict and a
// table do; an axis of GB/s data in one prefix, which its label names.
func TestLog2AxisLabels(t *testing.T) {
	labels := func(a *plot.Axis) []string {
		var out []string
		for _, tk := range a.Tick.Marker.Ticks(a.Min, a.Max) {
			out = append(out, tk.Label)
		}
		return out
	}
	p := plot.New()
	log2Axis(&p.Y, 1.0/32, 1, units.Percent, 1)
	assert.Equal(t, []string{"3.13%", "6.25%", "12.5%", "25%", "50%", "100%"}, labels(&p.Y))
	s := log2Axis(&p.X, 512, 4096, units.Bandwidth, 1e9)
	assert.Equal(t, []string{"512", "1,024", "2,048", "4,096"}, labels(&p.X))
	assert.Equal(t, "useful bandwidth (GB/s)", s.Header("useful bandwidth"))
	log2Axis(&p.Y, 0.5, 16, units.Multiple, 1)
	assert.Equal(t, []string{"0.5×", "1×", "2×", "4×", "8×", "16×"}, labels(&p.Y))
}

func TestPalette(t *testing.T) {
	// Every element size has its own colour.
	seen := map[color.Color]int{}
	for _, e := range ElemSizes {
		c := ElemColor(e)
		_, dup := seen[c]
		assert.False(t, dup, "element size %d shares colour with %d", e, seen[c])
		seen[c] = e
	}
	assert.Len(t, Palette, 8, "Okabe-Ito has eight colours")
	// Bytes used run from light to dark, so that a fuller sector reads darker.
	lum := func(c color.Color) float64 {
		r, g, b, _ := c.RGBA()
		return 0.2126*float64(r) + 0.7152*float64(g) + 0.0722*float64(b)
	}
	assert.Equal(t, NotFetchedColor, UsedColor(0))
	for u := 2; u <= 32; u++ {
		assert.Less(t, lum(UsedColor(u)), lum(UsedColor(u-1)), "used %d", u)
	}
	assert.Equal(t, UsedColor(32), UsedColor(40))
	assert.Equal(t, Black, textOn(UsedColor(1)))
	assert.Equal(t, color.White, textOn(UsedColor(32)))
}

func TestRender(t *testing.T) {
	p := newPlot("title", "x", "y")
	a, err := PNG(Notebook, p)
	require.NoError(t, err)
	b, err := PNG(Notebook, p)
	require.NoError(t, err)
	assert.Equal(t, a, b, "the same plot renders to the same bytes")
	assert.True(t, bytes.HasPrefix(a, []byte("\x89PNG")))
	svg, err := SVG(Notebook, p)
	require.NoError(t, err)
	assert.Contains(t, string(svg), "font-family:'Liberation Sans',Arial,Helvetica,sans-serif;")
	assert.NotContains(t, string(svg), "font-family:Liberation Sans;")
}

func vgNaN() vgLength { return vgLength(math.NaN()) }
