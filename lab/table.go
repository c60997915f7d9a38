package lab

import (
	"fmt"
	"html"
	"math"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/coalescing-course/coalesce/grader"
	"github.com/coalescing-course/coalesce/lessons/devices"
	"github.com/coalescing-course/coalesce/lessons/figures"
	"github.com/coalescing-course/coalesce/lessons/measure"
	"github.com/coalescing-course/coalesce/lessons/metrics"
	"github.com/coalescing-course/coalesce/lessons/sectors"
	"github.com/coalescing-course/coalesce/lessons/spec"
	"github.com/coalescing-course/coalesce/units"
)

// Missing is what a table shows where it has no value.
const Missing = "—"

// Table is a small table for a notebook: a caption above, a header row,
// rows of text, notes below. Build one with NewTable and AddRow, or with
// Compare, ModelTable, Versus or Counters.
//
// A table's cells are gated as they are added: a Value that tells the
// answer of a question the learner has not answered yet is stored as
// Hidden (see Check), so that nothing of a table, printed or shown,
// gives it away; Show says under the table what to answer first.
type Table struct {
	Caption string
	Header  []string
	Rows    [][]string
	Notes   []string

	d *display
}

// Value is a table cell that knows what it shows: its text, and the
// values (of figures of launches) it is made of. Compare and the other
// tables make their cells so; a cell may make its own with Modelled and
// MeasuredValue.
type Value struct {
	Text  string
	Tells []grader.Tell
}

// String returns the value's text.
func (v Value) String() string { return v.Text }

// Modelled is the model's value of figure f for the launch p, as a
// table cell: lab.NewTable(...).AddRow(name, lab.Modelled(p, figures.TimeSeconds)).
func Modelled(p sectors.Launch, f figures.Figure) Value {
	return FigureColumn(f).modelValue(p)
}

// MeasuredValue is the measured value of figure f for the launch l, as a
// table cell.
func MeasuredValue(l measure.Launch, f figures.Figure) Value {
	return FigureColumn(f).measuredValue(l)
}

// display returns the table's display, made on first use.
func (t *Table) display() *display {
	if t.d == nil {
		t.d = newDisplay()
	}
	return t.d
}

// NewTable returns an empty table with the given column names.
func NewTable(header ...string) *Table {
	return &Table{Header: header}
}

// AddRow appends a row; values are formatted with Format. A row shorter
// than the header is padded with Missing, a longer one is cut.
//
// A Value shows as Hidden while it tells an answer the learner owes; any
// other number is noted as one the table cannot vouch for, which the
// leak test of `make test` then reads by its column.
func (t *Table) AddRow(values ...any) *Table {
	d := t.display()
	row := make([]string, len(t.Header))
	for i := range row {
		if i >= len(values) {
			row[i] = Missing
			continue
		}
		switch v := values[i].(type) {
		case Value:
			row[i] = v.Text
			if !d.showAll(v.Tells) {
				row[i] = Hidden
			}
		default:
			row[i] = Format(v)
			if i > 0 && numeric(row[i]) && row[i] != Missing {
				d.untaggedCell(t.Header[i], row[i])
			}
		}
	}
	t.Rows = append(t.Rows, row)
	return t
}

// addRow appends a row: its name, then cells that know their values.
func (t *Table) addRow(name string, cells []Value) {
	row := []any{name}
	for _, c := range cells {
		row = append(row, c)
	}
	t.AddRow(row...)
}

// Format writes a table value: strings as they are, integers as counts
// (8,388,608), other numbers as ratios (4.42: units).
func Format(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case int:
		return Count(float64(x))
	case int64:
		return Count(float64(x))
	case float64:
		return Ratio(x)
	case fmt.Stringer:
		return x.String()
	}
	return fmt.Sprint(v)
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
	if c == Missing || c == Hidden {
		return true
	}
	for _, r := range c {
		return r >= '0' && r <= '9' || r == '-' || r == '×'
	}
	return false
}

// Show displays the table: as HTML in a GoNB notebook, with its text as
// the plain-text alternative (what a text export or a headless check
// reads); as text on Output elsewhere.
func (t *Table) Show() { t.display().emit(output{text: t.String(), html: t.HTML()}) }

// Case is one row of a comparison: a name and the launch.
type Case struct {
	Name string
	Spec spec.Spec
}

// OnDevices returns one case of s per device profile named, for a
// model table of what the launch would cost on each GPU (ModelTable):
// each case is s with its device set, and with that device's own L2
// fetch granularity where s had its device's default. A case's name is
// the GPU's, marked "(estimate)" when its profile waits for coalesce
// calibrate.
func OnDevices(s spec.Spec, names ...string) ([]Case, error) {
	own, err := devices.Lookup(s.Device)
	if err != nil {
		return nil, fmt.Errorf("lab: %w", err)
	}
	cases := make([]Case, 0, len(names))
	for _, name := range names {
		d, err := devices.Lookup(name)
		if err != nil {
			return nil, fmt.Errorf("lab: %w", err)
		}
		on := s
		on.Device = d.Name
		if s.L2Fetch == own.DefaultL2Fetch {
			on.L2Fetch = d.DefaultL2Fetch
		}
		label := d.GPU
		if len(d.Estimated) > 0 {
			label += " (estimate)"
		}
		cases = append(cases, Case{Name: label, Spec: on})
	}
	return cases, nil
}

// Column is one column of the course's tables: a figure of lessons/figures,
// shown as the model gives it, as the measurement gives it, or both; or a
// piece of the time model's working, which no counter measures.
type Column struct {
	Name string
	fig  figures.Figure
	// model and measured say which sides of fig the column shows.
	model, measured bool
	// working, when set, is the model's own value, in words: a piece of
	// its arithmetic no question asks for.
	working func(sectors.Launch) (string, bool)
}

// FigureColumn returns the column of a figure, both sides shown.
func FigureColumn(f figures.Figure) Column {
	return Column{Name: f.Label, fig: f, model: true, measured: true}
}

// MeasuredOnly returns c without its model side, for a figure the model
// is not built to estimate for the launches at hand.
func MeasuredOnly(c Column) Column {
	c.model, c.working = false, nil
	return c
}

// modelOnly returns c without its measured side.
func modelOnly(c Column) Column {
	c.measured = false
	return c
}

func (c Column) hasModel() bool    { return c.model || c.working != nil }
func (c Column) hasMeasured() bool { return c.measured }

// The columns of the course. Efficiency and useful bytes per request are
// the model's alone: the bytes the lanes use come from the addresses,
// which no counter reports.
var (
	LdSectorsPerRequest   = FigureColumn(figures.LdSectorsPerRequest)
	StSectorsPerRequest   = FigureColumn(figures.StSectorsPerRequest)
	UsefulBytesPerRequest = modelOnly(FigureColumn(figures.UsefulBytesPerRequest))
	Efficiency            = modelOnly(FigureColumn(figures.Efficiency))
	SectorBytesPerUseful  = FigureColumn(figures.SectorBytesPerUsefulByte)
	DRAMPerUseful         = FigureColumn(figures.DRAMBytesPerUsefulByte)
	DRAMReadPerUseful     = FigureColumn(figures.DRAMReadPerUsefulByte)
	DRAMWritePerUseful    = FigureColumn(figures.DRAMWritePerUsefulByte)
	UsefulGBps            = FigureColumn(figures.UsefulBandwidth)
	TimeMicroseconds      = FigureColumn(figures.TimeSeconds)
	// OfMemcpy is useful bandwidth as a share of a device-to-device
	// cudaMemcpy: measured in the same run, modelled against the device
	// profile's copy bandwidth.
	OfMemcpy = FigureColumn(figures.FractionOfMemcpy)
	// InFlightPerSM is the time model's count of the load bytes one SM
	// keeps in flight (sectors.TimeParts): resident warps times the loads
	// each has outstanding times the bytes each load request touches. It
	// is the model's side of Little's law; no counter measures it.
	InFlightPerSM = Column{Name: "load bytes in flight per SM", working: func(p sectors.Launch) (string, bool) {
		return Count(p.Time.InFlightPerSM), p.Time.InFlightPerSM > 0
	}}
	// TimeBound names the limit that sets the model's time for a launch
	// (sectors.TimeParts.Bound): "bandwidth" (DRAM bytes at the copy
	// bandwidth, sparse accesses at the DRAM time they occupy), "latency"
	// (too few bytes in flight to cover the latency), "L1 lines", "L2
	// stores", "shared banks" or "block starts".
	TimeBound = Column{Name: "time set by", working: func(p sectors.Launch) (string, bool) {
		return p.Time.Bound, p.Time.Bound != ""
	}}
)

// Metric is the column of one ncu metric (lessons/metrics), as a count.
func Metric(name string) Column { return FigureColumn(figures.Metric(name)) }

// cell is one value of a column before the column's scaler writes it: a
// number, or the words of the model's working, or nothing (Missing); and
// what it tells (grader.Tell), for the gate.
type cell struct {
	v     float64
	ok    bool
	text  string // the working's words, when the column has no figure
	mark  string // whose counters a measured value takes: borrowedMark
	tells []grader.Tell
}

func numberCell(v float64, err error) cell {
	return cell{v: v, ok: err == nil && !math.IsNaN(v) && !math.IsInf(v, 0)}
}

func (c Column) modelCell(p sectors.Launch) cell {
	if c.working != nil {
		if v, ok := c.working(p); ok {
			return cell{text: v}
		}
		return cell{}
	}
	v := figures.Model(p)
	x, err := c.fig.Of(v)
	out := numberCell(x, err)
	out.tells = figureTells(c.fig, v, grader.Model, x, err)
	return out
}

// modelValue is the column's model value of p alone, as a table cell.
func (c Column) modelValue(p sectors.Launch) Value {
	x := c.modelCell(p)
	s, ok := c.scaler([]cell{x})
	return write(s, ok, []cell{x})[0]
}

// figureTells is what a cell of figure f of the values v shows: nothing
// when it shows no value.
func figureTells(f figures.Figure, v figures.Values, j grader.Judge, x float64, err error) []grader.Tell {
	if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return []grader.Tell{{Spec: v.Spec, Figure: f.Name, Judge: j, Value: x, Counts: grader.CountsOf(v)}}
}

// measuredCell is the column's figure of l; the model's prediction of l
// is made only for the figures that need what the addresses fix.
func (c Column) measuredCell(l measure.Launch) cell {
	if l.Failed() {
		return cell{}
	}
	v := figures.Measured(l, nil)
	x, err := c.fig.Of(v)
	if err != nil && c.fig.Level == figures.L1 && l.Profiled() {
		if p, perr := sectors.Model(l.Spec); perr == nil {
			v = figures.Measured(l, &p)
			x, err = c.fig.Of(v)
		}
	}
	out := numberCell(x, err)
	out.mark = borrowedMark(c.fig.Borrowed(v), err)
	out.tells = figureTells(c.fig, v, grader.Measurement, x, err)
	return out
}

// measuredValue is the column's measured value of l alone, as a table
// cell.
func (c Column) measuredValue(l measure.Launch) Value {
	x := c.measuredCell(l)
	s, ok := c.scaler([]cell{x})
	return write(s, ok, []cell{x})[0]
}

// scaler returns the one scaler of a column's cells, of every side shown
// (units: one prefix for all, so that model and measurement
// compare at a glance); ok false for a column of the model's words.
func (c Column) scaler(sides ...[]cell) (units.Scaler, bool) {
	if c.working != nil {
		return units.Scaler{}, false
	}
	var vals []float64
	for _, side := range sides {
		for _, x := range side {
			if x.ok {
				vals = append(vals, x.v)
			}
		}
	}
	return c.fig.Unit.Scale(vals...), true
}

// header is the column's name, with its prefixed symbol (a time's µs)
// when its values are written bare.
func (c Column) header(s units.Scaler, ok bool) string {
	if !ok {
		return c.Name
	}
	return s.Header(c.Name)
}

// write writes a column's cells with its scaler, each with what it tells.
func write(s units.Scaler, ok bool, cells []cell) []Value {
	out := make([]Value, len(cells))
	for i, x := range cells {
		switch {
		case x.text != "":
			out[i] = Value{Text: x.text}
		case !x.ok || !ok:
			out[i] = Value{Text: Missing}
		default:
			out[i] = Value{Text: s.Cell(x.v) + x.mark, Tells: x.tells}
		}
	}
	return out
}

// borrowedMark is what a measured value computed from counters ncu did
// not read ends with, whose they are: " (model)", " (recorded)". The
// table's caption (the Set's Note) says why.
func borrowedMark(from string, err error) string {
	switch {
	case from == "" || err != nil:
		return ""
	case from == measure.CountersModel:
		return " (model)"
	}
	return " (recorded)"
}

// ModelTable predicts every case with the sector model and tabulates the
// model's value of each column.
func ModelTable(cases []Case, cols ...Column) (*Table, error) {
	preds, err := predict(cases)
	if err != nil {
		return nil, err
	}
	header := []string{"case"}
	columns := make([][]Value, len(cols))
	for j, c := range cols {
		cells := make([]cell, len(preds))
		for i, p := range preds {
			cells[i] = c.modelCell(p)
		}
		s, ok := c.scaler(cells)
		header = append(header, c.header(s, ok))
		columns[j] = write(s, ok, cells)
	}
	t := NewTable(header...)
	t.Caption = modelCaption(cases)
	for i := range preds {
		var row []Value
		for j := range cols {
			row = append(row, columns[j][i])
		}
		t.addRow(cases[i].Name, row)
	}
	return t, nil
}

// Compare predicts every case with the sector model and measures it
// (Measure: live, or recorded), and tabulates each column twice: the
// model's value and the measured one. The caption names both sources.
func Compare(cases []Case, cols ...Column) (*Table, error) {
	m, err := Measure(specsOf(cases)...)
	if err != nil {
		return nil, err
	}
	preds, err := predict(cases)
	if err != nil {
		return nil, err
	}
	// A figure with no measured side (no counter measures it) gets one
	// column, a figure with no model side likewise; the two sides of a
	// figure share one scaler.
	header := []string{"case"}
	var columns [][]Value
	for _, c := range cols {
		var model, measured []cell
		for i, p := range preds {
			if c.hasModel() {
				model = append(model, c.modelCell(p))
			}
			if c.hasMeasured() {
				l, _ := m.Lookup(cases[i].Spec)
				measured = append(measured, c.measuredCell(l))
			}
		}
		s, ok := c.scaler(model, measured)
		if c.hasModel() {
			header = append(header, c.header(s, ok)+", model")
			columns = append(columns, write(s, ok, model))
		}
		if c.hasMeasured() {
			header = append(header, c.header(s, ok)+", measured")
			columns = append(columns, write(s, ok, measured))
		}
	}
	t := NewTable(header...)
	t.Caption = modelCaption(cases) + " " + m.Caption()
	for i := range preds {
		var row []Value
		for _, col := range columns {
			row = append(row, col[i])
		}
		t.addRow(cases[i].Name, row)
	}
	return t, nil
}

func specsOf(cases []Case) []spec.Spec {
	specs := make([]spec.Spec, len(cases))
	for i, c := range cases {
		specs[i] = c.Spec
	}
	return specs
}

// predict runs the model over every case.
func predict(cases []Case) ([]sectors.Launch, error) {
	if len(cases) == 0 {
		return nil, fmt.Errorf("lab: no case to tabulate")
	}
	preds, err := modelAll(specsOf(cases)...)
	if err != nil {
		return nil, fmt.Errorf("lab: %w", err)
	}
	return preds, nil
}

// Model runs the sector model on each spec, several at a time
// (sectors.ModelAll), for a cell that draws the model's charts.
func Model(specs ...spec.Spec) ([]sectors.Launch, error) {
	return modelAll(specs...)
}

// modelAll is sectors.ModelAll with a status line while it runs.
func modelAll(specs ...spec.Spec) ([]sectors.Launch, error) {
	done := working(fmt.Sprintf("model: replaying every warp of %s", launchesText(specs)))
	defer done()
	return sectors.ModelAll(specs...)
}

// launchesText names launches for a status line: "strided_copy, stride
// 32, n 2^26" or "9 launches".
func launchesText(specs []spec.Spec) string {
	if len(specs) == 1 {
		return specs[0].Brief()
	}
	return fmt.Sprintf("%d launches", len(specs))
}

// modelCaption names the model and the device(s) of the cases.
func modelCaption(cases []Case) string {
	var names []string
	for _, c := range cases {
		name := c.Spec.Device
		if d, err := devices.Lookup(c.Spec.Device); err == nil {
			name = d.GPU
		}
		if !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	return "Model: the sector model of the " + strings.Join(names, ", ") + "."
}

// costs are the rows of Versus: what a launch spends per useful byte.
var costs = []figures.Figure{figures.SectorBytesPerUsefulByte, figures.DRAMBytesPerUsefulByte, figures.TimePerUsefulMB}

// Versus sets two launches side by side, per useful byte so that launches
// of different sizes compare fairly: the sector bytes the L1 fetches, the
// bytes DRAM moves and the time, each from the model and from the
// measurement, with b's cost as a multiple of a's. The time row's multiple
// is how many times slower b does the same useful work.
func Versus(a, b Case) (*Table, error) {
	m, err := Measure(a.Spec, b.Spec)
	if err != nil {
		return nil, err
	}
	preds, err := predict([]Case{a, b})
	if err != nil {
		return nil, err
	}
	la, _ := m.Lookup(a.Spec)
	lb, _ := m.Lookup(b.Spec)
	by := b.Name + " ÷ " + a.Name
	t := NewTable("per useful byte", "model: "+a.Name, "model: "+b.Name, "model: "+by,
		"measured: "+a.Name, "measured: "+b.Name, "measured: "+by)
	t.Caption = modelCaption([]Case{a, b}) + " " + m.Caption()
	for _, f := range costs {
		// A row is a figure: its four values share one scaler.
		va, vb := figures.Model(preds[0]), figures.Model(preds[1])
		ma, errMA := f.Of(va)
		mb, errMB := f.Of(vb)
		wa, wb := figures.Measured(la, &preds[0]), figures.Measured(lb, &preds[1])
		xa, errA := f.Of(wa)
		xb, errB := f.Of(wb)
		var vals []float64
		for _, x := range []struct {
			v   float64
			err error
		}{{ma, errMA}, {mb, errMB}, {xa, errA}, {xb, errB}} {
			if x.err == nil {
				vals = append(vals, x.v)
			}
		}
		s := f.Unit.Scale(vals...)
		row := pair(s, ma, mb, errMA == nil, errMB == nil, figureTells(f, va, grader.Model, ma, errMA), figureTells(f, vb, grader.Model, mb, errMB))
		cells := pair(s, xa, xb, errA == nil, errB == nil, figureTells(f, wa, grader.Measurement, xa, errA), figureTells(f, wb, grader.Measurement, xb, errB))
		cells[0].Text += borrowedMark(f.Borrowed(wa), errA)
		cells[1].Text += borrowedMark(f.Borrowed(wb), errB)
		if errA == nil && errB == nil {
			cells[2].Text += borrowedMark(either(f.Borrowed(wa), f.Borrowed(wb)), nil)
		}
		t.addRow(s.Header(f.Label), append(row, cells...))
	}
	t.Notes = append(t.Notes, fmt.Sprintf("%s: %s. %s: %s.", a.Name, a.Spec.Brief(), b.Name, b.Spec.Brief()))
	return t, nil
}

// either is where a ratio of two values takes its counters from, given
// each one's: the model's when either is, else a recording's when either
// is, else "" (ncu's).
func either(a, b string) string {
	switch {
	case a == measure.CountersModel || b == measure.CountersModel:
		return measure.CountersModel
	case a != "":
		return a
	}
	return b
}

// pair writes a and b with s and b÷a as a multiple (16×), with Missing
// for what is not known, each with what it tells (the multiple tells what
// both do). The three are one equation (units.Quotient): b and a keep the
// digits that make the printed multiple theirs.
func pair(s units.Scaler, a, b float64, okA, okB bool, tellsA, tellsB []grader.Tell) []Value {
	out := []Value{{Text: Missing}, {Text: Missing}, {Text: Missing}}
	ta, tb := units.Term{V: a, Unit: s.Unit(), In: s}, units.Term{V: b, Unit: s.Unit(), In: s}
	var sys units.System
	if okA && okB && a != 0 {
		out[2] = Value{Text: sys.Result(sys.Add(units.Quotient(units.Term{V: b / a, Unit: units.Multiple}, tb, ta))), Tells: append(slices.Clone(tellsA), tellsB...)}
	}
	if okA {
		out[0] = Value{Text: sys.Scaler(ta).Cell(a), Tells: tellsA}
	}
	if okB {
		out[1] = Value{Text: sys.Scaler(tb).Cell(b), Tells: tellsB}
	}
	return out
}

// Counters sets the model's counts beside the ncu counters of each case
// (Profile: live under ncu, else recorded), one row per case and metric of
// lessons/metrics, and says which the model has exactly (the L1's, fixed
// by the addresses) and which it estimates (DRAM's, decided by the L2).
func Counters(cases []Case) (*Table, error) {
	m, err := Profile(specsOf(cases)...)
	if err != nil {
		return nil, err
	}
	preds, err := predict(cases)
	if err != nil {
		return nil, err
	}
	t := NewTable("case", "metric", "model", "ncu", "model is")
	t.Caption = modelCaption(cases) + " " + m.Caption()
	for i, p := range preds {
		l, _ := m.Lookup(cases[i].Spec)
		mv, lv := figures.Model(p), figures.Measured(l, nil)
		for _, name := range metrics.All {
			kind := "an estimate"
			if metrics.Exact(name) {
				kind = "exact"
			}
			model, ncu := Value{Text: Missing}, Value{Text: Missing}
			if v, ok := p.Metrics[name]; ok {
				model = Value{Text: units.Count.Format(v), Tells: figureTells(figures.Metric(name), mv, grader.Model, v, nil)}
			}
			if v, ok := l.Metrics[name]; ok {
				ncu = Value{Text: units.Count.Format(v) + borrowedMark(l.Counters, nil), Tells: figureTells(figures.Metric(name), lv, grader.Measurement, v, nil)}
			}
			t.AddRow(cases[i].Name, name, model, ncu, kind)
		}
	}
	if cmd := m.Profiling(); cmd != "" {
		t.Notes = append(t.Notes, "Counters: "+cmd)
	}
	return t, nil
}

// Printf prints a line of a cell's own through the gate: arguments that
// are Values (Modelled, MeasuredValue) print as their text, or as Hidden
// while they tell an answer the learner owes, with the note under the
// line; other arguments print as fmt prints them. A cell that prints a
// launch's numbers prints them so:
//
//	p := lab.Must(lab.Model(s))[0]
//	lab.Printf("%s requests\n", lab.Modelled(p, figures.Metric(metrics.LdRequests)))
func Printf(format string, args ...any) {
	d := newDisplay()
	out := make([]any, len(args))
	for i, a := range args {
		out[i] = a
		if v, ok := a.(Value); ok {
			out[i] = v.Text
			if !d.showAll(v.Tells) {
				out[i] = Hidden
			}
		}
	}
	d.emit(output{text: fmt.Sprintf(format, out...)})
}
