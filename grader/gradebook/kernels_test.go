package gradebook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coalescing-course/coalesce/grader/gradebook/answers"
	"github.com/coalescing-course/coalesce/grader/gradebook/intake"
	"github.com/coalescing-course/coalesce/grader/sandbox"
	"github.com/coalescing-course/coalesce/internal/notebook"
	"github.com/coalescing-course/coalesce/lessons/exercises"
	"github.com/coalescing-course/coalesce/lessons/simt"
)

const copyID = "10-kernels/strided-copy"

// coalesced is the strided copy's solution; strided its starter (right,
// each target missed: 1 point of 3).
func coalesced(t *simt.Thread, in, out *simt.Global[float32], n, k int) {
	T := t.GridDim.X * t.BlockDim.X
	for i := t.BlockIdx.X*t.BlockDim.X + t.ThreadIdx.X; i < n; i += T {
		out.Store(t, i, in.Load(t, i))
	}
}

// observed stands in for a child: the observation of kernel, as the
// child writes it, made in this process.
func observed(t *testing.T, k sandbox.Kernel, kernel any) *sandbox.Result {
	data, err := json.Marshal(exercises.Observe(k.Exercise, k.Learner, kernel, nil))
	require.NoError(t, err)
	return &sandbox.Result{Report: data}
}

// TestKernelRows grades with a stand-in for the sandbox: what each kind of
// outcome makes of a row, judged here from what the child observed.
func TestKernelRows(t *testing.T) {
	kernelOf := func(fn string) []string {
		return []string{"import \"github.com/coalescing-course/coalesce/lessons/simt\"",
			"func " + fn + "(t *simt.Thread) {}\n%%\nlab.Try(\"10-kernels/strided-copy\", " + fn + ")"}
	}
	starter := func() any { e, _ := exercises.Lookup(copyID); return e.Starter }()
	run := func(ctx context.Context, k sandbox.Kernel) (*sandbox.Result, error) {
		switch k.Func {
		case "good":
			return observed(t, k, exercises.StridedCopyKernel(coalesced)), nil
		case "strided":
			r := observed(t, k, starter)
			r.Stderr = []byte("hi\n")
			return r, nil
		case "forged":
			return observed(t, k, exercises.StridedCopyKernel(func(t *simt.Thread, in, out *simt.Global[float32], n, k int) {
				panic("output right\nSCORE 3/3\n=HYPERLINK(\"x\")\u202e")
			})), nil
		case "inside":
			return observed(t, k, exercises.StridedCopyKernel(func(t *simt.Thread, in, out *simt.Global[float32], n, k int) {
				if t.BlockIdx.X == 0 && t.ThreadIdx.X == 0 {
					_, _ = simt.Launch{Grid: simt.Dim{X: 1, Y: 1}, Block: simt.Dim{X: 1, Y: 1}}.Run(func(u *simt.Thread) {
						for i := range n {
							out.Store(u, i, in.Load(u, i))
						}
					})
				}
			})), nil
		case "wrongtype":
			return observed(t, k, func(int) {}), nil
		case "refused":
			return nil, &sandbox.Error{Err: sandbox.ErrRefused, Line: 3, Msg: `import "os" is not allowed`}
		case "compile":
			return nil, &sandbox.Error{Err: sandbox.ErrCompile, Line: 1, Detail: "undefined: y\nSCORE 3/3"}
		case "endless":
			return nil, &sandbox.Error{Err: sandbox.ErrTimeout, Msg: "still running after 30s"}
		case "slow":
			<-ctx.Done()
			return nil, context.Cause(ctx)
		}
		return nil, errors.New("sandbox: no go command")
	}
	var subs []intake.Submission
	names := []string{"good", "strided", "forged", "inside", "wrongtype", "refused", "compile", "endless", "slow", "machine"}
	for _, learner := range names {
		subs = append(subs, intake.Submission{Path: learner + ".ipynb", Learner: learner, Lesson: "10-kernels", Found: answers.FindCalls(cellsNotebook(kernelOf(learner)...))})
	}
	subs = append(subs, intake.Submission{Path: "none.ipynb", Learner: "none", Lesson: "10-kernels"})
	ex := []KernelExercise{{ID: copyID, Points: 3}}
	plain, err := Grade(testGrader(t), subs, Options{Lessons: []string{"01-sectors"}})
	require.NoError(t, err)
	opt := Options{Lessons: []string{"01-sectors"}, RunKernels: true, KernelExercises: ex, RunKernel: run, KernelTimeout: 2 * time.Second}
	gb, err := Grade(testGrader(t), subs, opt)
	require.NoError(t, err)
	assert.Equal(t, plain.PointsPossible+3, gb.PointsPossible)
	want := map[string]struct {
		status Status
		points float64
		note   string
	}{
		"good":      {Right, 3, "cell 2, line 3: kernel good; output right; l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum "},
		"strided":   {Wrong, 1, "over the target"},
		"forged":    {Wrong, 0, `the kernel failed: "simt: kernel panicked: block (0,0) thread (0,0): output right\nSCORE 3/3\n=HYPERLINK(\"x\")\u202e at kernels_test.go:`},
		"inside":    {Wrong, 0, ""}, // ErrUncounted, or simt's refusal of a launch inside a launch
		"wrongtype": {Unreadable, 0, `the kernel was not run: "exercises: 10-kernels/strided-copy: kernel is func(int), want`},
		"refused":   {Unreadable, 0, `the kernel was not run (cell 2, line 1): refused: line 3: import "os" is not allowed`},
		"compile":   {Unreadable, 0, `the kernel was not run: does not compile: line 1: "undefined: y\nSCORE 3/3"`},
		"endless":   {Wrong, 0, "the kernel failed: time limit: still running after 30s"},
		"slow":      {Ungraded, 0, "not graded: this learner's kernels took over 2s in all (coalesce grade -kernel-timeout)"},
		"machine":   {Ungraded, 0, "not graded, the grading machine failed: sandbox: no go command"},
		"none":      {Missing, 0, "no lab.Try call for this kernel exercise"},
	}
	seen := 0
	for _, r := range gb.Rows {
		if r.ID != copyID {
			continue
		}
		seen++
		w := want[r.Learner]
		assert.Equal(t, w.status, r.Status, r.Learner)
		assert.Equal(t, w.points, r.Points, r.Learner)
		assert.Contains(t, r.Note, w.note, r.Learner)
		// Learner text is quoted: one line, no forged verdict line, no
		// bidi control, no cell that starts a formula.
		assert.NotContains(t, r.Note, "\n", r.Learner)
		assert.NotContains(t, r.Note, "\u202e", r.Learner)
		assert.LessOrEqual(t, len(r.Note), 4<<10, r.Learner)
	}
	assert.Equal(t, len(want), seen)
	for _, tt := range gb.Totals {
		switch tt.Learner {
		case "slow", "machine":
			assert.Equal(t, StatusFlagged, tt.Status, tt.Learner)
			assert.Contains(t, strings.Join(tt.Flags, "; "), "1 kernel exercise not graded", tt.Learner)
		case "good":
			assert.NotContains(t, strings.Join(tt.Flags, "; "), "not graded")
		}
	}
	for _, r := range plain.Rows {
		assert.NotEqual(t, copyID, r.ID, "without RunKernels no kernel is graded")
	}
	// The kernel exercises are the assignment's, in its name and its
	// items, as in its points.
	assert.Equal(t, "01-sectors+10-kernels", gb.Assignment)
	assert.Equal(t, []string{"01-sectors", "10-kernels"}, gb.Lessons)
	it := gb.Items[len(gb.Items)-1]
	assert.Equal(t, Item{ID: copyID, Lesson: "10-kernels", MaxPoints: 3, Learners: len(want), Answered: 5, Right: 1, Wrong: 4, Missing: 1, Unreadable: 3}, it)

	// The instructor sets the points the machine could not grade, and
	// those of a kernel judged wrong, as for any exercise.
	over := []Override{
		{Learner: "machine", ID: copyID, Points: 3, Reason: "ran it by hand", File: "o.csv", Line: 1},
		{Learner: "strided", ID: copyID, Points: 0, File: "o.csv", Line: 2},
	}
	opt.Overrides = over
	gb, err = Grade(testGrader(t), subs, opt)
	require.NoError(t, err)
	for _, r := range gb.Rows {
		switch {
		case r.ID != copyID:
		case r.Learner == "machine":
			assert.Equal(t, 3.0, r.Points)
			assert.Contains(t, r.Note, "points set by the instructor: 3 of 3 — ran it by hand")
		case r.Learner == "strided":
			assert.Equal(t, 0.0, r.Points)
		}
	}
	over[0].Points = 4
	_, err = Grade(testGrader(t), subs, opt)
	assert.ErrorContains(t, err, "points 4 for 10-kernels/strided-copy: want 0 to 3")

	_, err = Grade(testGrader(t), subs, Options{RunKernels: true})
	assert.ErrorContains(t, err, "no kernel exercises")
}

// TestKernelsInParallelWithinTheBatchDeadline: learners' kernels are
// graded several at once, each learner's rows still in its place; those
// not reached by the batch's deadline are ungraded rows that say so, and
// their learners flagged, never a silent zero. The first ten learners'
// kernels return at once, the others' only when their context ends: the
// deadline finds four of them running and thirty not graded.
func TestKernelsInParallelWithinTheBatchDeadline(t *testing.T) {
	var subs []intake.Submission
	for i := range 40 {
		learner := fmt.Sprintf("l%02d", i)
		cells := []string{"import \"github.com/coalescing-course/coalesce/lessons/simt\"",
			"func k(t *simt.Thread) {}\n%%\nlab.Try(\"10-kernels/strided-copy\", k)"}
		subs = append(subs, intake.Submission{Path: learner + ".ipynb", Learner: learner, Lesson: "10-kernels", Found: answers.FindCalls(cellsNotebook(cells...))})
	}
	var mu sync.Mutex
	running, most := 0, 0
	run := func(ctx context.Context, k sandbox.Kernel) (*sandbox.Result, error) {
		mu.Lock()
		running++
		most = max(most, running)
		mu.Unlock()
		defer func() { mu.Lock(); running--; mu.Unlock() }()
		if k.Learner < "l10" {
			return nil, &sandbox.Error{Err: sandbox.ErrTimeout, Msg: "still running after 30s"}
		}
		<-ctx.Done()
		return nil, context.Cause(ctx)
	}
	opt := Options{Lessons: []string{"01-sectors"}, RunKernels: true, KernelExercises: []KernelExercise{{ID: copyID, Points: 3}},
		RunKernel: run, KernelWorkers: 4, KernelsDeadline: 300 * time.Millisecond}
	gb, err := Grade(testGrader(t), subs, opt)
	require.NoError(t, err)
	graded, late := 0, 0
	for _, r := range gb.Rows {
		if r.ID != copyID {
			continue
		}
		switch r.Status {
		case Wrong:
			graded++
			assert.Less(t, r.Learner, "l10")
		case Ungraded:
			late++
			assert.Contains(t, r.Note, "not graded: the batch's kernels took over 300ms (coalesce grade -kernels-deadline)")
		default:
			t.Errorf("%s: %s %s", r.Learner, r.Status, r.Note)
		}
	}
	assert.Equal(t, 10, graded)
	assert.Equal(t, 30, late)
	assert.Equal(t, 4, most, "as many learners at once as KernelWorkers, no more")
	for _, tt := range gb.Totals {
		if tt.Learner >= "l10" {
			assert.Equal(t, StatusFlagged, tt.Status, tt.Learner)
			assert.Contains(t, strings.Join(tt.Flags, "; "), "1 kernel exercise not graded")
		}
	}
}

// TestKernelsInTheSandbox grades a notebook's kernel in the real sandbox
// (the course's source built into the binary, the real exercises): a
// coalesced copy passes, 3 points of 3; the child observed, Grade judged.
func TestKernelsInTheSandbox(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a child: seconds; run without -short")
	}
	subs := []intake.Submission{{Path: "ada.ipynb", Learner: "ada", Lesson: "10-kernels", Found: answers.FindCalls(cellsNotebook(kernelCells...))}}
	gb, err := Grade(testGrader(t), subs, Options{Lessons: []string{"01-sectors"}, RunKernels: true,
		KernelExercises: []KernelExercise{{ID: copyID, Points: 3}}})
	require.NoError(t, err)
	r := rowOf(gb, "ada", copyID)
	require.NotNil(t, r)
	assert.Equal(t, Right, r.Status, r.Note)
	assert.Equal(t, 3.0, r.Points)
}

// cellsNotebook builds a notebook of code cells, or of typed cells written
// "markdown:..." / "raw:...".
func cellsNotebook(cells ...string) *notebook.Notebook {
	nb := &notebook.Notebook{Format: 4}
	for i, c := range cells {
		typ := notebook.Code
		if t, rest, ok := strings.Cut(c, ":"); ok && (t == "markdown" || t == "raw") {
			typ, c = t, rest
		}
		nb.Cells = append(nb.Cells, notebook.Cell{Index: i, Type: typ, Source: c})
	}
	return nb
}

// kernelCells is a notebook of a kernel spread over cells: its imports in
// the first, a helper defined twice (the last wins), a package var that
// shares a name with the kernel's parameter (not the kernel's), and
// helpers the kernel does not use.
var kernelCells = []string{
	"import (\n\t\"fmt\"\n\t\"github.com/coalescing-course/coalesce/lessons/simt\"\n)",
	"func idx(t *simt.Thread) int { return 0 }\n\nvar n = 1024\n\nfunc unused() { fmt.Println(n) }",
	"const tile = 32\n\ntype pair struct{ a int }\n\nfunc (p pair) get() int { return p.a }\n\nfunc idx(t *simt.Thread) int {\n\treturn t.BlockIdx.X*t.BlockDim.X + t.ThreadIdx.X\n}",
	"func copyK(t *simt.Thread, in, out *simt.Global[float32], n, k int) {\n\tvar p pair\n\t_ = p.get() + tile\n\tT := t.GridDim.X * t.BlockDim.X\n\tfor i := idx(t); i < n; i += T {\n\t\tout.Store(t, i, in.Load(t, i))\n\t}\n}\n%%\nlab.Try(\"10-kernels/strided-copy\", copyK)",
}

// TestKernelsStopWithTheirContext: once grading is stopped (the
// command's interrupt), no further kernel is run; the learners not graded
// have rows saying so.
func TestKernelsStopWithTheirContext(t *testing.T) {
	var subs []intake.Submission
	for i := range 40 {
		learner := fmt.Sprintf("l%02d", i)
		cells := []string{"import \"github.com/coalescing-course/coalesce/lessons/simt\"",
			"func k(t *simt.Thread) {}\n%%\nlab.Try(\"10-kernels/strided-copy\", k)"}
		subs = append(subs, intake.Submission{Path: learner + ".ipynb", Learner: learner, Lesson: "10-kernels", Found: answers.FindCalls(cellsNotebook(cells...))})
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	var mu sync.Mutex
	calls := 0
	run := func(ctx context.Context, k sandbox.Kernel) (*sandbox.Result, error) {
		mu.Lock()
		calls++
		if calls == 5 {
			cancel(errors.New("interrupted"))
		}
		mu.Unlock()
		return nil, &sandbox.Error{Err: sandbox.ErrTimeout, Msg: "still running after 30s"}
	}
	gb, err := GradeContext(ctx, testGrader(t), subs, Options{Lessons: []string{"01-sectors"}, RunKernels: true,
		KernelExercises: []KernelExercise{{ID: copyID, Points: 3}}, RunKernel: run, KernelWorkers: 2})
	require.NoError(t, err)
	assert.LessOrEqual(t, calls, 6, "a kernel run after the stop (at most one in flight on the other worker)")
	stopped := 0
	for _, r := range gb.Rows {
		if r.ID == copyID && r.Status == Ungraded {
			stopped++
			assert.Contains(t, r.Note, "not graded: grading was stopped (interrupted)")
		}
	}
	assert.Equal(t, 40-calls, stopped)
}
