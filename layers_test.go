package coalesce

import (
	"go/parser"
	"go/token"
	"maps"
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
	"internal/words":                  1,
	"internal/notebook":               1,
	"internal/attempt":                2,
	"internal/atomicfile":             0,
	"internal/progress":               1,
	"internal/procgroup":              0,
	"internal/capped":                 0,
	"internal/rlimit":                 0,
	"internal/faketool":               0,
	"internal/constexpr":              0,
	"internal/dockerfile":             0,
	"lessons/devices":                 0,
	"lessons/metrics":                 0,
	"units":                           0,
	"lessons/spec":                    1,
	"lessons/sectors":                 2,
	"lessons/sectors/sectorstest":     3,
	"lessons/measure":                 2,
	"lessons/figures":                 3,
	"lessons/simt":                    3,
	"cuda/toolkit":                    3,
	"cuda/reference":                  3,
	"cuda":                            4,
	"lessons/plots":                   4,
	"lessons/exercises":               4,
	"lessons/exercises/exercisestest": 4,
	"grader":                          4,
	"grader/sandbox":                  1,
	"grader/collect":                  1,
	"cuda/usercuda":                   5,
	"cuda/twin":                       5,
	"cuda/cudatest":                   5,
	"calibrate":                       5,
	"grader/gradebook":                6,
	"grader/gradebook/answers":        3,
	"grader/gradebook/csvsafe":        1,
	"grader/gradebook/intake":         5,
	"grader/gradebook/report":         7,
	"lab":                             6,
	"cmd/coalesce":                    8,
	"deploy":                          8,
	"internal/notebook/cmd/numbers":   8,
	"cmd/leaks":                       8,
	".":                               0,
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
			if imp == module {
				rel, ok = ".", true // the root: Source
			}
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

// folder is the top-level folder a package directory sits in ("." for the
// root package).
func folder(dir string) string {
	top, _, _ := strings.Cut(dir, "/")
	return top
}

// folderCycles returns each pair of top-level folders that import each
// other, directly or through other folders ("lessons -> measure ->
// lessons"), given the module imports per package directory; a folder then
// sits on two floors. Each cycle is reported once, as the folders on it in
// import order from the smallest name.
func folderCycles(imps map[string][]string) []string {
	edges := map[string]map[string][]string{} // from folder -> to folder -> "pkg imports pkg"
	for dir, list := range imps {
		for _, imp := range list {
			rel, ok := strings.CutPrefix(imp, module+"/")
			if !ok {
				continue
			}
			a, b := folder(dir), folder(rel)
			if a == b {
				continue
			}
			if edges[a] == nil {
				edges[a] = map[string][]string{}
			}
			edges[a][b] = append(edges[a][b], dir+" imports "+rel)
		}
	}
	// A cycle through a is a path from a back to a; the search keeps to
	// folders named after a, so that each cycle is found from its smallest.
	var cycles []string
	var path []string
	var walk func(start, at string, seen map[string]bool)
	walk = func(start, at string, seen map[string]bool) {
		for _, next := range slices.Sorted(maps.Keys(edges[at])) {
			why := edges[at][next]
			slices.Sort(why)
			step := at + " -> " + next + " (" + why[0] + ")"
			switch {
			case next == start:
				cycles = append(cycles, strings.Join(append(slices.Clone(path), step), ", "))
			case next > start && !seen[next]:
				seen[next] = true
				path = append(path, step)
				walk(start, next, seen)
				path = path[:len(path)-1]
				seen[next] = false
			}
		}
	}
	for _, start := range slices.Sorted(maps.Keys(edges)) {
		walk(start, start, map[string]bool{start: true})
	}
	return cycles
}

// TestFoldersAreFloors holds each top-level folder to one floor: no
// package of folder A imports one of folder B while a package of B
// imports one of A, however far round. A newcomer following an import
// then only ever goes down the tree's folders, never back up into one
// already passed (measure/ beside lessons/, imported by lessons/figures
// while importing lessons/spec, was such an arrow).
func TestFoldersAreFloors(t *testing.T) {
	for _, c := range folderCycles(imports(t)) {
		t.Errorf("an arrow runs back up between top-level folders: %s; move the package to the floor it sits on", c)
	}
}

// TestFolderCycles holds folderCycles itself to cycles drawn by hand: it
// must find the arrow back up the folder check exists for.
func TestFolderCycles(t *testing.T) {
	tests := []struct {
		name string
		imps map[string][]string
		want []string
	}{
		{"none", map[string][]string{
			"lab":             {module + "/lessons/spec", module + "/cuda", "fmt"},
			"cuda":            {module + "/lessons/spec"},
			"lessons/figures": {module + "/lessons/spec", module + "/internal/words"},
		}, nil},
		{"two folders", map[string][]string{
			"lessons/figures": {module + "/measure"},
			"measure":         {module + "/lessons/spec"},
		}, []string{"lessons -> measure (lessons/figures imports measure), measure -> lessons (measure imports lessons/spec)"}},
		{"three folders", map[string][]string{
			"a/x": {module + "/b"},
			"b":   {module + "/c/y"},
			"c/y": {module + "/a/z"},
		}, []string{"a -> b (a/x imports b), b -> c (b imports c/y), c -> a (c/y imports a/z)"}},
		{"within a folder", map[string][]string{
			"internal/attempt":    {module + "/internal/atomicfile"},
			"internal/atomicfile": nil,
		}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, folderCycles(tt.imps))
		})
	}
}
