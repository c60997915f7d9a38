package sandbox

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// good is a coalesced copy kernel, which the stand-in passes.
const good = `import "github.com/coalescing-course/coalesce/lessons/simt"

func copyK(t *simt.Thread, in, out *simt.Global[float32], n int) {
	i := t.BlockIdx.X*t.BlockDim.X + t.ThreadIdx.X
	if i < n {
		out.Store(t, i, in.Load(t, i))
	}
}
`

// kernel is good with extra declarations after it.
func kernel(extra string) string { return good + extra }

// TestVetRefuses holds every refusal to its line and its reason: the line
// counted by hand in each source (good is 8 lines; what kernel adds starts at line 9).
func TestVetRefuses(t *testing.T) {
	for _, imp := range []string{"os", "syscall", "unsafe", "net", "net/http", "reflect", "runtime", "runtime/debug",
		"plugin", "C", "embed", "io", "fmt", "os/exec", "sync", "time", "github.com/coalescing-course/coalesce/grader/sandbox/testdata/exercises"} {
		t.Run("import "+imp, func(t *testing.T) {
			err := Vet(`import x "`+imp+`"`+"\n"+strings.TrimPrefix(good, `import "github.com/coalescing-course/coalesce/lessons/simt"`), "copyK")
			assertRefused(t, err, 1, `import "`+imp+`" is not allowed: a kernel may import only cmp, math, math/bits, slices, sort, `+SimtPath)
		})
	}
	tests := []struct {
		name, src, fn string
		line          int
		want          string
	}{
		{"os.Exit", "import \"os\"\n\nfunc k() { os.Exit(0) }\n", "k", 1, `import "os" is not allowed`},
		{"goroutine bomb", kernel("func bomb() {\n\tfor {\n\t\tgo bomb()\n\t}\n}\n"), "copyK", 11, "a go statement is not allowed"},
		{"linkname", kernel("//go:linkname exit os.Exit\nfunc exit(int)\n"), "copyK", 9, "the compiler directive //go:linkname is not allowed"},
		{"noinline directive", kernel("//go:noinline\nfunc f() {}\n"), "copyK", 9, "//go:noinline is not allowed"},
		{"export", kernel("//export F\nfunc F() {}\n"), "copyK", 9, "//export is not allowed"},
		{"line directive", kernel("//line other.go:100\nfunc F() {}\n"), "copyK", 9, "//line is not allowed"},
		{"block line directive", kernel("/*line other.go:100*/ func F() {}\n"), "copyK", 9, "/*line is not allowed"},
		{"cgo", "// #cgo LDFLAGS: -lm\nimport \"C\"\n\nfunc k() {}\n", "k", 1, "#cgo is not allowed"},
		{"cgo import", "import \"C\"\n\nfunc k() {}\n", "k", 1, `import "C" is not allowed`},
		{"init", kernel("func init() {}\n"), "copyK", 9, "an init function is not allowed"},
		{"method named init", kernel("type T int\n\nfunc (T) init() {}\n"), "copyK", 11, "a method named init is not allowed"},
		{"package var", kernel("var x = bomb()\n\nfunc bomb() int { return 1 }\n"), "copyK", 9, "a package-level var is not allowed"},
		{"package var in a group", kernel("var (\n\ta int\n)\n"), "copyK", 9, "a package-level var is not allowed"},
		{"func without body", kernel("func asm(x int) int\n"), "copyK", 9, "func asm has no body"},
		{"reserved name", kernel("func Sandbox_Kernel() {}\n"), "copyK", 9, "the name Sandbox_Kernel is not allowed: names starting with Sandbox_ are the sandbox's"},
		{"reserved type name", kernel("type Sandbox_T int\n"), "copyK", 9, "the name Sandbox_T is not allowed"},
		{"reserved import name", "import Sandbox_m \"math\"\n\nfunc k() float64 { return Sandbox_m.Pi }\n", "k", 1, "the import name Sandbox_m is not allowed"},
		{"bidi control", kernel("// \u202e hidden\n"), "copyK", 9, "a bidirectional-text control (U+202E) is not allowed"},
		{"invalid utf-8", kernel("// \xff\n"), "copyK", 9, "not valid UTF-8"},
		{"huge source", kernel(strings.Repeat("// padding\n", MaxSource/11)), "copyK", 0, "over the 65536 allowed"},
		{"no such func", good, "copyKernel", 0, "no func copyKernel in the source: it declares copyK"},
		{"kernel is a method", kernel("type T int\n\nfunc (T) k() {}\n"), "k", 0, "no func k in the source: it declares copyK"},
		{"generic kernel", kernel("func g[T any](x T) {}\n"), "g", 9, "func g has type parameters"},
		{"syntax error", kernel("func broken( {\n"), "copyK", 9, "does not parse"},
		{"package clause", "package main\n" + good, "copyK", 1, "does not parse"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assertRefused(t, Vet(tt.src, tt.fn), tt.line, tt.want)
		})
	}
}

func assertRefused(t *testing.T, err error, line int, want string) {
	t.Helper()
	require.ErrorIs(t, err, ErrRefused)
	var e *Error
	require.True(t, errors.As(err, &e))
	assert.Equal(t, line, e.Line, "line of %v", err)
	assert.Contains(t, err.Error(), want)
}

// TestVetAllows holds what a kernel may be: its helpers, types, consts,
// every allowed import, a dot import, directives that are only text, and
// identifiers in other scripts (a Cyrillic і in іnit is not init).
func TestVetAllows(t *testing.T) {
	tests := []struct{ name, src, fn string }{
		{"the copy", good, "copyK"},
		{"every allowed import", `import (
	"cmp"
	"math"
	"math/bits"
	"slices"
	"sort"
	. "github.com/coalescing-course/coalesce/lessons/simt"
)

type pair struct{ a, b int }

const tile = 32

func k(t *Thread, in, out *Global[float32], n int) {
	_ = cmp.Compare(1, 2) + bits.Len(3) + int(math.Sqrt(4))
	s := []int{3, 1}
	slices.Sort(s)
	sort.Ints(s)
}
`, "k"},
		{"local var and goroutine-free closures", "func k() int {\n\tvar x = 1\n\tf := func() int { return x }\n\treturn f()\n}\n", "k"},
		{"a directive as text", "// see go:linkname in the docs; not a directive\nfunc k() { _ = \"//go:linkname\" }\n", "k"},
		{"cyrillic init", "func \u0456nit() {}\n", "\u0456nit"},
		{"a method of the same name", "type T int\n\nfunc (T) k() {}\n\nfunc k() {}\n", "k"},
		// The learner's code is a package of its own: names of Go's and of
		// the sandbox's main are the learner's to declare.
		{"func main", kernel("func main() {}\n"), "copyK"},
		{"predeclared names", kernel("type error int\n\nconst nil = 0\n\nfunc panic(v any) {}\n\nfunc len() {}\n"), "copyK"},
		{"a kernel named err", "func err() {}\n", "err"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.NoError(t, Vet(tt.src, tt.fn))
		})
	}
}

// runesOf lists every code point of a Unicode table.
func runesOf(tab *unicode.RangeTable) []rune {
	var out []rune
	for _, r := range tab.R16 {
		for c := rune(r.Lo); c <= rune(r.Hi); c += rune(r.Stride) {
			out = append(out, c)
		}
	}
	for _, r := range tab.R32 {
		for c := rune(r.Lo); c <= rune(r.Hi); c += rune(r.Stride) {
			out = append(out, c)
		}
	}
	return out
}

// TestVetRefusesHiddenCharacters holds Vet to the whole class Hidden
// names, enumerated from Unicode's tables (Bidi_Control, Cf, Cc, Zl, Zp,
// Variation_Selector, Other_Default_Ignorable_Code_Point), not from a
// list: each one, in a comment, in a string and in a raw string, is
// refused at its line with its code point. Tab, newline and carriage
// return, and letters of other scripts, stay allowed.
func TestVetRefusesHiddenCharacters(t *testing.T) {
	tables := map[string]*unicode.RangeTable{"Bidi_Control": unicode.Bidi_Control, "Cf": unicode.Cf, "Cc": unicode.Cc,
		"Zl": unicode.Zl, "Zp": unicode.Zp, "Variation_Selector": unicode.Variation_Selector,
		"Other_Default_Ignorable_Code_Point": unicode.Other_Default_Ignorable_Code_Point}
	n := 0
	for name, tab := range tables {
		for _, r := range runesOf(tab) {
			if r == '\t' || r == '\n' || r == '\r' {
				continue
			}
			n++
			for _, where := range []string{"// a comment " + string(r) + "\n", "const s = \"" + string(r) + "\"\n", "const raw = `" + string(r) + "`\n"} {
				err := Vet(kernel(where), "copyK")
				if !assert.ErrorIs(t, err, ErrRefused, "%s U+%04X in %q", name, r, where) {
					continue
				}
				var e *Error
				require.True(t, errors.As(err, &e))
				assert.Equal(t, 9, e.Line, "%s U+%04X", name, r)
				assert.Contains(t, e.Msg, fmt.Sprintf("(U+%04X) is not allowed", r))
			}
		}
	}
	// U+061C, U+200E and U+200F (the marks) among them, and more than the
	// nine controls of Trojan Source's paper.
	for _, r := range []rune{'\u061c', '\u200e', '\u200f', '\u202a', '\u202e', '\u2066', '\u2069', '\u200b', '\ufeff', '\u2028', '\u3164', '\ufe0f', '\x1b'} {
		assert.NotEmpty(t, Hidden(r), "U+%04X", r)
	}
	assert.Greater(t, n, 4000)
	for _, ok := range []string{"// tab\there\r\n", "const s = \"é ü 中文 🚀 ∑\"\n", "func іnit() {}\n"} {
		assert.NoError(t, Vet(kernel(ok), "copyK"), "%q", ok)
	}
}
