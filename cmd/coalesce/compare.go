package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/coalescing-course/coalesce/cuda"
	"github.com/coalescing-course/coalesce/lessons/metrics"
	"github.com/coalescing-course/coalesce/lessons/sectors"
	"github.com/coalescing-course/coalesce/lessons/spec"
)

func init() {
	commands["compare"] = command{
		summary: "model beside measurement, one row per spec: [-json] [-recorded] [-measured RUN] [FILE]",
		run:     compareCmd,
	}
}

// TimeKey is the key of the time in a compare row's model, measured and
// ratio maps, beside the metric names.
const TimeKey = "time_seconds"

// compareHeader is the first line of compare's output: where the
// measurements come from.
type compareHeader struct {
	Source string `json:"source"` // "live", "recorded" or "measured"
	Label  string `json:"label"`
	Why    string `json:"why,omitempty"` // why not live
}

// compareRow is one spec: the model's numbers, the measured ones, and
// measured/model for each. A ratio is null where the model says 0 and the
// measurement does not.
type compareRow struct {
	Line     int                 `json:"line"`
	Spec     *spec.Spec          `json:"spec,omitempty"`
	Error    string              `json:"error,omitempty"`
	Model    map[string]float64  `json:"model,omitempty"`
	Measured map[string]float64  `json:"measured,omitempty"`
	Ratio    map[string]*float64 `json:"ratio,omitempty"`
}

// source answers "what was measured for this spec".
type source struct {
	header compareHeader
	lookup func(spec.Spec) (cuda.Result, bool)
	// missing is the error row text of a spec the source does not have.
	missing string
}

func compareCmd(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("compare", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	asJSON := fs.Bool("json", false, "one JSON object per line instead of a table")
	recorded := fs.Bool("recorded", false, "use the recorded reference even when this machine has a GPU")
	measured := fs.String("measured", "", "use the results of an earlier `coalesce run` saved in this file")
	if err := fs.Parse(args); err != nil {
		return usagef("compare: %v", err)
	}
	if *recorded && *measured != "" {
		return usagef("compare: -recorded and -measured name two sources: want one")
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

	var src *source
	switch {
	case *measured != "":
		src, err = measuredSource(*measured)
	case *recorded:
		src, err = recordedSource("")
	default:
		src, err = liveSource(ctx, specs, stderr)
	}
	if err != nil {
		return err
	}

	rows := make([]compareRow, 0, len(lines))
	bad := 0
	for _, l := range lines {
		row := compareRow{Line: l.Num}
		if l.Err != nil {
			row.Error = lineErrorOf(l.Num, l.Err).Error
		} else {
			row = compareOne(l.Num, l.Spec, src)
		}
		if row.Error != "" {
			bad++
		}
		rows = append(rows, row)
	}
	w := bufio.NewWriter(stdout)
	if *asJSON {
		err = writeCompareJSON(w, src.header, rows)
	} else {
		err = writeCompareTable(w, src.header, rows)
	}
	if err == nil {
		err = w.Flush()
	}
	if err != nil {
		return err
	}
	if bad > 0 {
		fmt.Fprintf(stderr, "coalesce compare: %d line(s) without a comparison, answered in place\n", bad)
		return errReported
	}
	return nil
}

func compareOne(num int, s spec.Spec, src *source) compareRow {
	row := compareRow{Line: num, Spec: &s}
	p, err := sectors.Predict(s)
	if err != nil {
		row.Error = "model: " + err.Error()
		return row
	}
	m, ok := src.lookup(s)
	if !ok {
		row.Error = src.missing
		return row
	}
	if m.Failed() {
		row.Error = m.Error
		return row
	}
	row.Model = map[string]float64{TimeKey: p.TimeSeconds}
	row.Measured = map[string]float64{TimeKey: m.TimeMs / 1e3}
	for _, name := range metrics.All {
		row.Model[name] = p.Metrics[name]
		if v, ok := m.Metrics[name]; ok {
			row.Measured[name] = v
		}
	}
	row.Ratio = map[string]*float64{}
	for name, meas := range row.Measured {
		row.Ratio[name] = ratio(meas, row.Model[name])
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

// liveSource measures the specs on this machine's GPU, or, when it lacks
// nvcc, ncu, a driver or a GPU, falls back on the recorded reference and
// says why.
func liveSource(ctx context.Context, specs []spec.Spec, stderr io.Writer) (*source, error) {
	gpu, err := cuda.Open(ctx, cuda.Builder{Log: stderr})
	var ncu cuda.Ncu
	if err == nil {
		ncu, err = cuda.FindNcu()
	}
	var missing *cuda.MissingError
	if errors.As(err, &missing) {
		return recordedSource(missing.Error())
	}
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(stderr, "coalesce: measuring %d specs on %s\n", len(specs), gpu.Info.GPU)
	results, err := gpu.Measure(ctx, specs, &cuda.ProfileOptions{Ncu: ncu})
	if err != nil {
		return nil, err
	}
	byKey := make(map[string]cuda.Result, len(results))
	for _, r := range results {
		byKey[cuda.SpecKey(r.Spec)] = r
	}
	return &source{
		header:  compareHeader{Source: "live", Label: fmt.Sprintf("measured now on %s (CUDA %s, %s)", gpu.Info.GPU, cuda.CUDAVersion(gpu.Info.RuntimeVersion), gpu.Harness.Nvcc)},
		lookup:  func(s spec.Spec) (cuda.Result, bool) { r, ok := byKey[cuda.SpecKey(s)]; return r, ok },
		missing: "not measured",
	}, nil
}

func recordedSource(why string) (*source, error) {
	ref, err := cuda.Recorded()
	if err != nil {
		if why != "" {
			return nil, fmt.Errorf("%s; and %w", why, err)
		}
		return nil, err
	}
	return &source{
		header:  compareHeader{Source: "recorded", Label: ref.Label(), Why: why},
		lookup:  ref.Lookup,
		missing: "not in the recorded reference (" + ref.Label() + "): measure it on a GPU with coalesce compare or coalesce run",
	}, nil
}

// measuredSource reads the output of coalesce run: result lines, and error
// lines, which are skipped.
func measuredSource(path string) (*source, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	byKey := map[string]cuda.Result{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" {
			continue
		}
		var probe struct {
			Error string `json:"error"`
		}
		if err := json.Unmarshal([]byte(text), &probe); err != nil {
			return nil, fmt.Errorf("%s:%d: not a coalesce run result: %v", path, n, err)
		}
		if probe.Error != "" {
			continue
		}
		var r cuda.Result
		if err := json.Unmarshal([]byte(text), &r); err != nil {
			return nil, fmt.Errorf("%s:%d: not a coalesce run result: %v", path, n, err)
		}
		byKey[cuda.SpecKey(r.Spec)] = r
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return &source{
		header:  compareHeader{Source: "measured", Label: "measured in " + path},
		lookup:  func(s spec.Spec) (cuda.Result, bool) { r, ok := byKey[cuda.SpecKey(s)]; return r, ok },
		missing: "not in " + path,
	}, nil
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

// shortNames are the table's column heads for the metrics.
var shortNames = map[string]string{
	metrics.LdRequests: "ld_req",
	metrics.LdSectors:  "ld_sec",
	metrics.StRequests: "st_req",
	metrics.StSectors:  "st_sec",
	metrics.DRAMRead:   "dram_rd",
	metrics.DRAMWrite:  "dram_wr",
	TimeKey:            "time",
}

func writeCompareTable(w io.Writer, h compareHeader, rows []compareRow) error {
	fmt.Fprintf(w, "# %s: %s\n", h.Source, h.Label)
	if h.Why != "" {
		fmt.Fprintf(w, "# (no live measurement: %s)\n", h.Why)
	}
	fmt.Fprintf(w, "# each cell: model measured measured/model; times in microseconds\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	cols := append(append([]string{}, metrics.All...), TimeKey)
	head := []string{"line", "spec"}
	for _, c := range cols {
		head = append(head, shortNames[c])
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
		for _, c := range cols {
			meas, ok := r.Measured[c]
			if !ok {
				cells = append(cells, "-")
				continue
			}
			model := r.Model[c]
			if c == TimeKey {
				model, meas = model*1e6, meas*1e6
			}
			rs := "-"
			if p := r.Ratio[c]; p != nil {
				rs = strconv.FormatFloat(*p, 'f', 2, 64)
			}
			cells = append(cells, fmt.Sprintf("%s %s %s", short(model), short(meas), rs))
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
