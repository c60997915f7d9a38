package gradebook

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/coalescing-course/coalesce/grader/gradebook/answers"
	"github.com/coalescing-course/coalesce/grader/gradebook/intake"
	"github.com/coalescing-course/coalesce/grader/sandbox"
	"github.com/coalescing-course/coalesce/internal/words"
	"github.com/coalescing-course/coalesce/lessons/exercises"
	"github.com/coalescing-course/coalesce/units"
)

// KernelExercise is a kernel exercise graded with Options.RunKernels:
// its id and its points.
type KernelExercise struct {
	ID     string
	Points float64
}

// The defaults of the kernel deadlines (Options.KernelTimeout,
// Options.KernelsDeadline).
const (
	// DefaultKernelTimeout bounds all of one learner's kernels: five
	// builds and runs take a few seconds; one that runs into every limit
	// (a build's minute, a run's 30 s) is stopped well before the sum.
	DefaultKernelTimeout = 3 * time.Minute
	// DefaultKernelsDeadline bounds the kernels of the whole batch: a
	// class of 1,000 learners, each with kernels of their own, on a
	// machine of a few cores.
	DefaultKernelsDeadline = 2 * time.Hour
)

// The causes a learner's kernel rows are not graded for, besides the
// grading machine's errors.
var (
	errLearnerDeadline = errors.New("gradebook: the learner's kernel deadline passed")
	errBatchDeadline   = errors.New("gradebook: the batch's kernel deadline passed")
)

// maxLearnerText bounds each piece of learner text a note quotes.
const maxLearnerText = 1000

// learnerText makes text that came out of a learner's code (a compiler's
// message, which quotes it; a panic's value; a line it printed; its
// source, in an explanation) fit to write where others read it: at most
// maxLearnerText bytes, then quoted as Go quotes a string, so that it is
// one line (a newline, a control or an invisible character is shown
// escaped: \n, \x1b, \u202e) and reads as the learner's, between quotes:
// no forged line of the grader's can start in a note, a CSV cell or the
// feedback.
func learnerText(s string) string {
	if len(s) > maxLearnerText {
		cut := maxLearnerText
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		return strconv.Quote(s[:cut]) + fmt.Sprintf(" (%d bytes more)", len(s)-cut)
	}
	return strconv.Quote(s)
}

// reportMessage says what a kernel's report found: the error, the first
// wrong element, each target met or missed. What came from the learner's
// code (the error, a miss's explanation of its sites) is quoted.
func reportMessage(rep exercises.Report) string {
	if rep.Error != "" {
		// Not run to its end: no target was met, whatever they say.
		return "the kernel failed: " + learnerText(rep.Error)
	}
	var parts []string
	switch {
	case rep.Mismatch != nil:
		parts = append(parts, "wrong output: "+rep.Mismatch.String())
	case rep.Correct:
		parts = append(parts, "output right")
	}
	for _, t := range rep.Targets {
		got, want := units.Apart(units.Count, t.Got, t.Want)
		if t.Pass {
			parts = append(parts, fmt.Sprintf("%s %s within %s", t.Metric, got, want))
			continue
		}
		s := fmt.Sprintf("%s %s over the target %s", t.Metric, got, want)
		if t.Got < t.Want {
			s = fmt.Sprintf("%s %s missed", t.Metric, got)
		}
		if t.Why != "" {
			s += ": " + learnerText(t.Why)
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, "; ")
}

// runFunc runs one kernel (a sandbox.Batch's Run).
type runFunc func(context.Context, sandbox.Kernel) (*sandbox.Result, error)

// gradeKernels grades every learner's kernels, up to workers learners at
// once, each within KernelTimeout, all within KernelsDeadline: the rows
// of each learner, in learners' order. A learner not reached by the
// deadline still has a row per exercise, saying so.
func gradeKernels(ctx context.Context, learners []string, byLearner map[string][]*intake.Submission, opt Options, run runFunc) map[string][]Row {
	deadline := cmpOr(opt.KernelsDeadline, DefaultKernelsDeadline)
	ctx, cancel := context.WithTimeoutCause(ctx, deadline, errBatchDeadline)
	defer cancel()
	perLearner := cmpOr(opt.KernelTimeout, DefaultKernelTimeout)
	workers := opt.KernelWorkers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	rows := make([][]Row, len(learners))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(workers, max(1, len(learners))) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				subs := append([]*intake.Submission(nil), byLearner[learners[i]]...)
				intake.GradingOrder(subs)
				lctx, lcancel := context.WithTimeoutCause(ctx, perLearner, errLearnerDeadline)
				rows[i] = kernelRows(lctx, learners[i], subs, opt.KernelExercises, run, deadlines{perLearner, deadline})
				lcancel()
			}
		}()
	}
	for i := range learners {
		next <- i
	}
	close(next)
	wg.Wait()
	out := make(map[string][]Row, len(learners))
	for i, l := range learners {
		out[l] = rows[i]
	}
	return out
}

func cmpOr(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// deadlines are the learner's and the batch's, for the notes.
type deadlines struct{ learner, batch time.Duration }

// kernelRows grades a learner's kernels: for each exercise, the first Try
// call that can be graded (in the order of subs, then cells), run in the
// sandbox.
func kernelRows(ctx context.Context, learner string, subs []*intake.Submission, exercises []KernelExercise, run runFunc, d deadlines) []Row {
	var rows []Row
	for _, e := range exercises {
		r := Row{Learner: learner, ID: e.ID, Lesson: lessonOfID(e.ID), MaxPoints: e.Points}
		var try *answers.Try
		var others []string
		for _, s := range subs {
			if s.Problem != "" {
				continue
			}
			for k := range s.Found.Tries {
				t := &s.Found.Tries[k]
				if t.ID != e.ID {
					continue
				}
				switch {
				case try == nil && t.Problem == "":
					try, r.Notebook = t, s.Path
				case t.Problem != "":
					others = append(others, fmt.Sprintf("cell %d, line %d%s: %s", t.Cell+1, t.Line, inFile(s.Path, r.Notebook), t.Problem))
				}
			}
		}
		var notes []string
		switch {
		case try == nil && len(others) > 0:
			r.Status = Unreadable
			notes = append(notes, others...)
		case try == nil:
			r.Status = Missing
			notes = append(notes, "no lab.Try call for this kernel exercise")
		default:
			r.PredictionText = try.Func
			notes = append(notes, fmt.Sprintf("cell %d, line %d: kernel %s", try.Cell+1, try.Line, try.Func))
			notes = append(notes, kernelVerdict(ctx, &r, learner, try, run, d)...)
		}
		r.Note = strings.Join(notes, "; ")
		rows = append(rows, r)
	}
	return rows
}

// kernelVerdict runs a kernel, judges what the child observed against
// the reference worked out here (exercises.Judge), and sets r's status and
// points; it returns the notes saying why.
func kernelVerdict(ctx context.Context, r *Row, learner string, try *answers.Try, run runFunc, d deadlines) []string {
	var res *sandbox.Result
	err := context.Cause(ctx) // past a deadline, or stopped: nothing more is run
	if err == nil {
		res, err = run(ctx, sandbox.Kernel{Exercise: try.ID, Learner: learner, Source: try.Source.Text, Func: try.Func, Order: try.Order})
	}
	var se *sandbox.Error
	switch {
	case err != nil && ctx.Err() != nil && !errors.As(err, &se):
		r.Status = Ungraded // its points stay possible: an instructor may set them (-overrides)
		switch cause := context.Cause(ctx); {
		case errors.Is(cause, errLearnerDeadline):
			return []string{fmt.Sprintf("not graded: this learner's kernels took over %s in all (coalesce grade -kernel-timeout)", d.learner)}
		case errors.Is(cause, errBatchDeadline):
			return []string{fmt.Sprintf("not graded: the batch's kernels took over %s (coalesce grade -kernels-deadline)", d.batch)}
		default:
			return []string{fmt.Sprintf("not graded: grading was stopped (%v)", cause)}
		}
	case errors.As(err, &se):
		where := ""
		if w := try.Source.Where(se.Line); w != "" {
			where = " (" + w + ")"
		}
		msg := strings.TrimPrefix((&sandbox.Error{Err: se.Err, Line: se.Line, Msg: se.Msg}).Error(), "sandbox: ")
		if se.Detail != "" {
			msg += ": " + learnerText(se.Detail)
		}
		if errors.Is(err, sandbox.ErrRefused) || errors.Is(err, sandbox.ErrCompile) {
			r.Status = Unreadable
			return []string{fmt.Sprintf("the kernel was not run%s: %s", where, msg)}
		}
		r.Status = Wrong
		return []string{fmt.Sprintf("the kernel failed%s: %s", where, msg)}
	case err != nil:
		r.Status = Ungraded // its points stay possible: an instructor may set them (-overrides)
		return []string{fmt.Sprintf("not graded, the grading machine failed: %v", err)}
	}
	obs, err := exercises.ParseObservation(res.Report)
	if err != nil {
		r.Status = Ungraded
		return []string{fmt.Sprintf("not graded, the grading machine failed: %v", err)}
	}
	rep := exercises.Judge(try.ID, learner, obs)
	var notes []string
	switch {
	case obs.Error != "":
		// Not run at all: a kernel of the wrong type (an order that is
		// not func([]int32) []int32), an exercise id that is none.
		r.Status = Unreadable
		notes = append(notes, "the kernel was not run: "+learnerText(obs.Error))
	case rep.Pass:
		r.Status = Right
		notes = append(notes, reportMessage(rep))
	default:
		r.Status = Wrong
		notes = append(notes, reportMessage(rep))
	}
	r.Points = min(max(0, float64(rep.Points)), r.MaxPoints)
	if res.Dropped > 0 || len(res.Stdout)+len(res.Stderr) > 0 {
		notes = append(notes, fmt.Sprintf("the kernel printed %s bytes", units.Count.Format(float64(int64(len(res.Stdout)+len(res.Stderr))+res.Dropped))))
	}
	return notes
}

// ungradedKernels is the flag of a learner some of whose kernel rows are
// ungraded, "" when none is.
func ungradedKernels(rows []Row, kernels []KernelExercise) string {
	n := 0
	for _, r := range rows {
		for _, e := range kernels {
			if r.ID == e.ID && r.Status == Ungraded {
				n++
			}
		}
	}
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("%s not graded (see the notes): set the points by hand (-overrides) or grade again", words.Plural(n, "kernel exercise"))
}

// lessonOfID is the lesson of an exercise id, "10-kernels" of
// "10-kernels/strided-copy".
func lessonOfID(id string) string {
	l, _, _ := strings.Cut(id, "/")
	return l
}
