package plots

import (
	"image/color"
	"math"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// The Okabe-Ito colours (Okabe and Ito, "Color Universal Design", 2008):
// eight colours that stay distinct for the common forms of colour
// blindness. Every chart of the course takes its colours from here.
var (
	Black         = color.RGBA{R: 0x00, G: 0x00, B: 0x00, A: 0xff}
	Orange        = color.RGBA{R: 0xe6, G: 0x9f, B: 0x00, A: 0xff}
	SkyBlue       = color.RGBA{R: 0x56, G: 0xb4, B: 0xe9, A: 0xff}
	BluishGreen   = color.RGBA{R: 0x00, G: 0x9e, B: 0x73, A: 0xff}
	Yellow        = color.RGBA{R: 0xf0, G: 0xe4, B: 0x42, A: 0xff}
	Blue          = color.RGBA{R: 0x00, G: 0x72, B: 0xb2, A: 0xff}
	Vermillion    = color.RGBA{R: 0xd5, G: 0x5e, B: 0x00, A: 0xff}
	ReddishPurple = color.RGBA{R: 0xcc, G: 0x79, B: 0xa7, A: 0xff}
)

// Palette is the course's colour cycle, in the order series take them.
// Yellow comes last: on white it is the hardest to read.
var Palette = []color.Color{Blue, Vermillion, BluishGreen, ReddishPurple, Orange, SkyBlue, Black, Yellow}

// Roles: the same thing has the same colour on every chart.
var (
	// ModelColor draws what the sector model predicts.
	ModelColor color.Color = Blue
	// MeasuredColor draws what a GPU measured.
	MeasuredColor color.Color = Vermillion
	// ReferenceColor draws reference lines (SoA, the device's copy bandwidth).
	ReferenceColor color.Color = BluishGreen
	// GridColor draws the background grid.
	GridColor color.Color = color.Gray{Y: 0xdd}
	// NotFetchedColor fills a sector of a touched line that no lane uses:
	// the hardware does not fetch it.
	NotFetchedColor color.Color = color.White
)

// ElemColor returns the colour of the series for elements of elemBytes
// bytes (1, 2, 4, 8, 16), so that "4-byte elements" look the same on
// every chart of the course.
func ElemColor(elemBytes int) color.Color {
	return Palette[elemIndex(elemBytes)%len(Palette)]
}

func elemIndex(elemBytes int) int {
	switch elemBytes {
	case 1:
		return 4 // orange
	case 2:
		return 3 // reddish purple
	case 4:
		return 0 // blue, as the seed's floats
	case 8:
		return 2 // bluish green
	case 16:
		return 1 // vermillion
	}
	return 6
}

// Dashes returns the i-th dash pattern of the course: solid first. Series
// that differ in colour differ in dashes and glyphs too, so that a chart
// printed in grey still reads.
func Dashes(i int) []vg.Length {
	patterns := [][]vg.Length{
		nil,
		{vg.Points(6), vg.Points(3)},
		{vg.Points(2), vg.Points(2)},
		{vg.Points(8), vg.Points(3), vg.Points(2), vg.Points(3)},
		{vg.Points(12), vg.Points(4)},
	}
	return patterns[i%len(patterns)]
}

// Glyph returns the i-th glyph shape of the course.
func Glyph(i int) draw.GlyphDrawer {
	shapes := []draw.GlyphDrawer{
		draw.CircleGlyph{}, draw.SquareGlyph{}, draw.TriangleGlyph{},
		draw.PyramidGlyph{}, draw.CrossGlyph{}, draw.RingGlyph{}, draw.BoxGlyph{}, draw.PlusGlyph{},
	}
	return shapes[i%len(shapes)]
}

// usedStops is viridis (van der Walt and Smith, matplotlib 2015) at five
// points, from 0 to 1: perceptually uniform and colour-blind safe.
var usedStops = []color.RGBA{
	{R: 0x44, G: 0x01, B: 0x54, A: 0xff},
	{R: 0x3b, G: 0x52, B: 0x8b, A: 0xff},
	{R: 0x21, G: 0x91, B: 0x8c, A: 0xff},
	{R: 0x5e, G: 0xc9, B: 0x62, A: 0xff},
	{R: 0xfd, G: 0xe7, B: 0x25, A: 0xff},
}

// UsedColor returns the fill of a fetched sector of which used bytes
// (1 to 32) are used: pale yellow for a sector mostly wasted, deep purple
// for a sector fully used. A sector with 0 bytes used is not fetched:
// NotFetchedColor.
func UsedColor(used int) color.Color {
	if used <= 0 {
		return NotFetchedColor
	}
	if used > 32 {
		used = 32
	}
	// 1 byte is the lightest stop, 32 bytes the darkest.
	t := 1 - float64(used-1)/31
	f := t * float64(len(usedStops)-1)
	i := int(math.Floor(f))
	if i >= len(usedStops)-1 {
		return usedStops[len(usedStops)-1]
	}
	fr := f - float64(i)
	a, b := usedStops[i], usedStops[i+1]
	mix := func(x, y uint8) uint8 { return uint8(math.Round(float64(x)*(1-fr) + float64(y)*fr)) }
	return color.RGBA{R: mix(a.R, b.R), G: mix(a.G, b.G), B: mix(a.B, b.B), A: 0xff}
}

// textOn returns black or white, whichever reads better on bg.
func textOn(bg color.Color) color.Color {
	r, g, b, _ := bg.RGBA()
	// Relative luminance, sRGB weights, on 16-bit channels.
	l := (0.2126*float64(r) + 0.7152*float64(g) + 0.0722*float64(b)) / 0xffff
	if l > 0.45 {
		return Black
	}
	return color.White
}
