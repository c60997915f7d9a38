package notebook

import (
	"fmt"
	"go/ast"
	goparser "go/parser"
	"go/token"
	"path"
	"sort"
	"strconv"
	"strings"
)

// MissingImport is a package a code cell uses that neither the cell nor
// an earlier code cell imports: the cell compiles only when GoNB's
// goimports guesses the package, and its guesses differ between machines
// (on a GPU host, 09-matrix's metrics.LdSectors did not compile).
type MissingImport struct {
	// Cell is the cell's index; Line the 1-based line of the use in it.
	Cell, Line int
	// Name is the package name used; Use the selector, "metrics.LdSectors".
	Name, Use string
}

func (m MissingImport) String() string {
	return fmt.Sprintf("cell %d, line %d: %s uses package %s, which no import of this cell or an earlier one brings in", m.Cell+1, m.Line, m.Use, m.Name)
}

// MissingImports returns the packages the code cells use without an
// import, in notebook order. GoNB keeps a cell's imports and
// declarations for the cells after it, so a name a cell uses is known
// when that cell or an earlier one imports it or declares it; a name used
// as X in X.Sel that is neither, nor declared inside the cell, is a
// package goimports would have to guess. A cell that does not parse is
// left to the notebook run, which fails it.
func MissingImports(nb *Notebook) []MissingImport {
	known := map[string]bool{}
	var out []MissingImport
	for _, c := range nb.Cells {
		if c.Type != Code {
			continue
		}
		g := SplitGoNB(c.Source)
		if g.NotGo {
			continue
		}
		fset := token.NewFileSet()
		f, err := goparser.ParseFile(fset, "cell.go", "package main\n"+g.Decls, 0)
		if err != nil {
			continue
		}
		var body *ast.File
		if g.HasMain {
			body, err = goparser.ParseFile(fset, "main.go", "package main\nfunc main() {\n"+g.Body+"\n}", 0)
			if err != nil {
				continue
			}
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
			known[name] = true
		}
		for _, d := range f.Decls {
			for _, n := range declared(d) {
				known[n] = true
			}
		}
		for _, file := range []*ast.File{f, body} {
			if file == nil {
				continue
			}
			// The parser leaves unresolved what no scope of the file
			// declares: package names among them.
			unresolved := map[*ast.Ident]bool{}
			for _, id := range file.Unresolved {
				unresolved[id] = true
			}
			lineOff := 1 // the package line
			if file == body {
				lineOff = 2 // and func main() {
			}
			ast.Inspect(file, func(n ast.Node) bool {
				sel, ok := n.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				id, ok := sel.X.(*ast.Ident)
				if !ok || !unresolved[id] || known[id.Name] || predeclared[id.Name] {
					return true
				}
				out = append(out, MissingImport{Cell: c.Index, Line: fset.Position(id.Pos()).Line - lineOff, Name: id.Name, Use: id.Name + "." + sel.Sel.Name})
				return true
			})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Cell < out[j].Cell })
	return out
}

// declared returns the names a top-level declaration declares.
func declared(d ast.Decl) []string {
	var names []string
	switch x := d.(type) {
	case *ast.FuncDecl:
		if x.Recv == nil {
			names = append(names, x.Name.Name)
		}
	case *ast.GenDecl:
		for _, s := range x.Specs {
			switch sp := s.(type) {
			case *ast.ValueSpec:
				for _, n := range sp.Names {
					names = append(names, n.Name)
				}
			case *ast.TypeSpec:
				names = append(names, sp.Name.Name)
			}
		}
	}
	return names
}

// predeclared are Go's predeclared names that a selector may follow
// (none is a package; listed so that a method value on one is not).
var predeclared = map[string]bool{}

func init() {
	for _, n := range strings.Fields("bool byte complex64 complex128 error float32 float64 int int8 int16 int32 int64 rune string uint uint8 uint16 uint32 uint64 uintptr any comparable true false iota nil append cap clear close complex copy delete imag len make max min new panic print println real recover") {
		predeclared[n] = true
	}
}
