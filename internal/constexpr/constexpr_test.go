package constexpr

import (
	"errors"
	"go/ast"
	"go/constant"
	"go/parser"
	"go/token"
	"go/types"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseFloat64(t *testing.T) {
	tests := []struct {
		src       string
		want      float64
		truncated bool
		kind      error // nil: read
		errText   string
	}{
		// Literals in every Go form.
		{src: "32", want: 32},
		{src: "-0.5", want: -0.5},
		{src: "1e3", want: 1000},
		{src: "0x20", want: 32},     // 2*16
		{src: "0b101", want: 5},     // 4+1
		{src: "0o7", want: 7},       //
		{src: "017", want: 15},      // old octal: 8+7
		{src: "1_000", want: 1000},  //
		{src: "0x1p-2", want: 0.25}, // 1 * 2^-2
		{src: "'\\x20'", want: 32},  // a rune: 0x20
		{src: "'a'", want: 97},      // ASCII a
		{src: "-0.0", want: 0},      // constants have no negative zero
		{src: "1e-400", want: 0},    // below float64's smallest: rounds to 0, as Go compiles it
		{src: "2i * 2i", want: -4},  // i*i = -1, times 4; the imaginary part is 0
		{src: "(((16)))", want: 16}, //
		{src: "1<<5", want: 32},     // 2^5
		{src: "1 << 2.0", want: 4},  // an untyped float count with an integer value
		{src: "2.0 << 3", want: 16}, // an untyped float with an integer value shifts as an integer
		{src: "256 >> 3", want: 32}, // 256/8
		{src: "^0", want: -1},       // untyped: -0-1
		{src: "^uint8(1) / 2 * 0", kind: ErrInvalid, errText: "type uint8"},
		{src: "float64(^uint8(1))", want: 254},    // 255-1
		{src: "6 &^ 3", want: 4},                  // 110 &^ 011 = 100
		{src: "6 & 3 | 8 ^ 1", want: 11},          // (6&3)=2, 8^1=9, 2|9=11 (& and ^ bind as * and +)
		{src: "7 % 4", want: 3},                   //
		{src: "-7 % 4", want: -3},                 // Go's remainder has the dividend's sign
		{src: "64/2", want: 32},                   //
		{src: "1/8", want: 0, truncated: true},    // untyped integers: integer division
		{src: "100/6", want: 16, truncated: true}, // 16*6 = 96, 4 dropped
		{src: "'a'/2", want: 48, truncated: true}, // a rune is an integer: 97/2
		{src: "1.0/8", want: 0.125},               //
		{src: "1/8.0", want: 0.125},               //
		{src: "float64(3)/2", want: 1.5},          // typed float64: the 2 converts to float64
		{src: "float64(1)/3*3", want: 1},          // 1/3 rounded to float64, times 3 rounds back to 1
		{src: "float64(float32(0.1))", want: float64(float32(0.1))},
		{src: "float64(int8(-128))", want: -128},           // int8's least
		{src: "float64(uint64(1<<64 - 1))", want: 1 << 64}, // 2^64-1 rounds up to 2^64 in float64
		{src: "min(4, 2.5, 3)", want: 2.5},
		{src: "max(1, 'a')", want: 97},
		{src: "(float64)(2) * 0.25", want: 0.5},
		{src: "1e308 * 10 / 10", want: 1e308}, // untyped: exact, no overflow on the way
		{src: "1<<600 >> 590", kind: ErrInvalid, errText: "512-bit"},
		{src: "0x1p-1074", want: math.SmallestNonzeroFloat64},
		// Go rejects these: never a number.
		{src: "1e400", kind: ErrInvalid, errText: "overflows float64"},
		{src: "1<<1075", kind: ErrInvalid, errText: "shift count"},
		{src: "1 << -1", kind: ErrInvalid, errText: "negative"},
		{src: "1 << 2.5", kind: ErrInvalid, errText: "fraction"},
		{src: "1.5 << 2", kind: ErrInvalid, errText: "must be an integer"},
		{src: "float64(2) << 1", kind: ErrInvalid, errText: "must be an integer"},
		{src: "1/0", kind: ErrInvalid, errText: "divides by zero"},
		{src: "1.0/0", kind: ErrInvalid, errText: "divides by zero"},
		{src: "float64(1)/1e-400", kind: ErrInvalid, errText: "divides by zero"}, // 1e-400 rounds to float64 0
		{src: "1.5 % 1", kind: ErrInvalid, errText: "operator %"},
		{src: "^1.0", kind: ErrInvalid, errText: "operator ^"},
		{src: "int8(100) + 100", kind: ErrInvalid, errText: "overflows int8"},
		{src: "-uint8(1)", kind: ErrInvalid, errText: "overflows uint8"},
		{src: "int(2.5)", kind: ErrInvalid, errText: "fraction"},
		{src: "int(1) + 1.5", kind: ErrInvalid, errText: "fraction"},
		{src: "int(3)", kind: ErrInvalid, errText: "of type int, and a float64"},
		{src: "float32(0.5)", kind: ErrInvalid, errText: "of type float32"},
		{src: "int8(1) + int16(1)", kind: ErrInvalid, errText: "mixes"},
		{src: "2i", kind: ErrInvalid, errText: "complex"},
		{src: "max(1, 2i)", kind: ErrInvalid, errText: "cannot be ordered"},
		{src: "float64(1, 2)", kind: ErrInvalid, errText: "one value"},
		{src: "min()", kind: ErrInvalid, errText: "at least one"},
		// Valid Go perhaps, but not numbers written in the call.
		{src: "x", kind: ErrNotConstant, errText: "x is a name"},
		{src: "math.Pi", kind: ErrNotConstant, errText: "math.Pi is a name"},
		{src: "f(2)", kind: ErrNotConstant, errText: "function call"},
		{src: "len(\"ab\")", kind: ErrNotConstant, errText: "function call"},
		{src: `"32"`, kind: ErrNotConstant, errText: "string"},
		{src: "1 < 2", kind: ErrNotConstant, errText: "comparison"},
		{src: "!1", kind: ErrNotConstant, errText: "operator !"},
		{src: "[]int{1}", kind: ErrNotConstant, errText: "composite"},
		{src: "32)", kind: ErrNotConstant, errText: "not a Go expression"},
		{src: "", kind: ErrNotConstant, errText: "not a Go expression"},
		// Bounds.
		{src: strings.Repeat("(", 70) + "1" + strings.Repeat(")", 70), kind: ErrTooLarge, errText: "nested"},
		{src: "max(" + strings.Repeat("1,", 600) + "1)", kind: ErrTooLarge, errText: "parts"}, // 601 literals and the call
		{src: strings.Repeat(" ", MaxSource) + "1", kind: ErrTooLarge, errText: "bytes"},
	}
	for _, tt := range tests {
		t.Run(clip(tt.src, 30), func(t *testing.T) {
			got, err := ParseFloat64(tt.src)
			if tt.kind != nil {
				require.Error(t, err)
				assert.ErrorIs(t, err, tt.kind)
				assert.Contains(t, err.Error(), tt.errText)
				assert.True(t, strings.HasPrefix(err.Error(), "constexpr: "), err.Error())
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got.Value)
			assert.Equal(t, tt.truncated, got.Truncated)
		})
	}
}

func TestShadowed(t *testing.T) {
	x, err := parser.ParseExpr("max(1, 2) + float64(3)")
	require.NoError(t, err)
	tests := []struct {
		name     string
		shadowed string
		want     float64 // 2 + 3
		errText  string
	}{
		{"nothing redeclared", "", 5, ""},
		{"a func max of the notebook's", "max", 0, "max is declared in the notebook"},
		{"a type float64 of the notebook's", "float64", 0, "float64 is declared in the notebook"},
		{"another name", "min", 5, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Float64(x, Options{Shadowed: func(n string) bool { return n == tt.shadowed }})
			if tt.errText != "" {
				assert.ErrorIs(t, err, ErrNotConstant)
				assert.ErrorContains(t, err, tt.errText)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got.Value)
		})
	}
}

// TestLongLiteral: Go refuses a numeric literal over 10000 characters
// ("excessively long constant"); so does Float64, given the tree a cell's
// parser built (ParseFloat64 refuses it sooner, as over MaxSource).
func TestLongLiteral(t *testing.T) {
	for _, tt := range []struct {
		digits int
		kind   error
	}{{9999, ErrInvalid}, {10001, ErrInvalid}} { // 10^9999 overflows float64; 10001 characters is over Go's limit
		lit := "1" + strings.Repeat("0", tt.digits)
		_, err := Float64(&ast.BasicLit{Kind: token.INT, Value: lit}, Options{})
		assert.ErrorIs(t, err, tt.kind)
		if tt.digits >= maxLiteral {
			assert.ErrorContains(t, err, "over Go's 10000")
		} else {
			assert.ErrorContains(t, err, "overflows")
		}
	}
}

// TestBoundedWork: a megabyte of expression and ten thousand nested
// parentheses are refused at once, whether given as source or as a tree
// the cell's parser already built.
func TestBoundedWork(t *testing.T) {
	deep := strings.Repeat("(", 10000) + "1" + strings.Repeat(")", 10000)
	long := strings.Repeat("1+", 1<<19) + "1" // 1 MiB
	for _, src := range []string{deep, long, strings.Repeat("-", 1<<20) + "1"} {
		t.Run(clip(src, 10), func(t *testing.T) {
			start := time.Now()
			_, err := ParseFloat64(src)
			assert.ErrorIs(t, err, ErrTooLarge)
			x, perr := parser.ParseExpr(src)
			if perr == nil { // go/parser's own depth limit may refuse it first
				_, err = Float64(x, Options{})
				assert.ErrorIs(t, err, ErrTooLarge)
			}
			// Parsing the megabyte is go/parser's cost; the evaluation
			// stops after MaxNodes or MaxDepth.
			assert.Less(t, time.Since(start), 5*time.Second)
		})
	}
}

// reference is the compiler's answer: go/types checks
// `var _ float64 = EXPR` in a package of its own, and the value recorded
// is what the float64 receives.
func reference(x ast.Expr, fset *token.FileSet) (float64, error) {
	file := &ast.File{Name: ast.NewIdent("p"), Decls: []ast.Decl{&ast.GenDecl{Tok: token.VAR, Specs: []ast.Spec{
		&ast.ValueSpec{Names: []*ast.Ident{ast.NewIdent("_")}, Type: ast.NewIdent("float64"), Values: []ast.Expr{x}},
	}}}}
	conf := types.Config{GoVersion: "go1.26", Sizes: types.SizesFor("gc", "amd64")}
	info := &types.Info{Types: map[ast.Expr]types.TypeAndValue{}}
	if _, err := conf.Check("p", fset, []*ast.File{file}, info); err != nil {
		return 0, err
	}
	tv := info.Types[x]
	if tv.Value == nil || tv.Value.Kind() == constant.Unknown {
		return 0, errors.New("no constant value")
	}
	f, _ := constant.Float64Val(tv.Value)
	return f, nil
}

// agree checks one expression against the reference: a value read is
// the compiler's, bit for bit; what the compiler rejects is never read;
// what it accepts is refused only as a form not read (ErrNotConstant) or
// too large (ErrTooLarge), never as invalid.
func agree(t *testing.T, src string) {
	t.Helper()
	if len(src) > MaxSource {
		return
	}
	fset := token.NewFileSet()
	x, perr := parser.ParseExprFrom(fset, "x.go", src, 0)
	got, err := ParseFloat64(src)
	if perr != nil {
		if err == nil {
			t.Fatalf("%q does not parse (%v) but read as %v", src, perr, got.Value)
		}
		return
	}
	want, rerr := reference(x, fset)
	switch {
	case err == nil && rerr != nil:
		t.Fatalf("%q read as %v; Go rejects it: %v", src, got.Value, rerr)
	case err == nil && math.Float64bits(got.Value) != math.Float64bits(want):
		t.Fatalf("%q read as %v; Go gives %v", src, got.Value, want)
	case err != nil && rerr == nil && errors.Is(err, ErrInvalid):
		t.Fatalf("%q refused as invalid (%v); Go gives %v", src, err, want)
	case err != nil && !errors.Is(err, ErrInvalid) && !errors.Is(err, ErrNotConstant) && !errors.Is(err, ErrTooLarge):
		t.Fatalf("%q: error %v is of no kind", src, err)
	}
	if err == nil && (math.IsNaN(got.Value) || math.IsInf(got.Value, 0)) {
		t.Fatalf("%q read as %v", src, got.Value)
	}
}

// gen writes a random expression of the forms read and some that are
// not, from the literals and operators where Go's rules have corners.
type gen struct{ next func(n int) int }

var (
	genLits = []string{"0", "1", "2", "3", "7", "8", "32", "255", "256", "-1", "0.5", "1.0", "2.5", "1e3", "1e308",
		"1e-400", "0x1p-1074", "0x20", "0b101", "0o7", "017", "1_000", "'a'", "'\\x20'", "2i", "0i", "1e100",
		"9223372036854775807", "18446744073709551615", "1e19", "0.1", "1<<62", "x", `"s"`}
	genOps   = []string{"+", "-", "*", "/", "%", "&", "|", "^", "&^", "<<", ">>", "<", "=="}
	genUnary = []string{"-", "+", "^", "!"}
	genFuncs = []string{"float64", "float32", "int", "int8", "uint8", "uint", "int64", "uint64", "byte", "rune",
		"complex128", "min", "max", "len", "f"}
)

func (g gen) expr(depth int) string {
	if depth <= 0 {
		return genLits[g.next(len(genLits))]
	}
	switch g.next(6) {
	case 0:
		return genLits[g.next(len(genLits))]
	case 1:
		return genUnary[g.next(len(genUnary))] + g.expr(depth-1)
	case 2:
		return "(" + g.expr(depth-1) + ")"
	case 3:
		f := genFuncs[g.next(len(genFuncs))]
		args := []string{g.expr(depth - 1)}
		if f == "min" || f == "max" {
			for range g.next(3) {
				args = append(args, g.expr(depth-1))
			}
		}
		return f + "(" + strings.Join(args, ", ") + ")"
	default:
		return g.expr(depth-1) + " " + genOps[g.next(len(genOps))] + " " + g.expr(depth-1)
	}
}

// TestAgreesWithGoTypes runs the generator through the reference: twenty
// thousand expressions a run, the same ones each run.
func TestAgreesWithGoTypes(t *testing.T) {
	r := rand.New(rand.NewPCG(12, 4))
	g := gen{func(n int) int { return r.IntN(n) }}
	n := 20000
	if testing.Short() {
		n = 2000
	}
	read := 0
	for range n {
		src := g.expr(4)
		agree(t, src)
		if _, err := ParseFloat64(src); err == nil {
			read++
		}
	}
	// The generator must reach the values, not only the errors.
	assert.Greater(t, read, n/20, "expressions read")
}

// FuzzAgreesWithGoTypes: any source, read or refused as the compiler
// does (see agree). Seeds: testdata/fuzz/FuzzAgreesWithGoTypes.
func FuzzAgreesWithGoTypes(f *testing.F) {
	for _, s := range []string{"1<<5", "1/8", "float64(3)/2", "^uint8(1)", "min(1, 2.5)", "'a' * 2i / 2i",
		"1 << 1074 >> 1074", "float64(uint64(1<<64-1))", "0x1p-1074 / 2", "int8(-128) / -1", "1e308 + 1e308"} {
		f.Add(s)
	}
	f.Fuzz(agree)
}

// FuzzGenerated drives the generator from the fuzzer's bytes, so that
// mutations stay within expressions of the forms read.
func FuzzGenerated(f *testing.F) {
	f.Add([]byte{3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5})
	f.Add([]byte{5, 0, 17, 9, 0, 2})
	f.Fuzz(func(t *testing.T, data []byte) {
		i := 0
		g := gen{func(n int) int {
			if i >= len(data) {
				return 0
			}
			i++
			return int(data[i-1]) % n
		}}
		agree(t, g.expr(5))
	})
}
