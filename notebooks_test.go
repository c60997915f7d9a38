package coalesce

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/coalescing-course/coalesce/internal/notebook"
)

// TestNotebookImports holds every notebook to importing what its cells
// use: a cell that compiles only because GoNB's goimports guessed a
// package (09-matrix's metrics.LdSectors did, until a GPU host guessed
// otherwise) fails here, on any machine.
func TestNotebookImports(t *testing.T) {
	paths, err := filepath.Glob("notebooks/*.ipynb")
	require.NoError(t, err)
	require.NotEmpty(t, paths)
	for _, p := range paths {
		t.Run(filepath.Base(p), func(t *testing.T) {
			f, err := os.Open(p)
			require.NoError(t, err)
			defer f.Close()
			nb, err := notebook.Read(f, 0)
			require.NoError(t, err)
			for _, m := range notebook.MissingImports(nb) {
				t.Errorf("%s: %s: import it in the cell, or in the notebook's import cell", p, m)
			}
		})
	}
}
