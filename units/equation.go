package units

import "strings"

// Op is an operation of an Equation.
type Op string

// The operations an Equation writes.
const (
	Times Op = "×"
	Over  Op = "÷"
	Plus  Op = "+"
)

// Term is one number of an equation and what it counts.
type Term struct {
	V    float64
	Unit Unit
	// Noun follows the number, agreeing with it (With): "requests",
	// "sectors per request"; "" for none.
	Noun string
	// In is the scaler the number is written with: its column's, whose
	// prefix it keeps (a time in a row of ns); the zero Scaler is the
	// one Format would choose for V alone.
	In Scaler
}

// scaler returns the scaler t is written with at its unit's own digits.
func (t Term) scaler() Scaler {
	if t.In.unit == t.Unit && t.Unit != 0 {
		return Scaler{unit: t.In.unit, at: t.In.at, compact: t.In.compact}
	}
	return t.Unit.Scale(t.V)
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
	var sys System
	return sys.String(sys.Add(e))
}

// Printed returns the numbers of the equation as String writes them (with
// their symbols, without their nouns), and whether the printed terms work
// out to the printed result.
func (e Equation) Printed() (terms []string, result string, holds bool) {
	var sys System
	i := sys.Add(e)
	return sys.Terms(i), sys.Result(i), sys.Holds(i)
}

// System is equations that share numbers: a sentence that states a time
// and, further on, the bandwidth it gives; a ratio of two values listed
// above it. Every number is written one way in all of them, with the
// digits that make each equation hold as printed: terms of one value and
// unit are one number, whatever their nouns. Its zero value is empty and
// ready.
type System struct {
	terms  []Term // V and Unit
	digits []int  // per number: 0 its unit's own, 17 every digit
	eqs    []sysEq
	solved bool
}

type sysEq struct {
	terms      []int
	nouns      []string
	ops        []Op
	result     int
	resultNoun string
	wrong      bool // no digits of its terms make it hold
}

// Add adds an equation, its numbers shared with those of the equations
// already added, and returns its index.
func (s *System) Add(e Equation) int {
	q := sysEq{ops: e.Ops, result: s.ref(e.Result), resultNoun: e.Result.Noun}
	for _, t := range e.Terms {
		q.terms = append(q.terms, s.ref(t))
		q.nouns = append(q.nouns, t.Noun)
	}
	if len(q.terms) == 0 || len(q.ops) != len(q.terms)-1 {
		q.wrong = true
	}
	s.eqs = append(s.eqs, q)
	s.solved = false
	return len(s.eqs) - 1
}

// ref returns the index of t among the system's numbers, adding it.
func (s *System) ref(t Term) int {
	for i, u := range s.terms {
		if u.V == t.V && u.Unit == t.Unit && u.scaler() == t.scaler() {
			return i
		}
	}
	s.terms = append(s.terms, Term{V: t.V, Unit: t.Unit, In: t.scaler()})
	s.digits = append(s.digits, 0)
	return len(s.terms) - 1
}

// Text returns how t is written in the system: its number, with its
// symbol, without its noun. A term of no equation is written as Format
// (or its In scaler) writes it.
func (s *System) Text(t Term) string {
	return s.Scaler(t).Format(t.V)
}

// Scaler returns the scaler t is written with in the system, with the
// digits its equations need: for a column's cell (Scaler.Cell), where
// the header names the symbol.
func (s *System) Scaler(t Term) Scaler {
	s.Solve()
	for i, u := range s.terms {
		if u.V == t.V && u.Unit == t.Unit && u.scaler() == t.scaler() {
			return s.scaler(i)
		}
	}
	return t.scaler()
}

// Terms returns the printed terms of equation i.
func (s *System) Terms(i int) []string {
	s.Solve()
	out := make([]string, len(s.eqs[i].terms))
	for k, t := range s.eqs[i].terms {
		out[k] = s.text(t)
	}
	return out
}

// Result returns the printed result of equation i.
func (s *System) Result(i int) string {
	s.Solve()
	return s.text(s.eqs[i].result)
}

// Holds reports whether equation i holds as printed.
func (s *System) Holds(i int) bool {
	s.Solve()
	return !s.eqs[i].wrong && s.holds(s.eqs[i])
}

// String writes equation i with its nouns, = where it holds as printed,
// ≈ where it does not.
func (s *System) String(i int) string {
	terms, result := s.Terms(i), s.Result(i)
	q := s.eqs[i]
	var b strings.Builder
	for k, t := range terms {
		if k > 0 {
			b.WriteString(" " + string(q.ops[k-1]) + " ")
		}
		b.WriteString(With(t, q.nouns[k]))
	}
	if s.Holds(i) {
		b.WriteString(" = ")
	} else {
		b.WriteString(" ≈ ")
	}
	b.WriteString(With(result, q.resultNoun))
	return b.String()
}

// scaler returns how number i is written at its digits.
func (s *System) scaler(i int) Scaler {
	sc := s.terms[i].scaler()
	switch d := s.digits[i]; {
	case d >= 17:
		return sc.Precise()
	case d > 0:
		return sc.Digits(d)
	}
	return sc
}

func (s *System) text(i int) string { return s.scaler(i).Format(s.terms[i].V) }

// exact reports whether number i is written with every digit it has.
func (s *System) exact(i int) bool {
	v, err := Parse(s.text(i))
	return s.digits[i] >= 17 || err == nil && v.V == s.terms[i].V
}

// holds reports whether q's printed terms, parsed back and worked out,
// round to its printed result.
func (s *System) holds(q sysEq) bool {
	var acc float64
	for k, t := range q.terms {
		v, err := Parse(s.text(t))
		if err != nil {
			return false
		}
		switch {
		case k == 0:
			acc = v.V
		case q.ops[k-1] == Times:
			acc *= v.V
		case q.ops[k-1] == Over:
			acc /= v.V
		case q.ops[k-1] == Plus:
			acc += v.V
		default:
			return false
		}
	}
	return s.scaler(q.result).Format(acc) == s.text(q.result)
}

// Solve gives every number the digits the equations need: while one
// fails, each of its terms not yet written exactly gets one more digit.
// Digits only grow, up to every digit, so it ends; an equation that fails
// with every digit of its terms is false as stated. The methods that
// write call it; a System solved after its last Add may be read by
// several goroutines at once.
func (s *System) Solve() {
	if s.solved {
		return
	}
	s.solved = true
	for changed := true; changed; {
		changed = false
		for k := range s.eqs {
			q := &s.eqs[k]
			if q.wrong || s.holds(*q) {
				continue
			}
			more := false
			for _, t := range q.terms {
				if !s.exact(t) {
					s.digits[t] = max(s.digits[t], Sig) + 1
					more = true
				}
			}
			if !more {
				q.wrong = true
			}
			changed = true
		}
	}
}
