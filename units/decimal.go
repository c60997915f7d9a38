package units

import (
	"math"
	"strconv"
	"strings"
)

// decimal is a finite number as the digits a person reads: 0.d₁d₂d₃… ×
// 10^exp, digits without leading or trailing zeros (none at all for 0).
// Rounding and moving the point work on these digits, so that a value
// rounds as it is written, not as its binary fraction lies.
type decimal struct {
	neg    bool
	digits []byte
	exp    int
}

// decimalOf returns the shortest decimal that reads back as v (finite).
func decimalOf(v float64) decimal {
	if v == 0 {
		return decimal{}
	}
	s := strconv.FormatFloat(math.Abs(v), 'e', -1, 64) // d.ddde±XX
	mant, e, _ := strings.Cut(s, "e")
	exp, _ := strconv.Atoi(e)
	digits := []byte(strings.Replace(mant, ".", "", 1))
	return decimal{neg: v < 0, digits: digits, exp: exp + 1}.trim()
}

// trim drops trailing zero digits; a number with no digit is 0.
func (d decimal) trim() decimal {
	for len(d.digits) > 0 && d.digits[len(d.digits)-1] == '0' {
		d.digits = d.digits[:len(d.digits)-1]
	}
	if len(d.digits) == 0 {
		return decimal{}
	}
	return d
}

// shift multiplies d by 10^k.
func (d decimal) shift(k int) decimal {
	if len(d.digits) > 0 {
		d.exp += k
	}
	return d
}

// round rounds d to the given digits after the point, half away from
// zero: of the digits cut off, a first of 5 or more rounds up.
func (d decimal) round(decimals int) decimal {
	keep := d.exp + decimals // digits kept
	if keep >= len(d.digits) {
		return d
	}
	if keep < 0 {
		return decimal{}
	}
	up := d.digits[keep] >= '5'
	out := decimal{neg: d.neg, digits: append([]byte(nil), d.digits[:keep]...), exp: d.exp}
	if up {
		i := keep - 1
		for ; i >= 0 && out.digits[i] == '9'; i-- {
			out.digits[i] = '0'
		}
		if i >= 0 {
			out.digits[i]++
		} else {
			out.digits = append([]byte{'1'}, out.digits...)
			out.exp++
		}
	}
	return out.trim()
}

// atLeastOne reports whether |d| >= 1.
func (d decimal) atLeastOne() bool { return len(d.digits) > 0 && d.exp >= 1 }

// text writes d in positional notation, the integer part in groups of
// three when group is set: "-1,234.5", "0.0315", "0".
func (d decimal) text(group bool) string {
	if len(d.digits) == 0 {
		return "0"
	}
	var intPart, frac string
	switch {
	case d.exp <= 0:
		intPart, frac = "0", strings.Repeat("0", -d.exp)+string(d.digits)
	case d.exp >= len(d.digits):
		intPart = string(d.digits) + strings.Repeat("0", d.exp-len(d.digits))
	default:
		intPart, frac = string(d.digits[:d.exp]), string(d.digits[d.exp:])
	}
	var b strings.Builder
	if d.neg {
		b.WriteByte('-')
	}
	for i := range len(intPart) {
		if group && i > 0 && (len(intPart)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteByte(intPart[i])
	}
	if frac != "" {
		b.WriteByte('.')
		b.WriteString(frac)
	}
	return b.String()
}

// huge reports whether d is written with an exponent: |d| >= 1e21, or
// 0 < |d| < 1e-6.
func (d decimal) huge() bool {
	return len(d.digits) > 0 && (d.exp > 21 || d.exp < -5)
}

// exponent writes d as Go's 'e' format does, in its digits: "-1.23e+39",
// "1e-07".
func (d decimal) exponent() string {
	if len(d.digits) == 0 {
		return "0"
	}
	var b strings.Builder
	if d.neg {
		b.WriteByte('-')
	}
	b.WriteByte(d.digits[0])
	if len(d.digits) > 1 {
		b.WriteByte('.')
		b.Write(d.digits[1:])
	}
	e := d.exp - 1
	sign := byte('+')
	if e < 0 {
		sign, e = '-', -e
	}
	b.WriteByte('e')
	b.WriteByte(sign)
	if e < 10 {
		b.WriteByte('0')
	}
	b.WriteString(strconv.Itoa(e))
	return b.String()
}
