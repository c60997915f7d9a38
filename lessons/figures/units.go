package figures

import (
	"math"
	"strconv"
	"strings"
)

// Unit is how a figure's values are scaled and written: the one place the
// course formats a count, a percentage or a bandwidth.
type Unit int

// The units of the course's figures.
const (
	// Count is a whole number with thousands separators: 8,388,608.
	Count Unit = iota + 1
	// Ratio has up to three significant digits: 4.42, 0.125, 32.
	Ratio
	// Percent is a fraction as a percentage, three significant digits:
	// 0.125 is 12.5%.
	Percent
	// Fixed2 has two decimals: 8.00.
	Fixed2
	// GBps is bytes per second written in GB/s (10^9 bytes), whole: 2725.
	GBps
	// Microseconds is seconds written in µs with one decimal: 197.0.
	Microseconds
)

// Format writes v in the unit. NaN and infinities are written as Go
// writes them, so that a bad value shows rather than hides.
func (u Unit) Format(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	switch u {
	case Count:
		return FormatCount(v)
	case Percent:
		return FormatPercent(v)
	case Fixed2:
		return strconv.FormatFloat(v, 'f', 2, 64)
	case GBps:
		return strconv.FormatFloat(v/1e9, 'f', 0, 64)
	case Microseconds:
		return strconv.FormatFloat(v*1e6, 'f', 1, 64)
	}
	return FormatRatio(v)
}

// FormatCount writes a whole number with thousands separators: 8,388,608.
func FormatCount(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	s := strconv.FormatFloat(math.Round(v), 'f', 0, 64)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// FormatPercent writes a fraction as a percentage with up to three
// significant digits: 1 is "100%", 0.125 is "12.5%", 0.8889 is "88.9%".
func FormatPercent(f float64) string {
	return strconv.FormatFloat(roundSig(100*f, 3), 'f', -1, 64) + "%"
}

// FormatRatio writes a number with up to three significant digits: 4.4196
// is "4.42".
func FormatRatio(v float64) string {
	return strconv.FormatFloat(roundSig(v, 3), 'f', -1, 64)
}

func roundSig(v float64, digits int) float64 {
	if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return v
	}
	scale := math.Pow(10, float64(digits-1)-math.Floor(math.Log10(math.Abs(v))))
	return math.Round(v*scale) / scale
}
