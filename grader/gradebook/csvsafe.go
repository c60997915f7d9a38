package gradebook

import (
	"io"
	"math"
	"strings"

	"github.com/coalescing-course/coalesce/lessons/units"
)

// A cell is one field of a CSV record: text (anything that may come from a
// learner, a path or a note) or a number the gradebook computed.
type cell struct {
	text string
	num  bool
}

// txt is a text cell; num and numPtr are number cells.
func txt(s string) cell { return cell{text: s} }

func num(v float64) cell { return cell{text: csvNum(v), num: true} }

func numPtr(p *float64) cell {
	if p == nil {
		return cell{num: true}
	}
	return num(*p)
}

// formulaStart reports whether a spreadsheet would read s as a formula:
// it starts (after any spaces, which some spreadsheets skip) with one of
// the characters OWASP lists for CSV injection: = + - @, a tab or a
// carriage return. A number cell is never text, so -0.5 stays a number.
func formulaStart(s string) bool {
	t := strings.TrimLeft(s, " ")
	return t != "" && strings.ContainsRune("=+-@\t\r", rune(t[0]))
}

// SafeText returns s as a CSV text cell holds it: a text that a
// spreadsheet would run as a formula gets a leading single quote (OWASP's
// advice for CSV injection), so that =HYPERLINK(...) is shown, not run.
func SafeText(s string) string {
	if formulaStart(s) {
		return "'" + s
	}
	return s
}

// csvWriter writes RFC 4180 records in which text cells are neutralised
// (SafeText) and quoted when escaped or when they need it, and number
// cells are written bare.
type csvWriter struct {
	w   io.Writer
	b   strings.Builder
	err error
}

func (cw *csvWriter) header(names []string) {
	cells := make([]cell, len(names))
	for i, n := range names {
		cells[i] = txt(n)
	}
	cw.write(cells)
}

func (cw *csvWriter) write(rec []cell) {
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
		s, escaped := c.text, formulaStart(c.text)
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

// csvNum writes a number for the CSV as units.Exact does (no rounding: a
// prediction of 123456789 stays 123456789, no exponent a spreadsheet
// could misread); NaN and the infinities, which no gradebook number is,
// are an empty cell.
func csvNum(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return ""
	}
	return units.Exact(v)
}
