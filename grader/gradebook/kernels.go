package gradebook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/coalescing-course/coalesce/grader/gradebook/answers"
	"github.com/coalescing-course/coalesce/grader/gradebook/intake"
	"github.com/coalescing-course/coalesce/grader/sandbox"
	"github.com/coalescing-course/coalesce/lessons/exercises"
)

// KernelExercise is a kernel exercise graded with Options.RunKernels:
// its id and its points.
type KernelExercise struct {
	ID     string
	Points float64
}

// reportMessage says what a kernel's report found: the error, the first
// wrong element, each target met or missed.
func reportMessage(rep exercises.Report) string {
	var parts []string
	switch {
	case rep.Error != "":
		parts = append(parts, rep.Error)
	case rep.Mismatch != nil:
		parts = append(parts, "wrong output: "+rep.Mismatch.String())
	case rep.Correct:
		parts = append(parts, "output right")
	}
	for _, t := range rep.Targets {
		if t.Pass {
			parts = append(parts, fmt.Sprintf("%s %g within %g", t.Metric, t.Got, t.Want))
			continue
		}
		s := fmt.Sprintf("%s %g over the target %g", t.Metric, t.Got, t.Want)
		if t.Why != "" {
			s += ": " + t.Why
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, "; ")
}

// kernelRows grades a learner's kernels: for each exercise, the first Try
// call that can be graded (in the order of subs, then cells), run in the
// sandbox.
func kernelRows(ctx context.Context, learner string, subs []*intake.Submission, exercises []KernelExercise, run func(context.Context, sandbox.Kernel) (*sandbox.Result, error)) []Row {
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
			notes = append(notes, kernelVerdict(ctx, &r, learner, try, run)...)
		}
		r.Note = strings.Join(notes, "; ")
		rows = append(rows, r)
	}
	return rows
}

// kernelVerdict runs a kernel and sets r's status and points from its
// report; it returns the notes saying why.
func kernelVerdict(ctx context.Context, r *Row, learner string, try *answers.Try, run func(context.Context, sandbox.Kernel) (*sandbox.Result, error)) []string {
	res, err := run(ctx, sandbox.Kernel{Exercise: try.ID, Learner: learner, Source: try.Source.Text, Func: try.Func, Order: try.Order})
	var se *sandbox.Error
	switch {
	case errors.As(err, &se):
		where := ""
		if w := try.Source.Where(se.Line); w != "" {
			where = " (" + w + ")"
		}
		msg := strings.TrimPrefix(se.Error(), "sandbox: ")
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
	// The child wrote exercises.Report, as JSON.
	var rep exercises.Report
	if err := json.Unmarshal(res.Report, &rep); err != nil {
		r.Status = Ungraded // its points stay possible: an instructor may set them (-overrides)
		return []string{fmt.Sprintf("not graded: the report does not read: %v", err)}
	}
	r.Points = min(max(0, float64(rep.Points)), r.MaxPoints)
	r.Status = Wrong
	if rep.Pass {
		r.Status = Right
	}
	notes := []string{reportMessage(rep)}
	if res.Dropped > 0 || len(res.Stdout)+len(res.Stderr) > 0 {
		notes = append(notes, fmt.Sprintf("the kernel printed %d bytes", int64(len(res.Stdout)+len(res.Stderr))+res.Dropped))
	}
	return notes
}

// lessonOfID is the lesson of an exercise id, "10-kernels" of
// "10-kernels/strided-copy".
func lessonOfID(id string) string {
	l, _, _ := strings.Cut(id, "/")
	return l
}
