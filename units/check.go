package units

import (
	"math"
	"regexp"
	"strings"
)

// Found is an equation found written in a text.
type Found struct {
	// Text is the equation as written, nouns and all.
	Text string
	// Worked is its terms worked out, in the result's base unit.
	Worked float64
	// Holds is whether Worked, rounded to the decimals the result is
	// written with, is the result.
	Holds bool
}

// The equations FindEquations reads: numbers as this package writes them,
// each with its symbol and a noun of words, joined by " × ", " ÷ " or
// " + ", then " = " and the result. A number in parentheses or after
// other words ("32 fetch blocks of 64 bytes") starts no term.
var (
	numberRE  = `-?\d{1,3}(?:,\d{3})+(?:\.\d+)?|-?\d+(?:\.\d+)?`
	symbolRE  = `%|×|[kMGTP]?B/s|[KMGT]iB|[kMGTP]?B|[mµμn]?s\b`
	termRE    = `(?:` + numberRE + `)(?: ?(?:` + symbolRE + `))?(?: [A-Za-z][A-Za-z'/-]*(?: [A-Za-z][A-Za-z'/-]*)*)?`
	equationR = regexp.MustCompile(`(?:^|[^\d.,])(` + termRE + `(?: (?:×|÷|\+) ` + termRE + `)+ = ` + `(?:` + numberRE + `)(?: ?(?:` + symbolRE + `))?)`)
	opRE      = regexp.MustCompile(` (×|÷|\+) `)
	leadRE    = regexp.MustCompile(`^(` + numberRE + `)(?: ?(` + symbolRE + `))?`)
)

// FindEquations returns the equations written in text ("2,097,152
// requests × 4.9999995 sectors per request = 10,485,759 sectors") and
// whether each holds as printed: its terms, read back and worked out left
// to right, round to its result at the decimals the result is written
// with. It is the check a reader makes, for tests and the notebooks'
// numbers check to run over what the course prints.
func FindEquations(text string) []Found {
	var out []Found
	for _, line := range strings.Split(text, "\n") {
		for _, m := range equationR.FindAllStringSubmatch(line, -1) {
			out = append(out, check(m[1]))
		}
	}
	return out
}

func check(eq string) Found {
	f := Found{Text: eq}
	lhs, rhs, _ := strings.Cut(eq, " = ")
	ops := opRE.FindAllStringSubmatch(lhs, -1)
	terms := opRE.Split(lhs, -1)
	acc := math.NaN()
	for i, t := range terms {
		v, ok := lead(t)
		if !ok {
			return f
		}
		switch {
		case i == 0:
			acc = v.V
		case ops[i-1][1] == "×":
			acc *= v.V
		case ops[i-1][1] == "÷":
			acc /= v.V
		default:
			acc += v.V
		}
	}
	r, ok := lead(rhs)
	if !ok {
		return f
	}
	f.Worked = acc
	one := oneOf(r.Symbol)
	f.Holds = Round(acc/one, r.Decimals) == Round(r.V/one, r.Decimals)
	return f
}

// lead reads the number and symbol a term starts with.
func lead(t string) (Value, bool) {
	m := leadRE.FindStringSubmatch(t)
	if m == nil {
		return Value{}, false
	}
	text := m[1]
	if m[2] != "" {
		text += " " + m[2]
	}
	v, err := Parse(text)
	return v, err == nil
}

// oneOf returns what one of a symbol is in its base unit: 1e-6 for "µs",
// 0.01 for "%", 1 for none.
func oneOf(symbol string) float64 {
	if s, ok := symbols[symbol]; ok {
		if s.bin != 0 {
			return s.bin
		}
		return math.Pow10(s.pow10)
	}
	return 1
}
