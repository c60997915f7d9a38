// Package units owns how the course writes a number of a unit: a count of
// sectors, a ratio, a percentage, bytes, a bandwidth, a time, points. Every
// verdict, table, chart, caption, command line and gradebook cell writes
// its numbers here, so that one value never prints two ways: 1/32 is
// 3.13% in a verdict, in a table and on a chart alike.
//
// The rules, for a person reading:
//
//   - Digits: three significant digits, never fewer than the integer part
//     has (1234.5 is 1,235, not 1.23e+03), trailing zeros after the point
//     dropped (4, not 4.00; 12.5%, not 12.50%). A Count is whole, with all
//     its digits; Points keep up to two decimals.
//   - Rounding: half away from zero, on the shortest decimal that reads
//     back as the value (what %v prints): 3.125 is 3.13 and 1.005 is 1.01,
//     as a person rounding the written number would, where strconv rounds
//     the binary value (3.12 and 1.00).
//   - Thousands: a comma between every three digits of the integer part,
//     from 1,000 on: 8,388,608 and 1,234.5.
//   - Symbols: % and × are written against the number (12.5%, 2×); B,
//     B/s and s after a space, with an SI prefix that puts the number
//     between 1 and 1000 (197 µs, 1.36 TB/s, 268 MB), binary sizes with an
//     IEC prefix (50 MiB, 64 KiB). A noun after a number agrees with it
//     (With): 1 sector per request, 4 sectors per request.
//   - From 1e21 on, and under 1e-6, a number is written with an exponent
//     as Go writes one (1.23e+39, 1e-07), as Exact does: its digits would
//     run to dozens.
//   - NaN and the infinities are written as Go writes them, so that a bad
//     value shows rather than hides.
//
// A column of a table, or the ticks of an axis, is written with one Scaler
// (Unit.Scale over all its values): one prefix for all, chosen for the
// smallest value as x/perf's benchunit does, so that 980 µs never stands
// above 1.2 ms. Each value keeps the digits above, so a value reads the
// same alone and in its column.
//
// Machine-readable output (CSV, the gradebook's files) is written with
// Exact: every digit, no separator, no prefix, so that it reads back as
// the same float64. JSON is written by encoding/json, which does the same.
//
// Arithmetic the course prints (Equation) stays true as printed: a factor
// that rounds gets the digits it needs for the printed product to be the
// product of the printed factors, rounded as the product is printed.
//
//	units.Percent.Format(1.0 / 32)       // "3.13%"
//	units.Seconds.Format(197.04e-6)      // "197 µs"
//	units.Count.Format(8388608)          // "8,388,608"
//	units.Exact(123456789.5)             // "123456789.5"
//
// Parse reads back what Format and Exact write.
package units

import (
	"math"
	"strconv"
	"strings"
)

// Unit is what a number counts, and so how it is written.
type Unit int

// The units of the course's numbers.
const (
	// Count is a whole number of things (sectors, requests, bytes
	// counted one by one), every digit written: 8,388,608.
	Count Unit = iota + 1
	// Ratio is a quotient (sectors per request, bytes per byte), three
	// significant digits: 4.42, 0.125, 32.
	Ratio
	// Multiple is a ratio written as a multiple: 2×, 0.906×.
	Multiple
	// Percent is a fraction written as a percentage: 0.125 is 12.5%.
	Percent
	// Bytes is an amount of data with an SI prefix: 128 B, 268 MB.
	Bytes
	// BinaryBytes is a size of memory with an IEC prefix: 64 KiB, 2 GiB.
	BinaryBytes
	// Bandwidth is bytes a second: 258 GB/s, 4.8 TB/s.
	Bandwidth
	// Seconds is a time: 197 µs, 1.23 ms, 2.5 s.
	Seconds
	// Points are a grade: up to two decimals, 1, 0.5, 12.25.
	Points
)

// Sig is the significant digits the course writes a measured or modelled
// value with.
const Sig = 3

var names = map[Unit]string{Count: "count", Ratio: "ratio", Multiple: "multiple", Percent: "percent",
	Bytes: "bytes", BinaryBytes: "binary bytes", Bandwidth: "bandwidth", Seconds: "seconds", Points: "points"}

// String names the unit: "percent".
func (u Unit) String() string {
	if n, ok := names[u]; ok {
		return n
	}
	return "Unit(" + strconv.Itoa(int(u)) + ")"
}

// prefix is a scale of a unit: its symbol and its power of ten (SI) or of
// 1024 (IEC).
type prefix struct {
	symbol string
	pow    int
}

// The prefixes of each scaled unit, smallest first. A time stops at
// seconds: the course measures no launch of minutes.
var (
	siBytes  = []prefix{{"B", 0}, {"kB", 3}, {"MB", 6}, {"GB", 9}, {"TB", 12}, {"PB", 15}}
	iecBytes = []prefix{{"B", 0}, {"KiB", 1}, {"MiB", 2}, {"GiB", 3}, {"TiB", 4}}
	siRate   = []prefix{{"B/s", 0}, {"kB/s", 3}, {"MB/s", 6}, {"GB/s", 9}, {"TB/s", 12}}
	siTime   = []prefix{{"ns", -9}, {"µs", -6}, {"ms", -3}, {"s", 0}}
	// siBare are the prefixes of a compact column of bare numbers.
	siBare = []prefix{{"", 0}, {"k", 3}, {"M", 6}, {"G", 9}, {"T", 12}}
)

// prefixes returns the unit's prefixes, nil for a unit written bare or
// with a fixed symbol.
func (u Unit) prefixes() []prefix {
	switch u {
	case Bytes:
		return siBytes
	case BinaryBytes:
		return iecBytes
	case Bandwidth:
		return siRate
	case Seconds:
		return siTime
	}
	return nil
}

// Scaler writes the values of one unit at one prefix: a column's, an
// axis's, or one value's. Its zero value is not usable; get one from
// Unit.Scale.
type Scaler struct {
	unit Unit
	// at indexes the unit's prefixes.
	at int
	// sig is the significant digits; 0 is the unit's own (Sig, whole for a
	// Count, two decimals for Points), precise every digit.
	sig     int
	precise bool
	// compact is a Count or Ratio with an SI prefix letter (Compact).
	compact bool
}

// Format writes v alone, at the prefix that suits it:
// Percent.Format(0.125) is "12.5%", Seconds.Format(0.000197) is "197 µs".
func (u Unit) Format(v float64) string { return u.Scale(v).Format(v) }

// Scale returns the Scaler for a column of vals: the prefix that puts the
// smallest non-zero magnitude among them between 1 and 1000 (1024 for an
// IEC prefix), the largest prefix when that is above every one, the
// smallest when below. NaN and infinities are not looked at.
func (u Unit) Scale(vals ...float64) Scaler { return Scaler{unit: u}.fit(vals) }

// fit returns s at the prefix of its prefixes that Scale chooses for vals.
func (s Scaler) fit(vals []float64) Scaler {
	ps := s.prefs()
	for i, p := range ps {
		if p.pow == 0 {
			s.at = i
		}
	}
	least := math.Inf(1)
	for _, v := range vals {
		if a := math.Abs(v); a != 0 && a < least {
			least = a
		}
	}
	if ps == nil || math.IsInf(least, 0) {
		return s
	}
	s.at = 0
	for i := range ps {
		// The prefix fits when the value, rounded as it will be
		// written, is at least 1 of it: 999.6 B is written 1 kB.
		if s.withPrefix(i).roundsToAtLeastOne(least) {
			s.at = i
		}
	}
	return s
}

func (s Scaler) withPrefix(i int) Scaler { s.at = i; return s }

// roundsToAtLeastOne reports whether v at the scaler's prefix is written
// as 1 or more.
func (s Scaler) roundsToAtLeastOne(v float64) bool {
	d := s.scaled(v)
	d = d.round(s.decimals(d))
	return d.atLeastOne()
}

// Compact returns the scaler of a column too narrow for every digit of
// its counts or ratios: the SI prefix letter (k, M, G, T) chosen as Scale
// chooses a prefix, written against the number, three significant digits
// (8.39M, 32.8k); for another unit, Scale's. benchunit writes a
// benchmark's counts so.
func (u Unit) Compact(vals ...float64) Scaler {
	if u == Count || u == Ratio {
		return Scaler{unit: u, compact: true}.fit(vals)
	}
	return u.Scale(vals...)
}

// Digits returns s writing n significant digits instead of its unit's
// own (never fewer than the integer part has), for a number that must
// show more of itself: a factor of an Equation, a value beside a limit.
func (s Scaler) Digits(n int) Scaler {
	s.sig, s.precise = max(n, 1), false
	return s
}

// Precise returns s writing every digit of a value (the shortest decimal
// that reads back as it), with separators and prefix: a learner's
// prediction echoed as written, an answer graded exactly.
func (s Scaler) Precise() Scaler {
	s.precise = true
	return s
}

// Unit returns the scaler's unit.
func (s Scaler) Unit() Unit { return s.unit }

// Symbol returns what follows the number: "%", "×", "µs", "GB/s", "MiB";
// "" for a Count, Ratio or Points. A table's header names it once for its
// column (Number then writes the values).
func (s Scaler) Symbol() string {
	switch s.unit {
	case Percent:
		return "%"
	case Multiple:
		return "×"
	}
	if ps := s.prefs(); ps != nil {
		return ps[s.at].symbol
	}
	return ""
}

// prefs returns the scaler's prefixes.
func (s Scaler) prefs() []prefix {
	if s.compact {
		return siBare
	}
	return s.unit.prefixes()
}

// Prefixed reports whether the scaler's unit takes a prefix (bytes, a
// bandwidth, a time): a column of it names the prefixed symbol in its
// header and writes bare numbers (Header, Cell).
func (s Scaler) Prefixed() bool { return s.unit.prefixes() != nil }

// Header writes a column's header for its label: "time (µs)" for a
// prefixed unit, the label alone for the others, whose cells carry their
// symbol ("12.5%", "2×").
func (s Scaler) Header(label string) string {
	if s.Prefixed() {
		return label + " (" + s.Symbol() + ")"
	}
	return label
}

// Cell writes v in a column headed by Header: the bare number for a
// prefixed unit ("197"), the number and its symbol for the others.
func (s Scaler) Cell(v float64) string {
	if s.Prefixed() {
		return s.Number(v)
	}
	return s.Format(v)
}

// Format writes v with its symbol: "12.5%", "2×", "197 µs".
func (s Scaler) Format(v float64) string {
	n := s.Number(v)
	sym := s.Symbol()
	switch {
	case sym == "" || !finite(v):
		return n
	case s.unit == Percent || s.unit == Multiple || s.compact:
		return n + sym
	}
	return n + " " + sym
}

// Number writes v without its symbol, at the scaler's prefix: for a
// column whose header names the symbol.
func (s Scaler) Number(v float64) string {
	if !finite(v) {
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	d := s.scaled(v)
	if d.huge() {
		// Beyond 1e21 or under 1e-6 (where Exact writes an exponent too),
		// positional digits would run to dozens: the significant digits
		// and an exponent, 1.23e+39.
		if !s.precise {
			d = d.round(max(s.sig, Sig) - d.exp)
		}
		return d.exponent()
	}
	if !s.precise {
		d = d.round(s.decimals(d))
	}
	return d.text(true)
}

// decimals returns how many digits after the point d is rounded to.
func (s Scaler) decimals(d decimal) int {
	switch {
	case s.sig > 0:
		return max(0, s.sig-d.exp)
	case s.unit == Count && !s.compact:
		return 0
	case s.unit == Points:
		return 2
	}
	return max(0, Sig-d.exp)
}

// scaled returns v in the scaler's unit and prefix, as a decimal: a
// power of ten moves the point, exactly; a power of 1024 divides.
func (s Scaler) scaled(v float64) decimal {
	if s.unit == Percent {
		return decimalOf(v).shift(2)
	}
	ps := s.prefs()
	if ps == nil {
		return decimalOf(v)
	}
	p := ps[s.at]
	if s.unit == BinaryBytes {
		return decimalOf(v / math.Pow(1024, float64(p.pow)))
	}
	return decimalOf(v).shift(-p.pow)
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// Exact writes v for a program to read: the shortest decimal that reads
// back as the same float64, no separator, no prefix, no symbol, and no
// exponent from 1e-6 to 1e21, where a spreadsheet would misread one.
// 123456789.5 stays 123456789.5; -0 is 0; NaN and the infinities are
// written as Go writes them ("NaN", "+Inf").
func Exact(v float64) string {
	a := math.Abs(v)
	switch {
	case !finite(v):
		return strconv.FormatFloat(v, 'g', -1, 64)
	case v == 0:
		return "0"
	case a >= 1e-6 && a < 1e21:
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// AsWritten writes a number a person wrote (a learner's prediction,
// echoed back) with every digit it has and thousands separators:
// 8,388,608, 16.67, 0.3333333333333333.
func AsWritten(v float64) string { return Ratio.Scale(v).Precise().Format(v) }

// Round rounds v to the given decimals by the course's rule, half away
// from zero on its shortest decimal: Round(3.125, 2) is 3.13. A check that
// a written number states a printed one rounds with it.
func Round(v float64, decimals int) float64 {
	if !finite(v) {
		return v
	}
	r, _ := strconv.ParseFloat(decimalOf(v).round(decimals).text(false), 64)
	return r
}

// Apart returns a and b written with one scaler, with as many significant
// digits as they need (Sig at least) to print differently when they
// differ: a size beside the limit it is over, a count beside a minimum.
func Apart(u Unit, a, b float64) (string, string) {
	s := u.Scale(a, b)
	for n := Sig; n <= 17; n++ {
		d := s.Digits(n)
		x, y := d.Format(a), d.Format(b)
		if x != y || a == b {
			return x, y
		}
	}
	p := s.Precise()
	return p.Format(a), p.Format(b)
}

// With writes a number and the noun it counts, the noun agreeing with the
// number as written: With("1", "sectors per request") is "1 sector per
// request", With("4", "sectors per request") "4 sectors per request". The
// noun's head (the word before "per", "of" or "in", else the last) is
// made singular for 1 and -1; a noun starting with "times" is left as it
// is.
func With(number, noun string) string {
	if noun == "" {
		return number
	}
	ws := strings.Split(noun, " ")
	if (number != "1" && number != "-1") || ws[0] == "times" {
		return number + " " + noun
	}
	head := len(ws) - 1
	for i, w := range ws {
		if i > 0 && (w == "per" || w == "of" || w == "in") {
			head = i - 1
			break
		}
	}
	ws[head] = singular(ws[head])
	return number + " " + strings.Join(ws, " ")
}

// singular returns the singular of a plural English noun the course uses.
func singular(w string) string {
	for _, end := range []string{"ses", "xes", "ches", "shes"} {
		if strings.HasSuffix(w, end) {
			return strings.TrimSuffix(w, "es")
		}
	}
	if strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && strings.Trim(w, "abcdefghijklmnopqrstuvwxyz") == "" {
		return strings.TrimSuffix(w, "s")
	}
	return w
}
