package units

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestEquationLesson7 is the lesson 7: its equations printed
// "2,097,152 requests × 5 sectors per request = 10,485,759 sectors" and
// "2,684,356 warps × 1 load per warp = 2,684,354 requests", false as
// printed. 10485759/2097152 = 4.99999952316...: 2097152 × 4.9999995 =
// 10485758.95, which rounds to the count. 2684354/2684356 = 0.99999925494...:
// 2684356 × 0.9999993 = 2684354.12.
func TestEquationLesson7(t *testing.T) {
	tests := []struct {
		name string
		e    Equation
		want string
	}{
		{"offset 1", Product(Term{V: 10485759, Unit: Count, Noun: "sectors"}, Term{V: 2097152, Unit: Count, Noun: "requests"}, Term{V: 10485759.0 / 2097152, Unit: Ratio, Noun: "sectors per request"}),
			"2,097,152 requests × 4.9999995 sectors per request = 10,485,759 sectors"},
		{"block 100", Product(Term{V: 2684354, Unit: Count, Noun: "requests"}, Term{V: 2684356, Unit: Count, Noun: "warps"}, Term{V: 2684354.0 / 2684356, Unit: Ratio, Noun: "loads per warp"}),
			"2,684,356 warps × 0.9999993 loads per warp = 2,684,354 requests"},
		{"exact", Product(Term{V: 8388608, Unit: Count, Noun: "sectors"}, Term{V: 2097152, Unit: Count, Noun: "requests"}, Term{V: 4, Unit: Ratio, Noun: "sectors per request"}),
			"2,097,152 requests × 4 sectors per request = 8,388,608 sectors"},
		{"one load", Product(Term{V: 2097152, Unit: Count, Noun: "requests"}, Term{V: 2097152, Unit: Count, Noun: "warps"}, Term{V: 1, Unit: Ratio, Noun: "loads per warp"}),
			"2,097,152 warps × 1 load per warp = 2,097,152 requests"},
		// 29/32 = 0.90625: at three digits 3.63 ÷ 4 = 0.9075 would print
		// 0.908×, so the dividend keeps its fourth digit.
		{"quotient", Quotient(Term{V: 3.625 / 4, Unit: Multiple, Noun: "the minimum"}, Term{V: 3.625, Unit: Ratio, Noun: "sectors per request"}, Term{V: 4, Unit: Ratio, Noun: "sectors per request"}),
			"3.625 sectors per request ÷ 4 sectors per request = 0.906× the minimum"},
		// A result the terms do not give is not stated as equal.
		{"false", Product(Term{V: 8388609, Unit: Count, Noun: "sectors"}, Term{V: 2097152, Unit: Count, Noun: "requests"}, Term{V: 4, Unit: Ratio, Noun: "sectors per request"}),
			"2,097,152 requests × 4 sectors per request ≈ 8,388,609 sectors"},
		// 3.35 TB/s × 620 ns ÷ 132 SMs = 15,734.8... bytes.
		{"chain", Product(Term{V: 3.35e12 * 620e-9 / 132, Unit: Count, Noun: "bytes"}, Term{V: 3.35e12, Unit: Bandwidth, Noun: ""}, Term{V: 620e-9, Unit: Seconds, Noun: ""}).Then(Over, Term{V: 132, Unit: Count, Noun: "SMs"}),
			"3.35 TB/s × 620 ns ÷ 132 SMs = 15,735 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.e.String())
			checkPrinted(t, tt.e)
		})
	}
}

// TestSystem covers sentences that state a number twice: the time
// model's "launch + the longest" and the DRAM time the longest is the
// quotient of; a ratio of two bandwidths each stated as a quotient.
func TestSystem(t *testing.T) {
	var sys System
	// 2^28 B at 3.3449 TB/s is 80.2527 µs, alone 80.3 µs, and 2^28 B over
	// 3.34 TB/s would be 80.37 µs: the bandwidth needs a fourth digit.
	// 4.49 + 80.3 = 84.79, but 4.49 + 80.2527 = 84.7427 is written 84.7
	// µs: the DRAM time needs its fourth digit, 80.25, in both sentences,
	// and 2^28 B ÷ 3.345 TB/s = 80.2497 µs is 80.25 at four digits.
	dram := sys.Add(Quotient(Term{V: (1 << 28) / 3.3449e12, Unit: Seconds}, Term{V: 1 << 28, Unit: Count, Noun: "bytes"}, Term{V: 3.3449e12, Unit: Bandwidth}))
	total := sys.Add(Equation{Terms: []Term{{V: 4.49e-6, Unit: Seconds}, {V: (1 << 28) / 3.3449e12, Unit: Seconds}}, Ops: []Op{Plus},
		Result: Term{V: 4.49e-6 + (1<<28)/3.3449e12, Unit: Seconds}})
	assert.Equal(t, "268,435,456 bytes ÷ 3.345 TB/s = 80.25 µs", sys.String(dram))
	assert.Equal(t, "4.49 µs + 80.25 µs = 84.7 µs", sys.String(total))
	assert.Equal(t, sys.Terms(total)[1], sys.Result(dram), "one number, one text")
	assert.Equal(t, "80.25 µs", sys.Text(Term{V: (1 << 28) / 3.3449e12, Unit: Seconds}))
	for i := range 2 {
		assert.True(t, sys.Holds(i))
		checkSystem(t, &sys, i)
	}
}

// TestTermIn keeps a term in its column's prefix: a row of times in ns
// writes 1.6724 µs as 1,672 ns (579/1672 = 0.3463). And a ratio beside
// rounded values is worked from what is printed: 0.867/1.02 would be
// 0.85, not the 0.846 of 0.8666/1.0243, so the terms keep a fourth digit
// (0.8666/1.024 = 0.8463).
func TestTermIn(t *testing.T) {
	ns := Seconds.Scale(579e-9, 1.6724e-6)
	var sys System
	i := sys.Add(Quotient(Term{V: 579e-9 / 1.6724e-6, Unit: Multiple}, Term{V: 579e-9, Unit: Seconds, In: ns}, Term{V: 1.6724e-6, Unit: Seconds, In: ns}))
	assert.Equal(t, "579 ns ÷ 1,672 ns = 0.346×", sys.String(i))
	assert.Equal(t, "1,672", sys.Scaler(Term{V: 1.6724e-6, Unit: Seconds, In: ns}).Cell(1.6724e-6))
	j := sys.Add(Quotient(Term{V: 0.8666 / 1.0243, Unit: Multiple}, Term{V: 0.8666, Unit: Ratio}, Term{V: 1.0243, Unit: Ratio}))
	assert.True(t, sys.Holds(j))
	checkSystem(t, &sys, j)
	assert.Equal(t, "0.8666 ÷ 1.024 = 0.846×", sys.String(j))
}

// TestEquationHoldsAsPrinted is the property: for random products and
// quotients of counts, ratios, percentages, times and bandwidths, the
// printed equation either says "=" and its printed terms, parsed back and
// worked out, round to its printed result; or says "≈" only when even
// every digit of the terms does not give the result.
func TestEquationHoldsAsPrinted(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	units := []Unit{Count, Ratio, Multiple, Percent, Bytes, Bandwidth, Seconds}
	draw := func() Term {
		u := units[r.IntN(len(units))]
		v := math.Exp(r.Float64()*40 - 20)
		switch u {
		case Count:
			v = math.Round(v*1e4) + 1
		case Seconds:
			v *= 1e-6
		case Bandwidth, Bytes:
			v *= 1e9
		}
		return Term{V: v, Unit: u}
	}
	for range 3000 {
		terms := []Term{draw(), draw()}
		all := []Op{Times, Over, Plus}
		ops := []Op{all[r.IntN(3)]}
		if r.IntN(3) == 0 {
			terms = append(terms, draw())
			ops = append(ops, all[r.IntN(3)])
		}
		e := Equation{Terms: terms, Ops: ops}
		e.Result = Term{V: exactWork(e), Unit: units[r.IntN(len(units))]}
		checkPrinted(t, e)
	}
}

// TestSystemHoldsAsPrinted is the property for shared numbers: chains
// of equations, each using the one before's result as a term, all hold as
// printed with each number written one way.
func TestSystemHoldsAsPrinted(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	us := []Unit{Ratio, Seconds, Bandwidth, Percent, Multiple}
	for range 500 {
		var sys System
		prev := Term{V: math.Exp(r.Float64()*10 - 5), Unit: us[r.IntN(len(us))]}
		for range 3 {
			other := Term{V: math.Exp(r.Float64()*10 - 5), Unit: us[r.IntN(len(us))]}
			op := []Op{Times, Over, Plus}[r.IntN(3)]
			e := Equation{Terms: []Term{prev, other}, Ops: []Op{op}}
			e.Result = Term{V: exactWork(e), Unit: us[r.IntN(len(us))]}
			sys.Add(e)
			prev = e.Result
		}
		for i := range 3 {
			require.True(t, sys.Holds(i), sys.String(i))
			checkSystem(t, &sys, i)
		}
	}
}

// FuzzEquation is the property over fuzzed factors of a product whose
// result is a whole count, the shape of lesson 7's equations.
func FuzzEquation(f *testing.F) {
	f.Add(uint32(2097152), uint32(10485759))
	f.Add(uint32(2684356), uint32(2684354))
	f.Add(uint32(3), uint32(1))
	f.Fuzz(func(t *testing.T, a, product uint32) {
		if a == 0 {
			return
		}
		e := Product(Term{V: float64(product), Unit: Count, Noun: "sectors"}, Term{V: float64(a), Unit: Count, Noun: "requests"},
			Term{V: float64(product) / float64(a), Unit: Ratio, Noun: "sectors per request"})
		_, _, holds := e.Printed()
		if !holds {
			t.Fatalf("%s: a whole product of a whole factor and its quotient must be printable", e)
		}
		checkPrinted(t, e)
	})
}

// exactWork works e out on its terms' values, as the caller would.
func exactWork(e Equation) float64 {
	acc := e.Terms[0].V
	for i, op := range e.Ops {
		switch op {
		case Times:
			acc *= e.Terms[i+1].V
		case Over:
			acc /= e.Terms[i+1].V
		case Plus:
			acc += e.Terms[i+1].V
		}
	}
	return acc
}

// checkPrinted parses e's String back (the numbers between the
// operators, the nouns cut off) and checks it holds as printed.
func checkPrinted(t *testing.T, e Equation) {
	t.Helper()
	s := e.String()
	eq := " = "
	if strings.Contains(s, " ≈ ") {
		eq = " ≈ "
	}
	lhs, rhs, ok := strings.Cut(s, eq)
	require.True(t, ok, s)
	var parts []string
	rest := lhs
	for _, op := range e.Ops {
		a, b, ok := strings.Cut(rest, " "+string(op)+" ")
		require.True(t, ok, s)
		parts = append(parts, a)
		rest = b
	}
	parts = append(parts, rest)
	// cut takes the noun, plural or made singular, off a printed term.
	cut := func(text, noun string) string {
		if noun == "" {
			return text
		}
		one := strings.TrimPrefix(With("1", noun), "1 ")
		return strings.TrimSuffix(strings.TrimSuffix(text, " "+noun), " "+one)
	}
	number := func(text string, noun string) Value {
		text = cut(text, noun)
		v, err := Parse(text)
		require.NoError(t, err, "%q of %q", text, s)
		return v
	}
	acc := 0.0
	for i, p := range parts {
		v := number(p, e.Terms[i].Noun).V
		switch {
		case i == 0:
			acc = v
		case e.Ops[i-1] == Times:
			acc *= v
		case e.Ops[i-1] == Over:
			acc /= v
		default:
			acc += v
		}
	}
	result := cut(rhs, e.Result.Noun)
	rs := e.Result.Unit.Scale(e.Result.V)
	worked := rs.Format(acc)
	if eq == " = " {
		assert.Equal(t, result, worked, "%s: the printed terms work out to %v", s, acc)
		return
	}
	// ≈: even every digit of the terms misses the printed result.
	p := e
	for i := range p.Terms {
		p.Terms[i].V = number(e.Terms[i].Unit.Scale(e.Terms[i].V).Precise().Format(e.Terms[i].V), "").V
	}
	assert.NotEqual(t, result, rs.Format(exactWork(p)), "%s says ≈ but holds", s)
}

// checkSystem checks equation i of sys as printed: its terms parsed back
// and worked out round, as its result is written, to its result.
func checkSystem(t *testing.T, sys *System, i int) {
	t.Helper()
	q := sys.eqs[i]
	acc := 0.0
	for k, text := range sys.Terms(i) {
		v, err := Parse(text)
		require.NoError(t, err, text)
		switch {
		case k == 0:
			acc = v.V
		case q.ops[k-1] == Times:
			acc *= v.V
		case q.ops[k-1] == Over:
			acc /= v.V
		default:
			acc += v.V
		}
	}
	assert.Equal(t, sys.Result(i), sys.scaler(q.result).Format(acc), "%s", sys.String(i))
}
