package sandbox

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/scanner"
	"go/token"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxSource is the largest kernel source vetted, in bytes: a notebook's
// kernel and its helpers are a few kilobytes; anything near this is not a
// kernel, and the bound keeps the parser and the compiler's work small.
const MaxSource = 64 << 10

// SimtPath is the import path of the course's package simt, the one
// course package a kernel may import.
const SimtPath = "github.com/coalescing-course/coalesce/lessons/simt"

// allowed are the imports a kernel may make: pure computation, and simt.
// Everything that reaches the system (os, syscall, net, io...), the
// runtime (runtime, reflect, unsafe, plugin), cgo ("C") or files (embed)
// is out.
var allowed = []string{"cmp", "math", "math/bits", "slices", "sort", SimtPath}

// AllowedImports returns the import paths a kernel's source may name.
func AllowedImports() []string { return slices.Clone(allowed) }

// Vet checks a kernel's source before anything builds it, and returns
// nil or an *Error of ErrRefused naming the first line at fault and what
// is allowed. The source is Go declarations without a package clause:
// imports, then funcs, types and consts. fn must be one of its funcs.
// Vet refuses:
//
//   - a source over MaxSource bytes, or with a character that shows a
//     reader other code than the compiler reads (Hidden: bidirectional
//     controls, invisible and control characters, line separators);
//   - an import outside AllowedImports;
//   - a package-level var (its initializer runs before main can set the
//     child's limits), an init function or a method named init (the same),
//     a func without a body (assembly, or a linkname's target);
//   - a go statement: kernels run on simt's threads, and a goroutine is
//     both a fork bomb and the only way to a data race, which in Go can
//     break memory safety without package unsafe;
//   - a compiler directive (//go:..., //line, //export, #cgo) anywhere;
//   - a package-level name, or an import's name, that starts with
//     Sandbox_: the names the sandbox adds to the learner's package. Any
//     other name is allowed (main, err, len, error...): the learner's code
//     is a package of its own, whose names shadow nothing of the
//     sandbox's.
func Vet(src, fn string) error {
	if len(src) > MaxSource {
		return refuse(0, "the source is %d bytes, over the %d allowed: a kernel and its helpers are a few kilobytes", len(src), MaxSource)
	}
	if !utf8.ValidString(src) {
		return refuse(lineOf(src, invalidAt(src)), "the source is not valid UTF-8")
	}
	for i, r := range src {
		if kind := Hidden(r); kind != "" {
			return refuse(lineOf(src, i), "%s (U+%04X) is not allowed, in code, comments or strings alike: it shows a reader other code than the compiler reads", kind, r)
		}
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "kernel.go", header+src, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		var list scanner.ErrorList
		if errors.As(err, &list) && len(list) > 0 {
			return &Error{Err: ErrRefused, Line: list[0].Pos.Line, Msg: "does not parse: " + list[0].Msg}
		}
		return &Error{Err: ErrRefused, Msg: "does not parse: " + err.Error()}
	}
	line := func(n ast.Node) int { return fset.Position(n.Pos()).Line }
	var errs []*Error
	add := func(n ast.Node, format string, args ...any) {
		errs = append(errs, refuse(line(n), format, args...))
	}
	for _, cg := range f.Comments {
		for _, c := range cg.List {
			if fset.Position(c.Pos()).Offset < len(header) {
				continue // the header's own line directive
			}
			if d := directive(c.Text); d != "" {
				add(c, "the compiler directive %s is not allowed: comments may not start with //go:, //line or //export, nor hold #cgo", d)
			}
		}
	}
	for _, imp := range f.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		if !slices.Contains(allowed, path) {
			add(imp, "import %q is not allowed: a kernel may import only %s", path, strings.Join(allowed, ", "))
		}
		if imp.Name != nil && strings.HasPrefix(imp.Name.Name, reserved) {
			add(imp, "the import name %s is not allowed: names starting with %s are the sandbox's", imp.Name.Name, reserved)
		}
	}
	name := func(id *ast.Ident) {
		if strings.HasPrefix(id.Name, reserved) {
			add(id, "the name %s is not allowed: names starting with %s are the sandbox's", id.Name, reserved)
		}
	}
	found := false
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			switch {
			case d.Name.Name == "init" && d.Recv == nil:
				add(d, "an init function is not allowed: it would run before the sandbox sets its limits; declare funcs, types and consts")
			case d.Name.Name == "init":
				add(d, "a method named init is not allowed: declare funcs, types and consts")
			case d.Body == nil:
				add(d, "func %s has no body: a kernel's funcs are written in Go", d.Name.Name)
			}
			if d.Recv == nil {
				name(d.Name)
				if d.Name.Name == fn {
					found = true
					if d.Type.TypeParams != nil {
						add(d, "func %s has type parameters: the kernel must be a plain func", fn)
					}
				}
			}
		case *ast.GenDecl:
			switch d.Tok {
			case token.IMPORT:
			case token.VAR:
				add(d, "a package-level var is not allowed: its initializer would run before the sandbox sets its limits; declare it inside a func, or make it a const")
			case token.TYPE, token.CONST:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						name(s.Name)
					case *ast.ValueSpec:
						for _, id := range s.Names {
							name(id)
						}
					}
				}
			}
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		if g, ok := n.(*ast.GoStmt); ok {
			add(g, "a go statement is not allowed: simt runs the kernel's threads; a kernel starts no goroutines")
		}
		return true
	})
	if len(errs) > 0 {
		slices.SortStableFunc(errs, func(a, b *Error) int { return a.Line - b.Line })
		return errs[0]
	}
	if !found {
		var funcs []string
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil {
				funcs = append(funcs, fd.Name.Name)
			}
		}
		return refuse(0, "no func %s in the source: it declares %s", fn, orNone(funcs))
	}
	return nil
}

// Hidden says what kind of character r is when it can make a reader of
// the source see other code than the compiler reads (Trojan Source,
// CVE-2021-42574), "" when it cannot. The class, from Unicode's
// properties rather than a list:
//
//   - the bidirectional controls (Bidi_Control: U+061C, U+200E, U+200F,
//     U+202A–U+202E, U+2066–U+2069), which reorder what is shown;
//   - the default-ignorable code points, drawn as nothing: format
//     characters (Cf: zero-width spaces and joiners, U+FEFF, the tags),
//     variation selectors, Hangul fillers (Other_Default_Ignorable_Code_Point);
//   - the line and paragraph separators (U+2028, U+2029, and NEL, U+0085),
//     which an editor breaks a line at where Go sees none, so that a
//     comment seems to end;
//   - every other control character (Cc) but tab, newline and carriage
//     return: backspace, escape and the rest rewrite a terminal's line.
func Hidden(r rune) string {
	switch {
	case r == '\t' || r == '\n' || r == '\r':
		return ""
	case unicode.Is(unicode.Bidi_Control, r):
		return "a bidirectional-text control"
	case r == '\u0085' || unicode.Is(unicode.Zl, r) || unicode.Is(unicode.Zp, r):
		return "a line or paragraph separator"
	case unicode.Is(unicode.Cc, r):
		return "a control character"
	case unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Variation_Selector, r) || unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r):
		return "an invisible character"
	}
	return ""
}

// directive returns the compiler directive a comment is, or holds, or "".
func directive(text string) string {
	for _, p := range []string{"//go:", "//line ", "/*line ", "//export "} {
		if strings.HasPrefix(text, p) {
			d, _, _ := strings.Cut(text, " ")
			return strings.TrimSuffix(d, "*/")
		}
	}
	if strings.Contains(text, "#cgo") {
		return "#cgo"
	}
	return ""
}

func refuse(line int, format string, args ...any) *Error {
	return &Error{Err: ErrRefused, Line: line, Msg: fmt.Sprintf(format, args...)}
}

// lineOf is the 1-based line of byte offset i of src.
func lineOf(src string, i int) int { return 1 + strings.Count(src[:i], "\n") }

func invalidAt(s string) int {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			return i
		}
		i += n
	}
	return len(s)
}

func orNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}
