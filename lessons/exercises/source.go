package exercises

import (
	_ "embed"
	"go/ast"
	"go/parser"
	"go/token"
	"strings"
)

//go:embed starters.go
var startersGo string

// starterSource returns the source of the named functions of starters.go,
// doc comments included, each renamed to the first word of its comment
// (stridedCopyStarter is shown as StridedCopy): the notebook's cell.
func starterSource(funcs ...string) string {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "starters.go", startersGo, parser.ParseComments)
	if err != nil {
		panic("exercises: starters.go does not parse: " + err.Error()) // compiled from the same text: cannot happen
	}
	var parts []string
	for _, name := range funcs {
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Name.Name != name {
				continue
			}
			text := startersGo[fset.Position(fd.Doc.Pos()).Offset:fset.Position(fd.End()).Offset]
			shown, _, _ := strings.Cut(fd.Doc.Text(), " ")
			parts = append(parts, strings.Replace(text, "func "+name+"(", "func "+shown+"(", 1))
		}
	}
	return strings.Join(parts, "\n\n") + "\n"
}
