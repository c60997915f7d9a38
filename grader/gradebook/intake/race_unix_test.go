//go:build unix

package intake

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coalescing-course/coalesce/grader"
)

// notebookWith is a GoNB notebook of the course with one Check call of
// 01-sectors/sectors-float predicting p.
func notebookWith(p int) string {
	return fmt.Sprintf(`{"metadata":{"kernelspec":{"name":"gonb","language":"go"},"coalesce":{"lesson":"01-sectors"}},"nbformat":4,"nbformat_minor":5,`+
		`"cells":[{"cell_type":"code","metadata":{},"outputs":[],"source":["%%%%\n","lab.Check(\"01-sectors/sectors-float\", %d)\n"]}]}`, p)
}

// swap points link at each target in turn, atomically (a new link renamed
// over it), until stop is closed.
func swap(t *testing.T, link string, targets []string, stop <-chan struct{}, swaps *atomic.Int64) {
	tmp := link + ".swap"
	for i := 0; ; i++ {
		select {
		case <-stop:
			return
		default:
		}
		_ = os.Remove(tmp)
		if err := os.Symlink(targets[i%len(targets)], tmp); err != nil {
			t.Error(err)
			return
		}
		if err := os.Rename(tmp, link); err != nil {
			t.Error(err)
			return
		}
		swaps.Add(1)
	}
}

// TestLinksSwappedWhileReading: a learner's entry (a notebook, or a folder
// on the way to one) is swapped, as fast as the machine can, between a
// link inside the submissions and one to a notebook outside them, while
// the batch reads it again and again: what was read is never the notebook
// from outside (its prediction, 999, is never found), whichever moment the
// swap lands in. Reads of the inside notebook still succeed.
func TestLinksSwappedWhileReading(t *testing.T) {
	b, err := grader.Questions()
	require.NoError(t, err)
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret.ipynb")
	require.NoError(t, os.WriteFile(secret, []byte(notebookWith(999)), 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(outside, "sub"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(outside, "sub", "01-sectors.ipynb"), []byte(notebookWith(999)), 0o644))

	root := t.TempDir()
	ada := filepath.Join(root, "ada")
	require.NoError(t, os.MkdirAll(filepath.Join(ada, "real"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(ada, "mine.json"), []byte(notebookWith(4)), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(ada, "real", "01-sectors.ipynb"), []byte(notebookWith(4)), 0o644))
	for _, tt := range []struct {
		name, link string
		targets    []string
		read       string
	}{
		// The notebook itself: a relative link inside, an absolute one out.
		{"the file", filepath.Join(ada, "01-sectors.ipynb"), []string{"mine.json", secret}, filepath.Join(ada, "01-sectors.ipynb")},
		// A folder on its way: inside, or a folder outside.
		{"a folder", filepath.Join(ada, "sub"), []string{"real", filepath.Join(outside, "sub")}, filepath.Join(ada, "sub", "01-sectors.ipynb")},
	} {
		t.Run(tt.name, func(t *testing.T) {
			require.NoError(t, os.Symlink(tt.targets[0], tt.link))
			in := Input{Path: tt.read, Root: root}
			stop := make(chan struct{})
			var swaps atomic.Int64
			var wg sync.WaitGroup
			wg.Add(1)
			go func() { defer wg.Done(); swap(t, tt.link, tt.targets, stop, &swaps) }()
			r := Reader{Bank: b}
			leaked, read := 0, 0
			deadline := time.Now().Add(3 * time.Second)
			for i := 0; i < 4000 && time.Now().Before(deadline); i++ {
				s := r.Read(in)
				for _, c := range s.Found.Calls {
					if c.Value == 999 {
						leaked++
					}
				}
				if s.Problem == "" {
					read++
				}
			}
			close(stop)
			wg.Wait()
			assert.Zero(t, leaked, "notebooks from outside the submissions read as ada's (%d swaps)", swaps.Load())
			assert.Positive(t, read, "the notebook inside is read when the link points there")
			assert.Greater(t, swaps.Load(), int64(100), "the links were swapped while reading")
		})
	}
	// An absolute link to a notebook inside is read, through the root.
	abs := filepath.Join(ada, "abs.ipynb")
	require.NoError(t, os.Symlink(filepath.Join(ada, "mine.json"), abs))
	s := Reader{Bank: b}.Read(Input{Path: abs, Root: root})
	require.Empty(t, s.Problem)
	require.Len(t, s.Found.Calls, 1)
	assert.Equal(t, 4.0, s.Found.Calls[0].Value)
}
