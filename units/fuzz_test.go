package units

import (
	"math"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzParse feeds Parse any text: it must not panic, a text it accepts
// must give a unit and its value must read the same once written exactly,
// and a text it refuses is a *SyntaxError. The seeds (testdata/fuzz) are
// what the course writes and near misses.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"8,388,608", "12.5%", "2×", "197 µs", "1.36 TB/s", "64 KiB", "1e-07", "NaN", "1,23", "01", "-0.125", "5 sectors", "3.13 %", "1e400"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := Parse(s)
		if err != nil {
			if _, ok := err.(*SyntaxError); !ok {
				t.Fatalf("Parse(%q): error %T, want *SyntaxError", s, err)
			}
			return
		}
		if v.Unit == 0 {
			t.Fatalf("Parse(%q) = %+v: no unit", s, v)
		}
		if math.IsNaN(v.V) {
			return
		}
		back, err := Parse(Exact(v.V))
		if err != nil || back.V != v.V {
			t.Fatalf("Parse(%q) = %v, written exactly %q reads %v, %v", s, v.V, Exact(v.V), back.V, err)
		}
	})
}

// FuzzFormatParse writes any value in any unit and reads it back: the
// text must parse, to the same unit, within the rounding its digits
// allow; written exactly, to the same float64.
func FuzzFormatParse(f *testing.F) {
	f.Add(1.0/32, uint8(Percent))
	f.Add(197.04e-6, uint8(Seconds))
	f.Add(8388608.0, uint8(Count))
	f.Add(1.005, uint8(Ratio))
	f.Add(1020.0*1024, uint8(BinaryBytes))
	f.Add(-3.35e12, uint8(Bandwidth))
	f.Fuzz(func(t *testing.T, v float64, unit uint8) {
		u := Unit(unit%uint8(Points)) + 1
		text := u.Format(v)
		if !utf8.ValidString(text) {
			t.Fatalf("%v.Format(%v) = %q", u, v, text)
		}
		got, err := Parse(text)
		if err != nil {
			t.Fatalf("%v.Format(%v) = %q: %v", u, v, text, err)
		}
		// An exponent only where positional digits would run to dozens.
		if n := math.Abs(got.V / oneOf(got.Symbol)); strings.Contains(text, "e") && finite(v) && n >= 1e-6 && n < 1e21 {
			t.Fatalf("%v.Format(%v) = %q: an exponent for a number of %v", u, v, text, n)
		}
		if math.IsNaN(v) {
			if !math.IsNaN(got.V) {
				t.Fatalf("%q reads %v", text, got.V)
			}
			return
		}
		if u == Count || u == Ratio || u == Points {
			if got.Unit != Ratio {
				t.Fatalf("%q reads as %v", text, got.Unit)
			}
		} else if got.Unit != u && finite(v) && !(u == BinaryBytes && got.Symbol == "B" && got.Unit == Bytes) {
			t.Fatalf("%v.Format(%v) = %q reads as %v", u, v, text, got.Unit)
		}
		if !finite(v) {
			if got.V != v {
				t.Fatalf("%q reads %v, want %v", text, got.V, v)
			}
			return
		}
		// Rounding moves a value by at most half its last written digit
		// (trailing zeros dropped only make that bound looser).
		slack := 0.5 * math.Pow10(-got.Decimals) * oneOf(got.Symbol)
		if math.Abs(got.V-v) > slack+1e-9*math.Abs(v) {
			t.Fatalf("%v.Format(%v) = %q reads %v: off by more than %v", u, v, text, got.V, slack)
		}
		back, err := Parse(Exact(v))
		if err != nil || back.V != v {
			t.Fatalf("Exact(%v) = %q reads %v, %v", v, Exact(v), back.V, err)
		}
	})
}

// FuzzFindEquations feeds the equation reader any text: it must not
// panic, and an equation it finds must be part of the text.
func FuzzFindEquations(f *testing.F) {
	for _, s := range []string{
		"2,097,152 requests × 5 sectors per request = 10,485,759 sectors",
		"536,870,912 useful bytes ÷ 187.6 µs = 2.862 TB/s.",
		"32 × (12,582,912 + 12,582,912) = 805,306,368",
		"4.49 µs + 183 µs = 187.6 µs",
		"1 ÷ 0 = 1",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, e := range FindEquations(s) {
			if !strings.Contains(s, e.Text) {
				t.Fatalf("FindEquations(%q) found %q, not in the text", s, e.Text)
			}
		}
	})
}
