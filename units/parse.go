package units

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// ErrSyntax is text that is not a number as this package writes one; a
// *SyntaxError wraps it.
var ErrSyntax = errors.New("not a number as the course writes one")

// SyntaxError says what text could not be read, and why.
type SyntaxError struct {
	Text string
	Msg  string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("units: %q: %s", clip(e.Text), e.Msg)
}

// Unwrap returns ErrSyntax.
func (e *SyntaxError) Unwrap() error { return ErrSyntax }

func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

// Value is a number read back by Parse.
type Value struct {
	// V is the value in the unit's base: 12.5% is 0.125, 197 µs is
	// 0.000197, 64 KiB is 65536.
	V float64
	// Unit is the unit the symbol names; a bare number is a Ratio (Count
	// and Points are written bare too), a bare B is Bytes.
	Unit Unit
	// Symbol is the symbol as written ("µs", "%"), "" for none.
	Symbol string
	// Decimals is where the last written digit stands: the digits after
	// the point, less the exponent (1.35e+21 is -19), so that
	// Round(V, Decimals) is the precision the text was written to.
	Decimals int
}

// symbol is what a symbol says of the number before it: its unit, and
// the power of ten (SI, %) or the factor (IEC) that takes it to the base.
type symbol struct {
	unit  Unit
	pow10 int
	bin   float64
}

// symbols maps every symbol Format writes (and "us", "μs" with a Greek mu,
// "x" for ×, which people type) to what it says.
var symbols = func() map[string]symbol {
	m := map[string]symbol{"%": {Percent, -2, 0}, "×": {Multiple, 0, 0}, "x": {Multiple, 0, 0},
		"us": {Seconds, -6, 0}, "μs": {Seconds, -6, 0}}
	for _, p := range siBare[1:] {
		m[p.symbol] = symbol{Ratio, p.pow, 0}
	}
	for _, u := range []Unit{Bytes, BinaryBytes, Bandwidth, Seconds} {
		for _, p := range u.prefixes() {
			if u == BinaryBytes {
				if p.pow > 0 { // a bare B is Bytes
					m[p.symbol] = symbol{u, 0, math.Pow(1024, float64(p.pow))}
				}
			} else {
				m[p.symbol] = symbol{u, p.pow, 0}
			}
		}
	}
	return m
}()

// Symbols returns every symbol Parse reads after a number: "%", "×",
// "µs", "GB/s", "MiB", ...
func Symbols() []string {
	out := make([]string, 0, len(symbols))
	for s := range symbols {
		out = append(out, s)
	}
	return out
}

// Parse reads a number as Format, Scaler.Format and Exact write it: an
// optional sign, digits with commas between groups of three (or none), a
// decimal part, an exponent, and a symbol after it, against the number or
// after one space (Format writes % and × against it, the others after a
// space): "8,388,608", "-0.125", "12.5%", "2×", "197
// µs", "1.36 TB/s", "64 KiB", "1e-07", "NaN". Anything else is a
// *SyntaxError that says what was wrong.
func Parse(s string) (Value, error) {
	num, sym := s, ""
	if special(s) {
		v, _, _ := parseNumber(s, 0)
		return Value{V: v, Unit: Ratio}, nil
	}
	if i := strings.IndexByte(s, ' '); i >= 0 {
		num, sym = s[:i], s[i+1:]
		if sym == "" || strings.ContainsRune(sym, ' ') {
			return Value{}, &SyntaxError{s, "want a number and at most one symbol after one space"}
		}
	} else if j := strings.IndexFunc(s, isSymbolStart); j > 0 {
		num, sym = s[:j], s[j:]
	}
	u, ok := symbols[sym]
	if !ok && sym != "" {
		return Value{}, &SyntaxError{s, fmt.Sprintf("unknown symbol %q: want %%, ×, k, M, G, T, B, kB, ..., KiB, ..., B/s, ..., s, ms, µs or ns", clip(sym))}
	}
	v, dec, err := parseNumber(num, u.pow10)
	if err != nil {
		return Value{}, &SyntaxError{s, err.Error()}
	}
	out := Value{V: v, Unit: Ratio, Symbol: sym, Decimals: dec}
	if sym == "" {
		return out, nil
	}
	out.Unit = u.unit
	if u.bin != 0 {
		out.V *= u.bin
	}
	return out, nil
}

// parseNumber reads a number without symbol, times 10^pow10 (moving the
// point, exactly): its value and its digits after the point.
func parseNumber(s string, pow10 int) (float64, int, error) {
	if special(s) {
		v, _ := strconv.ParseFloat(s, 64)
		return v, 0, nil
	}
	if s == "" {
		return 0, 0, errors.New("no number")
	}
	body := s
	if body[0] == '-' || body[0] == '+' {
		body = body[1:]
	}
	mant, exp, hasExp := strings.Cut(strings.ToLower(body), "e")
	intPart, frac, hasPoint := strings.Cut(mant, ".")
	if intPart == "" {
		return 0, 0, errors.New("no digit before the point")
	}
	if hasPoint && frac == "" {
		return 0, 0, errors.New("no digit after the point")
	}
	groups := strings.Split(intPart, ",")
	for i, g := range groups {
		if !digitsOnly(g) || g == "" {
			return 0, 0, fmt.Errorf("%q is not digits", clip(g))
		}
		if len(groups) > 1 && (i == 0 && len(g) > 3 || i > 0 && len(g) != 3) {
			return 0, 0, errors.New("commas stand between groups of three digits")
		}
	}
	if len(groups[0]) > 1 && groups[0][0] == '0' {
		return 0, 0, errors.New("a leading zero")
	}
	if !digitsOnly(frac) {
		return 0, 0, fmt.Errorf("%q after the point is not digits", clip(frac))
	}
	e := 0
	if hasExp {
		digits := strings.TrimLeft(exp, "+-")
		if len(exp)-len(digits) > 1 || digits == "" || !digitsOnly(digits) || len(digits) > 4 {
			return 0, 0, fmt.Errorf("exponent %q is not a signed whole number of at most 4 digits", clip(exp))
		}
		e, _ = strconv.Atoi(exp)
	}
	sign := ""
	if s[0] == '-' {
		sign = "-"
	}
	v, err := strconv.ParseFloat(sign+strings.ReplaceAll(mant, ",", "")+"e"+strconv.Itoa(e+pow10), 64)
	if err != nil {
		return 0, 0, errors.New("out of the range of a float64")
	}
	return v, len(frac) - e, nil
}

// special reports whether s is how Go writes NaN or an infinity.
func special(s string) bool { return s == "NaN" || s == "+Inf" || s == "-Inf" }

// isSymbolStart reports whether r starts a symbol written against a
// number: not a digit, sign, point, comma or exponent.
func isSymbolStart(r rune) bool {
	return !(r >= '0' && r <= '9' || r == '.' || r == ',' || r == '-' || r == '+' || r == 'e' || r == 'E')
}

func digitsOnly(s string) bool {
	for i := range len(s) {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
