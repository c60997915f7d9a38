package plots

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Size is the size of a rendered picture. DPI applies to PNG only: an SVG
// scales without loss.
type Size struct {
	Width, Height vg.Length
	DPI           int
}

// Notebook is the size of one chart in a notebook: 16 by 10 cm, at 120
// dots per inch a PNG of 756 by 472 pixels, which a notebook shows as is,
// text at least 11 points tall.
var Notebook = Size{Width: 16 * vg.Centimeter, Height: 10 * vg.Centimeter, DPI: 120}

// Diagram is the size of a warp diagram: wide enough for 32 lanes with
// their addresses written out.
var Diagram = Size{Width: 26 * vg.Centimeter, Height: 12 * vg.Centimeter, DPI: 120}

// Row returns the size of n charts side by side: each as tall as s and
// three quarters as wide.
func (s Size) Row(n int) Size {
	if n <= 1 {
		return s
	}
	s.Width = vg.Length(n) * s.Width * 3 / 4
	return s
}

func (s Size) validate() error {
	if !(s.Width > 0 && s.Height > 0) || s.Width > 200*vg.Centimeter || s.Height > 200*vg.Centimeter {
		return fmt.Errorf("plots: size %v by %v: want each side above 0 and at most 2 m", s.Width, s.Height)
	}
	if s.DPI < 0 || s.DPI > 1200 {
		return fmt.Errorf("plots: %d dots per inch: want 1 to 1200, or 0 for the default", s.DPI)
	}
	return nil
}

// Formats a picture may be written in, by file extension.
const (
	PNGFormat = "png"
	SVGFormat = "svg"
)

// ErrFormat is a picture format other than PNG and SVG.
var ErrFormat = errors.New("plots: unknown picture format, want .png or .svg")

// FormatOf returns the format a file name's extension asks for: "png" or
// "svg", or an error wrapping ErrFormat.
func FormatOf(name string) (string, error) {
	switch ext := strings.ToLower(filepath.Ext(name)); ext {
	case ".png":
		return PNGFormat, nil
	case ".svg":
		return SVGFormat, nil
	default:
		return "", fmt.Errorf("%w: %q has extension %q", ErrFormat, name, ext)
	}
}

// ErrNoPlot is a call to draw with no plot, or a nil one.
var ErrNoPlot = errors.New("plots: no plot to draw")

// Render draws the plots side by side, in equal tiles, in one picture of the
// given size, and writes it to w as PNG or SVG (format "png" or "svg").
func Render(w io.Writer, format string, size Size, ps ...*plot.Plot) error {
	if len(ps) == 0 {
		return ErrNoPlot
	}
	for _, p := range ps {
		if p == nil {
			return ErrNoPlot
		}
	}
	if err := size.validate(); err != nil {
		return err
	}
	var c vg.CanvasWriterTo
	switch format {
	case PNGFormat:
		dpi := size.DPI
		if dpi == 0 {
			dpi = Notebook.DPI
		}
		img := vgimg.NewWith(vgimg.UseWH(size.Width, size.Height), vgimg.UseDPI(dpi))
		c = vgimg.PngCanvas{Canvas: img}
	case SVGFormat:
		c = vgsvg.New(size.Width, size.Height)
	default:
		return fmt.Errorf("%w: got %q", ErrFormat, format)
	}
	dc := draw.New(c)
	if len(ps) == 1 {
		ps[0].Draw(dc)
	} else {
		// Equal tiles, each plot laying itself out in its own (plot.Align
		// would equalise the data areas, and push a plot whose labels
		// stick out on one side past the picture's edge).
		tiles := draw.Tiles{Rows: 1, Cols: len(ps), PadX: vg.Points(18)}
		for i, p := range ps {
			p.Draw(tiles.At(dc, i, 0))
		}
	}
	if format == SVGFormat {
		var b bytes.Buffer
		if _, err := c.WriteTo(&b); err != nil {
			return fmt.Errorf("plots: writing SVG: %w", err)
		}
		_, err := io.WriteString(w, portableFonts(b.String()))
		return err
	}
	if _, err := c.WriteTo(w); err != nil {
		return fmt.Errorf("plots: writing PNG: %w", err)
	}
	return nil
}

// portableFonts names, after each Liberation family an SVG asks for, the
// metric-compatible fonts a browser is likely to have, so text keeps its
// width where Liberation is not installed.
func portableFonts(svg string) string {
	return strings.NewReplacer(
		"font-family:Liberation Sans;", "font-family:'Liberation Sans',Arial,Helvetica,sans-serif;",
		"font-family:Liberation Serif;", "font-family:'Liberation Serif','Times New Roman',serif;",
		"font-family:Liberation Mono;", "font-family:'Liberation Mono','Courier New',monospace;",
	).Replace(svg)
}

// PNG returns the plots, side by side, as a PNG of the given size.
func PNG(size Size, ps ...*plot.Plot) ([]byte, error) {
	var b bytes.Buffer
	if err := Render(&b, PNGFormat, size, ps...); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// SVG returns the plots, side by side, as an SVG document of the given size.
func SVG(size Size, ps ...*plot.Plot) ([]byte, error) {
	var b bytes.Buffer
	if err := Render(&b, SVGFormat, size, ps...); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// Save writes the plots, side by side, to the file name, as PNG or SVG as
// its extension says.
func Save(name string, size Size, ps ...*plot.Plot) error {
	format, err := FormatOf(name)
	if err != nil {
		return err
	}
	var b bytes.Buffer
	if err := Render(&b, format, size, ps...); err != nil {
		return err
	}
	if err := os.WriteFile(name, b.Bytes(), 0o644); err != nil {
		return fmt.Errorf("plots: %w", err)
	}
	return nil
}

func wrap(err error) error {
	if err == nil {
		return nil
	}
	if strings.HasPrefix(err.Error(), "plots: ") {
		return err
	}
	return fmt.Errorf("plots: %w", err)
}
