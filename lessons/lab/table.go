package lab

import (
	"fmt"
	"html"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/janpfeifer/gonb/gonbui"
	"github.com/janpfeifer/gonb/gonbui/protocol"

	"github.com/coalescing-course/coalesce/cuda"
	"github.com/coalescing-course/coalesce/lessons/devices"
	"github.com/coalescing-course/coalesce/lessons/metrics"
	"github.com/coalescing-course/coalesce/lessons/plots"
	"github.com/coalescing-course/coalesce/lessons/sectors"
	"github.com/coalescing-course/coalesce/lessons/spec"
)

// Missing is what a table shows where it has no value.
const Missing = "—"

// Table is a small table for a notebook: a caption above, a header row,
// rows of text, notes below. Build one with NewTable and AddRow, or with
// Compare or ModelTable.
type Table struct {
	Caption string
	Header  []string
	Rows    [][]string
	Notes   []string
}

// NewTable returns an empty table with the given column names.
func NewTable(header ...string) *Table {
	return &Table{Header: header}
}

// AddRow appends a row; values are formatted with Format. A row shorter
// than the header is padded with Missing, a longer one is cut.
func (t *Table) AddRow(values ...any) *Table {
	row := make([]string, len(t.Header))
	for i := range row {
		if i < len(values) {
			row[i] = Format(values[i])
		} else {
			row[i] = Missing
		}
	}
	t.Rows = append(t.Rows, row)
	return t
}

// addRow appends a row of cells already formatted.
func (t *Table) addRow(cells []string) {
	row := make([]any, len(cells))
	for i, c := range cells {
		row[i] = c
	}
	t.AddRow(row...)
}

// Format writes a table value: strings as they are, integers with
// thousands separators, other numbers with up to four significant digits.
func Format(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case int:
		return Count(float64(x))
	case int64:
		return Count(float64(x))
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1e15 {
			return Count(x)
		}
		return strconv.FormatFloat(x, 'g', 4, 64)
	case fmt.Stringer:
		return x.String()
	}
	return fmt.Sprint(v)
}

// Count writes a whole number with thousands separators: 8,388,608.
func Count(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return fmt.Sprint(v)
	}
	s := strconv.FormatFloat(math.Round(v), 'f', 0, 64)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// Percent writes a fraction as a percentage with up to three significant
// digits: 1 is "100%", 0.125 is "12.5%", 0.8889 is "88.9%".
func Percent(f float64) string {
	return strconv.FormatFloat(roundSig(100*f, 3), 'f', -1, 64) + "%"
}

// Ratio writes a number with up to three significant digits: 4.4196 is "4.42".
func Ratio(v float64) string {
	return strconv.FormatFloat(roundSig(v, 3), 'f', -1, 64)
}

func roundSig(v float64, digits int) float64 {
	if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return v
	}
	scale := math.Pow(10, float64(digits-1)-math.Floor(math.Log10(math.Abs(v))))
	return math.Round(v*scale) / scale
}

func fixed(v float64, decimals int) string {
	return strconv.FormatFloat(v, 'f', decimals, 64)
}

// String renders the table as aligned text: the caption, the header and
// rows, the notes.
func (t *Table) String() string {
	var b strings.Builder
	if t.Caption != "" {
		b.WriteString(t.Caption + "\n")
	}
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(t.Header, "\t"))
	for _, r := range t.Rows {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	tw.Flush()
	for _, n := range t.Notes {
		b.WriteString(n + "\n")
	}
	return b.String()
}

// HTML renders the table as an HTML fragment for a notebook.
func (t *Table) HTML() string {
	var b strings.Builder
	esc := html.EscapeString
	b.WriteString(`<div class="coalesce-table" style="margin:0.3em 0">`)
	if t.Caption != "" {
		fmt.Fprintf(&b, `<div style="margin:0 0 0.3em 0"><i>%s</i></div>`, esc(t.Caption))
	}
	b.WriteString(`<table style="border-collapse:collapse">`)
	b.WriteString(`<thead><tr>`)
	for i, h := range t.Header {
		fmt.Fprintf(&b, `<th style="%s;border-bottom:1px solid #888">%s</th>`, cellStyle(i), esc(h))
	}
	b.WriteString(`</tr></thead><tbody>`)
	for _, r := range t.Rows {
		b.WriteString(`<tr>`)
		for i, c := range r {
			style := cellStyle(i)
			if i > 0 && !numeric(c) {
				style = cellStyle(0) // words read from the left
			}
			fmt.Fprintf(&b, `<td style="%s">%s</td>`, style, esc(c))
		}
		b.WriteString(`</tr>`)
	}
	b.WriteString(`</tbody></table>`)
	for _, n := range t.Notes {
		fmt.Fprintf(&b, `<div style="margin:0.3em 0 0 0;color:#555;font-size:90%%">%s</div>`, esc(n))
	}
	b.WriteString(`</div>`)
	return b.String()
}

// cellStyle aligns the first column (names) left and the others (numbers) right.
func cellStyle(col int) string {
	if col == 0 {
		return "text-align:left;padding:0.15em 1em 0.15em 0"
	}
	return "text-align:right;padding:0.15em 0 0.15em 1.2em"
}

// numeric reports whether a cell holds a figure: it starts with a digit,
// a sign, "×" or is Missing.
func numeric(c string) bool {
	if c == Missing {
		return true
	}
	for _, r := range c {
		return r >= '0' && r <= '9' || r == '-' || r == '×'
	}
	return false
}

// Show displays the table: as HTML in a GoNB notebook, with its text as
// the plain-text alternative (what a text export or a headless check
// reads), then waits until GoNB has it; as text on Output elsewhere.
func (t *Table) Show() {
	if !gonbui.IsNotebook {
		fmt.Fprint(Output, t.String())
		return
	}
	gonbui.SendData(&protocol.DisplayData{Data: map[protocol.MIMEType]any{
		protocol.MIMETextHTML:  t.HTML(),
		protocol.MIMETextPlain: t.String(),
	}})
	gonbui.Sync()
}

// Case is one row of a comparison: a name and the launch.
type Case struct {
	Name string
	Spec spec.Spec
}

// Column is one figure a comparison shows, computed by the model from a
// prediction and read from a measurement. Either function may be nil (the
// figure has no such value) or answer false (not for this launch).
type Column struct {
	Name     string
	Model    func(sectors.Prediction) (float64, bool)
	Measured func(cuda.Result) (float64, bool)
	Format   func(float64) string
	// ModelText, when set, gives the model's value as words (which limit
	// set a time) and replaces Model.
	ModelText func(sectors.Prediction) (string, bool)
}

// hasModel and hasMeasured say which sides of c a table shows.
func (c Column) hasModel() bool    { return c.Model != nil || c.ModelText != nil }
func (c Column) hasMeasured() bool { return c.Measured != nil }

func metric(r cuda.Result, name string) (float64, bool) {
	v, ok := r.Metrics[name]
	return v, ok
}

func perRequest(r cuda.Result, sectors, requests string) (float64, bool) {
	s, ok1 := metric(r, sectors)
	q, ok2 := metric(r, requests)
	if !ok1 || !ok2 || q == 0 {
		return 0, false
	}
	return s / q, true
}

func copyBandwidth(s spec.Spec) (float64, bool) {
	d, err := devices.Lookup(s.Device)
	if err != nil || d.Time.CopyBandwidth <= 0 {
		return 0, false
	}
	return d.Time.CopyBandwidth, true
}

// The columns of the course. Sectors per request are those of ncu's
// l1tex__t_sectors over l1tex__t_requests; efficiency is the model's
// useful bytes over its fetched sector bytes (loads and stores), which no
// counter measures; useful bandwidth is spec.UsefulBytes over the time.
var (
	LdSectorsPerRequest = Column{
		Name: "ld sectors/request",
		Model: func(p sectors.Prediction) (float64, bool) {
			return p.LdSectorsPerRequest, p.Metrics[metrics.LdRequests] > 0
		},
		Measured: func(r cuda.Result) (float64, bool) {
			return perRequest(r, metrics.LdSectors, metrics.LdRequests)
		},
		Format: Ratio,
	}
	StSectorsPerRequest = Column{
		Name: "st sectors/request",
		Model: func(p sectors.Prediction) (float64, bool) {
			return p.StSectorsPerRequest, p.Metrics[metrics.StRequests] > 0
		},
		Measured: func(r cuda.Result) (float64, bool) {
			return perRequest(r, metrics.StSectors, metrics.StRequests)
		},
		Format: Ratio,
	}
	// UsefulBytesPerRequest is the bytes one warp instruction uses, on
	// average over loads and stores: 128 for 32 lanes of 4 bytes.
	UsefulBytesPerRequest = Column{
		Name: "useful bytes/request",
		Model: func(p sectors.Prediction) (float64, bool) {
			req := p.Metrics[metrics.LdRequests] + p.Metrics[metrics.StRequests]
			return float64(p.L1UsefulBytes) / req, req > 0
		},
		Format: Ratio,
	}
	Efficiency = Column{
		Name:   "efficiency (useful ÷ fetched)",
		Model:  func(p sectors.Prediction) (float64, bool) { return p.Efficiency, p.FetchedBytes > 0 },
		Format: Percent,
	}
	DRAMPerUseful = Column{
		Name:  "DRAM bytes per useful byte",
		Model: func(p sectors.Prediction) (float64, bool) { return p.DRAMBytesPerUsefulByte, p.UsefulBytes > 0 },
		Measured: func(r cuda.Result) (float64, bool) {
			rd, ok1 := metric(r, metrics.DRAMRead)
			wr, ok2 := metric(r, metrics.DRAMWrite)
			useful := r.Spec.UsefulBytes()
			return (rd + wr) / float64(useful), ok1 && ok2 && useful > 0
		},
		Format: func(v float64) string { return fixed(v, 2) },
	}
	UsefulGBps = Column{
		Name: "useful GB/s",
		Model: func(p sectors.Prediction) (float64, bool) {
			return float64(p.UsefulBytes) / p.TimeSeconds / 1e9, p.TimeSeconds > 0
		},
		Measured: func(r cuda.Result) (float64, bool) { return r.UsefulGBps, r.TimeMs > 0 },
		Format:   func(v float64) string { return fixed(v, 0) },
	}
	TimeMicroseconds = Column{
		Name:     "time (µs)",
		Model:    func(p sectors.Prediction) (float64, bool) { return p.TimeSeconds * 1e6, p.TimeSeconds > 0 },
		Measured: func(r cuda.Result) (float64, bool) { return r.TimeMs * 1e3, r.TimeMs > 0 },
		Format:   func(v float64) string { return fixed(v, 1) },
	}
	// OfMemcpy is useful bandwidth as a share of a device-to-device
	// cudaMemcpy: measured in the same run, modelled against the device
	// profile's copy bandwidth.
	OfMemcpy = Column{
		Name: "of cudaMemcpy",
		Model: func(p sectors.Prediction) (float64, bool) {
			bw, ok := copyBandwidth(p.Spec)
			return float64(p.UsefulBytes) / p.TimeSeconds / bw, ok && p.TimeSeconds > 0
		},
		Measured: func(r cuda.Result) (float64, bool) { return r.OfMemcpy, r.OfMemcpy > 0 },
		Format:   Percent,
	}
)

// Metric is the column of one ncu metric (lessons/metrics), as a count.
func Metric(name string) Column {
	return Column{
		Name: name,
		Model: func(p sectors.Prediction) (float64, bool) {
			v, ok := p.Metrics[name]
			return v, ok
		},
		Measured: func(r cuda.Result) (float64, bool) { return metric(r, name) },
		Format:   Count,
	}
}

// ModelTable predicts every case with the sector model and tabulates the
// model's value of each column.
func ModelTable(cases []Case, cols ...Column) (*Table, error) {
	preds, err := predict(cases)
	if err != nil {
		return nil, err
	}
	header := []string{"case"}
	for _, c := range cols {
		header = append(header, c.Name)
	}
	t := NewTable(header...)
	t.Caption = modelCaption(cases)
	for i, p := range preds {
		row := []string{cases[i].Name}
		for _, c := range cols {
			row = append(row, modelValue(c, p))
		}
		t.addRow(row)
	}
	return t, nil
}

// Compare predicts every case with the sector model and measures it
// (Measure: live, or recorded), and tabulates each column twice: the
// model's value and the measured one. The caption names both sources.
func Compare(cases []Case, cols ...Column) (*Table, error) {
	src, err := source()
	if err != nil {
		return nil, err
	}
	return src.Compare(cases, cols...)
}

// Compare is the package's Compare on this source.
func (src *Source) Compare(cases []Case, cols ...Column) (*Table, error) {
	specs := make([]spec.Spec, len(cases))
	for i, c := range cases {
		specs[i] = c.Spec
	}
	m, err := src.Measure(specs...)
	if err != nil {
		return nil, err
	}
	preds, err := predict(cases)
	if err != nil {
		return nil, err
	}
	// A figure with no measured side (no counter measures it) gets one
	// column, a figure with no model side likewise.
	header := []string{"case"}
	for _, c := range cols {
		if c.hasModel() {
			header = append(header, c.Name+", model")
		}
		if c.hasMeasured() {
			header = append(header, c.Name+", measured")
		}
	}
	t := NewTable(header...)
	t.Caption = modelCaption(cases) + " " + m.Caption()
	for i, p := range preds {
		row := []string{cases[i].Name}
		r, _ := m.Result(cases[i].Spec)
		for _, c := range cols {
			if c.hasModel() {
				row = append(row, modelValue(c, p))
			}
			if c.hasMeasured() {
				row = append(row, measuredValue(c, r))
			}
		}
		t.addRow(row)
	}
	return t, nil
}

func predict(cases []Case) ([]sectors.Prediction, error) {
	if len(cases) == 0 {
		return nil, fmt.Errorf("lab: no case to tabulate")
	}
	specs := make([]spec.Spec, len(cases))
	for i, c := range cases {
		specs[i] = c.Spec
	}
	preds, err := plots.Predict(specs...)
	if err != nil {
		return nil, fmt.Errorf("lab: %w", err)
	}
	return preds, nil
}

func modelValue(c Column, p sectors.Prediction) string {
	if c.ModelText != nil {
		if v, ok := c.ModelText(p); ok {
			return v
		}
		return Missing
	}
	if c.Model == nil {
		return Missing
	}
	v, ok := c.Model(p)
	if !ok || math.IsNaN(v) || math.IsInf(v, 0) {
		return Missing
	}
	return c.Format(v)
}

func measuredValue(c Column, r cuda.Result) string {
	if c.Measured == nil || r.Failed() {
		return Missing
	}
	v, ok := c.Measured(r)
	if !ok || math.IsNaN(v) || math.IsInf(v, 0) {
		return Missing
	}
	return c.Format(v)
}

// modelCaption names the model and the device(s) of the cases.
func modelCaption(cases []Case) string {
	var names []string
	for _, c := range cases {
		d, err := devices.Lookup(c.Spec.Device)
		name := c.Spec.Device
		if err == nil {
			name = d.GPU
		}
		if !contains(names, name) {
			names = append(names, name)
		}
	}
	return "Model: the sector model of the " + strings.Join(names, ", ") + "."
}

func contains(a []string, s string) bool {
	for _, x := range a {
		if x == s {
			return true
		}
	}
	return false
}

// Describe writes a launch in a few words, as tables name it:
// "strided_copy, stride 32, n 2^26".
func Describe(s spec.Spec) string { return s.Brief() }
