package gradebook

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coalescing-course/coalesce/grader/gradebook/answers"
	"github.com/coalescing-course/coalesce/grader/gradebook/intake"
	"github.com/coalescing-course/coalesce/grader/sandbox"
	"github.com/coalescing-course/coalesce/internal/notebook"
)

// TestKernelRows grades with a stand-in for the sandbox: what each kind of
// outcome makes of a row.
func TestKernelRows(t *testing.T) {
	kernelOf := func(fn string) []string {
		return []string{"import \"github.com/coalescing-course/coalesce/lessons/simt\"",
			"func " + fn + "(t *simt.Thread) {}\n%%\nlab.Try(\"10-kernels/strided-copy\", " + fn + ")"}
	}
	run := func(_ context.Context, k sandbox.Kernel) (*sandbox.Result, error) {
		switch k.Func {
		case "good":
			return &sandbox.Result{Report: []byte(`{"pass":true,"correct":true,"points":2,"targets":[{"metric":"l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum","want":4,"got":4,"pass":true}]}`)}, nil
		case "strided":
			return &sandbox.Result{Report: []byte(`{"pass":false,"correct":true,"points":1,"targets":[{"metric":"l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum","want":4,"got":32,"pass":false,"why":"32 sectors per request"}]}`), Stderr: []byte("hi\n")}, nil
		case "refused":
			return nil, &sandbox.Error{Err: sandbox.ErrRefused, Line: 3, Msg: `import "os" is not allowed`}
		case "endless":
			return nil, &sandbox.Error{Err: sandbox.ErrTimeout, Msg: "still running after 30s"}
		}
		return nil, errors.New("sandbox: no go command")
	}
	var subs []intake.Submission
	for _, learner := range []string{"good", "strided", "refused", "endless", "machine"} {
		subs = append(subs, intake.Submission{Path: learner + ".ipynb", Learner: learner, Lesson: "10-kernels", Found: answers.FindCalls(cellsNotebook(kernelOf(learner)...))})
	}
	subs = append(subs, intake.Submission{Path: "none.ipynb", Learner: "none", Lesson: "10-kernels"})
	ex := []KernelExercise{{ID: "10-kernels/strided-copy", Points: 2}}
	plain, err := Grade(testGrader(t), subs, Options{Lessons: []string{"01-sectors"}})
	require.NoError(t, err)
	gb, err := Grade(testGrader(t), subs, Options{Lessons: []string{"01-sectors"}, RunKernels: true, KernelExercises: ex, RunKernel: run})
	require.NoError(t, err)
	assert.Equal(t, plain.PointsPossible+2, gb.PointsPossible)
	want := map[string]struct {
		status Status
		points float64
		note   string
	}{
		"good":    {Right, 2, "cell 2, line 3: kernel good; output right; l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum 4 within 4"},
		"strided": {Wrong, 1, "output right; l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum 32 over the target 4: 32 sectors per request; the kernel printed 3 bytes"},
		"refused": {Unreadable, 0, `the kernel was not run (cell 2, line 1): refused: line 3: import "os" is not allowed`},
		"endless": {Wrong, 0, "the kernel failed: time limit: still running after 30s"},
		"machine": {Ungraded, 0, "not graded, the grading machine failed: sandbox: no go command"},
		"none":    {Missing, 0, "no lab.Try call for this kernel exercise"},
	}
	seen := 0
	for _, r := range gb.Rows {
		if r.ID != "10-kernels/strided-copy" {
			continue
		}
		seen++
		w := want[r.Learner]
		assert.Equal(t, w.status, r.Status, r.Learner)
		assert.Equal(t, w.points, r.Points, r.Learner)
		assert.Contains(t, r.Note, w.note, r.Learner)
	}
	assert.Equal(t, len(want), seen)
	for _, r := range plain.Rows {
		assert.NotEqual(t, "10-kernels/strided-copy", r.ID, "without RunKernels no kernel is graded")
	}

	// The instructor sets the points the machine could not grade, and
	// those of a kernel judged wrong, as for any exercise.
	over := []Override{
		{Learner: "machine", ID: "10-kernels/strided-copy", Points: 2, Reason: "ran it by hand", File: "o.csv", Line: 1},
		{Learner: "strided", ID: "10-kernels/strided-copy", Points: 0, File: "o.csv", Line: 2},
	}
	gb, err = Grade(testGrader(t), subs, Options{Lessons: []string{"01-sectors"}, RunKernels: true, KernelExercises: ex, RunKernel: run, Overrides: over})
	require.NoError(t, err)
	for _, r := range gb.Rows {
		switch {
		case r.ID != "10-kernels/strided-copy":
		case r.Learner == "machine":
			assert.Equal(t, 2.0, r.Points)
			assert.Contains(t, r.Note, "points set by the instructor: 2 of 2 — ran it by hand")
		case r.Learner == "strided":
			assert.Equal(t, 0.0, r.Points)
		}
	}
	over[0].Points = 3
	_, err = Grade(testGrader(t), subs, Options{Lessons: []string{"01-sectors"}, RunKernels: true, KernelExercises: ex, RunKernel: run, Overrides: over})
	assert.ErrorContains(t, err, "points 3 for 10-kernels/strided-copy: want 0 to 2")

	_, err = Grade(testGrader(t), subs, Options{RunKernels: true})
	assert.ErrorContains(t, err, "no kernel exercises")
}

// TestKernelsInTheSandbox grades a notebook's kernel in the real sandbox,
// against the sandbox's stand-in exercise (a coalesced copy passes, for 1
// point).
func TestKernelsInTheSandbox(t *testing.T) {
	c := sandbox.Config{GradePackage: sandbox.CourseModule + "/grader/sandbox/testdata/exercises"}
	subs := []intake.Submission{{Path: "ada.ipynb", Learner: "ada", Lesson: "10-kernels", Found: answers.FindCalls(cellsNotebook(kernelCells...))}}
	gb, err := Grade(testGrader(t), subs, Options{Lessons: []string{"01-sectors"}, RunKernels: true,
		KernelExercises: []KernelExercise{{ID: "10-kernels/strided-copy", Points: 1}}, RunKernel: c.Run})
	require.NoError(t, err)
	i := len(gb.Rows) - 1
	assert.Equal(t, "10-kernels/strided-copy", gb.Rows[i].ID)
	assert.Equal(t, Right, gb.Rows[i].Status, gb.Rows[i].Note)
	assert.Equal(t, 1.0, gb.Rows[i].Points)
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

// kernelCells (a copy of package answers' test fixture) is a notebook of a kernel spread over cells: its imports in
// the first, a helper defined twice (the last wins), a package var that
// shares a name with the kernel's parameter (not the kernel's), and
// helpers the kernel does not use.
var kernelCells = []string{
	"import (\n\t\"fmt\"\n\t\"github.com/coalescing-course/coalesce/lessons/simt\"\n)",
	"func idx(t *simt.Thread) int { return 0 }\n\nvar n = 1024\n\nfunc unused() { fmt.Println(n) }",
	"const tile = 32\n\ntype pair struct{ a int }\n\nfunc (p pair) get() int { return p.a }\n\nfunc idx(t *simt.Thread) int {\n\treturn t.BlockIdx.X*t.BlockDim.X + t.ThreadIdx.X\n}",
	"func k(t *simt.Thread, in, out *simt.Global[float32], n int) {\n\tvar p pair\n\t_ = p.get() + tile\n\ti := idx(t)\n\tif i < n {\n\t\tout.Store(t, i, in.Load(t, i))\n\t}\n}\n%%\nlab.Try(\"10-kernels/strided-copy\", k)",
}
