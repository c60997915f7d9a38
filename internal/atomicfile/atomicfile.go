// Package atomicfile replaces a file whole or not at all. A reader of the
// file (a notebook kernel reading attempts, a grader reading a recording,
// a second coalesce calibrate) sees the old contents or the new, never a
// half-written file, and a write that fails leaves the old one in place:
// the new contents go to a temporary file in the same folder, which is
// synced and then renamed over the old, a rename within one file system
// being atomic.
package atomicfile

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Write replaces path with what write writes, with permissions perm. When
// write or any step after it fails, path is left as it was and the
// temporary file is removed.
func Write(path string, perm os.FileMode, write func(io.Writer) error) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	err = write(tmp)
	if err == nil {
		err = tmp.Chmod(perm)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// WriteBytes is Write of data.
func WriteBytes(path string, perm os.FileMode, data []byte) error {
	return Write(path, perm, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}
