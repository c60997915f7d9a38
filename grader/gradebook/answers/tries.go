package answers

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/coalescing-course/coalesce/grader/sandbox"
	"github.com/coalescing-course/coalesce/internal/notebook"
)

// Try is one lab.Try call found in a notebook: a learner's Go kernel
// submitted to a kernel exercise, lab.Try("10-kernels/strided-copy",
// myCopy), with the source of what the kernel needs (KernelSource).
type Try struct {
	// Cell is the cell's index in the notebook, Line the 1-based line in it.
	Cell, Line int
	// ID is the exercise id, Func the kernel's name: the call's arguments,
	// a string literal and a func's name. For the gather the second is
	// lab.Gather{Order: O, Kernel: K}: Func is K and Order O.
	ID, Func, Order string
	// Source is the declarations the kernel needs, from every code cell.
	Source KernelSource
	// Problem says why the call cannot be graded; "" when it can.
	Problem string
}

// KernelSource is the Go a kernel needs: the top-level declarations it
// names, transitively, over all the notebook's code cells (a name
// declared in several cells is its last one, as GoNB keeps the last cell
// run), and the imports they use. Text is what the sandbox builds.
type KernelSource struct {
	Text string
	// origins maps Text's lines to the cells: one per declaration.
	origins []origin
}

type origin struct {
	line       int // Text's line where the declaration starts
	cell, from int // its cell (0-based) and line there
}

// Where says which cell and line of the notebook a line of Text is, for a
// note: "cell 4, line 2"; "" when it is an import line the sandbox wrote.
func (s KernelSource) Where(line int) string {
	i := -1
	for k, o := range s.origins {
		if o.line <= line {
			i = k
		}
	}
	if i < 0 || line < 1 {
		return ""
	}
	o := s.origins[i]
	return fmt.Sprintf("cell %d, line %d", o.cell+1, o.from+line-o.line)
}

// decl is a top-level declaration of a cell.
type decl struct {
	node       ast.Decl
	text       string
	cell, line int
}

// findTries finds the Try calls of nb's code cells, parsed (nil for those
// not parsed yet), under the names the cells call lab by.
func findTries(nb *notebook.Notebook, parsed []*cellAST, names map[string]bool, dot bool) []Try {
	var tries []Try
	for i, c := range nb.Cells {
		if c.Type != notebook.Code || !strings.Contains(c.Source, tryFunc) {
			continue
		}
		if parsed[i] == nil {
			parsed[i] = parseCell(c.Source)
		}
		ca := parsed[i]
		if ca.notGo || ca.err != nil {
			continue
		}
		for fi, f := range ca.files {
			ast.Inspect(f, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok || !isCall(call.Fun, tryFunc, names, dot) {
					return true
				}
				t := Try{Cell: i, Line: ca.fset.Position(call.Pos()).Line - ca.offset[fi]}
				if len(call.Args) == callArgs {
					if lit, ok := call.Args[0].(*ast.BasicLit); ok && lit.Kind == token.STRING {
						t.ID, _ = strconv.Unquote(lit.Value)
					}
					switch a := call.Args[1].(type) {
					case *ast.Ident:
						t.Func = a.Name
					case *ast.CompositeLit:
						t.Func, t.Order = gatherOf(a)
					}
				}
				switch {
				case fi == ca.statements:
					t.Problem = "never ran: a call outside %% does not run; put %% on a line above it"
				case t.ID == "" || t.Func == "":
					t.Problem = "lab.Try takes the exercise id in quotes and the name of the kernel's func, e.g. lab.Try(\"10-kernels/strided-copy\", myCopy), " +
						"or for the gather lab.Gather{Order: myOrder, Kernel: myGather} with the names of two funcs"
				}
				tries = append(tries, t)
				return true
			})
		}
	}
	if len(tries) == 0 {
		return nil
	}
	decls, imports := topLevel(nb, parsed)
	for k := range tries {
		if tries[k].Problem == "" {
			names := []string{tries[k].Func}
			if tries[k].Order != "" {
				names = append(names, tries[k].Order)
			}
			tries[k].Source = kernelSource(names, decls, imports)
		}
	}
	return tries
}

// gatherOf reads lab.Gather{Order: O, Kernel: K} (the type named Gather,
// of any package), returning K and O; empty names for another literal,
// or fields that are not plain names.
func gatherOf(lit *ast.CompositeLit) (kernel, order string) {
	switch t := lit.Type.(type) {
	case *ast.SelectorExpr:
		if t.Sel.Name != gatherType {
			return "", ""
		}
	case *ast.Ident:
		if t.Name != gatherType {
			return "", ""
		}
	default:
		return "", ""
	}
	for _, e := range lit.Elts {
		kv, ok := e.(*ast.KeyValueExpr)
		if !ok {
			return "", ""
		}
		key, ok1 := kv.Key.(*ast.Ident)
		val, ok2 := kv.Value.(*ast.Ident)
		if !ok1 || !ok2 {
			return "", ""
		}
		switch key.Name {
		case gatherKernel:
			kernel = val.Name
		case gatherOrder:
			order = val.Name
		}
	}
	if kernel == "" || order == "" {
		return "", ""
	}
	return kernel, order
}

// isCall reports whether fun is the function name of lab (under a name
// in names, or bare after a dot import).
func isCall(fun ast.Expr, name string, names map[string]bool, dot bool) bool {
	switch f := fun.(type) {
	case *ast.SelectorExpr:
		id, ok := f.X.(*ast.Ident)
		return ok && f.Sel.Name == name && names[id.Name]
	case *ast.Ident:
		return dot && f.Name == name
	case *ast.ParenExpr:
		return isCall(f.X, name, names, dot)
	}
	return false
}

// topLevel returns the top-level declarations of nb's code cells that
// compile as declarations, by name (a method as Type.Name; the last cell
// declaring a name wins), and the imports by the name they are used
// under ("." for dot imports, listed).
func topLevel(nb *notebook.Notebook, parsed []*cellAST) (map[string]decl, map[string][]string) {
	decls := map[string]decl{}
	imports := map[string][]string{}
	for i, c := range nb.Cells {
		if c.Type != notebook.Code {
			continue
		}
		if parsed[i] == nil {
			parsed[i] = parseCell(c.Source)
		}
		ca := parsed[i]
		if ca.notGo || ca.err != nil {
			continue
		}
		for fi, f := range ca.files {
			if fi == ca.statements || ca.offset[fi] != strings.Count(filePrefix, "\n") {
				continue // statements, not declarations
			}
			for _, imp := range f.Imports {
				p, err := strconv.Unquote(imp.Path.Value)
				if err != nil {
					continue
				}
				name := path.Base(p)
				if imp.Name != nil {
					name = imp.Name.Name
				}
				if !slices.Contains(imports[name], p) {
					imports[name] = append(imports[name], p)
				}
			}
			src := ca.src[fi]
			for _, d := range f.Decls {
				if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.IMPORT {
					continue
				}
				dd := decl{node: d, text: src[ca.fset.Position(d.Pos()).Offset:ca.fset.Position(d.End()).Offset],
					cell: i, line: ca.fset.Position(d.Pos()).Line - ca.offset[fi]}
				for _, k := range declNames(d) {
					decls[k] = dd
				}
			}
		}
	}
	return decls, imports
}

// declNames are the names a declaration declares, a method's as
// Type.Name.
func declNames(d ast.Decl) []string {
	switch d := d.(type) {
	case *ast.FuncDecl:
		if d.Recv == nil || len(d.Recv.List) == 0 {
			return []string{d.Name.Name}
		}
		return []string{recvType(d.Recv.List[0].Type) + "." + d.Name.Name}
	case *ast.GenDecl:
		var out []string
		for _, s := range d.Specs {
			switch s := s.(type) {
			case *ast.TypeSpec:
				out = append(out, s.Name.Name)
			case *ast.ValueSpec:
				for _, n := range s.Names {
					out = append(out, n.Name)
				}
			}
		}
		return out
	}
	return nil
}

// recvType is the type name of a method's receiver: T of *T, T[K] or T.
func recvType(x ast.Expr) string {
	for {
		switch e := x.(type) {
		case *ast.StarExpr:
			x = e.X
		case *ast.IndexExpr:
			x = e.X
		case *ast.IndexListExpr:
			x = e.X
		case *ast.ParenExpr:
			x = e.X
		case *ast.Ident:
			return e.Name
		default:
			return ""
		}
	}
}

// kernelSource collects fn and what it names, transitively (a type with
// its methods), in notebook order, with the imports they use.
func kernelSource(fns []string, decls map[string]decl, imports map[string][]string) KernelSource {
	var chosen []decl
	seen := map[ast.Decl]bool{}
	used := map[string]bool{}
	free := false // an unqualified name declared nowhere: a dot import's
	work := slices.Clone(fns)
	for len(work) > 0 {
		name := work[0]
		work = work[1:]
		d, ok := decls[name]
		if !ok || seen[d.node] {
			continue
		}
		seen[d.node] = true
		chosen = append(chosen, d)
		for _, k := range declNames(d.node) {
			if !strings.Contains(k, ".") {
				for m := range decls {
					if strings.HasPrefix(m, k+".") {
						work = append(work, m)
					}
				}
			}
		}
		for _, name := range freeNames(d.text) {
			switch _, ok := decls[name]; {
			case ok:
				work = append(work, name)
			case imports[name] != nil:
				used[name] = true
			case token.IsExported(name):
				free = true
			}
		}
	}
	slices.SortFunc(chosen, func(a, b decl) int {
		if a.cell != b.cell {
			return a.cell - b.cell
		}
		return a.line - b.line
	})
	var b strings.Builder
	var names []string
	for name := range used {
		names = append(names, name)
	}
	if free && imports["."] != nil {
		names = append(names, ".")
	}
	slices.Sort(names)
	line := 1
	for _, name := range names {
		for _, p := range imports[name] {
			if name == "." && !slices.Contains(sandbox.AllowedImports(), p) {
				continue // which dot import a name is of is unknown: only those a kernel may make
			}
			fmt.Fprintf(&b, "import %s %q\n", name, p)
			line++
		}
	}
	var src KernelSource
	for _, d := range chosen {
		b.WriteString("\n")
		line++
		src.origins = append(src.origins, origin{line: line, cell: d.cell, from: d.line})
		b.WriteString(d.text)
		b.WriteString("\n")
		line += strings.Count(d.text, "\n") + 1
	}
	src.Text = b.String()
	return src
}

// freeNames are the names a declaration uses and does not declare
// itself: other top-level names, packages, predeclared names. The parser's
// own scopes tell them from locals, parameters and fields.
func freeNames(text string) []string {
	f, err := parser.ParseFile(token.NewFileSet(), "", filePrefix+text, 0)
	if err != nil {
		return nil
	}
	var names []string
	for _, id := range f.Unresolved {
		names = append(names, id.Name)
	}
	return names
}
