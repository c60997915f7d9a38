//go:build unix

package gradebook

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coalescing-course/coalesce/grader/gradebook/intake"
)

// TestSpecialFiles: a named pipe, a socket, a directory named *.ipynb and
// links out of the root, looping or dangling, are rows saying so; the
// batch finishes and the other learner is graded. sectors-float: 32 lanes
// × 4 bytes = 128 bytes = 4 sectors of 32 bytes, so 4 is right.
func TestSpecialFiles(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "secret.ipynb")
	require.NoError(t, os.WriteFile(outside, []byte(nbWith(`{}`, `lab.Check("01-sectors/sectors-float", 4)`)), 0o644))
	dir := writeTree(t, map[string]string{
		"ada/01-sectors.ipynb":   nbWith(`{}`, `lab.Check("01-sectors/sectors-float", 4)`),
		"bob/real.json":          nbWith(`{}`, `lab.Check("01-sectors/sectors-float", 4)`),
		"dir.ipynb/inner/x.json": "",
	})
	require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "ada", "02-coalescing.ipynb"), 0o644))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "carl"), 0o755))
	require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "carl", "01-sectors.ipynb"), 0o644))
	require.NoError(t, os.Symlink(outside, filepath.Join(dir, "bob", "01-sectors.ipynb")))
	require.NoError(t, os.Symlink("loop.ipynb", filepath.Join(dir, "bob", "loop.ipynb")))
	require.NoError(t, os.Symlink("real.json", filepath.Join(dir, "bob", "inside.ipynb")))
	require.NoError(t, os.Symlink("nowhere", filepath.Join(dir, "bob", "dangling.ipynb")))

	done := make(chan struct{})
	var gb *Gradebook
	var subs []intake.Submission
	go func() {
		defer close(done)
		gb, subs = gradeTree(t, dir)
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the batch hangs on a named pipe")
	}
	problems := map[string]string{}
	for _, s := range subs {
		rel, _ := filepath.Rel(dir, s.Path)
		problems[filepath.ToSlash(rel)] = s.Problem
	}
	tests := []struct{ path, problem string }{
		{"ada/01-sectors.ipynb", ""},
		{"ada/02-coalescing.ipynb", "not a regular file (named pipe): skipped"},
		{"carl/01-sectors.ipynb", "not a regular file (named pipe): skipped"},
		{"bob/01-sectors.ipynb", "outside"},
		{"bob/loop.ipynb", "does not resolve"},
		{"bob/dangling.ipynb", "does not resolve"},
		{"bob/inside.ipynb", ""},
		{"dir.ipynb", "a directory named like a notebook"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			got, ok := problems[tt.path]
			require.True(t, ok, "no submission for %s", tt.path)
			if tt.problem == "" {
				assert.Empty(t, got)
			} else {
				assert.Contains(t, got, tt.problem)
			}
		})
	}
	assert.Equal(t, Right, rowOf(gb, "ada", "01-sectors/sectors-float").Status)
	assert.Equal(t, Right, rowOf(gb, "bob", "01-sectors/sectors-float").Status, "through the link inside the root")
	assert.NotNil(t, rowOf(gb, "carl", "01-sectors/sectors-float"), "a learner with only a pipe still has rows")
}
