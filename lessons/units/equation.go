package units

import (
	"math"
	"strings"
)

// Op is an operation of an Equation.
type Op string

// The operations an Equation writes.
const (
	Times Op = "×"
	Over  Op = "÷"
)

// Term is one number of an equation and what it counts.
type Term struct {
	V    float64
	Unit Unit
	// Noun follows the number, agreeing with it (With): "requests",
	// "sectors per request"; "" for none.
	Noun string
}

// Equation is arithmetic the course prints: Terms[0] Ops[0] Terms[1] …
// = Result, worked left to right. Its String is true as printed: a reader
// who works out the printed terms and rounds as the result is printed gets
// the printed result.
type Equation struct {
	Terms  []Term
	Ops    []Op
	Result Term
}

// Product is the equation factors[0] × factors[1] × … = result.
func Product(result Term, factors ...Term) Equation {
	ops := make([]Op, max(len(factors)-1, 0))
	for i := range ops {
		ops[i] = Times
	}
	return Equation{Terms: factors, Ops: ops, Result: result}
}

// Quotient is the equation dividend ÷ divisor = result.
func Quotient(result, dividend, divisor Term) Equation {
	return Equation{Terms: []Term{dividend, divisor}, Ops: []Op{Over}, Result: result}
}

// Then returns e with one more operation on its terms, before the result.
func (e Equation) Then(op Op, t Term) Equation {
	e.Terms = append(append([]Term(nil), e.Terms...), t)
	e.Ops = append(append([]Op(nil), e.Ops...), op)
	return e
}

// String writes the equation: "2,097,152 requests × 4.9999995 sectors per
// request = 10,485,759 sectors". The result is written as Format writes
// it; each term that Format would round is given the significant digits
// (Sig or more) that make the printed terms work out to the printed
// result. When no digits do, the terms and the result disagree by more
// than rounding (a caller's mistake), and the equation is written with ≈
// rather than state a falsehood.
func (e Equation) String() string {
	terms, result, holds := e.Printed()
	var b strings.Builder
	for i, t := range terms {
		if i > 0 {
			b.WriteString(" " + string(e.Ops[i-1]) + " ")
		}
		b.WriteString(With(t, e.Terms[i].Noun))
	}
	if holds {
		b.WriteString(" = ")
	} else {
		b.WriteString(" ≈ ")
	}
	b.WriteString(With(result, e.Result.Noun))
	return b.String()
}

// Printed returns the numbers of the equation as String writes them (with
// their symbols, without their nouns), and whether the printed terms work
// out to the printed result.
func (e Equation) Printed() (terms []string, result string, holds bool) {
	rs := e.Result.Unit.Scale(e.Result.V)
	result = rs.Format(e.Result.V)
	if len(e.Terms) == 0 || len(e.Ops) != len(e.Terms)-1 {
		return nil, result, false
	}
	scalers := make([]Scaler, len(e.Terms))
	own := make([]bool, len(e.Terms)) // written exactly at the unit's own digits
	for i, t := range e.Terms {
		scalers[i] = t.Unit.Scale(t.V)
		v, err := Parse(scalers[i].Format(t.V))
		own[i] = err == nil && v.V == t.V
	}
	texts := make([]string, len(e.Terms))
	write := func(digits int) bool {
		for i, t := range e.Terms {
			s := scalers[i]
			switch {
			case own[i]:
			case digits >= 17:
				s = s.Precise()
			case digits > 0:
				s = s.Digits(digits)
			}
			texts[i] = s.Format(t.V)
		}
		return rs.Format(e.work(texts)) == result
	}
	if write(0) {
		return texts, result, true
	}
	for d := Sig + 1; d <= 17; d++ {
		if write(d) {
			return texts, result, true
		}
	}
	write(0)
	return texts, result, false
}

// work parses the printed terms back and works the equation out.
func (e Equation) work(texts []string) float64 {
	var acc float64
	for i, t := range texts {
		v, err := Parse(t)
		if err != nil {
			return math.NaN()
		}
		switch {
		case i == 0:
			acc = v.V
		case e.Ops[i-1] == Times:
			acc *= v.V
		case e.Ops[i-1] == Over:
			acc /= v.V
		default:
			return math.NaN()
		}
	}
	return acc
}
