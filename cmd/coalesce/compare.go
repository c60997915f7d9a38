package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/coalescing-course/coalesce/calibrate"
	"github.com/coalescing-course/coalesce/cuda"
	"github.com/coalescing-course/coalesce/cuda/reference"
	"github.com/coalescing-course/coalesce/internal/words"
	"github.com/coalescing-course/coalesce/lessons/figures"
	"github.com/coalescing-course/coalesce/lessons/measure"
	"github.com/coalescing-course/coalesce/lessons/metrics"
	"github.com/coalescing-course/coalesce/lessons/sectors"
	"github.com/coalescing-course/coalesce/lessons/spec"
)

func init() {
	commands["compare"] = command{
		summary: "model beside measurement, one row per spec: [-json] [-recorded] [-measured RUN] [-figures F,...] [FILE]",
		run:     compareCmd,
	}
}

const compareUsage = `usage: coalesce compare [-json] [-recorded | -measured RUN] [-figures F,...] [FILE]

Reads experiment specs, one JSON object per line (FILE, or standard input),
and prints, for each, the model's value of every figure beside the measured
one and their ratio. The measurements are live on this machine's GPU when it
has one (nvcc, and ncu for the counters), else the H200 recording built into
the course, and the first line says which. Live, the model describes this
GPU: its calibration (coalesce calibrate), else the profile its name
matches, else the H200's; a "# model:" line says which and why. -measured
takes them from a run file that coalesce run wrote instead. Figures are named as lessons/figures
names them (ncu's metric names, time_seconds, fraction_of_memcpy, ...).
`

// defaultFigures are compare's columns: ncu's counts and the time.
var defaultFigures = append(append([]string{}, metrics.All...), figures.TimeSeconds.Name)

// compareHeader is the first line of compare's output: where the
// measurements come from.
type compareHeader struct {
	Kind  string `json:"source"` // "live", "recorded" or "measured" (a run file)
	Label string `json:"label"`
	Why   string `json:"why,omitempty"` // why not live
	// Counters says why some counters are not ncu's (the GPU refused
	// them), and how to let it count.
	Counters string `json:"counters,omitempty"`
	// Model names the profile the model columns use and why, when a live
	// GPU chose it (calibrate.Adopt): "t4 (this machine's Tesla T4, by
	// its name)". Otherwise it is the course's H200, whose recording it is.
	Model string `json:"model,omitempty"`
}

// compareRow is one spec: each figure's model value, measured value, and
// measured/model. A ratio is null where the model says 0 and the
// measurement does not.
type compareRow struct {
	Line     int                 `json:"line"`
	Spec     *spec.Spec          `json:"spec,omitempty"`
	Error    string              `json:"error,omitempty"`
	Model    map[string]float64  `json:"model,omitempty"`
	Measured map[string]float64  `json:"measured,omitempty"`
	Ratio    map[string]*float64 `json:"ratio,omitempty"`
	// Counters is where the measured counters come from when ncu did not
	// read them: "model" (no ratio is given for the figures they make),
	// or a recording's label.
	Counters string `json:"counters,omitempty"`
	// borrowed names the figures computed from those counters.
	borrowed map[string]bool
}

func compareCmd(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("compare", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "one JSON object per line instead of a table")
	recorded := fs.Bool("recorded", false, "use the recording built into the course even when this machine has a GPU")
	measured := fs.String("measured", "", "use the launches of the run file `RUN` (what coalesce run wrote)")
	figList := fs.String("figures", strings.Join(defaultFigures, ","), "the figures to compare (lessons/figures names)")
	if err := parseFlags(fs, compareUsage, args, stdout); err != nil {
		return err
	}
	if *recorded && *measured != "" {
		return usagef("compare: -recorded and -measured name two sources: want one")
	}
	var figs []figures.Figure
	for _, name := range strings.Split(*figList, ",") {
		f, ok := figures.Lookup(strings.TrimSpace(name))
		if !ok {
			return usagef("compare: -figures: %q: want names of lessons/figures: %s", name, strings.Join(figures.Names(), ", "))
		}
		figs = append(figs, f)
	}
	// The source before the specs: a live GPU chooses the profile that a
	// spec without "device" gets as it is read.
	var src measure.Measurer
	var err error
	switch {
	case *measured != "":
		set, err := measure.ReadFile(*measured)
		if err != nil {
			return err
		}
		src = measure.FromSet(set)
	case *recorded:
		src, err = reference.Measurer("")
	default:
		st, done := statusLine(stderr)
		defer done()
		src, err = cuda.OpenMeasurer(ctx, cuda.Auto, cuda.Builder{Log: st})
		if g, ok := src.(*cuda.GPU); ok {
			g.Progress = st
		}
	}
	if err != nil {
		return err
	}
	model, err := adoptDevice(src)
	if err != nil {
		return err
	}
	lines, err := readSpecs(fs.Args(), stdin)
	if err != nil {
		return err
	}
	var specs []spec.Spec
	for _, l := range lines {
		if l.Err == nil {
			specs = append(specs, l.Spec)
		}
	}
	if o := src.Origin(); o.Kind == measure.Live {
		fmt.Fprintf(stderr, "coalesce: measuring %s on %s\n", words.Plural(len(specs), "launch"), o.GPU)
	}
	set, err := src.Measure(ctx, specs, measure.Times|measure.Counters)
	if err != nil {
		return err
	}
	header := compareHeader{Kind: sourceKind(set.Origin.Kind), Label: set.Label(), Why: set.Origin.Why, Model: model}
	if set.CountersErr != nil {
		header.Counters = set.CountersErr.Error()
	} else if set.Note != "" {
		header.Why = set.Note
	}

	rows := make([]compareRow, 0, len(lines))
	bad, k := 0, 0
	for _, l := range lines {
		row := compareRow{Line: l.Num}
		if l.Err != nil {
			row.Error = lineErrorOf(l.Num, l.Err).Error
		} else {
			row = compareOne(l.Num, set.Launches[k], figs)
			k++
		}
		if row.Error != "" {
			bad++
		}
		rows = append(rows, row)
	}
	w := bufio.NewWriter(stdout)
	if *asJSON {
		err = writeCompareJSON(w, header, rows)
	} else {
		err = writeCompareTable(w, header, rows, figs)
	}
	if err == nil {
		err = w.Flush()
	}
	if err != nil {
		return err
	}
	if bad > 0 {
		fmt.Fprintf(stderr, "coalesce compare: %s without a comparison, answered in place\n", words.Plural(bad, "line"))
		return errReported
	}
	return nil
}

// sourceKind names an origin in compare's header.
func sourceKind(k measure.Kind) string {
	switch k {
	case measure.Live:
		return "live"
	case measure.Recorded:
		return "recorded"
	}
	return "measured"
}

func compareOne(num int, l measure.Launch, figs []figures.Figure) compareRow {
	s := l.Spec
	row := compareRow{Line: num, Spec: &s}
	p, err := sectors.Model(s)
	if err != nil {
		row.Error = "model: " + err.Error()
		return row
	}
	if l.Failed() {
		row.Error = l.Error
		return row
	}
	model, meas := figures.Model(p), figures.Measured(l, &p)
	if l.CountersBorrowed() {
		row.Counters = l.Counters
	}
	row.Model, row.Measured, row.Ratio = map[string]float64{}, map[string]float64{}, map[string]*float64{}
	for _, f := range figs {
		mv, errM := f.Of(model)
		if errM == nil {
			row.Model[f.Name] = mv
		}
		xv, errX := f.Of(meas)
		if errX == nil {
			row.Measured[f.Name] = xv
		}
		from := f.Borrowed(meas)
		if from != "" && errX == nil {
			if row.borrowed == nil {
				row.borrowed = map[string]bool{}
			}
			row.borrowed[f.Name] = true
		}
		// The model's counters over the model's are 1 by construction:
		// no agreement to report.
		if errM == nil && errX == nil && from != measure.CountersModel {
			row.Ratio[f.Name] = ratio(xv, mv)
		}
	}
	return row
}

// ratio is measured/model; 1 when both are 0, nil when only the model is.
func ratio(measured, model float64) *float64 {
	var r float64
	switch {
	case model == 0 && measured == 0:
		r = 1
	case model == 0:
		return nil
	default:
		r = measured / model
	}
	return &r
}

func writeCompareJSON(w io.Writer, h compareHeader, rows []compareRow) error {
	enc := json.NewEncoder(w)
	if err := enc.Encode(h); err != nil {
		return err
	}
	for _, r := range rows {
		if err := enc.Encode(r); err != nil {
			return err
		}
	}
	return nil
}

// shortNames are the table's column heads for the metrics and the time;
// other figures go by their names.
var shortNames = map[string]string{
	metrics.LdRequests:       "ld_req",
	metrics.LdSectors:        "ld_sec",
	metrics.StRequests:       "st_req",
	metrics.StSectors:        "st_sec",
	metrics.DRAMRead:         "dram_rd",
	metrics.DRAMWrite:        "dram_wr",
	figures.TimeSeconds.Name: "time",
}

func writeCompareTable(w io.Writer, h compareHeader, rows []compareRow, figs []figures.Figure) error {
	// The label names its source: "live: GPU, date", "recorded on GPU, date".
	fmt.Fprintf(w, "# %s\n", h.Label)
	if h.Why != "" {
		fmt.Fprintf(w, "# (no live measurement: %s)\n", h.Why)
	}
	if h.Model != "" {
		fmt.Fprintf(w, "# model: %s\n", h.Model)
	}
	if h.Counters != "" {
		fmt.Fprintf(w, "# counters: %s\n# a measured value marked (model) is the sector model's, marked (recorded) the course's recording's\n", h.Counters)
	}
	fmt.Fprintf(w, "# each cell: model measured measured/model; times in microseconds\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	head := []string{"line", "spec"}
	for _, f := range figs {
		name, ok := shortNames[f.Name]
		if !ok {
			name = f.Name
		}
		head = append(head, name)
	}
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	for _, r := range rows {
		cells := []string{strconv.Itoa(r.Line)}
		if r.Spec != nil {
			cells = append(cells, r.Spec.Brief())
		} else {
			cells = append(cells, "-")
		}
		if r.Error != "" {
			cells = append(cells, "error: "+r.Error)
			fmt.Fprintln(tw, strings.Join(cells, "\t"))
			continue
		}
		for _, f := range figs {
			c := f.Name
			meas, ok := r.Measured[c]
			if !ok {
				cells = append(cells, "-")
				continue
			}
			model := r.Model[c]
			if c == figures.TimeSeconds.Name {
				model, meas = model*1e6, meas*1e6
			}
			rs := "-"
			if p := r.Ratio[c]; p != nil {
				rs = strconv.FormatFloat(*p, 'f', 2, 64)
			}
			mark := ""
			if r.borrowed[c] {
				mark = "(recorded)"
				if r.Counters == measure.CountersModel {
					mark = "(model)"
				}
			}
			cells = append(cells, fmt.Sprintf("%s %s%s %s", short(model), short(meas), mark, rs))
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	return tw.Flush()
}

// short prints a number in at most about five characters: 8.39M, 512, 0.38.
func short(v float64) string {
	a := math.Abs(v)
	switch {
	case a == 0:
		return "0"
	case a >= 1e9:
		return trimZeros(strconv.FormatFloat(v/1e9, 'f', 2, 64)) + "G"
	case a >= 1e6:
		return trimZeros(strconv.FormatFloat(v/1e6, 'f', 2, 64)) + "M"
	case a >= 1e4:
		return trimZeros(strconv.FormatFloat(v/1e3, 'f', 1, 64)) + "k"
	case a >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	default:
		return trimZeros(strconv.FormatFloat(v, 'f', 2, 64))
	}
}

func trimZeros(s string) string {
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

// adoptDevice makes the model describe the GPU src measures on
// (calibrate.AdoptGPU: a live GPU's calibration from coalesce calibrate's
// cache, the shipped profile its name matches, or the H200's), which
// specs without "device" then get. It returns the profile's name and why,
// for the output; "" when src is not live and the model stays on the
// course's H200, the GPU of the recording.
func adoptDevice(src measure.Measurer) (string, error) {
	g, live := src.(*cuda.GPU)
	p, why, err := calibrate.AdoptGPU(g)
	if err != nil || !live {
		return "", err
	}
	return fmt.Sprintf("%s (%s)", p.Name, why), nil
}
