package intake

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"
	"unicode"

	"github.com/coalescing-course/coalesce/grader"
	"github.com/coalescing-course/coalesce/grader/gradebook/answers"
	"github.com/coalescing-course/coalesce/internal/notebook"
	"github.com/coalescing-course/coalesce/units"
)

// DefaultMaxBytes is the largest notebook file read: 256 MiB, a safety
// bound far above real notebooks (outputs stream past unheld, so a large
// one costs time, not memory); a larger file is a row saying so, unread.
const DefaultMaxBytes = 256 << 20

// DefaultTimeout is the deadline `coalesce grade -timeout` puts on reading
// a batch: a notebook not read by then is a row saying so.
const DefaultTimeout = 10 * time.Minute

// Input is one notebook file to grade: its path, and the directory named on
// the command line it was found under ("" when the file itself was named).
type Input struct {
	Path string
	Root string
	// Problem is why Collect will not have the entry opened (a named pipe,
	// a device, a link out of Root...); Read makes it the submission's
	// Problem without touching the file. "" for a regular file.
	Problem string
}

// Collect expands files and directories into the notebooks to grade.
// Directories are walked for *.ipynb entries; directories whose name starts
// with a dot (.ipynb_checkpoints, .git) are skipped. Only regular files, and
// symbolic links that resolve to a regular file inside the directory
// walked, are read: any other entry named *.ipynb (a named pipe, a socket,
// a device, a directory, a link out of the directory, a dangling or looping
// link) is returned as an Input with its Problem, so it has a row and never
// blocks the batch. A file named on its own is graded whatever its name;
// other files met in a walk are returned in skipped, for the caller to
// mention. A path that does not exist is an error.
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
			add(Input{Path: p, Problem: notRegular(info.Mode())})
			continue
		}
		err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			isNotebook := strings.EqualFold(filepath.Ext(path), ".ipynb")
			switch {
			case err != nil && path == p:
				return err
			case err != nil:
				// A folder that cannot be listed: its row says so, and the
				// rest of the batch goes on.
				add(Input{Path: path, Root: p, Problem: fmt.Sprintf("cannot read it: %v: skipped", errors.Unwrap(err))})
				if d != nil && d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			case d.IsDir():
				if path != p && strings.HasPrefix(d.Name(), ".") {
					return filepath.SkipDir
				}
				if path != p && isNotebook {
					add(Input{Path: path, Root: p, Problem: "a directory named like a notebook, not a notebook file: skipped (the notebooks in it are graded)"})
				}
				return nil
			case isNotebook:
				add(Input{Path: path, Root: p, Problem: entryProblem(path, p, d.Type())})
			case !strings.HasPrefix(d.Name(), "."):
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

// entryProblem is why an entry of type mode, found under root, is not
// read; "" for a regular file or a link to one inside root.
func entryProblem(path, root string, mode fs.FileMode) string {
	if mode&fs.ModeSymlink == 0 {
		return notRegular(mode)
	}
	_, problem := resolveInRoot(path, root)
	return problem
}

// resolveInRoot follows the symbolic links of path, found under root, to
// the regular file it names; the problem says why it is not one inside
// root.
func resolveInRoot(path, root string) (target, problem string) {
	target, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "", fmt.Sprintf("a symbolic link that does not resolve to a file (%v): skipped", errors.Unwrap(err))
	}
	base, err1 := filepath.EvalSymlinks(root)
	abs, err2 := filepath.Abs(target)
	base, err3 := filepath.Abs(base)
	if err := cmp.Or(err1, err2, err3); err != nil {
		return "", fmt.Sprintf("cannot resolve the symbolic link (%v): skipped", err)
	}
	if rel, err := filepath.Rel(base, abs); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", fmt.Sprintf("a symbolic link to %s, outside %s: skipped", target, root)
	}
	info, err := os.Stat(abs)
	if err != nil {
		return "", fmt.Sprintf("a symbolic link that does not resolve to a file (%v): skipped", errors.Unwrap(err))
	}
	if p := notRegular(info.Mode()); p != "" {
		return "", "a symbolic link to an entry that is " + p
	}
	return abs, ""
}

// notRegular is the problem of a file of mode that is not a regular file:
// "not a regular file (named pipe): skipped"; "" for a regular file.
func notRegular(mode fs.FileMode) string {
	if mode.IsRegular() {
		return ""
	}
	kind := "special file"
	switch {
	case mode&fs.ModeNamedPipe != 0:
		kind = "named pipe"
	case mode&fs.ModeSocket != 0:
		kind = "socket"
	case mode&fs.ModeCharDevice != 0:
		kind = "character device"
	case mode&fs.ModeDevice != 0:
		kind = "device"
	case mode.IsDir():
		kind = "directory"
	case mode&fs.ModeSymlink != 0:
		kind = "symbolic link"
	}
	return fmt.Sprintf("not a regular file (%s): skipped", kind)
}

// Submission is one notebook file as the grader read it: whose it is, the
// Check calls in it, or why it cannot be graded.
type Submission struct {
	Path string
	// Folder is the first folder below the directory the file was found
	// in, "" for a file at the top or named on its own.
	Folder string
	// Learner is who submitted it; IdentityFrom says where the name came
	// from (see Identify): never the notebook's metadata.
	Learner, IdentityFrom string
	// Claimed are the names the notebook's metadata gives
	// (metadata.coalesce.learner, then metadata.authors): evidence, which
	// the learner can edit, never the identity. A name that is not the
	// learner's flags the submission FlagPossibleCopy.
	Claimed []string
	// Lesson is the lesson the notebook says it is (metadata.coalesce.lesson),
	// its file name starts with, or all its calls belong to; "" when none.
	Lesson string
	// Role says whether its calls are graded first (RoleGraded) or only
	// where the learner's graded notebook of the lesson has none
	// (RoleDuplicate); set by Grade (see Role).
	Role Role
	// Flags mark what the instructor should look at; Notes say each in a
	// sentence, in the same order.
	Flags []Flag
	Notes []string
	// Found holds the calls and mentions read from its cells.
	Found answers.Found
	// Problem says why the file cannot be graded (malformed JSON, not a
	// notebook, a lesson on another kernel, too large, not a regular file,
	// not read in time); "" when it can.
	Problem string
	// Ignored says why the notebook is not the course's and so not graded:
	// a scratch notebook (JupyterLab's Untitled.ipynb), a Python notebook of
	// the learner's own. It is listed (a row with status ignored), never a
	// failure: it makes no learner unreadable. "" for the course's.
	Ignored string
}

// Role is what a submission's calls count for among the learner's
// notebooks of its lesson. Of a learner's notebooks of one lesson, the
// graded one is the one with the course's file name (01-sectors.ipynb for
// lesson 01-sectors), readable, nearest the learner's folder; without one,
// the readable one with the most predictions written, then the one whose
// attempt records start earliest. Never the first by path: JupyterLab's
// 01-sectors-Copy1.ipynb sorts before 01-sectors.ipynb.
type Role string

// The roles.
const (
	// RoleGraded is a notebook whose calls are graded.
	RoleGraded Role = "graded"
	// RoleDuplicate is another notebook of a lesson the learner has a graded
	// notebook of: listed and flagged, its calls used only for exercises
	// the graded one has no readable call for.
	RoleDuplicate Role = "duplicate"
)

// Flag is a mark on a submission for the instructor.
type Flag string

// The flags a submission may carry.
const (
	// FlagPossibleCopy: the metadata names another learner than the
	// folder (or file name) that decides whose it is.
	FlagPossibleCopy Flag = "possible-copy"
	// FlagDuplicate: another notebook of the same lesson is graded first.
	FlagDuplicate Flag = "duplicate"
	// FlagUnreadable: the file could not be graded (its Problem says why).
	FlagUnreadable Flag = "unreadable"
	// FlagTooLarge: the file is over the size bound (with FlagUnreadable).
	FlagTooLarge Flag = "too-large"
	// FlagNotRegular: not a regular file (a pipe, a device, a directory, a
	// link out of the submissions) and never opened (with FlagUnreadable).
	FlagNotRegular Flag = "not-regular"
	// FlagTimeout: not read before the batch's deadline (with
	// FlagUnreadable).
	FlagTimeout Flag = "timeout"
)

func (s *Submission) flag(f Flag, note string) {
	s.Flags = append(s.Flags, f)
	s.Notes = append(s.Notes, note)
}

// Where identities come from.
const (
	FromFolder   = "folder"
	FromFileName = "file name"
)

// Identify says who submitted a notebook, from where it is, never from
// what it says: for a file found under a directory named on the command
// line, the first folder below that directory (ROOT/ada/03-strided.ipynb
// and ROOT/ada/old/x.ipynb are ada's: the hub user's folder); for a file
// at the top of that directory, or named on its own, its name without
// .ipynb (ROOT/ada.ipynb is ada's), unless that is a lesson's (NN-...) or
// Jupyter's Untitled: then the folder it is in (`coalesce grade subs/ada`
// and `coalesce grade subs/*/01-sectors.ipynb` grade each folder as its
// learner's).
func Identify(path, root string) (learner, from string) {
	if root != "" {
		if rel, err := filepath.Rel(root, path); err == nil {
			parts := strings.Split(filepath.ToSlash(rel), "/")
			if len(parts) > 1 && parts[0] != ".." {
				return parts[0], FromFolder
			}
		}
	}
	base := filepath.Base(path)
	stem := strings.TrimSuffix(base, filepath.Ext(base))
	if lessonLike(stem) {
		if dir, err := filepath.Abs(filepath.Dir(path)); err == nil && filepath.Base(dir) != string(filepath.Separator) {
			return filepath.Base(dir), FromFolder
		}
	}
	return stem, FromFileName
}

// lessonLike reports whether a file name is a lesson's (two digits and a
// dash, as the course names them) or Jupyter's new notebook.
func lessonLike(stem string) bool {
	return len(stem) > 2 && stem[0] >= '0' && stem[0] <= '9' && stem[1] >= '0' && stem[1] <= '9' && stem[2] == '-' ||
		strings.HasPrefix(stem, "Untitled")
}

// Reader reads learners' saved notebooks as submissions to the lessons of
// a bank. Its zero Limit is DefaultMaxBytes; its zero Timeout, none.
type Reader struct {
	Bank *grader.Bank
	// Limit is the largest file read, in bytes; <= 0 is DefaultMaxBytes.
	Limit int64
	// Timeout bounds ReadAll: the notebooks not read by then are rows
	// saying so; <= 0 is no deadline.
	Timeout time.Duration
}

func (r Reader) limit() int64 {
	if r.Limit <= 0 {
		return DefaultMaxBytes
	}
	return r.Limit
}

// Read reads and parses one notebook file, refusing files over the limit.
// It never fails: what is wrong with the file is the submission's Problem.
// It opens the file once, and then looks at what it opened: a file found
// under a root is opened through the root (openInRoot), so that no link
// swapped after Collect, or after any check, leads out of it; only a
// regular file is read, opened non-blocking, so that an entry swapped for
// a named pipe cannot hang it.
func (r Reader) Read(in Input) Submission {
	if in.Problem != "" {
		return r.problem(in, in.Problem, FlagNotRegular)
	}
	path := in.Path
	if in.Root != "" {
		// Again, at the time of reading, for the message: the tree may have
		// changed. What is opened is decided by openInRoot alone.
		info, err := os.Lstat(path)
		if err != nil {
			return r.problem(in, fmt.Sprintf("cannot read the file: %v", errors.Unwrap(err)), "")
		}
		if p := entryProblem(path, in.Root, info.Mode().Type()); p != "" {
			return r.problem(in, p, FlagNotRegular)
		}
	}
	f, err := openInput(in)
	if err != nil {
		return r.problem(in, err.Error(), FlagNotRegular)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return r.problem(in, fmt.Sprintf("cannot read the file: %v", err), "")
	}
	if p := notRegular(info.Mode()); p != "" {
		return r.problem(in, p, FlagNotRegular)
	}
	limit := r.limit()
	if info.Size() > limit {
		got, max := size(info.Size(), limit)
		return r.problem(in, fmt.Sprintf("the file is %s, over the %s limit (coalesce grade -max-size); it was not read", got, max), FlagTooLarge)
	}
	nb, err := notebook.Read(f, limit)
	return r.fromNotebook(in, nb, err)
}

// openInput opens in's file for reading, once: a file named on its own as
// it is (the instructor named it), a file found under a root through
// os.Root, which resolves every component and link of its name beneath
// the root as it opens it (openat2's RESOLVE_BENEATH, or a walk with
// O_NOFOLLOW), and fails for a name that leads out. os.Root follows only
// relative links; an absolute link that named a file inside the root
// when checked is opened by that file's name in the root, through the
// root again.
func openInput(in Input) (*os.File, error) {
	const flags = os.O_RDONLY | syscall.O_NONBLOCK
	if in.Root == "" {
		f, err := os.OpenFile(in.Path, flags, 0)
		if err != nil {
			return nil, fmt.Errorf("cannot read the file: %v", errors.Unwrap(err))
		}
		return f, nil
	}
	root, err := os.OpenRoot(in.Root)
	if err != nil {
		return nil, fmt.Errorf("cannot open the submissions' folder %s: %v", in.Root, errors.Unwrap(err))
	}
	defer root.Close()
	rel, err := filepath.Rel(in.Root, in.Path)
	if err != nil {
		return nil, fmt.Errorf("cannot read the file: not under %s", in.Root)
	}
	f, err := root.OpenFile(rel, flags, 0)
	if err == nil {
		return f, nil
	}
	if target, problem := resolveInRoot(in.Path, in.Root); problem == "" {
		if base, err2 := filepath.EvalSymlinks(in.Root); err2 == nil {
			if abs, err3 := filepath.Abs(base); err3 == nil {
				if inner, err4 := filepath.Rel(abs, target); err4 == nil {
					if f, err = root.OpenFile(inner, flags, 0); err == nil {
						return f, nil
					}
				}
			}
		}
	}
	return nil, fmt.Errorf("cannot read it inside %s (a link out of it, or an entry that changed while it was read): %v: skipped", in.Root, errors.Unwrap(err))
}

// Parse is Read on a file's contents.
func (r Reader) Parse(in Input, data []byte) Submission {
	limit := r.limit()
	if int64(len(data)) > limit {
		return r.problem(in, fmt.Sprintf("the file is over the %s limit (coalesce grade -max-size); it was not read", units.BinaryBytes.Format(float64(limit))), FlagTooLarge)
	}
	nb, err := notebook.Parse(data)
	return r.fromNotebook(in, nb, err)
}

// fromNotebook makes the submission of a notebook read, or not, with err.
func (r Reader) fromNotebook(in Input, nb *notebook.Notebook, err error) Submission {
	if err != nil {
		msg := strings.TrimPrefix(err.Error(), "notebook: ")
		switch {
		case errors.Is(err, notebook.ErrTooLarge):
			return r.problem(in, fmt.Sprintf("the file is over the %s limit (coalesce grade -max-size); it was not read", units.BinaryBytes.Format(float64(r.limit()))), FlagTooLarge)
		case errors.Is(err, notebook.ErrSyntax):
			msg = "malformed JSON: " + msg
		}
		return r.problem(in, msg, "")
	}
	s := Submission{Path: in.Path, Folder: folderOf(in)}
	s.Learner, s.IdentityFrom = Identify(in.Path, in.Root)
	if nb.Metadata.Learner != "" {
		s.Claimed = append(s.Claimed, nb.Metadata.Learner)
	}
	s.Claimed = append(s.Claimed, nb.Metadata.Authors...)
	s.Lesson = r.lessonOf(nb.Metadata.Lesson, in.Path)
	if !nb.Metadata.IsGo() {
		if !nb.Metadata.Coalesce && !mentionsCourse(nb) {
			s.Ignored = fmt.Sprintf("not a notebook of this course (its kernel is %s; no import of %s, no lab.Check call): a notebook of the learner's own, listed and not graded", nb.Metadata.Kernel(), answers.ModulePath)
			s.Lesson = ""
			return s
		}
		s.Problem = fmt.Sprintf("not a Go notebook: its kernel is %s; the course's notebooks run on GoNB", nb.Metadata.Kernel())
		s.flag(FlagUnreadable, s.Problem)
		return s
	}
	s.Found = answers.FindCalls(nb)
	if s.Lesson == "" {
		s.Lesson = r.lessonOfCalls(s.Found.Calls)
	}
	if !nb.Metadata.Coalesce && !s.Found.Course && len(s.Found.Calls) == 0 {
		s.Ignored = fmt.Sprintf("not a notebook of this course (no metadata.coalesce, no import of %s, no lab.Check call): a scratch notebook, listed and not graded", answers.ModulePath)
		s.Lesson = ""
	}
	return s
}

// mentionsCourse reports whether a notebook's cells name the course: its
// module or a Check or Try call, in any kernel's source.
func mentionsCourse(nb *notebook.Notebook) bool {
	for _, c := range nb.Cells {
		if strings.Contains(c.Source, answers.ModulePath) || strings.Contains(c.Source, "lab.Check(") ||
			strings.Contains(c.Source, "grader.Check(") || strings.Contains(c.Source, "lab.Try(") {
			return true
		}
	}
	return false
}

// lessonOfCalls is the lesson every call with a bank id belongs to; "" for
// none or several.
func (r Reader) lessonOfCalls(calls []answers.Call) string {
	lesson := ""
	for _, c := range calls {
		e, err := r.Bank.Question(c.ID)
		if err != nil {
			continue
		}
		if lesson != "" && e.Lesson != lesson {
			return ""
		}
		lesson = e.Lesson
	}
	return lesson
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

// problem is the submission of a file that cannot be graded, flagged
// FlagUnreadable and also f when f is not "".
func (r Reader) problem(in Input, msg string, f Flag) Submission {
	s := Submission{Path: in.Path, Folder: folderOf(in), Problem: msg}
	s.Learner, s.IdentityFrom = Identify(in.Path, in.Root)
	s.Lesson = r.lessonOf("", in.Path)
	s.flag(FlagUnreadable, msg)
	if f != "" {
		s.Flags = append(s.Flags, f)
		s.Notes = append(s.Notes, msg)
	}
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

// maxReaders bounds the notebooks read at once: each holds at most its
// largest JSON value (a saved plot) in its decoder's buffer.
const maxReaders = 8

// ReadAll reads every input on up to GOMAXPROCS (at most 8) workers, in input order,
// calling progress (when not nil) after each file with the count done.
// With a Timeout, the inputs not read by then are submissions saying so.
func (r Reader) ReadAll(inputs []Input, progress func(done int)) []Submission {
	return r.ReadAllContext(context.Background(), inputs, progress)
}

// ReadAllContext is ReadAll until ctx is done, or the Timeout passes: the
// inputs not read by then are submissions with that Problem, and it
// returns without waiting for a read that hangs.
func (r Reader) ReadAllContext(ctx context.Context, inputs []Input, progress func(done int)) []Submission {
	if r.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, r.Timeout)
		defer cancel()
	}
	type result struct {
		i int
		s Submission
	}
	// Buffered for every input, so that a worker finishing after the
	// deadline never blocks.
	results := make(chan result, len(inputs))
	next := make(chan int)
	for range min(len(inputs), maxReaders, max(1, runtime.GOMAXPROCS(0))) {
		go func() {
			for i := range next {
				results <- result{i, r.Read(inputs[i])}
			}
		}()
	}
	go func() {
		defer close(next)
		for i := range inputs {
			select {
			case next <- i:
			case <-ctx.Done():
				return
			}
		}
	}()
	subs := make([]Submission, len(inputs))
	read := make([]bool, len(inputs))
	for done := 0; done < len(inputs); done++ {
		select {
		case res := <-results:
			subs[res.i], read[res.i] = res.s, true
			if progress != nil {
				progress(done + 1)
			}
		case <-ctx.Done():
			why := "the batch was stopped before it was read"
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				why = fmt.Sprintf("not read within the batch's deadline of %s (coalesce grade -timeout): skipped", r.Timeout)
			}
			for i, ok := range read {
				if !ok {
					subs[i] = r.problem(inputs[i], why, FlagTimeout)
				}
			}
			return subs
		}
	}
	return subs
}

// size writes a file's size beside the limit it is over, with the
// digits that tell them apart (10.04 MiB over 10 MiB).
func size(n, limit int64) (string, string) {
	return units.Apart(units.BinaryBytes, float64(n), float64(limit))
}

// Learners returns the learners of subs, sorted.
func Learners(subs []Submission) []string {
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

// Settle gives every submission of a batch its Role and flags what one
// learner's notebooks say of another: a metadata name that is not the
// learner's (FlagPossibleCopy), a second notebook of a lesson
// (FlagDuplicate). Whose a notebook is never changes.
func Settle(subs []Submission) {
	learners := map[string]bool{}
	for _, s := range subs {
		learners[s.Learner] = true
	}
	type key struct{ learner, lesson string }
	groups := map[key][]int{}
	for i := range subs {
		s := &subs[i]
		s.Role = RoleGraded
		for _, name := range s.Claimed {
			if other := namesOther(name, s.Learner, learners); other {
				s.flag(FlagPossibleCopy, fmt.Sprintf("possible copy: metadata names %s", name))
				break
			}
		}
		if s.Lesson != "" && s.Ignored == "" {
			k := key{s.Learner, s.Lesson}
			groups[k] = append(groups[k], i)
		}
	}
	for k, idx := range groups {
		if len(idx) < 2 {
			continue
		}
		best := slices.MinFunc(idx, func(a, b int) int { return preferred(&subs[a], &subs[b], k.lesson) })
		var dups []string
		for _, i := range idx {
			if i == best {
				continue
			}
			subs[i].Role = RoleDuplicate
			// A copy with nothing of the learner's in it (the course's
			// new version offered beside an edited lesson, a copy never
			// worked in) is no second answer: not flagged.
			if untouched(&subs[i]) {
				continue
			}
			subs[i].flag(FlagDuplicate, fmt.Sprintf("another notebook of lesson %s: %s is graded; this one counts only for exercises that one has no prediction for", k.lesson, subs[best].Path))
			dups = append(dups, subs[i].Path)
		}
		if len(dups) > 0 {
			slices.Sort(dups)
			subs[best].flag(FlagDuplicate, fmt.Sprintf("graded as lesson %s; also submitted: %s", k.lesson, strings.Join(dups, ", ")))
		}
	}
	flagSharedAttempts(subs)
	flagNamedLearners(subs, learners)
}

// untouched reports whether a notebook holds nothing of a learner's: no
// prediction written (placeholders only), no kernel tried, no attempt
// recorded.
func untouched(s *Submission) bool {
	if s.Problem != "" || len(s.Found.Attempts) > 0 || len(s.Found.Tries) > 0 {
		return false
	}
	for _, c := range s.Found.Calls {
		if c.Form != answers.FormPlaceholder {
			return false
		}
	}
	return true
}

// flagSharedAttempts flags the notebooks of two learners that hold the
// same attempt record: lab.Check stamps each first prediction with the
// nanosecond it was made, so one record in two learners' notebooks is one
// notebook handed to another (or both copying a third). Both are flagged,
// each naming the other: the record cannot say who copied.
func flagSharedAttempts(subs []Submission) {
	type stamp struct {
		id string
		t  time.Time
	}
	where := map[stamp][]int{}
	for i := range subs {
		seen := map[stamp]bool{}
		for _, a := range subs[i].Found.Attempts {
			k := stamp{a.Record.ID, a.Record.First.Time}
			if a.Record.First.Time.IsZero() || seen[k] {
				continue
			}
			seen[k] = true
			where[k] = append(where[k], i)
		}
	}
	noted := map[[2]int]bool{}
	keys := slices.SortedFunc(maps.Keys(where), func(a, b stamp) int { return cmp.Or(cmp.Compare(a.id, b.id), a.t.Compare(b.t)) })
	for _, k := range keys {
		idx := where[k]
		for _, i := range idx {
			for _, j := range idx {
				if subs[i].Learner == subs[j].Learner || noted[[2]int{i, j}] {
					continue
				}
				noted[[2]int{i, j}] = true
				subs[i].flag(FlagPossibleCopy, fmt.Sprintf("possible copy: %s holds the attempt record of %s's %s (%s, first predicted %s)",
					filepath.Base(subs[i].Path), subs[j].Learner, filepath.Base(subs[j].Path), k.id, k.t.UTC().Format(time.RFC3339Nano)))
			}
		}
	}
}

// flagNamedLearners flags a notebook whose saved outputs show another
// learner of the batch by name: lab prints the learner a kernel
// exercise's variant is drawn for ("(learner ada)"), so a 10-kernels.ipynb
// handed from ada to bob names ada in bob's folder.
func flagNamedLearners(subs []Submission, learners map[string]bool) {
	for i := range subs {
		s := &subs[i]
		var others []string
		for _, name := range s.Found.Learners {
			if name != s.Learner && learners[name] && !slices.Contains(others, name) {
				others = append(others, name)
			}
		}
		slices.Sort(others)
		for _, o := range others {
			s.flag(FlagPossibleCopy, fmt.Sprintf("possible copy: its saved outputs show the variant of learner %s", o))
		}
	}
}

// preferred orders two notebooks of one learner's lesson, the one to grade
// first (see Role).
func preferred(a, b *Submission, lesson string) int {
	own := func(s *Submission) int {
		if strings.EqualFold(filepath.Base(s.Path), lesson+".ipynb") {
			return 0
		}
		return 1
	}
	readable := func(s *Submission) int {
		if s.Problem == "" {
			return 0
		}
		return 1
	}
	written := func(s *Submission) int {
		n := 0
		for _, c := range s.Found.Calls {
			if c.Form != answers.FormUnreadable && c.Form != answers.FormPlaceholder {
				n++
			}
		}
		return -n
	}
	depth := func(s *Submission) int { return strings.Count(filepath.ToSlash(s.Path), "/") }
	return cmp.Or(cmp.Compare(own(a), own(b)), cmp.Compare(readable(a), readable(b)), cmp.Compare(depth(a), depth(b)),
		cmp.Compare(written(a), written(b)), compareTimes(firstTime(a), firstTime(b)), cmp.Compare(a.Path, b.Path))
}

// firstTime is the earliest first attempt of a submission's attempt
// records; zero when it has none.
func firstTime(s *Submission) time.Time {
	var t time.Time
	for _, a := range s.Found.Attempts {
		if ft := a.Record.First.Time; !ft.IsZero() && (t.IsZero() || ft.Before(t)) {
			t = ft
		}
	}
	return t
}

// compareTimes orders times, a zero time (none recorded) last.
func compareTimes(a, b time.Time) int {
	switch {
	case a.IsZero() && b.IsZero():
		return 0
	case a.IsZero():
		return 1
	case b.IsZero():
		return -1
	}
	return a.Compare(b)
}

// GradingOrder sorts one learner's submissions into the order their calls
// are taken in: graded notebooks before duplicates, then the earliest
// first attempt recorded (the prediction made first in time), then path.
func GradingOrder(subs []*Submission) {
	rank := func(s *Submission) int {
		if s.Role == RoleDuplicate {
			return 1
		}
		return 0
	}
	slices.SortStableFunc(subs, func(a, b *Submission) int {
		return cmp.Or(cmp.Compare(rank(a), rank(b)), compareTimes(firstTime(a), firstTime(b)), cmp.Compare(a.Path, b.Path))
	})
}

// namesOther reports whether a name from a notebook's metadata is someone
// else than learner: another learner of the batch by name, or a name
// that does not match learner at all (see sameName).
func namesOther(name, learner string, learners map[string]bool) bool {
	if !sameName(name, learner) {
		return true
	}
	for other := range learners {
		if other != learner && normName(other) == normName(name) && normName(learner) != normName(name) {
			return true
		}
	}
	return false
}

// sameName reports whether a display name (Ada Lovelace) can be learner's
// folder (ada, alovelace, ada-lovelace): letters and digits compared
// without case, whole, or a word of the name being the folder or (three
// letters or more) part of it.
func sameName(name, learner string) bool {
	l := normName(learner)
	if l == "" || normName(name) == l {
		return normName(name) == l
	}
	for _, w := range strings.FieldsFunc(strings.ToLower(name), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if w == l || len(w) >= 3 && strings.Contains(l, w) {
			return true
		}
	}
	return false
}

// normName is a name's letters and digits, lower case.
func normName(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(r)
		}
	}
	return b.String()
}
