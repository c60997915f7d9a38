package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/coalescing-course/coalesce/cuda"
	"github.com/coalescing-course/coalesce/cuda/reference"
	"github.com/coalescing-course/coalesce/grader"
	"github.com/coalescing-course/coalesce/grader/gradebook"
	"github.com/coalescing-course/coalesce/grader/gradebook/intake"
	"github.com/coalescing-course/coalesce/grader/gradebook/report"
	"github.com/coalescing-course/coalesce/grader/sandbox"
	"github.com/coalescing-course/coalesce/internal/progress"
	"github.com/coalescing-course/coalesce/lessons/exercises"
	"github.com/coalescing-course/coalesce/lessons/measure"
)

func init() {
	commands["grade"] = command{
		summary: "grade learners' saved notebooks: [-out DIR] [-reference FILE] SUBMISSIONS...",
		run:     runGrade,
	}
}

// progressEvery is how many notebooks grade reads between progress lines.
const progressEvery = 25

const gradeUsage = `usage: coalesce grade [-out DIR] [-measure recorded|live|none] [-reference FILE]
                      [-lessons all|L1,L2] [-assignment NAME] [-roster FILE]
                      [-overrides FILE] [-max-size BYTES] [-timeout D]
                      [-kernels [-kernel-timeout D] [-kernels-deadline D] [-kernel-workers N]]
                      [-quiet] SUBMISSIONS...

Grades learners' saved notebooks (.ipynb files, or directories searched for
them). The predictions are read from the lab.Check calls in the cells'
source; no learner code is run, unless -kernels. Writes DIR/gradebook.csv (one row per learner
and exercise), DIR/totals.csv (the points possible, then one row per learner, with a
status: graded, partial, flagged, unreadable or missing), DIR/gradebook.json,
DIR/item_analysis.csv and DIR/summary.md (the class's answers per exercise)
and DIR/feedback/LEARNER.md.

-roster FILE lists the class (one id a line, or CSV with an id column; #
comments; ids match folders whatever their case): a learner on it without a
notebook gets 0, status missing; one found but not on it is graded and
flagged. -overrides FILE sets points by
hand, after grading (CSV: learner, exercise, points, reason).

-kernels also grades the kernel exercises: the Go kernel of each lab.Try call
(with the declarations it needs from every code cell) is vetted (only math,
sort, slices, cmp and lessons/simt imported; funcs, types and consts only; no
bidirectional or invisible characters), built with go build against the
course's source built into this binary, and run in a child process; every
build and child runs with memory, CPU-time and file-size limits set before it
starts, an empty environment and no network where the system allows, and dies
with this command. The child reports the outputs and counts it saw; the points
are worked out here, on the learner's own variant (the parameters their name
draws, as lab.Try did in their notebook). All five kernel exercises of
10-kernels are graded, whatever -lessons says, and count in the points
possible, the assignment's name and the item analysis. Learners are graded
-kernel-workers at a time (default: the machine's cores), each learner's
kernels within -kernel-timeout (default 3m), all of them within
-kernels-deadline (default 2h); a kernel not graded in time, or that the
machine could not run, is an ungraded row saying why, its learner flagged,
and the exit status 1. A machine that cannot grade kernels at all (no go
command) stops the command before any notebook is read. Builds use the
sandbox's own caches, never yours: $COALESCE_SANDBOX_DIR, default
coalesce/sandbox in the user cache directory (the course compiled once,
about 55 MB; kernels built, kept up to 512 MB). This runs learner code: off
by default.

A learner is the first folder below a directory named here (the hub user's
folder: SUBMISSIONS/ada/01-sectors.ipynb is ada's), else the file name
(SUBMISSIONS/ada.ipynb); a notebook's metadata never decides whose it is, and
one naming someone else is flagged as a possible copy, as is one holding another
learner's attempt record or showing their exercise variant. A notebook that is
not the course's (a scratch Untitled.ipynb) is listed as ignored, never a
failure. Only regular files
(and links to them inside the directory) are opened; a pipe, a device or a
link elsewhere is a row saying so. Progress goes to stderr every 25
notebooks when it is a terminal.
Exit status 1 when some file could not be read (it still has its row).
`

func runGrade(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("grade", flag.ContinueOnError)
	out := fs.String("out", "grades", "directory to write the gradebook and feedback into")
	mode := fs.String("measure", "recorded", "measurement source: recorded (the H200 recording built in), live (this machine's GPU) or none")
	refFile := fs.String("reference", "", "grade against the launches of this run file (coalesce run's output) instead of the built-in recording")
	firstAttempt := fs.Bool("first-attempt", false, "grade each exercise's first attempt, where the saved notebook's outputs hold an attempt record (learner-editable evidence), instead of the prediction in the source")
	lessons := fs.String("lessons", "", "lessons to grade: all, or a comma-separated list; default: all (the points possible never depend on what was submitted)")
	assignment := fs.String("assignment", "", "the assignment's name in totals.csv; default: the lessons' ids joined with +")
	rosterFile := fs.String("roster", "", "the class list: one learner id a line, or CSV with an id column")
	overridesFile := fs.String("overrides", "", "points set by hand: CSV learner, exercise, points, reason")
	maxSize := fs.Int64("max-size", intake.DefaultMaxBytes, "largest notebook file read, in bytes (a safety bound: outputs are streamed, not held)")
	timeout := fs.Duration("timeout", intake.DefaultTimeout, "deadline for reading the whole batch; a notebook not read by then is a row saying so")
	kernels := fs.Bool("kernels", false, "also grade the kernel exercises by running each learner's Go kernel in a sandboxed child process (runs learner code)")
	kernelTimeout := fs.Duration("kernel-timeout", gradebook.DefaultKernelTimeout, "with -kernels: deadline for all of one learner's kernels, builds and runs")
	kernelsDeadline := fs.Duration("kernels-deadline", gradebook.DefaultKernelsDeadline, "with -kernels: deadline for the kernels of the whole batch")
	kernelWorkers := fs.Int("kernel-workers", 0, "with -kernels: learners whose kernels are graded at once; 0: the machine's cores")
	var quiet bool
	fs.BoolVar(&quiet, "quiet", false, "no progress lines (they go to stderr only when it is a terminal)")
	fs.BoolVar(&quiet, "q", false, "same as -quiet")
	if err := parseFlags(fs, gradeUsage, args, stdout); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return usagef("grade: no submissions given: want notebook files or directories")
	}
	if *maxSize <= 0 {
		return usagef("grade: -max-size %d: want a positive number of bytes", *maxSize)
	}
	if *timeout <= 0 {
		return usagef("grade: -timeout %s: want a positive duration, e.g. 10m", *timeout)
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"kernel-timeout", *kernelTimeout}, {"kernels-deadline", *kernelsDeadline}} {
		if d.v <= 0 {
			return usagef("grade: -%s %s: want a positive duration, e.g. 3m", d.name, d.v)
		}
	}
	if *kernelWorkers < 0 {
		return usagef("grade: -kernel-workers %d: want 0 (the machine's cores) or more", *kernelWorkers)
	}
	src, why, err := gradeMeasurer(ctx, *mode, *refFile, stderr)
	if err != nil {
		return err
	}
	g, err := grader.New(grader.Options{Measurer: src, NoMeasurer: why})
	if err != nil {
		return err
	}
	opt := gradebook.Options{FirstAttempt: *firstAttempt, Assignment: strings.TrimSpace(*assignment), RunKernels: *kernels,
		KernelTimeout: *kernelTimeout, KernelsDeadline: *kernelsDeadline, KernelWorkers: *kernelWorkers}
	var batch *sandbox.Batch
	if *kernels {
		if opt.KernelExercises, err = kernelExercises(); err != nil {
			return err
		}
		// Before any notebook is read: a machine that cannot grade
		// kernels says so now, not in a class of ungraded rows.
		if batch, err = sandbox.NewBatch(ctx, sandbox.Config{Workers: *kernelWorkers}); err != nil {
			return fmt.Errorf("grade -kernels: %w", err)
		}
		defer batch.Close()
		opt.RunKernel = batch.Run
		st := batch.Stats()
		fmt.Fprintf(stderr, "coalesce grade: kernels: the sandbox is ready in %s (its caches in %s)\n", st.Warm.Round(time.Millisecond), st.CacheDir)
	}
	if *rosterFile != "" {
		if opt.Roster, err = readList(*rosterFile, gradebook.ReadRoster); err != nil {
			return err
		}
		if opt.Roster == nil {
			opt.Roster = []string{} // an empty roster is a roster: everyone is flagged
		}
	}
	if *overridesFile != "" {
		if opt.Overrides, err = readList(*overridesFile, gradebook.ReadOverrides); err != nil {
			return err
		}
	}
	switch l := strings.TrimSpace(*lessons); l {
	case "":
	case "all":
		opt.Lessons = g.Bank().LessonIDs()
	default:
		opt.Lessons = strings.Split(l, ",")
		for i := range opt.Lessons {
			opt.Lessons[i] = strings.TrimSpace(opt.Lessons[i])
		}
	}

	inputs, skipped, err := intake.Collect(fs.Args())
	if err != nil {
		return err
	}
	if len(skipped) > 0 {
		fmt.Fprintf(stderr, "coalesce grade: skipped %s that %s not .ipynb (name a file on its own to grade it anyway): %s\n",
			count(len(skipped), "file"), map[bool]string{true: "is", false: "are"}[len(skipped) == 1], strings.Join(firstN(skipped, 5), ", "))
	}
	if len(inputs) == 0 {
		return fmt.Errorf("grade: no .ipynb files in %s", strings.Join(fs.Args(), ", "))
	}
	var progress func(int)
	if !quiet && isTerminal(stderr) && len(inputs) > progressEvery {
		progress = func(done int) {
			if done%progressEvery == 0 || done == len(inputs) {
				fmt.Fprintf(stderr, "coalesce grade: read %d/%d notebooks\n", done, len(inputs))
			}
		}
	}
	subs := intake.Reader{Bank: g.Bank(), Limit: *maxSize, Timeout: *timeout}.ReadAllContext(ctx, inputs, progress)
	if err := ctx.Err(); err != nil {
		return err
	}
	gb, err := gradebook.GradeContext(ctx, g, subs, opt)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := report.WriteDir(gb, *out); err != nil {
		return err
	}

	fmt.Fprintf(stdout, "graded %s of %s: lessons %s; measurements: %s\n",
		count(gb.Notebooks, "notebook"), count(len(gb.Totals), "learner"), orNone(strings.Join(gb.Lessons, ", ")), gb.Origin)
	for _, name := range []string{report.GradebookCSV, report.TotalsCSV, report.GradebookJSON, report.ItemsCSV, report.SummaryMD} {
		fmt.Fprintf(stdout, "wrote %s\n", filepath.ToSlash(filepath.Join(*out, name)))
	}
	fmt.Fprintf(stdout, "wrote %s/ (%s)\n", filepath.ToSlash(filepath.Join(*out, report.FeedbackDir)), count(len(gb.Totals), "file"))
	failed := false
	if batch != nil {
		st := batch.Stats()
		fmt.Fprintf(stderr, "coalesce grade: kernels: %s run, %s (and %d reused: the same source built before); the largest build added %s to its cache (removed)\n",
			count(int(st.Runs), "kernel"), count(int(st.Builds), "build"), st.Reused, byteCount(st.MaxBuildGrowth))
		if n := ungradedKernels(gb, opt.KernelExercises); n > 0 {
			fmt.Fprintf(stderr, "coalesce grade: %s could not be graded (the machine, or a deadline; each row's note says which); their learners are flagged\n", count(n, "kernel row"))
			failed = true
		}
	}
	if gb.BadNotebooks > 0 {
		fmt.Fprintf(stderr, "coalesce grade: %d of %s could not be graded; each has a bad-notebook row in the gradebook\n", gb.BadNotebooks, count(gb.Notebooks, "notebook"))
		failed = true
	}
	if failed {
		return errReported
	}
	return nil
}

// readList reads a roster or override file with read.
func readList[T any](path string, read func(io.Reader, string) (T, error)) (T, error) {
	f, err := os.Open(path)
	if err != nil {
		var zero T
		return zero, fmt.Errorf("grade: %w", err)
	}
	defer f.Close()
	return read(f, path)
}

// gradeMeasurer opens the measurement source the flags name.
func gradeMeasurer(ctx context.Context, mode, refFile string, stderr io.Writer) (measure.Measurer, string, error) {
	if refFile != "" {
		set, err := measure.ReadFile(refFile)
		if err != nil {
			return nil, "", err
		}
		return measure.FromSet(set), "", nil
	}
	switch mode {
	case cuda.RecordedMode:
		src, err := reference.Measurer("")
		if err != nil {
			// Not fatal: exercises graded by the model still grade.
			return nil, fmt.Sprintf("no recording in this build (%v)", err), nil
		}
		return src, "", nil
	case cuda.LiveMode:
		st, done := statusLine(stderr)
		src, err := cuda.OpenMeasurer(ctx, cuda.LiveMode, cuda.Builder{Log: st})
		done()
		if err != nil {
			return nil, "", fmt.Errorf("grade -measure live: %w", err)
		}
		// The model answers describe the GPU that measures, so that a
		// measured verdict holds one GPU against its own model.
		model, err := adoptDevice(src)
		if err != nil {
			return nil, "", fmt.Errorf("grade -measure live: %w", err)
		}
		fmt.Fprintf(stderr, "coalesce grade: the model describes %s\n", model)
		return src, "", nil
	case cuda.NoneMode:
		return nil, "-measure none", nil
	}
	return nil, "", usagef("grade: -measure %q: want recorded, live or none", mode)
}

func count(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	if strings.HasSuffix(word, " is") {
		return fmt.Sprintf("%d %ss are", n, strings.TrimSuffix(word, " is"))
	}
	return fmt.Sprintf("%d %ss", n, word)
}

func firstN(s []string, n int) []string {
	if len(s) <= n {
		return s
	}
	return append(append([]string{}, s[:n]...), fmt.Sprintf("… (%d more)", len(s)-n))
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// statusLine returns where a slow step's progress lines go (the harness's
// first build, a calibration, a sweep): on a terminal, one line kept up to
// date with the time it has taken (internal/progress); elsewhere stderr
// itself, a line each, as a log wants them. done ends the status line.
func statusLine(stderr io.Writer) (w io.Writer, done func()) {
	if !isTerminal(stderr) {
		return stderr, func() {}
	}
	l := progress.New(progress.Terminal(stderr), time.Second)
	return l, func() { l.Close() }
}

// isTerminal reports whether w is a terminal: progress lines are for a
// person watching, not for CI logs or a redirected file.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	info, err := f.Stat()
	return err == nil && info.Mode()&os.ModeCharDevice != 0
}

// ungradedKernels counts the kernel rows of gb that are ungraded.
func ungradedKernels(gb *gradebook.Gradebook, kernels []gradebook.KernelExercise) int {
	n := 0
	for _, r := range gb.Rows {
		if r.Status != gradebook.Ungraded {
			continue
		}
		for _, e := range kernels {
			if r.ID == e.ID {
				n++
			}
		}
	}
	return n
}

// byteCount is n bytes in KiB or MiB.
func byteCount(n int64) string {
	if n >= 1<<20 {
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
}

// kernelExercises are the kernel exercises -kernels grades, with their
// points: every one of lessons/exercises, whatever was submitted.
// An exercise's points are its report's: 1 for the right output and 1 for
// each counter target met.
func kernelExercises() ([]gradebook.KernelExercise, error) {
	var out []gradebook.KernelExercise
	for _, id := range exercises.IDs() {
		e, err := exercises.Lookup(id)
		if err != nil {
			return nil, fmt.Errorf("grade: -kernels: %w", err)
		}
		out = append(out, gradebook.KernelExercise{ID: id, Points: float64(1 + len(e.Metrics))})
	}
	return out, nil
}
