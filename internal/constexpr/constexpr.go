// Package constexpr evaluates a Go constant expression written with
// numbers, as the Go compiler does when the expression is passed where a
// float64 is expected:
//
//	r, err := constexpr.ParseFloat64("1<<5")   // r.Value == 32
//	r, err = constexpr.ParseFloat64("1/8")     // 0: untyped integer division; r.Truncated
//	r, err = constexpr.ParseFloat64("1.0/8")   // 0.125
//	_, err = constexpr.ParseFloat64("1<<600")  // error: Go rejects it (constant overflow)
//
// The grader reads a learner's prediction, lab.Check(id, EXPR), from the
// saved notebook with it, so that the number graded is the number the
// running notebook saw: the compiler converted EXPR to the float64
// parameter. For every expression Float64 accepts, its value is the
// compiler's; an expression the compiler rejects is an error wrapping
// ErrInvalid, never a different number (the tests check this against
// go/types, the compiler's own constant arithmetic).
//
// What is read: integer, floating-point, imaginary and rune literals in
// every Go form (32, 1_000, 0x20, 0b101, 0o7, 1e3, 0x1p-2, 2i, 'a');
// parentheses; the unary operators + - ^; the binary operators
// + - * / % & | ^ &^ << >>; conversions to the predeclared numeric types
// (float64(3)/2, int8(1), byte, rune, ...); the builtins min and max. The
// arithmetic is Go's: untyped constants are exact, integer division
// truncates, typed constants are rounded or range-checked after every
// operation, int and uint are 64 bits. Anything else (a name, a function
// call, a string, a comparison) wraps ErrNotConstant: it may be valid Go,
// but it is not a number written in the call.
//
// The predeclared names are taken as Go's: the caller refuses a
// conversion or builtin whose name the program redeclares (Options.Shadowed).
//
// Work is bounded whatever the input: source over MaxSource bytes,
// nesting over MaxDepth, more than MaxNodes operands and operators, all
// wrap ErrTooLarge, found before any arithmetic; Go's own limits (512-bit
// untyped integers, shift counts up to 1074, literals up to 10000
// characters) bound each operation.
package constexpr

import (
	"errors"
	"fmt"
	"go/ast"
	"go/constant"
	"go/parser"
	"go/token"
	"go/types"
	"maps"
	"math"
	"slices"
	"strings"
)

// Bounds on the expressions read; real predictions are a few characters.
const (
	// MaxSource is the longest source ParseFloat64 parses, in bytes.
	MaxSource = 4096
	// MaxDepth is the deepest nesting of parentheses, operators and calls.
	MaxDepth = 64
	// MaxNodes is the most literals, operators and calls in one expression.
	MaxNodes = 512
)

// Go's own limits, as the compiler (go/types) applies them.
const (
	maxLiteral = 10000         // characters in a numeric literal
	intBits    = 512           // bits of an untyped integer constant
	shiftBound = 1023 - 1 + 52 // the largest constant shift count
	wordBits   = 64            // int, uint and uintptr, on the notebook's 64-bit machine
)

// The kinds of failure, for errors.Is.
var (
	// ErrNotConstant is an expression that is not numbers and operators:
	// a name, a function call, a string, a comparison.
	ErrNotConstant = errors.New("constexpr: not a constant expression of numbers")
	// ErrInvalid is an expression Go would not compile as a float64
	// argument: an overflow, a division by zero, a fraction where an
	// integer is needed, a constant of another type.
	ErrInvalid = errors.New("constexpr: Go would not compile it")
	// ErrTooLarge is an expression beyond MaxSource, MaxDepth or MaxNodes.
	ErrTooLarge = errors.New("constexpr: expression too large")
)

// Error is an expression that cannot be read: Kind is ErrNotConstant,
// ErrInvalid or ErrTooLarge, Msg says what was found, in words a learner
// reads in the gradebook's note.
type Error struct {
	Kind error
	Msg  string
}

func (e *Error) Error() string { return "constexpr: " + e.Msg }

// Unwrap returns Kind.
func (e *Error) Unwrap() error { return e.Kind }

func notConstant(format string, args ...any) error {
	return &Error{ErrNotConstant, fmt.Sprintf(format, args...)}
}

func invalid(format string, args ...any) error {
	return &Error{ErrInvalid, fmt.Sprintf(format, args...) + " (Go would not compile it)"}
}

func tooLarge(format string, args ...any) error {
	return &Error{ErrTooLarge, fmt.Sprintf(format, args...)}
}

// Result is an expression's value as a float64 argument.
type Result struct {
	Value float64
	// Truncated is true when an integer division dropped a fraction
	// (100/6 is 16), so that the value differs from the same arithmetic
	// on paper.
	Truncated bool
}

// Options adjust the evaluation; the zero value reads Go's predeclared
// names as Go defines them.
type Options struct {
	// Shadowed reports whether the program redeclares a predeclared name
	// (a func max of its own, a type float64); an expression using one is
	// not read. Nil: none is.
	Shadowed func(name string) bool
}

// ParseFloat64 parses src as a Go expression and evaluates it as Float64
// does. Source over MaxSource bytes is refused before it is parsed.
func ParseFloat64(src string) (Result, error) {
	if len(src) > MaxSource {
		return Result{}, tooLarge("the expression is %d bytes, over the %d read", len(src), MaxSource)
	}
	x, err := parser.ParseExpr(src)
	if err != nil {
		return Result{}, notConstant("%q is not a Go expression", clip(src, 40))
	}
	return Float64(x, Options{})
}

// Float64 evaluates x as the Go compiler does when x is passed as a
// float64 argument: the value the running program received.
func Float64(x ast.Expr, opt Options) (Result, error) {
	if err := bounded(x); err != nil {
		return Result{}, err
	}
	e := evaluator{opt: opt}
	v, err := e.eval(x)
	if err != nil {
		return Result{}, err
	}
	f64 := types.Typ[types.Float64]
	if isTyped(v.typ) && v.typ != f64 {
		return Result{}, invalid("%s is a constant of type %s, and a float64 is wanted", clip(render(x), 40), v.typ)
	}
	r, ok := representable(v.val, f64)
	if !ok {
		return Result{}, invalid("%s %s", clip(render(x), 40), notRepresentable(v.val, f64))
	}
	f, _ := constant.Float64Val(r)
	if math.IsInf(f, 0) || math.IsNaN(f) { // representable excludes both; kept as the guarantee
		return Result{}, invalid("%s overflows float64", clip(render(x), 40))
	}
	return Result{Value: f, Truncated: e.truncated}, nil
}

// bounded walks x without recursion past MaxDepth and stops at MaxNodes,
// so that a pathological expression costs little before any arithmetic.
func bounded(x ast.Expr) error {
	type item struct {
		n     ast.Node
		depth int
	}
	stack := []item{{x, 0}}
	nodes := 0
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if it.depth > MaxDepth {
			return tooLarge("the expression is nested over %d deep", MaxDepth)
		}
		if nodes++; nodes > MaxNodes {
			return tooLarge("the expression has over %d parts", MaxNodes)
		}
		push := func(n ast.Node) {
			if n != nil && n != ast.Node(nil) {
				stack = append(stack, item{n, it.depth + 1})
			}
		}
		switch n := it.n.(type) {
		case *ast.ParenExpr:
			push(n.X)
		case *ast.UnaryExpr:
			push(n.X)
		case *ast.BinaryExpr:
			push(n.X)
			push(n.Y)
		case *ast.CallExpr:
			push(n.Fun)
			if len(n.Args) > MaxNodes {
				return tooLarge("the expression has over %d parts", MaxNodes)
			}
			for _, a := range n.Args {
				push(a)
			}
		}
	}
	return nil
}

// operand is a constant and its type: a types.Basic of go/types, one of
// the untyped kinds or a predeclared numeric type.
type operand struct {
	val constant.Value
	typ *types.Basic
}

type evaluator struct {
	opt       Options
	truncated bool
}

func (e *evaluator) eval(x ast.Expr) (operand, error) {
	switch n := x.(type) {
	case *ast.BasicLit:
		return basicLit(n)
	case *ast.ParenExpr:
		return e.eval(n.X)
	case *ast.UnaryExpr:
		return e.unary(n)
	case *ast.BinaryExpr:
		return e.binary(n)
	case *ast.CallExpr:
		return e.call(n)
	case *ast.Ident:
		return operand{}, notConstant("%s is a name, not a number written in the call", n.Name)
	case *ast.SelectorExpr:
		return operand{}, notConstant("%s is a name, not a number written in the call", render(n))
	}
	return operand{}, notConstant("%s is not a number", clip(render(x), 40))
}

func basicLit(n *ast.BasicLit) (operand, error) {
	var t types.BasicKind
	switch n.Kind {
	case token.INT:
		t = types.UntypedInt
	case token.FLOAT:
		t = types.UntypedFloat
	case token.IMAG:
		t = types.UntypedComplex
	case token.CHAR:
		t = types.UntypedRune
	default:
		return operand{}, notConstant("%s is a string, not a number", clip(n.Value, 40))
	}
	if n.Kind != token.CHAR && len(n.Value) > maxLiteral {
		return operand{}, invalid("the number %s... is %d characters long, over Go's %d", n.Value[:10], len(n.Value), maxLiteral)
	}
	v := constant.MakeFromLiteral(n.Value, n.Kind, 0)
	if v.Kind() == constant.Unknown {
		return operand{}, invalid("%s is out of Go's range for constants", clip(n.Value, 40))
	}
	return overflow(operand{v, types.Typ[t]}, n.Value)
}

// overflow applies Go's check after every constant operation: a typed
// constant must be representable in its type (and is rounded to it), an
// untyped integer must fit in 512 bits.
func overflow(x operand, what string) (operand, error) {
	if x.val.Kind() == constant.Unknown {
		return operand{}, invalid("%s is not representable", clip(what, 40))
	}
	if isTyped(x.typ) {
		r, ok := representable(x.val, x.typ)
		if !ok {
			return operand{}, invalid("%s %s", clip(what, 40), notRepresentable(x.val, x.typ))
		}
		x.val = r
		return x, nil
	}
	if x.val.Kind() == constant.Int && constant.BitLen(x.val) > intBits {
		return operand{}, invalid("%s overflows Go's %d-bit untyped constants", clip(what, 40), intBits)
	}
	return x, nil
}

func (e *evaluator) unary(n *ast.UnaryExpr) (operand, error) {
	x, err := e.eval(n.X)
	if err != nil {
		return operand{}, err
	}
	switch n.Op {
	case token.ADD, token.SUB:
		if !isNumeric(x.typ) {
			return operand{}, invalid("operator %s is not defined on %s", n.Op, x.typ)
		}
	case token.XOR:
		if !isInteger(x.typ) {
			return operand{}, invalid("operator ^ is not defined on %s (%s)", clip(render(n.X), 40), x.typ)
		}
	default:
		return operand{}, notConstant("operator %s: numbers and the operators + - * / %% & | ^ &^ << >> are read", n.Op)
	}
	prec := uint(0)
	if isUnsigned(x.typ) {
		prec = uint(sizeof(x.typ) * 8)
	}
	x.val = constant.UnaryOp(n.Op, x.val, prec)
	return overflow(x, render(n))
}

func (e *evaluator) binary(n *ast.BinaryExpr) (operand, error) {
	switch n.Op {
	case token.ADD, token.SUB, token.MUL, token.QUO, token.REM,
		token.AND, token.OR, token.XOR, token.AND_NOT, token.SHL, token.SHR:
	case token.EQL, token.NEQ, token.LSS, token.LEQ, token.GTR, token.GEQ, token.LAND, token.LOR:
		return operand{}, notConstant("%s is a comparison, not a number", clip(render(n), 40))
	default:
		return operand{}, notConstant("operator %s: numbers and the operators + - * / %% & | ^ &^ << >> are read", n.Op)
	}
	x, err := e.eval(n.X)
	if err != nil {
		return operand{}, err
	}
	y, err := e.eval(n.Y)
	if err != nil {
		return operand{}, err
	}
	if n.Op == token.SHL || n.Op == token.SHR {
		return shift(x, y, n)
	}
	t, err := match(x, y, render(n))
	if err != nil {
		return operand{}, err
	}
	if x, err = convert(x, t); err != nil {
		return operand{}, err
	}
	if y, err = convert(y, t); err != nil {
		return operand{}, err
	}
	op := n.Op
	switch op {
	case token.ADD, token.SUB, token.MUL, token.QUO:
		// every numeric type
	default: // % & | ^ &^
		if !isInteger(t) {
			return operand{}, invalid("operator %s is not defined on %s (%s)", op, clip(render(n.X), 40), t)
		}
	}
	if (op == token.QUO || op == token.REM) && constant.Sign(y.val) == 0 {
		return operand{}, invalid("%s divides by zero", clip(render(n), 40))
	}
	if op == token.QUO && isInteger(t) {
		// Integer operands: Go's division truncates.
		if constant.Sign(constant.BinaryOp(x.val, token.REM, y.val)) != 0 {
			e.truncated = true
		}
		op = token.QUO_ASSIGN
	}
	return overflow(operand{constant.BinaryOp(x.val, op, y.val), t}, render(n))
}

// shift is Go's constant shift: the shifted operand an integer (an
// untyped one only needs an integer value, and the result is an untyped
// integer), the count a non-negative integer up to shiftBound.
func shift(x, y operand, n *ast.BinaryExpr) (operand, error) {
	xval := constant.ToInt(x.val)
	if !isInteger(x.typ) && !(isUntyped(x.typ) && xval.Kind() == constant.Int) {
		return operand{}, invalid("the shifted operand %s must be an integer", clip(render(n.X), 40))
	}
	yval := constant.ToInt(y.val)
	if yval.Kind() == constant.Int && constant.Sign(yval) < 0 {
		return operand{}, invalid("the shift count %s is negative", clip(render(n.Y), 40))
	}
	if isUntyped(y.typ) {
		if _, ok := representable(y.val, types.Typ[types.Uint]); !ok {
			return operand{}, invalid("the shift count %s %s", clip(render(n.Y), 40), notRepresentable(y.val, types.Typ[types.Uint]))
		}
	}
	s, ok := constant.Uint64Val(yval)
	if !ok || s > shiftBound {
		return operand{}, invalid("the shift count %s is over Go's %d", clip(render(n.Y), 40), shiftBound)
	}
	if !isInteger(x.typ) {
		x.typ = types.Typ[types.UntypedInt]
	}
	x.val = constant.Shift(xval, n.Op, uint(s))
	return overflow(x, render(n))
}

// match returns the type two operands take together: the typed one's
// type (both typed: they must be the same), or of two untyped ones the
// later of int, rune, float, complex.
func match(x, y operand, what string) (*types.Basic, error) {
	switch {
	case isTyped(x.typ) && isTyped(y.typ):
		if x.typ != y.typ {
			return nil, invalid("%s mixes the types %s and %s", clip(what, 40), x.typ, y.typ)
		}
		return x.typ, nil
	case isTyped(x.typ):
		return x.typ, nil
	case isTyped(y.typ):
		return y.typ, nil
	}
	if y.typ.Kind() > x.typ.Kind() { // UntypedInt < UntypedRune < UntypedFloat < UntypedComplex
		return y.typ, nil
	}
	return x.typ, nil
}

// convert gives an untyped operand the type t, as Go does implicitly: to
// another untyped kind, the value unchanged; to a typed t, the value must
// be representable and is rounded.
func convert(x operand, t *types.Basic) (operand, error) {
	if isTyped(x.typ) || isUntyped(t) {
		if isUntyped(t) {
			x.typ = t
		}
		return x, nil
	}
	r, ok := representable(x.val, t)
	if !ok {
		return operand{}, invalid("%s %s", x.val.ExactString(), notRepresentable(x.val, t))
	}
	return operand{r, t}, nil
}

// numericTypes are the conversions read: the predeclared numeric types.
var numericTypes = map[string]*types.Basic{}

// Names are the predeclared names Float64 reads, sorted: the numeric
// types, as conversions, and the builtins min and max. A program that
// declares one anew gives it another meaning (Options.Shadowed).
var Names []string

func init() {
	for _, k := range []types.BasicKind{types.Int, types.Int8, types.Int16, types.Int32, types.Int64,
		types.Uint, types.Uint8, types.Uint16, types.Uint32, types.Uint64, types.Uintptr,
		types.Float32, types.Float64, types.Complex64, types.Complex128} {
		numericTypes[types.Typ[k].Name()] = types.Typ[k]
	}
	numericTypes["byte"] = types.Typ[types.Uint8] // Universe aliases: the same types
	numericTypes["rune"] = types.Typ[types.Int32]
	Names = append(slices.Collect(maps.Keys(numericTypes)), "max", "min")
	slices.Sort(Names)
}

func (e *evaluator) call(n *ast.CallExpr) (operand, error) {
	fun := n.Fun
	for {
		p, ok := fun.(*ast.ParenExpr)
		if !ok {
			break
		}
		fun = p.X
	}
	id, ok := fun.(*ast.Ident)
	name := ""
	if ok {
		name = id.Name
	}
	t, conv := numericTypes[name]
	if !ok || !conv && name != "min" && name != "max" {
		return operand{}, notConstant("%s is a function call: write the number alone", clip(render(n), 40))
	}
	if e.opt.Shadowed != nil && e.opt.Shadowed(name) {
		return operand{}, notConstant("%s is declared in the notebook, so %s is not Go's own", name, clip(render(n), 40))
	}
	if n.Ellipsis.IsValid() {
		return operand{}, notConstant("%s passes a slice (...), not numbers", clip(render(n), 40))
	}
	if conv {
		if len(n.Args) != 1 {
			return operand{}, invalid("the conversion %s takes one value", clip(render(n), 40))
		}
		x, err := e.eval(n.Args[0])
		if err != nil {
			return operand{}, err
		}
		if !isNumeric(x.typ) {
			return operand{}, invalid("%s converts a %s", clip(render(n), 40), x.typ)
		}
		r, ok := representable(x.val, t)
		if !ok {
			return operand{}, invalid("%s: %s %s", clip(render(n), 40), clip(render(n.Args[0]), 40), notRepresentable(x.val, t))
		}
		return operand{r, t}, nil
	}
	return e.minMax(n, name)
}

// minMax is the builtin min or max of constants: the arguments take one
// type together, as the operands of a binary operator do, and must be
// ordered (not complex).
func (e *evaluator) minMax(n *ast.CallExpr, name string) (operand, error) {
	if len(n.Args) == 0 {
		return operand{}, invalid("%s needs at least one value", name)
	}
	args := make([]operand, len(n.Args))
	for i, a := range n.Args {
		x, err := e.eval(a)
		if err != nil {
			return operand{}, err
		}
		if !isNumeric(x.typ) || isComplex(x.typ) {
			return operand{}, invalid("%s: %s (%s) cannot be ordered", name, clip(render(a), 40), x.typ)
		}
		args[i] = x
	}
	t := args[0].typ
	for _, a := range args[1:] {
		var err error
		if t, err = match(operand{typ: t}, a, render(n)); err != nil {
			return operand{}, err
		}
	}
	op := token.LSS
	if name == "max" {
		op = token.GTR
	}
	var best operand
	for i, a := range args {
		a, err := convert(a, t)
		if err != nil {
			return operand{}, err
		}
		if i == 0 || constant.Compare(a.val, op, best.val) {
			best = a
		}
	}
	best.typ = t
	return best, nil
}

// representable reports whether v is a value of type t, and the value
// rounded to t: an integer type takes an integer value in its range, a
// float type any real value that does not overflow (rounded to its
// precision, so 1e-400 is 0), a complex type the same for both parts.
// It is go/types' rule (representableConst), with int and uint 64 bits.
func representable(v constant.Value, t *types.Basic) (constant.Value, bool) {
	switch {
	case isInteger(t):
		x := constant.ToInt(v)
		if x.Kind() != constant.Int {
			return nil, false
		}
		if isUntyped(t) {
			return x, true
		}
		bits := sizeof(t) * 8
		if isUnsigned(t) {
			return x, constant.Sign(x) >= 0 && constant.BitLen(x) <= bits
		}
		// Signed: -2^(bits-1) <= x <= 2^(bits-1)-1.
		lo := constant.Shift(constant.MakeInt64(-1), token.SHL, uint(bits-1))
		hi := constant.BinaryOp(constant.Shift(constant.MakeInt64(1), token.SHL, uint(bits-1)), token.SUB, constant.MakeInt64(1))
		return x, constant.Compare(lo, token.LEQ, x) && constant.Compare(x, token.LEQ, hi)
	case isFloat(t):
		x := constant.ToFloat(v)
		if x.Kind() != constant.Float {
			return nil, false
		}
		switch t.Kind() {
		case types.Float32:
			return round32(x)
		case types.Float64:
			return round64(x)
		}
		return x, true
	case isComplex(t):
		x := constant.ToComplex(v)
		if x.Kind() != constant.Complex {
			return nil, false
		}
		round := round64
		switch t.Kind() {
		case types.Complex64:
			round = round32
		case types.UntypedComplex:
			return x, true
		}
		re, ok1 := round(constant.Real(x))
		im, ok2 := round(constant.Imag(x))
		if !ok1 || !ok2 {
			return nil, false
		}
		return constant.BinaryOp(re, token.ADD, constant.MakeImag(im)), true
	}
	return nil, false
}

func round32(x constant.Value) (constant.Value, bool) {
	f32, _ := constant.Float32Val(x)
	if f := float64(f32); !math.IsInf(f, 0) {
		return constant.MakeFloat64(f), true
	}
	return nil, false
}

func round64(x constant.Value) (constant.Value, bool) {
	if f, _ := constant.Float64Val(x); !math.IsInf(f, 0) {
		return constant.MakeFloat64(f), true
	}
	return nil, false
}

// notRepresentable says why v is no value of t, for an error.
func notRepresentable(v constant.Value, t *types.Basic) string {
	switch {
	case v.Kind() == constant.Complex && !isComplex(t) && constant.Sign(constant.Imag(v)) != 0:
		return fmt.Sprintf("is complex, and a %s is real", t)
	case isInteger(t) && constant.ToInt(v).Kind() != constant.Int:
		return fmt.Sprintf("has a fraction, and a %s is an integer", t)
	}
	return fmt.Sprintf("overflows %s", t)
}

func sizeof(t *types.Basic) int {
	switch t.Kind() {
	case types.Int8, types.Uint8:
		return 1
	case types.Int16, types.Uint16:
		return 2
	case types.Int32, types.Uint32, types.Float32:
		return 4
	case types.Complex128:
		return 16
	}
	return wordBits / 8 // int, uint, uintptr, the 64-bit types, complex64's 8
}

func isTyped(t *types.Basic) bool    { return t.Info()&types.IsUntyped == 0 }
func isUntyped(t *types.Basic) bool  { return !isTyped(t) }
func isInteger(t *types.Basic) bool  { return t.Info()&types.IsInteger != 0 }
func isUnsigned(t *types.Basic) bool { return t.Info()&types.IsUnsigned != 0 }
func isFloat(t *types.Basic) bool    { return t.Info()&types.IsFloat != 0 }
func isComplex(t *types.Basic) bool  { return t.Info()&types.IsComplex != 0 }
func isNumeric(t *types.Basic) bool  { return t.Info()&types.IsNumeric != 0 }

// render writes x back as Go, briefly, for messages.
func render(x ast.Expr) string {
	var b strings.Builder
	write(&b, x, 0)
	return b.String()
}

func write(b *strings.Builder, x ast.Expr, depth int) {
	if depth > MaxDepth || b.Len() > 80 {
		b.WriteString("…")
		return
	}
	switch n := x.(type) {
	case *ast.BasicLit:
		b.WriteString(clip(n.Value, 40))
	case *ast.Ident:
		b.WriteString(n.Name)
	case *ast.SelectorExpr:
		write(b, n.X, depth+1)
		b.WriteString("." + n.Sel.Name)
	case *ast.ParenExpr:
		b.WriteString("(")
		write(b, n.X, depth+1)
		b.WriteString(")")
	case *ast.UnaryExpr:
		b.WriteString(n.Op.String())
		write(b, n.X, depth+1)
	case *ast.BinaryExpr:
		write(b, n.X, depth+1)
		b.WriteString(" " + n.Op.String() + " ")
		write(b, n.Y, depth+1)
	case *ast.CallExpr:
		write(b, n.Fun, depth+1)
		b.WriteString("(")
		for i, a := range n.Args {
			if i > 0 {
				b.WriteString(", ")
			}
			write(b, a, depth+1)
		}
		b.WriteString(")")
	case *ast.CompositeLit:
		b.WriteString("a composite literal")
	case *ast.FuncLit:
		b.WriteString("a function literal")
	case *ast.IndexExpr:
		write(b, n.X, depth+1)
		b.WriteString("[…]")
	case *ast.StarExpr:
		b.WriteString("*")
		write(b, n.X, depth+1)
	default:
		fmt.Fprintf(b, "%T", x)
	}
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
