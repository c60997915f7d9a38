package coalesce

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const module = "github.com/coalescing-course/coalesce"

// layers is the layer of every package of the module, as the package
// documentation draws them: a package may import only packages of lower
// layers. A new package must be placed here.
var layers = map[string]int{
	"internal/words":                1,
	"internal/notebook":             1,
	"internal/attempt":              2,
	"internal/atomicfile":           0,
	"internal/progress":             1,
	"internal/constexpr":            0,
	"internal/dockerfile":           0,
	"lessons/devices":               0,
	"lessons/metrics":               0,
	"lessons/units":                 0,
	"lessons/spec":                  1,
	"lessons/sectors":               2,
	"measure":                       2,
	"lessons/figures":               3,
	"lessons/simt":                  3,
	"cuda":                          3,
	"lessons/plots":                 4,
	"lessons/exercises":             4,
	"grader":                        4,
	"grader/sandbox":                4,
	"calibrate":                     4,
	"grader/gradebook":              5,
	"lab":                           5,
	"cmd/coalesce":                  6,
	"deploy":                        6,
	"internal/notebook/cmd/numbers": 6,
	".":                             6,
}

// notebookOnly are imports that only the notebook face may make: the
// pictures, tables and verdicts reach GoNB through lab alone.
var notebookOnly = []string{"github.com/janpfeifer/gonb/gonbui", "github.com/janpfeifer/gonb/gonbui/protocol"}

// imports returns, per package directory of the module (relative, "." for
// the root), the imports of its non-test files.
func imports(t *testing.T) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	err := filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != "." && (strings.HasPrefix(name, ".") || name == "testdata" || name == "build" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		dir := filepath.ToSlash(filepath.Dir(path))
		if _, ok := out[dir]; !ok {
			out[dir] = nil
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			out[dir] = append(out[dir], p)
		}
		return nil
	})
	require.NoError(t, err)
	return out
}

// TestLayers holds the import graph to the layers: no arrow runs back up
// (nor sideways, within a layer), every package has its place, and only
// lab talks to the notebook.
func TestLayers(t *testing.T) {
	for dir, imps := range imports(t) {
		layer, ok := layers[dir]
		if !assert.True(t, ok, "package %s has no layer: place it in layers (and in the package documentation)", dir) {
			continue
		}
		for _, imp := range imps {
			if slices.Contains(notebookOnly, imp) {
				assert.Equal(t, "lab", dir, "%s imports %s: only lab talks to the notebook", dir, imp)
			}
			rel, ok := strings.CutPrefix(imp, module+"/")
			if !ok {
				continue
			}
			assert.Less(t, layers[rel], layer, "%s (layer %d) imports %s (layer %d): an arrow runs up or sideways", dir, layer, rel, layers[rel])
		}
	}
	for dir := range layers {
		_, err := os.Stat(dir)
		assert.NoError(t, err, "layers lists %s, which is not there", dir)
	}
}
