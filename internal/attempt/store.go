package attempt

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/coalescing-course/coalesce/internal/atomicfile"
)

// DirEnv is the environment variable that sets where a Store's file goes:
// a directory, which then holds one file per notebook, or "off", which
// records nothing. Unset, a notebook's attempts go beside it (Locate) and
// a program outside a notebook (go test, the CLI) records nothing.
const DirEnv = "COALESCE_ATTEMPTS"

// SessionEnv is the environment variable in which Jupyter Server gives a
// kernel its notebook's path; GoNB passes it on to the cells.
const SessionEnv = "JPY_SESSION_NAME"

// FallbackName names a notebook's file when the kernel was not told the
// notebook's path (a headless run without Jupyter Server).
const FallbackName = "notebook"

// Locate returns the file of a notebook's Store, or "" when nothing is to
// be recorded. getenv reads the environment, cwd is the working directory
// (a GoNB cell's is its notebook's folder) and inNotebook says whether the
// program is a notebook cell. The notebook's path comes from SessionEnv:
// <notebook folder>/.coalesce/attempts/<notebook name>.json, the name
// without .ipynb; DirEnv moves the folder or turns recording off.
func Locate(getenv func(string) string, cwd string, inNotebook bool) string {
	dir, name := "", FallbackName
	if nb := getenv(SessionEnv); nb != "" {
		name = strings.TrimSuffix(filepath.Base(nb), ".ipynb")
		if filepath.IsAbs(nb) {
			dir = filepath.Join(filepath.Dir(nb), ".coalesce", "attempts")
		}
	}
	switch d := getenv(DirEnv); {
	case d == "off":
		return ""
	case d != "":
		dir = d
	case !inNotebook:
		return ""
	case dir == "":
		// A relative session path is relative to the server's root, not
		// to the cell's folder: the cell's folder is the notebook's.
		dir = filepath.Join(cwd, ".coalesce", "attempts")
	}
	if name == "" || name == "." || name == string(filepath.Separator) {
		name = FallbackName
	}
	return filepath.Join(dir, name+".json")
}

// Store is one notebook's records, in the JSON file Path:
//
//	{"version": 1, "records": {"03-strided/sectors-stride-32": {"id": ..., "first": ..., "attempts": 2, "last": ...}}}
//
// Writes go to a temporary file renamed over Path, under a lock file
// (Path + ".lock"), so that two cells (or two kernels) that record at once
// both count. A file that does not parse is renamed aside, never
// overwritten, and the error says where it went.
type Store struct {
	Path string
}

// fileVersion is the version of the store's format.
const fileVersion = 1

type file struct {
	Version int               `json:"version"`
	Records map[string]Record `json:"records"`
}

// ErrCorrupt is the error wrapped when a store's file does not parse.
var ErrCorrupt = errors.New("attempt: the attempts file does not parse")

// lockWait bounds how long Add waits for another writer's lock; a lock
// older than lockStale is a crashed writer's and is removed.
const (
	lockWait  = 5 * time.Second
	lockStale = 30 * time.Second
)

// Get returns the record of exercise id; ok is false when there is none.
// A missing file holds no records; a corrupt one is an error (ErrCorrupt).
func (s Store) Get(id string) (r Record, ok bool, err error) {
	f, err := s.read()
	if err != nil {
		return Record{}, false, err
	}
	r, ok = f.Records[id]
	return r, ok, nil
}

// Add records an attempt at exercise id, value v at time t, and returns
// the record. When the file was corrupt, it is renamed aside and a new one
// started: the record is returned with an error wrapping ErrCorrupt that
// names where the old file went.
func (s Store) Add(id string, v float64, t time.Time) (Record, error) {
	if err := os.MkdirAll(filepath.Dir(s.Path), 0o755); err != nil {
		return Record{}, fmt.Errorf("attempt: %w", err)
	}
	unlock, err := s.lock()
	if err != nil {
		return Record{}, err
	}
	defer unlock()
	f, readErr := s.read()
	if errors.Is(readErr, ErrCorrupt) {
		aside := fmt.Sprintf("%s.corrupt-%s", s.Path, t.UTC().Format("20060102T150405.000000000"))
		if err := os.Rename(s.Path, aside); err != nil {
			return Record{}, fmt.Errorf("%w (and setting it aside failed: %v)", readErr, err)
		}
		readErr = fmt.Errorf("%w; it was kept as %s and a new one started", readErr, aside)
		f = file{Version: fileVersion, Records: map[string]Record{}}
	} else if readErr != nil {
		return Record{}, readErr
	}
	r := f.Records[id].Add(id, v, t)
	f.Records[id] = r
	if err := s.write(f); err != nil {
		return Record{}, err
	}
	return r, readErr
}

// read loads the file; a missing one is empty.
func (s Store) read() (file, error) {
	f := file{Version: fileVersion, Records: map[string]Record{}}
	data, err := os.ReadFile(s.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return f, nil
	}
	if err != nil {
		return f, fmt.Errorf("attempt: %w", err)
	}
	if err := json.Unmarshal(data, &f); err != nil {
		return f, fmt.Errorf("%w: %s: %v", ErrCorrupt, s.Path, err)
	}
	if f.Version != fileVersion {
		return f, fmt.Errorf("%w: %s: version %d, want %d", ErrCorrupt, s.Path, f.Version, fileVersion)
	}
	if f.Records == nil {
		f.Records = map[string]Record{}
	}
	for id, r := range f.Records {
		if err := r.check(); err != nil || r.ID != id {
			return f, fmt.Errorf("%w: %s: the record of %q: %v", ErrCorrupt, s.Path, id, err)
		}
	}
	return f, nil
}

// write replaces the file atomically (package atomicfile).
func (s Store) write(f file) error {
	data, err := json.MarshalIndent(f, "", " ")
	if err != nil {
		return fmt.Errorf("attempt: %w", err)
	}
	if err := atomicfile.WriteBytes(s.Path, 0o600, append(data, '\n')); err != nil {
		return fmt.Errorf("attempt: %w", err)
	}
	return nil
}

// lock takes the store's lock file, waiting up to lockWait for another
// writer; it removes a lock older than lockStale.
func (s Store) lock() (unlock func(), err error) {
	name := s.Path + ".lock"
	deadline := time.Now().Add(lockWait)
	for {
		f, err := os.OpenFile(name, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
		if err == nil {
			f.Close()
			return func() { os.Remove(name) }, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("attempt: %w", err)
		}
		if fi, serr := os.Stat(name); serr == nil && time.Since(fi.ModTime()) > lockStale {
			os.Remove(name)
			continue
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("attempt: %s is held by another writer for over %s (remove it if no cell is running)", name, lockWait)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Answered returns the questions a learner has a record for in any
// notebook's store in dir (each notebook keeps its own file there, and a
// lesson's answers may be asked about in a later one): the ids of every
// record of every *.json file. A missing dir holds none. A file that does
// not parse is an error naming it; the others still count.
func Answered(dir string) (map[string]bool, error) {
	ids := map[string]bool{}
	names, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return ids, fmt.Errorf("attempt: %w", err)
	}
	var errs []error
	for _, name := range names {
		f, err := Store{Path: name}.read()
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for id := range f.Records {
			ids[id] = true
		}
	}
	return ids, errors.Join(errs...)
}
