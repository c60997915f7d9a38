package gradebook

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coalescing-course/coalesce/grader/sandbox"
)

// kernelCells is a notebook of a kernel spread over cells: its imports in
// the first, a helper defined twice (the last wins), a package var that
// shares a name with the kernel's parameter (not the kernel's), and
// helpers the kernel does not use.
var kernelCells = []string{
	"import (\n\t\"fmt\"\n\t\"github.com/coalescing-course/coalesce/lessons/simt\"\n)",
	"func idx(t *simt.Thread) int { return 0 }\n\nvar n = 1024\n\nfunc unused() { fmt.Println(n) }",
	"const tile = 32\n\ntype pair struct{ a int }\n\nfunc (p pair) get() int { return p.a }\n\nfunc idx(t *simt.Thread) int {\n\treturn t.BlockIdx.X*t.BlockDim.X + t.ThreadIdx.X\n}",
	"func k(t *simt.Thread, in, out *simt.Global[float32], n int) {\n\tvar p pair\n\t_ = p.get() + tile\n\ti := idx(t)\n\tif i < n {\n\t\tout.Store(t, i, in.Load(t, i))\n\t}\n}\n%%\nlab.Try(\"10-kernels/strided-copy\", k)",
}

// kernelText is what kernelCells' kernel needs, written by hand: the
// import it uses, then its declarations in notebook order, one blank line
// between each.
const kernelText = `import simt "github.com/coalescing-course/coalesce/lessons/simt"

const tile = 32

type pair struct{ a int }

func (p pair) get() int { return p.a }

func idx(t *simt.Thread) int {
	return t.BlockIdx.X*t.BlockDim.X + t.ThreadIdx.X
}

func k(t *simt.Thread, in, out *simt.Global[float32], n int) {
	var p pair
	_ = p.get() + tile
	i := idx(t)
	if i < n {
		out.Store(t, i, in.Load(t, i))
	}
}
`

func TestFindTries(t *testing.T) {
	f := FindCalls(cellsNotebook(kernelCells...))
	require.Len(t, f.Tries, 1)
	try := f.Tries[0]
	assert.Equal(t, Try{Cell: 3, Line: 10, ID: "10-kernels/strided-copy", Func: "k", Source: try.Source}, try)
	assert.Equal(t, kernelText, try.Source.Text)
	require.NoError(t, sandbox.Vet(try.Source.Text, "k"), "what is collected passes the sandbox's vetting")
	// Lines of kernelText, counted by hand, and where they were written.
	for line, want := range map[int]string{1: "", 3: "cell 3, line 1", 10: "cell 3, line 8", 13: "cell 4, line 1", 17: "cell 4, line 5"} {
		assert.Equal(t, want, try.Source.Where(line), "line %d", line)
	}

	t.Run("problems", func(t *testing.T) {
		f := FindCalls(cellsNotebook(
			"lab.Try(\"10-kernels/strided-copy\", k)",
			"%%\nlab.Try(\"10-kernels/strided-copy\", kernels[0])",
			"%%\nid := \"10-kernels/strided-copy\"\nlab.Try(id, k)",
		))
		require.Len(t, f.Tries, 3)
		assert.Contains(t, f.Tries[0].Problem, "never ran")
		assert.Contains(t, f.Tries[1].Problem, "the name of the kernel's func")
		assert.Contains(t, f.Tries[2].Problem, "the exercise id in quotes")
	})
	t.Run("gather", func(t *testing.T) {
		f := FindCalls(cellsNotebook(
			"import \"github.com/coalescing-course/coalesce/lessons/simt\"\nimport \"slices\"",
			"func order(k []int32) []int32 { slices.Sort(k); return k }",
			"func g(t *simt.Thread) {}\nfunc unused() {}",
			"%%\nlab.Try(\"10-kernels/gather\", lab.Gather{Order: order, Kernel: g})\nlab.Try(\"10-kernels/gather\", lab.Gather{Kernel: g})",
		))
		require.Len(t, f.Tries, 2)
		assert.Equal(t, "g", f.Tries[0].Func)
		assert.Equal(t, "order", f.Tries[0].Order)
		assert.Empty(t, f.Tries[0].Problem)
		assert.Contains(t, f.Tries[0].Source.Text, "func order(")
		assert.Contains(t, f.Tries[0].Source.Text, "func g(")
		assert.Contains(t, f.Tries[0].Source.Text, "\"slices\"", "the order's import comes with it")
		assert.NotContains(t, f.Tries[0].Source.Text, "unused")
		assert.Contains(t, f.Tries[1].Problem, "lab.Gather{Order: myOrder, Kernel: myGather}", "a Gather without its Order")
	})
	t.Run("dot import", func(t *testing.T) {
		f := FindCalls(cellsNotebook(
			"import . \"github.com/coalescing-course/coalesce/lessons/simt\"\nimport . \"github.com/coalescing-course/coalesce/lab\"",
			"func k(t *Thread) {}\n%%\nTry(\"10-kernels/x\", k)",
		))
		require.Len(t, f.Tries, 1)
		assert.Equal(t, "import . \"github.com/coalescing-course/coalesce/lessons/simt\"\n\nfunc k(t *Thread) {}\n", f.Tries[0].Source.Text,
			"of the dot imports, only those a kernel may make")
	})
}

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
	var subs []Submission
	for _, learner := range []string{"good", "strided", "refused", "endless", "machine"} {
		subs = append(subs, Submission{Path: learner + ".ipynb", Learner: learner, Lesson: "10-kernels", Found: FindCalls(cellsNotebook(kernelOf(learner)...))})
	}
	subs = append(subs, Submission{Path: "none.ipynb", Learner: "none", Lesson: "10-kernels"})
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
	subs := []Submission{{Path: "ada.ipynb", Learner: "ada", Lesson: "10-kernels", Found: FindCalls(cellsNotebook(kernelCells...))}}
	gb, err := Grade(testGrader(t), subs, Options{Lessons: []string{"01-sectors"}, RunKernels: true,
		KernelExercises: []KernelExercise{{ID: "10-kernels/strided-copy", Points: 1}}, RunKernel: c.Run})
	require.NoError(t, err)
	i := len(gb.Rows) - 1
	assert.Equal(t, "10-kernels/strided-copy", gb.Rows[i].ID)
	assert.Equal(t, Right, gb.Rows[i].Status, gb.Rows[i].Note)
	assert.Equal(t, 1.0, gb.Rows[i].Points)
}
