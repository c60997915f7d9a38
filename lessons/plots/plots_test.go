package plots

import (
	"bytes"
	"errors"
	"github.com/coalescing-course/coalesce/lessons/devices"
	"image/color"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/plot/plotter"

	"github.com/coalescing-course/coalesce/lessons/metrics"
	"github.com/coalescing-course/coalesce/lessons/sectors"
	"github.com/coalescing-course/coalesce/lessons/spec"
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
	preds, err := Predict(specs...)
	require.NoError(t, err)
	elems, eff, err := strideXYs(preds, "efficiency", func(p sectors.Prediction) float64 { return p.Efficiency })
	require.NoError(t, err)
	_, sec, err := strideXYs(preds, "sectors", sectorsPerRequest)
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
	preds, err := Predict(append(specs, SoAOf(StructBase))...)
	require.NoError(t, err)
	aos, soa := preds[:len(specs)], preds[len(specs)]
	xy, err := structXYs(aos, "efficiency", func(p sectors.Prediction) float64 { return p.Efficiency })
	require.NoError(t, err)
	for _, tt := range []struct {
		bytes float64
		want  float64
	}{{4, 1}, {8, 0.5}, {12, 1.0 / 3}, {16, 0.25}, {20, 0.2}, {32, 0.125}, {64, 0.125}, {128, 0.125}} {
		assert.InDelta(t, tt.want, at(xy, tt.bytes), 1e-12, "struct of %v bytes", tt.bytes)
	}
	assert.Equal(t, 1.0, soa.Efficiency)
	assert.Equal(t, spec.UpdateXSoA, soa.Spec.Kernel)
	assert.Equal(t, StructBase.N, soa.Spec.N)
}

// The data behind the bandwidth and DRAM charts, from the testdata snapshot
// and recording. Expected values are the recording's own: the harness
// printed useful_gbps 2692.10775 for strided_copy at stride 1 (useful bytes
// 536870912 over 0.199424006 ms), and its ncu counts.
func TestMeasuredData(t *testing.T) {
	snap := readSnapshot(t)
	m := readRecorded(t)

	d, err := strideBandwidth(snap[spec.StridedCopy], m)
	require.NoError(t, err)
	assert.InDelta(t, 2692.10775, at(d.measured, 1), 1e-3, "measured GB/s at stride 1")
	assert.Len(t, d.measured, 13, "every recorded stride")
	assert.Equal(t, "NVIDIA H200", d.gpu)
	h200, err := devices.Lookup("h200")
	require.NoError(t, err)
	assert.Equal(t, h200.Time.CopyBandwidth/1e9, d.copyGBps, "the profile's copy bandwidth")
	p1 := snap[spec.StridedCopy][0]
	require.Equal(t, int64(1), p1.Spec.Stride)
	assert.InDelta(t, float64(p1.UsefulBytes)/p1.TimeSeconds/1e9, at(d.model, 1), 1e-9)

	s, err := structBandwidth(snap[spec.UpdateXAoS], snap[spec.UpdateXSoA][0], m)
	require.NoError(t, err)
	assert.InDelta(t, 1047.00555, at(s.measured, 16), 1e-3, "AoS 16 B, as recorded")
	assert.Greater(t, s.refMeasured, 0.0, "the SoA launch is in the recording")

	r, err := strideDRAM(snap[spec.StridedCopy], m)
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
	d, err = strideBandwidth(snap[spec.StridedCopy], Measurements{})
	require.NoError(t, err)
	assert.Empty(t, d.measured)
	assert.Len(t, d.model, len(snap[spec.StridedCopy]))
}

func TestChartErrors(t *testing.T) {
	snap := readSnapshot(t)
	m := readRecorded(t)
	strided := snap[spec.StridedCopy]
	nan := append([]sectors.Prediction(nil), strided...)
	nan[2].Efficiency = math.NaN()
	nan[3].TimeSeconds = math.NaN()
	zero := append([]sectors.Prediction(nil), strided...)
	zero[1].DRAMBytesPerUsefulByte = 0
	mixed := append([]sectors.Prediction(nil), strided...)
	mixed[1].Spec.N = 1024
	other, err := Predict(mustSpec(`{"kernel":"strided_copy","n":4096}`))
	require.NoError(t, err)
	for _, tt := range []struct {
		name string
		draw func() error
		want error
		msg  string
	}{
		{"no prediction", func() error { _, err := EfficiencyVsStride(nil); return err }, ErrNoData, ""},
		{"no sectors prediction", func() error { _, err := SectorsVsStride(nil); return err }, ErrNoData, ""},
		{"NaN efficiency", func() error { _, err := EfficiencyVsStride(nan); return err }, nil, "efficiency of"},
		{"NaN time", func() error { _, err := BandwidthVsStride(nan, Measurements{}); return err }, nil, "predicted time"},
		{"zero DRAM", func() error { _, err := DRAMVsStride(zero, Measurements{}); return err }, nil, "want a positive number"},
		{"not a stride sweep", func() error { _, err := BandwidthVsStride(mixed, Measurements{}); return err }, nil, "not one launch at several strides"},
		{"wrong kernel", func() error { _, err := EfficiencyVsStride(snap[spec.UpdateXAoS]); return err }, nil, "want strided_copy"},
		{"struct of strided", func() error { _, err := EfficiencyVsStruct(strided, snap[spec.UpdateXSoA][0]); return err }, nil, "want update_x_aos"},
		{"SoA reference not SoA", func() error { _, err := EfficiencyVsStruct(snap[spec.UpdateXAoS], strided[0]); return err }, nil, "want an update_x_soa"},
		{"no struct prediction", func() error { _, err := BandwidthVsStruct(nil, snap[spec.UpdateXSoA][0], m); return err }, ErrNoData, ""},
		{"measurements of another launch", func() error { _, err := BandwidthVsStride(other, m); return err }, ErrNoMatch, "none of the 21 measurements"},
		{"unprofiled measurements", func() error {
			bare, err := NewMeasurements("test", []Measured{{Spec: strided[0].Spec, Seconds: 1e-3}})
			require.NoError(t, err)
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

func TestNewMeasurements(t *testing.T) {
	s := mustSpec(`{"kernel":"coalesced_copy","n":1024}`)
	for _, tt := range []struct {
		name   string
		source string
		points []Measured
		msg    string
	}{
		{"NaN time", "x", []Measured{{Spec: s, Seconds: math.NaN()}}, "want a finite time"},
		{"negative time", "x", []Measured{{Spec: s, Seconds: -1}}, "want a finite time"},
		{"infinite time", "x", []Measured{{Spec: s, Seconds: math.Inf(1)}}, "want a finite time"},
		{"NaN metric", "x", []Measured{{Spec: s, Seconds: 1, Metrics: metrics.Set{metrics.DRAMRead: math.NaN()}}}, "metric dram__bytes_read.sum"},
		{"negative metric", "x", []Measured{{Spec: s, Seconds: 1, Metrics: metrics.Set{metrics.LdSectors: -4}}}, "want a finite count"},
		{"no source", "", []Measured{{Spec: s, Seconds: 1}}, "no source"},
		{"invalid spec", "x", []Measured{{Spec: spec.Spec{Kernel: "nope"}}}, "unknown kernel"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewMeasurements(tt.source, tt.points)
			require.ErrorIs(t, err, ErrMeasured)
			assert.Contains(t, err.Error(), tt.msg)
		})
	}
	// Valid points are copied: changing the caller's map changes nothing.
	set := metrics.Set{metrics.DRAMRead: 1}
	m, err := NewMeasurements("x", []Measured{{Spec: s, Seconds: 1, Metrics: set}})
	require.NoError(t, err)
	set[metrics.DRAMRead] = 2
	assert.Equal(t, 1.0, m.Points[0].Metrics[metrics.DRAMRead])
	// The zero value is no measurement, and needs no source.
	m, err = NewMeasurements("", nil)
	require.NoError(t, err)
	assert.Empty(t, m.Points)
}

func TestReadMeasurements(t *testing.T) {
	line := `{"line":1,"spec":{"kernel":"strided_copy","n":4096,"stride":2},"time_ms":0.5,"useful_gbps":1,"metrics":{"dram__bytes_read.sum":100}}`
	for _, tt := range []struct {
		name, in, source string
		wantSource       string
		points, skipped  int
		msg              string
	}{
		{"run output", line + "\n" + `{"line":2,"error":"out of memory"}` + "\n", "live", "live", 1, 1, ""},
		{"untimed, unprofiled", `{"spec":{"kernel":"coalesced_copy","n":64}}`, "s", "s", 1, 0, ""},
		{"reference", `{"provenance":{"device":{"gpu":"NVIDIA H200"},"date":"2026-11-29T21:10:08Z","command":"c"},"records":[` + line + `]}`, "", "recorded on NVIDIA H200, 2026-11-29", 1, 0, ""},
		{"reference, source given", `{"provenance":{"device":{"gpu":"NVIDIA H200"},"date":"2026-11-29T21:10:08Z"},"records":[` + line + `]}`, "mine", "mine", 1, 0, ""},
		{"lines without a source", line, "", "", 0, 0, "no source"},
		{"not JSON", "{\"spec\":", "x", "", 0, 0, "want one JSON object per launch"},
		{"no spec", `{"time_ms":1}`, "x", "", 0, 0, `no "spec"`},
		{"bad spec", `{"spec":{"kernel":"strided_copy","n":64,"stride":0},"time_ms":1}`, "x", "", 0, 0, `field "stride"`},
		{"negative time", `{"spec":{"kernel":"coalesced_copy","n":64},"time_ms":-1}`, "x", "", 0, 0, "want a finite time"},
		{"empty", "", "x", "", 0, 0, "no measured launch"},
		{"only failures", `{"line":1,"error":"boom"}`, "x", "", 0, 1, "1 failed ones skipped"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m, skipped, err := ReadMeasurements(strings.NewReader(tt.in), tt.source)
			assert.Equal(t, tt.skipped, skipped)
			if tt.msg != "" {
				require.ErrorIs(t, err, ErrMeasured)
				assert.Contains(t, err.Error(), tt.msg)
				if tt.msg == "no source" {
					assert.ErrorIs(t, err, ErrNoSource)
				}
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.wantSource, m.Source)
			assert.Len(t, m.Points, tt.points)
		})
	}
	m, _, err := ReadMeasurements(strings.NewReader(line), "x")
	require.NoError(t, err)
	assert.Equal(t, 0.5e-3, m.Points[0].Seconds, "time_ms is milliseconds")
	assert.Equal(t, 100.0, m.Points[0].Metrics[metrics.DRAMRead])
}

func FuzzReadMeasurements(f *testing.F) {
	f.Add(`{"spec":{"kernel":"strided_copy","n":4096,"stride":2},"time_ms":0.5}`)
	f.Add(`{"provenance":{},"records":[{"error":"x"}]}`)
	f.Fuzz(func(t *testing.T, in string) {
		m, _, err := ReadMeasurements(strings.NewReader(in), "fuzz")
		if err != nil {
			if !errors.Is(err, ErrMeasured) {
				t.Fatalf("error %v does not wrap ErrMeasured", err)
			}
			return
		}
		for _, p := range m.Points {
			if math.IsNaN(p.Seconds) || p.Seconds < 0 || p.Spec.Validate() != nil {
				t.Fatalf("bad point accepted: %+v", p)
			}
		}
	})
}

func TestLike(t *testing.T) {
	m := readRecorded(t)
	strided := m.Like(MeasuredStrideBase, clearStride)
	assert.Len(t, strided, 13)
	assert.Len(t, m.Like(MeasuredStructBase, clearStruct), 7)
	assert.Len(t, m.Like(SoAOf(MeasuredStructBase), func(*spec.Spec) {}), 1)
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

func TestLabels(t *testing.T) {
	for _, tt := range []struct {
		v    float64
		want string
	}{{1, "100%"}, {0.5, "50%"}, {0.125, "12.5%"}, {1.0 / 16, "6.25%"}, {1.0 / 32, "3.125%"}, {1.0 / 3, "33.3%"}} {
		assert.Equal(t, tt.want, percentLabel(tt.v))
	}
	assert.Equal(t, "0.5×", ratioLabel(0.5))
	assert.Equal(t, "16×", ratioLabel(16))
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

// Outside GoNB, Show and ShowWarp draw nothing and say so, at once.
func TestShowOutsideNotebook(t *testing.T) {
	assert.ErrorIs(t, Show(newPlot("", "", "")), ErrNotNotebook)
	assert.ErrorIs(t, ShowSized(Diagram), ErrNotNotebook)
	assert.ErrorIs(t, ShowWarp(mustSpec(`{"kernel":"coalesced_copy","n":64}`), 0, 0), ErrNotNotebook)
}

func vgNaN() vgLength { return vgLength(math.NaN()) }
