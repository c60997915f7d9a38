package plots

import (
	"fmt"
	"image"
	"image/color"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/coalescing-course/coalesce/lessons/spec"
)

// drawImage draws p at size and returns the picture and the data-to-pixel
// map of its axes (x and y as the chart plots them: log2 of the data).
func drawImage(p *plot.Plot, size Size) (image.Image, func(x, y float64) image.Point) {
	c := vgimg.NewWith(vgimg.UseWH(size.Width, size.Height), vgimg.UseDPI(size.DPI))
	dc := draw.New(c)
	p.Draw(dc)
	da := p.DataCanvas(dc)
	tx, ty := p.Transforms(&da)
	scale := float64(size.DPI) / vg.Inch.Points()
	img := c.Image()
	h := img.Bounds().Dy()
	return img, func(x, y float64) image.Point {
		px, py := tx(math.Log2(x)), ty(math.Log2(y))
		return image.Point{X: int(math.Round(px.Points() * scale)), Y: h - int(math.Round(py.Points()*scale))}
	}
}

// near counts the pixels within r of ctr whose colour is within 40 of c
// on every channel.
func near(img image.Image, ctr image.Point, r int, c color.Color) int {
	cr, cg, cb, _ := c.RGBA()
	n := 0
	for y := ctr.Y - r; y <= ctr.Y+r; y++ {
		for x := ctr.X - r; x <= ctr.X+r; x++ {
			pr, pg, pb, _ := img.At(x, y).RGBA()
			d := func(a, b uint32) bool { return math.Abs(float64(a>>8)-float64(b>>8)) <= 40 }
			if d(pr, cr) && d(pg, cg) && d(pb, cb) {
				n++
			}
		}
	}
	return n
}

// In the DRAM chart the L1's and DRAM's measured points at stride 1 lie
// on each other (both about 1 byte moved per useful byte): both must show.
// A marker of radius 3 points at 120 dpi covers some 25 pixels of its
// colour, a ring more; before the fix the DRAM circle, drawn last and
// larger, left no blue pixel of the L1 square.
func TestDRAMChartShowsBothMarkers(t *testing.T) {
	snap, m := readSnapshot(t), readRecorded(t)
	d, err := strideDRAM(&hider{}, snap[spec.StridedCopy], m)
	require.NoError(t, err)
	require.NotEmpty(t, d.sectorMeasured)
	require.NotEmpty(t, d.dramMeasured)
	l1, dram := d.sectorMeasured[0], d.dramMeasured[0]
	require.Equal(t, 1.0, l1.X, "the first measured stride")
	require.Equal(t, 1.0, dram.X)
	p, err := plotOf(DRAMVsStride(snap[spec.StridedCopy], m))
	require.NoError(t, err)
	img, at := drawImage(p, Notebook)
	// 4 points around the L1 point: 8 pixels at 120 dpi.
	assert.GreaterOrEqual(t, near(img, at(l1.X, l1.Y), 8, Blue), 12, "the L1 square at stride 1")
	assert.GreaterOrEqual(t, near(img, at(dram.X, dram.Y), 12, ReddishPurple), 12, "the DRAM marker at stride 1")
}

// The SoA lines of the struct chart, model and measured, lie within a few
// per cent of each other: each is named, with its value, beside it, the
// two names apart from each other and from the copy bandwidth's note.
func TestStructChartNamesSoALines(t *testing.T) {
	snap, m := readSnapshot(t), readRecorded(t)
	p, err := plotOf(BandwidthVsStruct(snap[spec.UpdateXAoS], snap[spec.UpdateXSoA][0], m))
	require.NoError(t, err)
	boxes := textBoxes(t, p, Notebook)
	find := func(prefix string) [4]vg.Point {
		t.Helper()
		for s, b := range boxes {
			if strings.HasPrefix(s, prefix) {
				return b
			}
		}
		t.Fatalf("no text starting %q in %v", prefix, keys(boxes))
		return [4]vg.Point{}
	}
	model, meas, copyNote := find("SoA model: "), find("SoA measured: "), find("device copy bandwidth")
	for _, pair := range []struct {
		name string
		a, b [4]vg.Point
	}{{"model and measured", model, meas}, {"measured and copy note", meas, copyNote}, {"model and copy note", model, copyNote}} {
		assert.False(t, overlap(pair.a, pair.b), "%s overlap: %v %v", pair.name, pair.a, pair.b)
	}
}

// overlap says whether two upright text boxes (corners as textBoxes
// gives them) share any area.
func overlap(a, b [4]vg.Point) bool {
	return a[0].X < b[1].X && b[0].X < a[1].X && a[0].Y < b[2].Y && b[0].Y < a[2].Y
}

func keys(m map[string][4]vg.Point) string {
	var s []string
	for k := range m {
		s = append(s, fmt.Sprintf("%q", k))
	}
	return strings.Join(s, ", ")
}
