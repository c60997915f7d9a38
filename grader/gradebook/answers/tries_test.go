package answers

import (
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
