package sandbox

import (
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"time"
)

// The sandbox's directory (Config.CacheDir) holds:
//
//	go-build/      the base: a Go build cache of the standard library and
//	               the course's packages, compiled for the child by the
//	               sandbox itself (no learner code), bounded by
//	               MaxBaseCache
//	go-build.lock  held while the base is built or emptied
//	bin/KEY        children kept for reuse, by the hash of all they were
//	               built from, bounded by MaxBinaries
//	batch-*/       a batch's own directory: the course's source, one
//	               directory per build (its cache, a clone of the base; its
//	               temporary files) and per run; removed by Close, or by
//	               the next batch when its grader died (batch-*/lock is
//	               held while it runs)
//
// A build's cache is the base cloned by hard links: what the build adds
// (the learner's packages) is its own and goes with it, and the base
// never holds a byte of learner code. Go writes a cache's entries as new
// files, named by their content's hash, so a build cannot change a file
// it shares with the base; the cache's two small files Go rewrites in
// place (README, trim.txt) are copied instead.
const (
	baseDir    = "go-build"
	binDir     = "bin"
	batchGlob  = "batch-*"
	lockName   = "lock"
	copiedFile = "trim.txt"
)

// lockFile opens path and takes an advisory lock on it (flock), exclusive
// or shared, waiting for it; closing the file releases it.
func lockFile(path string, how int) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	for {
		err = syscall.Flock(int(f.Fd()), how)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// sweepBatches removes the batch directories under dir whose lock no one
// holds: those of a grader that died before its Close.
func sweepBatches(dir string) {
	dirs, _ := filepath.Glob(filepath.Join(dir, batchGlob))
	for _, d := range dirs {
		f, err := os.OpenFile(filepath.Join(d, lockName), os.O_RDWR, 0)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				// Made but not yet locked, or a lock lost: only an old
				// one is taken for dead.
				if info, err := os.Stat(d); err == nil && time.Since(info.ModTime()) > time.Hour {
					_ = removeAll(d)
				}
			}
			continue
		}
		if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil {
			_ = removeAll(d)
		}
		f.Close()
	}
}

// removeAll is os.RemoveAll of a tree that may hold read-only folders.
func removeAll(dir string) error {
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			_ = os.Chmod(p, 0o755)
		}
		return nil
	})
	return os.RemoveAll(dir)
}

// treeSize is the bytes of the regular files under dir; with newOnly,
// only of those not linked from elsewhere (one link): what a clone's
// build added.
func treeSize(dir string, newOnly bool) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		if st, ok := info.Sys().(*syscall.Stat_t); newOnly && ok && st.Nlink > 1 {
			return nil
		}
		n += info.Size()
		return nil
	})
	return n
}

// cloneCache makes dst a copy of the Go build cache base: its entries hard
// links (a copy where the file system refuses links), the files Go
// rewrites in place copies.
func cloneCache(base, dst string) error {
	return filepath.WalkDir(base, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && p != base {
				return nil // an entry trimmed meanwhile: a miss, built again
			}
			return err
		}
		rel, err := filepath.Rel(base, p)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(to, 0o755)
		case !d.Type().IsRegular():
			return nil
		case d.Name() == copiedFile || d.Name() == "README":
			return copyFile(p, to)
		}
		if err := os.Link(p, to); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return copyFile(p, to)
		}
		return nil
	})
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	defer in.Close()
	info, err := in.Stat()
	if err != nil {
		return err
	}
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, info.Mode().Perm())
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// trimBinaries removes the least recently used children of dir until the
// rest fit in max bytes.
func trimBinaries(dir string, max int64) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	type bin struct {
		path string
		size int64
		used time.Time
	}
	var bins []bin
	var total int64
	for _, e := range entries {
		info, err := e.Info()
		if err != nil || !info.Mode().IsRegular() {
			continue
		}
		bins = append(bins, bin{filepath.Join(dir, e.Name()), info.Size(), info.ModTime()})
		total += info.Size()
	}
	slices.SortFunc(bins, func(a, b bin) int { return a.used.Compare(b.used) })
	for _, b := range bins {
		if total <= max {
			return
		}
		if os.Remove(b.path) == nil {
			total -= b.size
		}
	}
}

// keepBinary puts the child built at path into dir as key, for reuse:
// written beside and renamed, so that a reader never sees half of it.
func keepBinary(dir, key, path string) {
	tmp := filepath.Join(dir, "."+key+".tmp")
	if err := os.Link(path, tmp); err != nil {
		if err := copyFile(path, tmp); err != nil {
			return
		}
	}
	if err := os.Rename(tmp, filepath.Join(dir, key)); err != nil {
		_ = os.Remove(tmp)
	}
}

// reuseBinary links the child kept as key in dir to path, and marks it
// used; false when there is none.
func reuseBinary(dir, key, path string) bool {
	kept := filepath.Join(dir, key)
	if err := os.Link(kept, path); err != nil {
		if errors.Is(err, fs.ErrNotExist) || copyFile(kept, path) != nil {
			return false
		}
		if _, err := os.Stat(path); err != nil {
			return false
		}
	}
	now := time.Now()
	_ = os.Chtimes(kept, now, now)
	return true
}

// keepRefusal keeps a build's refusal by the compiler (not one of time,
// which a busy machine may cause) beside the children, as key.err: the
// same source is refused again without a build.
func keepRefusal(dir, key string, err error) {
	var e *Error
	if !errors.As(err, &e) || !errors.Is(e, ErrCompile) || e.timedOut {
		return
	}
	data, jerr := json.Marshal(struct {
		Line                int
		Msg, Detail, Output string
	}{e.Line, e.Msg, e.Detail, e.Output})
	if jerr != nil {
		return
	}
	tmp := filepath.Join(dir, "."+key+".err.tmp")
	if os.WriteFile(tmp, data, 0o600) != nil || os.Rename(tmp, filepath.Join(dir, key+".err")) != nil {
		_ = os.Remove(tmp)
	}
}

// keptRefusal is the refusal kept as key, nil when there is none.
func keptRefusal(dir, key string) error {
	data, err := os.ReadFile(filepath.Join(dir, key+".err"))
	if err != nil {
		return nil
	}
	var r struct {
		Line                int
		Msg, Detail, Output string
	}
	if json.Unmarshal(data, &r) != nil {
		return nil
	}
	now := time.Now()
	_ = os.Chtimes(filepath.Join(dir, key+".err"), now, now)
	return &Error{Err: ErrCompile, Line: r.Line, Msg: r.Msg, Detail: r.Detail, Output: r.Output}
}
