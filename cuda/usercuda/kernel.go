package usercuda

import (
	_ "embed"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/coalescing-course/coalesce/cuda"
	"github.com/coalescing-course/coalesce/units"
)

// Dim3 is a grid's or a block's extent, as CUDA's dim3: a zero Y or Z
// counts as 1, as dim3's constructor makes it.
type Dim3 struct{ X, Y, Z int }

func (d Dim3) norm() Dim3 {
	if d.Y == 0 {
		d.Y = 1
	}
	if d.Z == 0 {
		d.Z = 1
	}
	return d
}

// String writes d as CUDA writes a dim3 or a thread's index: "(256,1,1)".
func (d Dim3) String() string { return fmt.Sprintf("(%d,%d,%d)", d.X, d.Y, d.Z) }

// Kernel is a learner's CUDA kernel and one launch of it, described
// without any knowledge of the exercise it answers: the entry's name, its
// parameters (Args, in order), the learner's body, and the launch's grid,
// block and dynamic shared memory. Run compiles the body inside
//
//	extern "C" __global__ void NAME(ARGS)
//	{
//	BODY
//	}
//
// with a host program around it, so the learner writes only the body, and
// the line numbers nvcc and compute-sanitizer report are the body's own
// (kernel.cu:1 is its first line).
//
// The program runs the learner's code as the user who runs it, with the
// user's rights: it is no sandbox, and is meant for a learner's own
// notebook on their own machine.
type Kernel struct {
	Name string // the entry's name: a C identifier
	// Signature, when set, is the declaration the learner is shown (such
	// as "__global__ void copy(const float* in, float* out, int n)"); it
	// must declare Name with Args, up to spacing and extern "C", so that
	// the text shown and the program run cannot disagree. "" is the one
	// Declaration returns.
	Signature   string
	Body        string // the learner's text: what goes between the braces
	Args        []Arg
	Grid, Block Dim3
	SharedBytes int // dynamic shared memory of each block
}

// Arg is one parameter of a Kernel. A pointer (CType ending in
// "*") is a device buffer of Bytes bytes, holding Data before the launch
// (0xA5 in every byte when Data is nil, so that what the kernel never
// writes shows); Out marks a buffer read back after the launch. A value
// (int, float...) is Int for the integer types and Float for the floating
// ones.
type Arg struct {
	Name  string // a C identifier
	CType string // one of ArgTypes
	Data  []byte
	Bytes int64
	Out   bool
	Int   int64
	Float float64
}

// Limits on a Kernel, so that a mistake cannot ask the GPU for what
// no course launch needs.
const (
	MaxArgs        = 16
	MaxBodyBytes   = 64 << 10
	MaxArgBytes    = 4 << 30  // one buffer
	MaxTotalBytes  = 16 << 30 // all buffers
	MaxSharedBytes = 227 << 10
	maxNameLen     = 64
)

// The C types an arg may have: pointers to these element types, const or
// not, and these values.
var (
	userElemBytes = map[string]int64{
		"float": 4, "double": 8, "int": 4, "unsigned int": 4, "long long": 8,
		"unsigned char": 1, "float2": 8, "float4": 16, "int2": 8, "int4": 16,
	}
	userIntTypes   = map[string][2]float64{"int": {math.MinInt32, math.MaxInt32}, "unsigned int": {0, math.MaxUint32}, "long long": {math.MinInt64, math.MaxInt64}}
	userFloatTypes = map[string]bool{"float": true, "double": true}
)

// ArgTypes returns every C type an arg may have, sorted: each element
// type as "T*" and "const T*", and the value types.
func ArgTypes() []string {
	var out []string
	for t := range userElemBytes {
		out = append(out, t+"*", "const "+t+"*")
	}
	for t := range userIntTypes {
		out = append(out, t)
	}
	for t := range userFloatTypes {
		out = append(out, t)
	}
	slices.Sort(out)
	return out
}

// normType spells a C type as ArgTypes does: single spaces, the star
// against the type.
func normType(t string) string {
	t = strings.Join(strings.Fields(t), " ")
	return strings.ReplaceAll(t, " *", "*")
}

// argKind is how the host program passes an arg: 'p' a pointer, 'i' an
// integer, 'f' a floating value; elem is a pointer's element size.
func argKind(ctype string) (kind byte, elem int64, ok bool) {
	t := normType(ctype)
	if base, isPtr := strings.CutSuffix(t, "*"); isPtr {
		base = strings.TrimPrefix(base, "const ")
		e, ok := userElemBytes[base]
		return 'p', e, ok
	}
	if _, ok := userIntTypes[t]; ok {
		return 'i', 0, true
	}
	if userFloatTypes[t] {
		return 'f', 0, true
	}
	return 0, 0, false
}

var identRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// reservedNames are what a kernel or an arg may not be called: C++'s
// keywords, CUDA's built-in variables, and main.
var reservedNames = strings.Fields(`alignas alignof asm auto bool break case catch char class const constexpr
	const_cast continue decltype default delete do double dynamic_cast else enum explicit export extern false
	float for friend goto if inline int long mutable namespace new noexcept nullptr operator private protected
	public register reinterpret_cast return short signed sizeof static static_assert static_cast struct switch
	template this thread_local throw true try typedef typeid typename union unsigned using virtual void volatile
	wchar_t while threadIdx blockIdx blockDim gridDim warpSize main`)

// checkIdent says why name cannot name a kernel or an arg, or nil.
func checkIdent(name string) error {
	switch {
	case !identRE.MatchString(name):
		return fmt.Errorf("%q is not a C identifier (a letter or _, then letters, digits or _)", name)
	case len(name) > maxNameLen:
		return fmt.Errorf("%q is longer than %d characters", name, maxNameLen)
	case strings.HasPrefix(name, "coalesce_") || strings.HasPrefix(name, "__"):
		return fmt.Errorf("%q: names starting with coalesce_ or __ are the generated program's", name)
	case slices.Contains(reservedNames, name):
		return fmt.Errorf("%q is a C++ keyword or a CUDA built-in", name)
	}
	return nil
}

// Validate says what is wrong with k, naming the field and what is
// allowed; nil when the program can be generated and launched.
func (k *Kernel) Validate() error {
	if err := checkIdent(k.Name); err != nil {
		return fmt.Errorf("cuda: kernel name: %w", err)
	}
	if len(k.Body) > MaxBodyBytes {
		return fmt.Errorf("cuda: kernel %s: the body is %d bytes, at most %d allowed", k.Name, len(k.Body), MaxBodyBytes)
	}
	if !utf8.ValidString(k.Body) || strings.ContainsRune(k.Body, 0) {
		return fmt.Errorf("cuda: kernel %s: the body is not text (invalid UTF-8 or a NUL byte)", k.Name)
	}
	if len(k.Args) == 0 || len(k.Args) > MaxArgs {
		return fmt.Errorf("cuda: kernel %s: %d args, want 1 to %d", k.Name, len(k.Args), MaxArgs)
	}
	seen := map[string]bool{k.Name: true}
	var total int64
	for i, a := range k.Args {
		if err := a.validate(); err != nil {
			return fmt.Errorf("cuda: kernel %s: arg %d (%s): %w", k.Name, i, a.Name, err)
		}
		if seen[a.Name] {
			return fmt.Errorf("cuda: kernel %s: arg %d: the name %q is taken (by the kernel or an earlier arg)", k.Name, i, a.Name)
		}
		seen[a.Name] = true
		total += a.Bytes
	}
	if total > MaxTotalBytes {
		return fmt.Errorf("cuda: kernel %s: the buffers hold %d bytes in all, at most %d allowed", k.Name, total, int64(MaxTotalBytes))
	}
	g, b := k.Grid.norm(), k.Block.norm()
	switch {
	case g.X < 1 || g.X > math.MaxInt32 || g.Y < 1 || g.Y > 65535 || g.Z < 1 || g.Z > 65535:
		return fmt.Errorf("cuda: kernel %s: grid %v: want X in 1..2147483647, Y and Z in 1..65535 (0 counts as 1)", k.Name, g)
	case b.X < 1 || b.X > 1024 || b.Y < 1 || b.Y > 1024 || b.Z < 1 || b.Z > 64:
		return fmt.Errorf("cuda: kernel %s: block %v: want X and Y in 1..1024, Z in 1..64 (0 counts as 1)", k.Name, b)
	case b.X*b.Y*b.Z > 1024:
		return fmt.Errorf("cuda: kernel %s: block %v has %d threads, at most 1024 allowed", k.Name, b, b.X*b.Y*b.Z)
	case k.SharedBytes < 0 || k.SharedBytes > MaxSharedBytes:
		return fmt.Errorf("cuda: kernel %s: shared bytes %d: want 0 to %d", k.Name, k.SharedBytes, MaxSharedBytes)
	}
	if k.Signature != "" && !slices.Equal(declTokens(k.Signature), declTokens(k.Declaration())) {
		return fmt.Errorf("cuda: kernel %s: the signature %q does not declare the kernel's args: want %q", k.Name, k.Signature, k.Declaration())
	}
	return nil
}

func (a Arg) validate() error {
	if err := checkIdent(a.Name); err != nil {
		return fmt.Errorf("name: %w", err)
	}
	kind, elem, ok := argKind(a.CType)
	if !ok {
		return fmt.Errorf("C type %q is not allowed: want one of %s", a.CType, strings.Join(ArgTypes(), ", "))
	}
	t := normType(a.CType)
	if kind == 'p' {
		switch {
		case a.Bytes < 1 || a.Bytes > MaxArgBytes:
			return fmt.Errorf("%s buffer of %d bytes: want 1 to %d", t, a.Bytes, int64(MaxArgBytes))
		case a.Bytes%elem != 0:
			return fmt.Errorf("%s buffer of %d bytes: not a whole number of %d-byte elements", t, a.Bytes, elem)
		case a.Data != nil && int64(len(a.Data)) != a.Bytes:
			return fmt.Errorf("%d bytes of data for a buffer of %d: want as many (or none: 0xA5 bytes)", len(a.Data), a.Bytes)
		case a.Out && strings.HasPrefix(t, "const "):
			return fmt.Errorf("%s is read only, so it cannot be an output", t)
		case a.Int != 0 || a.Float != 0:
			return fmt.Errorf("the %s buffer has no Int or Float value", t)
		}
		return nil
	}
	switch {
	case a.Bytes != 0 || a.Data != nil || a.Out:
		return fmt.Errorf("the %s value has no Bytes, Data or Out: those are a buffer's", t)
	case kind == 'i' && a.Float != 0:
		return fmt.Errorf("the %s value takes Int, not Float (%s)", t, units.AsWritten(a.Float))
	case kind == 'f' && a.Int != 0:
		return fmt.Errorf("the %s value takes Float, not Int (%d)", t, a.Int)
	case kind == 'i':
		if r := userIntTypes[t]; float64(a.Int) < r[0] || float64(a.Int) > r[1] {
			return fmt.Errorf("%d does not fit in the type %s (%s to %s)", a.Int, t, units.Count.Format(r[0]), units.Count.Format(r[1]))
		}
	case math.IsNaN(a.Float) || math.IsInf(a.Float, 0) || t == "float" && math.Abs(a.Float) > math.MaxFloat32:
		return fmt.Errorf("%s is not a finite %s", units.AsWritten(a.Float), t)
	}
	return nil
}

// Declaration returns the kernel's declaration as the learner sees it:
// "__global__ void copy(const float* in, float* out, int n)".
func (k *Kernel) Declaration() string {
	params := make([]string, len(k.Args))
	for i, a := range k.Args {
		params[i] = normType(a.CType) + " " + a.Name
	}
	return "__global__ void " + k.Name + "(" + strings.Join(params, ", ") + ")"
}

var declTokenRE = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*|"[^"]*"|\S`)

// declTokens splits a declaration into its tokens, without an extern "C".
func declTokens(s string) []string {
	toks := declTokenRE.FindAllString(s, -1)
	if len(toks) >= 2 && toks[0] == "extern" && toks[1] == `"C"` {
		toks = toks[2:]
	}
	return toks
}

//go:embed kernelsrc/host.cu
var userHost string

// hostHeaders are the standard headers that cuda.SharedHeader and
// kernelsrc/host.cu include (TestHostHeadersFirst holds them to it).
var hostHeaders = []string{"algorithm", "cerrno", "cstdarg", "cstdint", "cstdio", "cstdlib", "cstring", "functional", "map", "stdexcept", "string", "vector", "cuda_runtime.h"}

// The names the learner's lines and the generated ones go by in nvcc's
// and compute-sanitizer's messages.
const (
	userFile = "kernel.cu"
	hostFile = "coalesce_host.cu"
)

// Source returns the program Run compiles for k: the kernel,
// with `#line 1 "kernel.cu"` before the body so that nvcc numbers the
// learner's own lines; the glue that launches it with its args; the host
// code the course's harness shares (cuda.SharedHeader); the host program
// (kernelsrc/host.cu). The generated lines are named
// coalesce_host.cu, numbered as in the whole text. It depends on the
// kernel's code and its args' names and types only, not on the launch,
// the sizes or the values, so that one build serves every launch.
func (k *Kernel) Source() (string, error) {
	if err := k.Validate(); err != nil {
		return "", err
	}
	var b lineWriter
	b.line(`#line 2 "` + hostFile + `"`)
	b.line("// Generated by package cuda of the coalescing course around a learner's kernel.")
	// Every header the generated code includes, before the learner's
	// lines, so that none of them meets the learner's names first.
	for _, h := range hostHeaders {
		b.line("#include <" + h + ">")
	}
	b.line("struct coalesce_value { long long i; double f; };")
	b.line("")
	b.line(`extern "C" ` + k.Declaration())
	b.line("{")
	b.line(`#line 1 "` + userFile + `"`)
	body := k.Body
	if body != "" && !strings.HasSuffix(body, "\n") {
		body += "\n"
	}
	b.text(body)
	b.line("}")
	b.line(fmt.Sprintf(`#line %d "%s"`, b.n+2, hostFile))
	b.line("")
	b.line("static void coalesce_launch(void* const* coalesce_p, const coalesce_value* coalesce_v, dim3 coalesce_grid, dim3 coalesce_block, size_t coalesce_shared) {")
	b.line("    " + k.Name + "<<<coalesce_grid, coalesce_block, coalesce_shared>>>(")
	kinds := make([]byte, len(k.Args))
	for i, a := range k.Args {
		kind, _, _ := argKind(a.CType)
		kinds[i] = kind
		var expr string
		switch t := normType(a.CType); kind {
		case 'p':
			expr = fmt.Sprintf("(%s)coalesce_p[%d]", t, i)
		case 'i':
			expr = fmt.Sprintf("(%s)coalesce_v[%d].i", t, i)
		default:
			expr = fmt.Sprintf("(%s)coalesce_v[%d].f", t, i)
		}
		sep := ","
		if i == len(k.Args)-1 {
			sep = ");"
		}
		b.line("        " + expr + sep)
	}
	b.line("}")
	b.line("static const void* const coalesce_kernel = (const void*)" + k.Name + ";")
	b.line(`static const char coalesce_name[] = "` + k.Name + `";`)
	b.line(`static const char coalesce_kinds[] = "` + string(kinds) + `";`)
	b.line("static const int coalesce_nargs = " + strconv.Itoa(len(k.Args)) + ";")
	b.line("")
	b.text(cuda.SharedHeader)
	b.line("")
	b.text(userHost)
	return b.String(), nil
}

// lineWriter builds a text and counts its lines.
type lineWriter struct {
	strings.Builder
	n int
}

func (w *lineWriter) line(s string) { w.text(s + "\n") }

func (w *lineWriter) text(s string) {
	w.WriteString(s)
	w.n += strings.Count(s, "\n")
}
