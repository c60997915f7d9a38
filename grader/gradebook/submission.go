package gradebook

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/coalescing-course/coalesce/grader"
	"github.com/coalescing-course/coalesce/internal/notebook"
	"github.com/coalescing-course/coalesce/internal/words"
)

// DefaultMaxBytes is the largest notebook file graded: 16 MiB, room for a
// notebook full of plots; a larger one is a row saying so, unread.
const DefaultMaxBytes = 16 << 20

// Input is one notebook file to grade: its path, and the directory named on
// the command line it was found under ("" when the file itself was named).
type Input struct {
	Path string
	Root string
}

// Collect expands files and directories into the notebooks to grade.
// Directories are walked for *.ipynb files; directories whose name starts
// with a dot (.ipynb_checkpoints, .git) are skipped. A file named on its
// own is graded whatever its name; other files met in a walk are returned
// in skipped, for the caller to mention. A path that does not exist is an
// error.
func Collect(paths []string) (inputs []Input, skipped []string, err error) {
	seen := map[string]bool{}
	add := func(in Input) {
		key, err := filepath.Abs(in.Path)
		if err != nil {
			key = in.Path
		}
		if !seen[key] {
			seen[key] = true
			inputs = append(inputs, in)
		}
	}
	for _, p := range paths {
		info, err := os.Stat(p)
		if err != nil {
			return nil, nil, err
		}
		if !info.IsDir() {
			add(Input{Path: p})
			continue
		}
		err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if path != p && strings.HasPrefix(d.Name(), ".") {
					return filepath.SkipDir
				}
				return nil
			}
			if strings.EqualFold(filepath.Ext(path), ".ipynb") {
				add(Input{Path: path, Root: p})
			} else if !strings.HasPrefix(d.Name(), ".") {
				skipped = append(skipped, path)
			}
			return nil
		})
		if err != nil {
			return nil, nil, err
		}
	}
	return inputs, skipped, nil
}

// Submission is one notebook file as the grader read it: whose it is, the
// Check calls in it, or why it cannot be graded.
type Submission struct {
	Path string
	// Folder is the first folder below the directory the file was found
	// in, "" for a file at the top or named on its own.
	Folder string
	// Learner is who submitted it; IdentityFrom says where the name came
	// from (see Identify).
	Learner, IdentityFrom string
	// Lesson is the lesson the notebook says it is (metadata.coalesce.lesson)
	// or its file name starts with; "" when neither.
	Lesson string
	// Found holds the calls and mentions read from its cells.
	Found Found
	// Problem says why the file cannot be graded (malformed JSON, not a
	// notebook, another kernel or course, too large); "" when it can.
	Problem string
}

// Where identities come from, in the order Identify tries them.
const (
	FromMetadata = "metadata.coalesce.learner"
	FromAuthors  = "metadata.authors"
	FromFolder   = "folder"
	FromFileName = "file name"
	// FromFolderMates is a notebook without a name of its own (unreadable,
	// or without metadata) in a learner's folder whose other notebooks all
	// name the same learner.
	FromFolderMates = "folder's other notebooks"
)

// Identify says who submitted a notebook: metadata.coalesce.learner; else
// the first of metadata.authors; else, for a file found under a directory
// named on the command line, the first folder below that directory
// (ROOT/ada/03-strided.ipynb is ada's); else the file's name without .ipynb
// (ROOT/ada.ipynb is ada's). md is nil when the notebook could not be read.
// GradeAll then gives a notebook named by its folder the name its
// folder's other notebooks agree on, if they all give the same one (see
// FromFolderMates).
func Identify(md *notebook.Metadata, path, root string) (learner, from string) {
	if md != nil {
		if md.Learner != "" {
			return md.Learner, FromMetadata
		}
		if len(md.Authors) > 0 {
			return md.Authors[0], FromAuthors
		}
	}
	if root != "" {
		if rel, err := filepath.Rel(root, path); err == nil {
			parts := strings.Split(filepath.ToSlash(rel), "/")
			if len(parts) > 1 && parts[0] != ".." {
				return parts[0], FromFolder
			}
		}
	}
	base := filepath.Base(path)
	return strings.TrimSuffix(base, filepath.Ext(base)), FromFileName
}

// Reader reads learners' saved notebooks as submissions to the lessons of
// a bank. Its zero Limit is DefaultMaxBytes.
type Reader struct {
	Bank *grader.Bank
	// Limit is the largest file read, in bytes; <= 0 is DefaultMaxBytes.
	Limit int64
}

func (r Reader) limit() int64 {
	if r.Limit <= 0 {
		return DefaultMaxBytes
	}
	return r.Limit
}

// Read reads and parses one notebook file, refusing files over the limit.
// It never fails: what is wrong with the file is the submission's Problem.
func (r Reader) Read(in Input) Submission {
	limit := r.limit()
	f, err := os.Open(in.Path)
	if err != nil {
		return r.problem(in, nil, fmt.Sprintf("cannot read the file: %v", errors.Unwrap(err)))
	}
	defer f.Close()
	if info, err := f.Stat(); err == nil && info.Size() > limit {
		return r.problem(in, nil, fmt.Sprintf("the file is %s, over the %s limit (coalesce grade -max-size); it was not read", sizeStr(info.Size()), sizeStr(limit)))
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return r.problem(in, nil, fmt.Sprintf("cannot read the file: %v", err))
	}
	return r.Parse(in, data)
}

// Parse is Read on a file's contents.
func (r Reader) Parse(in Input, data []byte) Submission {
	limit := r.limit()
	if int64(len(data)) > limit {
		return r.problem(in, nil, fmt.Sprintf("the file is over the %s limit (coalesce grade -max-size); it was not read", sizeStr(limit)))
	}
	nb, err := notebook.Parse(data)
	if err != nil {
		msg := strings.TrimPrefix(err.Error(), "notebook: ")
		switch {
		case errors.Is(err, notebook.ErrSyntax):
			msg = "malformed JSON: " + msg
		case errors.Is(err, notebook.ErrVersion), errors.Is(err, notebook.ErrNotNotebook):
		}
		return r.problem(in, nil, msg)
	}
	s := Submission{Path: in.Path, Folder: folderOf(in)}
	s.Learner, s.IdentityFrom = Identify(&nb.Metadata, in.Path, in.Root)
	s.Lesson = r.lessonOf(nb.Metadata.Lesson, in.Path)
	if !nb.Metadata.IsGo() {
		s.Problem = fmt.Sprintf("not a Go notebook: its kernel is %s; the course's notebooks run on GoNB", nb.Metadata.Kernel())
		return s
	}
	s.Found = FindCalls(nb)
	if !nb.Metadata.Coalesce && !s.Found.Course && len(s.Found.Calls) == 0 {
		s.Problem = fmt.Sprintf("not a notebook of this course: no metadata.coalesce, no import of %s and no lab.Check call", ModulePath)
	}
	return s
}

// folderOf returns the first folder of in below its root, "" for none.
func folderOf(in Input) string {
	if in.Root == "" {
		return ""
	}
	rel, err := filepath.Rel(in.Root, in.Path)
	if err != nil {
		return ""
	}
	parts := strings.Split(filepath.ToSlash(rel), "/")
	if len(parts) < 2 || parts[0] == ".." {
		return ""
	}
	return filepath.Join(in.Root, parts[0])
}

// reconcile gives the notebooks named by their folder the name the
// folder's other notebooks all give, when they agree on one.
func reconcile(subs []Submission) {
	names := map[string]map[string]bool{}
	for _, s := range subs {
		if s.Folder != "" && (s.IdentityFrom == FromMetadata || s.IdentityFrom == FromAuthors) {
			if names[s.Folder] == nil {
				names[s.Folder] = map[string]bool{}
			}
			names[s.Folder][s.Learner] = true
		}
	}
	for i := range subs {
		s := &subs[i]
		if s.IdentityFrom != FromFolder || len(names[s.Folder]) != 1 {
			continue
		}
		for name := range names[s.Folder] {
			s.Learner, s.IdentityFrom = name, FromFolderMates
		}
	}
}

func (r Reader) problem(in Input, md *notebook.Metadata, msg string) Submission {
	s := Submission{Path: in.Path, Folder: folderOf(in), Problem: msg}
	s.Learner, s.IdentityFrom = Identify(md, in.Path, in.Root)
	s.Lesson = r.lessonOf("", in.Path)
	return s
}

// lessonOf returns the bank lesson a notebook says it is, by metadata or
// by the start of its file name.
func (r Reader) lessonOf(meta, path string) string {
	if meta != "" && r.Bank.Lesson(meta) != nil {
		return meta
	}
	base := filepath.Base(path)
	for _, l := range r.Bank.Lessons {
		if strings.HasPrefix(base, l.ID) {
			return l.ID
		}
	}
	return ""
}

// ReadAll reads every input on GOMAXPROCS workers, in input order,
// calling progress (when not nil) after each file with the count done.
func (r Reader) ReadAll(inputs []Input, progress func(done int)) []Submission {
	subs := make([]Submission, len(inputs))
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		done int
		next = make(chan int)
	)
	for range max(1, runtime.GOMAXPROCS(0)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				subs[i] = r.Read(inputs[i])
				if progress != nil {
					mu.Lock()
					done++
					progress(done)
					mu.Unlock()
				}
			}
		}()
	}
	for i := range inputs {
		next <- i
	}
	close(next)
	wg.Wait()
	return subs
}

func sizeStr(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return words.Plural(int(n), "byte")
}

// sortedLearners returns the learners of subs, sorted.
func sortedLearners(subs []Submission) []string {
	var names []string
	seen := map[string]bool{}
	for _, s := range subs {
		if !seen[s.Learner] {
			seen[s.Learner] = true
			names = append(names, s.Learner)
		}
	}
	slices.Sort(names)
	return names
}
