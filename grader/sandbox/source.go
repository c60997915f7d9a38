package sandbox

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// courseFiles returns the files of the course's packages that a child
// importing roots needs, by their path in the module: every package of
// the module roots import, transitively, each with its files but its
// tests (its Go, assembly and embedded files; not its folders, which are
// packages of their own). A package the source lacks is an error naming
// who imports it.
func courseFiles(src fs.FS, roots ...string) (map[string][]byte, error) {
	files := map[string][]byte{}
	seen := map[string]bool{}
	type want struct{ pkg, by string }
	queue := []want{}
	for _, r := range roots {
		queue = append(queue, want{r, "the sandbox's child"})
	}
	for len(queue) > 0 {
		w := queue[0]
		queue = queue[1:]
		dir, ok := strings.CutPrefix(w.pkg, CourseModule+"/")
		if !ok || seen[dir] {
			continue
		}
		seen[dir] = true
		entries, err := fs.ReadDir(src, dir)
		if err != nil {
			return nil, fmt.Errorf("sandbox: the course's source has no package %s (imported by %s): %w", w.pkg, w.by, err)
		}
		found := false
		for _, e := range entries {
			name := e.Name()
			if !e.Type().IsRegular() || strings.HasSuffix(name, "_test.go") || strings.HasPrefix(name, ".") {
				continue
			}
			p := path.Join(dir, name)
			data, err := fs.ReadFile(src, p)
			if err != nil {
				return nil, fmt.Errorf("sandbox: the course's source: %w", err)
			}
			files[p] = data
			if !strings.HasSuffix(name, ".go") {
				continue
			}
			found = true
			f, err := parser.ParseFile(token.NewFileSet(), p, data, parser.ImportsOnly)
			if err != nil {
				return nil, fmt.Errorf("sandbox: the course's source: %w", err)
			}
			for _, imp := range f.Imports {
				ip, _ := strconv.Unquote(imp.Path.Value)
				if strings.HasPrefix(ip, CourseModule+"/") {
					queue = append(queue, want{ip, w.pkg})
				}
			}
		}
		if !found {
			return nil, fmt.Errorf("sandbox: the course's source has no Go files for package %s (imported by %s)", w.pkg, w.by)
		}
	}
	return files, nil
}

// courseMod is the go.mod of the course as the child builds it: the
// packages the child needs import the standard library alone, so the
// module requires nothing, and no module cache is read.
const courseMod = "module " + CourseModule + "\n\ngo 1.26\n"

// writeCourse writes files under dir, with courseMod, and returns their
// hash: what the children built against them depend on.
func writeCourse(dir string, files map[string][]byte) (string, error) {
	h := sha256.New()
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	slices.Sort(names)
	fmt.Fprintf(h, "%s\x00", courseMod)
	for _, name := range names {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return "", fmt.Errorf("sandbox: %w", err)
		}
		if err := os.WriteFile(p, files[name], 0o444); err != nil {
			return "", fmt.Errorf("sandbox: %w", err)
		}
		fmt.Fprintf(h, "%s\x00%d\x00", name, len(files[name]))
		h.Write(files[name])
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(courseMod), 0o444); err != nil {
		return "", fmt.Errorf("sandbox: %w", err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
