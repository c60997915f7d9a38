// Package csvsafe writes the gradebook's CSV files so that a spreadsheet
// shows what learners wrote instead of running it: a text cell that starts
// like a formula (=, +, -, @, a tab or a carriage return, after any spaces)
// gets a leading single quote and is quoted (OWASP's advice on CSV
// injection), and numbers are written bare, from the gradebook's float64s,
// never from learner text:
//
//	w := csvsafe.NewWriter(os.Stdout)
//	w.Header([]string{"learner", "points"})
//	w.Write([]csvsafe.Cell{csvsafe.TextCell(`=HYPERLINK("x")`), csvsafe.NumCell(-0.5)})
//	// learner,points
//	// "'=HYPERLINK(""x"")",-0.5
package csvsafe

import (
	"io"
	"math"
	"strconv"
	"strings"
)

// A Cell is one field of a CSV record: text (anything that may come from
// a learner, a path or a note) or a number the gradebook computed.
type Cell struct {
	text string
	num  bool
}

// TextCell is a text cell.
func TextCell(s string) Cell { return Cell{text: s} }

// NumCell is a number cell (Number).
func NumCell(v float64) Cell { return Cell{text: Number(v), num: true} }

// NumPtrCell is a number cell, empty for nil.
func NumPtrCell(p *float64) Cell {
	if p == nil {
		return Cell{num: true}
	}
	return NumCell(*p)
}

// IsFormula reports whether a spreadsheet would read s as a formula:
// it starts (after any spaces, which some spreadsheets skip) with one of
// the characters OWASP lists for CSV injection: = + - @, a tab or a
// carriage return. A number cell is never text, so -0.5 stays a number.
func IsFormula(s string) bool {
	t := strings.TrimLeft(s, " ")
	return t != "" && strings.ContainsRune("=+-@\t\r", rune(t[0]))
}

// Safe returns s as a CSV text cell holds it: a text that a
// spreadsheet would run as a formula gets a leading single quote (OWASP's
// advice for CSV injection), so that =HYPERLINK(...) is shown, not run.
func Safe(s string) string {
	if IsFormula(s) {
		return "'" + s
	}
	return s
}

// Writer writes RFC 4180 records in which text cells are neutralised
// (Safe) and quoted when escaped or when they need it, and number cells
// are written bare. The first write error stops it; Err returns it.
type Writer struct {
	w   io.Writer
	b   strings.Builder
	err error
}

// NewWriter returns a Writer to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Err returns the first error writing met, nil when there was none.
func (cw *Writer) Err() error { return cw.err }

// Header writes a record of text cells, the column names.
func (cw *Writer) Header(names []string) {
	cells := make([]Cell, len(names))
	for i, n := range names {
		cells[i] = TextCell(n)
	}
	cw.Write(cells)
}

// Write writes one record.
func (cw *Writer) Write(rec []Cell) {
	if cw.err != nil {
		return
	}
	cw.b.Reset()
	for i, c := range rec {
		if i > 0 {
			cw.b.WriteByte(',')
		}
		if c.num {
			cw.b.WriteString(c.text)
			continue
		}
		s, escaped := c.text, IsFormula(c.text)
		if escaped {
			s = "'" + s
		}
		if escaped || s == "" && len(rec) == 1 || strings.ContainsAny(s, ",\"\r\n") || strings.HasPrefix(s, " ") {
			cw.b.WriteByte('"')
			cw.b.WriteString(strings.ReplaceAll(s, `"`, `""`))
			cw.b.WriteByte('"')
		} else {
			cw.b.WriteString(s)
		}
	}
	cw.b.WriteByte('\n')
	_, cw.err = io.WriteString(cw.w, cw.b.String())
}

// Number prints a number for the CSV: the shortest decimal that reads
// back as the same float64 (no rounding: a prediction of 123456789 stays
// 123456789), without an exponent where a spreadsheet could misread it.
// NaN and the infinities, which no gradebook number is, are empty.
func Number(v float64) string {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return ""
	case v == 0:
		return "0" // and not -0
	case math.Abs(v) >= 1e-6 && math.Abs(v) < 1e21:
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}
