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
		{"offset 1", Product(Term{10485759, Count, "sectors"}, Term{2097152, Count, "requests"}, Term{10485759.0 / 2097152, Ratio, "sectors per request"}),
			"2,097,152 requests × 4.9999995 sectors per request = 10,485,759 sectors"},
		{"block 100", Product(Term{2684354, Count, "requests"}, Term{2684356, Count, "warps"}, Term{2684354.0 / 2684356, Ratio, "loads per warp"}),
			"2,684,356 warps × 0.9999993 loads per warp = 2,684,354 requests"},
		{"exact", Product(Term{8388608, Count, "sectors"}, Term{2097152, Count, "requests"}, Term{4, Ratio, "sectors per request"}),
			"2,097,152 requests × 4 sectors per request = 8,388,608 sectors"},
		{"one load", Product(Term{2097152, Count, "requests"}, Term{2097152, Count, "warps"}, Term{1, Ratio, "loads per warp"}),
			"2,097,152 warps × 1 load per warp = 2,097,152 requests"},
		// 29/32 = 0.90625: at three digits 3.63 ÷ 4 = 0.9075 would print
		// 0.908×, so the dividend keeps its fourth digit.
		{"quotient", Quotient(Term{3.625 / 4, Multiple, "the minimum"}, Term{3.625, Ratio, "sectors per request"}, Term{4, Ratio, "sectors per request"}),
			"3.625 sectors per request ÷ 4 sectors per request = 0.906× the minimum"},
		// A result the terms do not give is not stated as equal.
		{"false", Product(Term{8388609, Count, "sectors"}, Term{2097152, Count, "requests"}, Term{4, Ratio, "sectors per request"}),
			"2,097,152 requests × 4 sectors per request ≈ 8,388,609 sectors"},
		// 3.35 TB/s × 620 ns ÷ 132 SMs = 15,734.8... bytes.
		{"chain", Product(Term{3.35e12 * 620e-9 / 132, Count, "bytes"}, Term{3.35e12, Bandwidth, ""}, Term{620e-9, Seconds, ""}).Then(Over, Term{132, Count, "SMs"}),
			"3.35 TB/s × 620 ns ÷ 132 SMs = 15,735 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.e.String())
		})
	}
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
		ops := []Op{Times}
		if r.IntN(2) == 0 {
			ops[0] = Over
		}
		if r.IntN(3) == 0 {
			terms = append(terms, draw())
			ops = append(ops, []Op{Times, Over}[r.IntN(2)])
		}
		e := Equation{Terms: terms, Ops: ops}
		e.Result = Term{V: exactWork(e), Unit: units[r.IntN(len(units))]}
		checkPrinted(t, e)
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
		e := Product(Term{float64(product), Count, "sectors"}, Term{float64(a), Count, "requests"},
			Term{float64(product) / float64(a), Ratio, "sectors per request"})
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
		if op == Times {
			acc *= e.Terms[i+1].V
		} else {
			acc /= e.Terms[i+1].V
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
		default:
			acc /= v
		}
	}
	result := cut(rhs, e.Result.Noun)
	worked := e.Result.Unit.Scale(e.Result.V).Format(acc)
	if eq == " = " {
		assert.Equal(t, result, worked, "%s: the printed terms work out to %v", s, acc)
		return
	}
	// ≈: even every digit of the terms misses the printed result.
	p := e
	for i := range p.Terms {
		p.Terms[i].V = number(e.Terms[i].Unit.Scale(e.Terms[i].V).Precise().Format(e.Terms[i].V), "").V
	}
	assert.NotEqual(t, result, e.Result.Unit.Scale(e.Result.V).Format(exactWork(p)), "%s says ≈ but holds", s)
}
