package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "run.jsonl")
	require.NoError(t, WriteBytes(path, 0o644, []byte("old\n")))

	t.Run("a failed write leaves the old file and no temporary one", func(t *testing.T) {
		boom := errors.New("boom")
		err := Write(path, 0o644, func(w io.Writer) error {
			_, _ = io.WriteString(w, "half")
			return boom
		})
		require.ErrorIs(t, err, boom)
		assert.Contains(t, err.Error(), path)
		got, err := os.ReadFile(path)
		require.NoError(t, err)
		assert.Equal(t, "old\n", string(got))
		entries, err := os.ReadDir(dir)
		require.NoError(t, err)
		assert.Len(t, entries, 1, "only run.jsonl")
	})

	t.Run("a good write replaces it, with the permissions asked", func(t *testing.T) {
		require.NoError(t, WriteBytes(path, 0o600, []byte("new\n")))
		got, err := os.ReadFile(path)
		require.NoError(t, err)
		assert.Equal(t, "new\n", string(got))
		info, err := os.Stat(path)
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o600), info.Mode().Perm())
	})

	t.Run("a folder that does not exist is an error", func(t *testing.T) {
		assert.Error(t, WriteBytes(filepath.Join(dir, "no", "x"), 0o644, nil))
	})
}
