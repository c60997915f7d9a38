package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"

	"github.com/coalescing-course/coalesce/internal/atomicfile"
	"github.com/coalescing-course/coalesce/lessons/measure"
	"github.com/coalescing-course/coalesce/lessons/plots"
	"github.com/coalescing-course/coalesce/lessons/sectors"
	"github.com/coalescing-course/coalesce/lessons/spec"
)

func init() {
	commands["plot"] = command{
		summary: "draw a course plot to OUT (.png or .svg): plot KIND [flags] OUT",
		run:     runPlot,
	}
}

// plotKinds are the pictures coalesce plot draws, in the order the course
// meets them.
var plotKinds = []struct{ name, doc string }{
	{"stride", "efficiency and sectors per request against stride, one line per element size (model)"},
	{"struct", "efficiency against struct size, array of structs against struct of arrays (model)"},
	{"bandwidth-stride", "useful bandwidth against stride: model, and measured points with -measured"},
	{"bandwidth-struct", "useful bandwidth against struct size: model, and measured points with -measured"},
	{"dram", "bytes moved per useful byte at the L1 and at DRAM, against stride: model, and measured with -measured"},
	{"warp", "the warp diagram of one instruction of one warp of -spec"},
}

const plotUsage = `usage: coalesce plot KIND [flags] OUT

Draws one of the course's pictures into OUT, a PNG or an SVG as its
extension (.png or .svg) says. KIND is one of:

%s
Flags (before or after OUT):

%s
-spec sets the launch the picture is about: for stride, bandwidth-stride
and dram a strided_copy (or strided_read, strided_write) spec whose stride
is swept (and, for stride, its elem_bytes); for struct and bandwidth-struct
an update_x_aos spec whose struct_bytes is swept; for warp, any spec.
Without it, each kind takes the launch of the recorded sweep
(cuda/reference/sweep.jsonl) or, for the model-only kinds, a small one.

-measured reads a run file, as coalesce run writes it: its provenance
first, which names the GPU and the date in the title, then one launch a
line,

  {"spec":{...},"time_ms":0.12,"metrics":{"dram__bytes_read.sum":...}}

(time_ms is the median time of one launch; metrics are ncu's counts, with
coalesce run -ncu; lines with an "error" are skipped). The launches of
-spec at any stride (or struct size) are drawn over the model's line.
`

// plotFlags are coalesce plot's flags.
type plotFlags struct {
	spec     string
	warp     int64
	instr    int
	measured string
	width    float64
	height   float64
	dpi      int
}

func runPlot(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	var f plotFlags
	fs := flag.NewFlagSet("plot", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&f.spec, "spec", "", "the launch, one JSON spec such as {\"kernel\":\"strided_copy\",\"n\":1048576}")
	fs.Int64Var(&f.warp, "warp", 0, "warp: the warp to draw, 0 to the launch's warps - 1")
	fs.IntVar(&f.instr, "instr", 0, "warp: the memory instruction of the warp to draw, in program order from 0 (the title counts from 1)")
	fs.StringVar(&f.measured, "measured", "", "bandwidth-*, dram: measurements to draw over the model (JSON lines or a reference)")
	fs.Float64Var(&f.width, "width", 0, "picture width in cm (default: 16, 24 for stride, 26 for warp)")
	fs.Float64Var(&f.height, "height", 0, "picture height in cm (default: 10, 12 for warp)")
	fs.IntVar(&f.dpi, "dpi", 0, "PNG resolution in dots per inch (default 120)")
	usage := func() string {
		var kinds, flags strings.Builder
		for _, k := range plotKinds {
			fmt.Fprintf(&kinds, "  %-17s %s\n", k.name, k.doc)
		}
		fs.VisitAll(func(fl *flag.Flag) { fmt.Fprintf(&flags, "  -%-9s %s\n", fl.Name, fl.Usage) })
		return fmt.Sprintf(plotUsage, kinds.String(), flags.String())
	}

	if len(args) > 0 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help" || args[0] == "help") {
		fmt.Fprint(stdout, usage())
		return nil
	}
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		return usagef("plot: want a KIND first, one of %s", kindNames())
	}
	kind := args[0]
	if !slices.ContainsFunc(plotKinds, func(k struct{ name, doc string }) bool { return k.name == kind }) {
		return usagef("plot: unknown plot kind %q: want one of %s", kind, kindNames())
	}
	// Flags may come before or after OUT.
	var rest []string
	for tail := args[1:]; ; {
		if err := fs.Parse(tail); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fmt.Fprint(stdout, usage())
				return nil
			}
			return usagef("plot: %v", err)
		}
		if fs.NArg() == 0 {
			break
		}
		rest = append(rest, fs.Arg(0))
		tail = fs.Args()[1:]
	}
	if len(rest) != 1 {
		return usagef("plot %s: want one OUT file (.png or .svg), got %d: %s", kind, len(rest), strings.Join(rest, " "))
	}
	out := rest[0]
	format, err := plots.FormatOf(out)
	if err != nil {
		return usagef("plot %s: OUT %q: want a name ending in .png or .svg", kind, out)
	}
	if f.measured != "" && kind != "bandwidth-stride" && kind != "bandwidth-struct" && kind != "dram" {
		return usagef("plot %s: -measured is for bandwidth-stride, bandwidth-struct and dram", kind)
	}
	if kind != "warp" && (f.warp != 0 || f.instr != 0) {
		return usagef("plot %s: -warp and -instr are for warp", kind)
	}
	if kind == "warp" && f.spec == "" {
		return usagef("plot warp: want -spec, the launch whose warp to draw, such as -spec '{\"kernel\":\"strided_copy\",\"n\":4096,\"stride\":32}'")
	}
	if f.width < 0 || f.height < 0 || f.dpi < 0 {
		return usagef("plot %s: -width, -height and -dpi must not be negative", kind)
	}

	var base *spec.Spec
	if f.spec != "" {
		s, err := spec.Parse([]byte(f.spec))
		if err != nil {
			return usagef("plot %s: -spec: %v", kind, err)
		}
		base = &s
	}
	var m *measure.Set
	if f.measured != "" {
		if m, err = readMeasured(f.measured, stderr); err != nil {
			return err
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}

	ps, size, err := drawKind(kind, base, m, f)
	if err != nil {
		return err
	}
	if f.width > 0 {
		size.Width = vg.Length(f.width) * vg.Centimeter
	}
	if f.height > 0 {
		size.Height = vg.Length(f.height) * vg.Centimeter
	}
	if f.dpi > 0 {
		size.DPI = f.dpi
	}
	return atomicfile.Write(out, 0o644, func(w io.Writer) error { return plots.Render(w, format, size, ps...) })
}

func kindNames() string {
	names := make([]string, len(plotKinds))
	for i, k := range plotKinds {
		names[i] = k.name
	}
	return strings.Join(names, ", ")
}

// readMeasured reads a run file; its label comes from its provenance, or
// names the file when it has none.
func readMeasured(name string, stderr io.Writer) (*measure.Set, error) {
	m, err := measure.ReadFile(name)
	if err != nil {
		return nil, err
	}
	if failed := len(m.Launches) - len(m.Measured()); failed > 0 {
		fmt.Fprintf(stderr, "coalesce plot: %s: skipped %d failed launch(es)\n", name, failed)
	}
	if len(m.Measured()) == 0 {
		return nil, fmt.Errorf("%s: no measured launch in the file", name)
	}
	return m, nil
}

// drawKind builds the plots of kind, and the size to draw them at.
func drawKind(kind string, base *spec.Spec, m *measure.Set, f plotFlags) ([]*plot.Plot, plots.Size, error) {
	pick := func(def spec.Spec) spec.Spec {
		if base != nil {
			return *base
		}
		return def
	}
	switch kind {
	case "stride":
		specs, err := plots.StrideSpecs(pick(plots.StrideBase), plots.ElemSizes, plots.Strides)
		if err != nil {
			return nil, plots.Size{}, err
		}
		preds, err := sectors.ModelAll(specs...)
		if err != nil {
			return nil, plots.Size{}, err
		}
		eff, err := plotOf(plots.EfficiencyVsStride(preds))
		if err != nil {
			return nil, plots.Size{}, err
		}
		sec, err := plotOf(plots.SectorsVsStride(preds))
		if err != nil {
			return nil, plots.Size{}, err
		}
		return []*plot.Plot{eff, sec}, plots.Notebook.Row(2), nil
	case "struct":
		b := pick(plots.StructBase)
		specs, err := plots.StructSpecs(b, plots.StructSizes)
		if err != nil {
			return nil, plots.Size{}, err
		}
		preds, err := sectors.ModelAll(append(specs, plots.SoAOf(b))...)
		if err != nil {
			return nil, plots.Size{}, err
		}
		p, err := plotOf(plots.EfficiencyVsStruct(preds[:len(specs)], preds[len(specs)]))
		return []*plot.Plot{p}, plots.Notebook, err
	case "bandwidth-stride", "dram":
		b := pick(plots.MeasuredStrideBase)
		specs, err := plots.StrideSpecs(b, nil, plots.WithMeasuredStrides(plots.Strides, b, m))
		if err != nil {
			return nil, plots.Size{}, err
		}
		preds, err := sectors.ModelAll(specs...)
		if err != nil {
			return nil, plots.Size{}, err
		}
		var p *plot.Plot
		if kind == "dram" {
			p, err = plotOf(plots.DRAMVsStride(preds, m))
		} else {
			p, err = plotOf(plots.BandwidthVsStride(preds, m))
		}
		return []*plot.Plot{p}, plots.Notebook, err
	case "bandwidth-struct":
		b := pick(plots.MeasuredStructBase)
		specs, err := plots.StructSpecs(b, plots.WithMeasuredStructSizes(bandwidthStructSizes, b, m))
		if err != nil {
			return nil, plots.Size{}, err
		}
		preds, err := sectors.ModelAll(append(specs, plots.SoAOf(b))...)
		if err != nil {
			return nil, plots.Size{}, err
		}
		p, err := plotOf(plots.BandwidthVsStruct(preds[:len(specs)], preds[len(specs)], m))
		return []*plot.Plot{p}, plots.Notebook, err
	case "warp":
		p, err := plots.InstructionDiagram(*base, f.warp, f.instr)
		return []*plot.Plot{p}, plots.Diagram, err
	}
	return nil, plots.Size{}, usagef("plot: unknown plot kind %q", kind)
}

// bandwidthStructSizes are the struct sizes the bandwidth chart predicts
// at: the model runs the launch whole at each, so fewer than the
// efficiency chart's 32, and denser where the line bends.
var bandwidthStructSizes = []int{4, 8, 12, 16, 20, 24, 28, 32, 48, 64, 96, 128}

// plotOf draws a chart whole: the command line keeps nothing from its user.
func plotOf(c *plots.Chart, err error) (*plot.Plot, error) {
	if err != nil {
		return nil, err
	}
	return c.Plot()
}
