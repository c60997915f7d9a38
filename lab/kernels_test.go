package lab

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coalescing-course/coalesce/lessons/exercises"
	"github.com/coalescing-course/coalesce/lessons/simt"
)

func TestLearner(t *testing.T) {
	for _, tt := range []struct {
		name, env, hub, want string
	}{
		{name: "none", want: ""},
		{name: "hub user", hub: "ada", want: "ada"},
		{name: "set by hand wins", env: " grace ", hub: "ada", want: "grace"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(LearnerEnv, tt.env)
			t.Setenv("JUPYTERHUB_USER", tt.hub)
			assert.Equal(t, tt.want, Learner())
		})
	}
}

// The starter of the strided copy on the default variant (n = 100000,
// k = 8): right output, and each warp's load touches 32 sectors, one per
// lane (lanes 8 floats = 32 B apart), where 4 would do: the target of
// ceil(4*100000/32) = 12500 sectors is missed.
func TestTryStarter(t *testing.T) {
	t.Setenv(LearnerEnv, "")
	t.Setenv("JUPYTERHUB_USER", "")
	out := capture(t)
	e, err := exercises.Lookup("10-kernels/strided-copy")
	require.NoError(t, err)
	o := Try(e.ID, e.Starter)
	require.NotNil(t, o)
	assert.True(t, o.Correct)
	assert.False(t, o.Pass)
	text := out.String()
	assert.Contains(t, text, "right output, target missed")
	assert.Contains(t, text, "n=100000 k=8")
	assert.Contains(t, text, "(target at most 12500)")
	// The starter's loop body is line 5 of its function (starters.go):
	// a site is named by the kernel and its line there, not by the file
	// GoNB generates.
	assert.Regexp(t, `stridedCopyStarter line 5\s+load\s+in\[\].*out\.Store\(t, e, in\.Load\(t, e\)\)`, text, "the sites, named by the kernel's own lines, with their code")
	assert.Contains(t, text, "(not in a notebook: no picture", "a diagram of the costly load")
}

// A learner's kernel that copies right and coalesced passes.
func TestTryCoalesced(t *testing.T) {
	t.Setenv(LearnerEnv, "ada")
	out := capture(t)
	grid := func(th *simt.Thread, in, out *simt.Global[float32], n, k int) {
		T := th.GridDim.X * th.BlockDim.X
		for i := th.BlockIdx.X*th.BlockDim.X + th.ThreadIdx.X; i < n; i += T {
			out.Store(th, i, in.Load(th, i))
		}
	}
	o := Try("10-kernels/strided-copy", grid)
	require.NotNil(t, o)
	assert.True(t, o.Pass, out.String())
	assert.Contains(t, out.String(), "passed")
	assert.Contains(t, out.String(), "learner")
}

func TestTryRefuses(t *testing.T) {
	for _, tt := range []struct {
		name, id string
		kernel   any
		want     string
	}{
		{name: "unknown exercise", id: "10-kernels/nope", kernel: func() {}, want: "10-kernels/nope"},
		{name: "wrong signature", id: "10-kernels/strided-copy", kernel: func(t *simt.Thread) {}, want: "want func(t *simt.Thread, in, out *simt.Global[float32], n, k int)"},
		{name: "nil kernel", id: "10-kernels/transpose", kernel: nil, want: "nil"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			capture(t)
			code, stderr := exited(t)
			assert.Nil(t, Try(tt.id, tt.kernel))
			assert.Equal(t, 1, *code)
			assert.Contains(t, stderr.String(), tt.want)
		})
	}
}

// Without a GPU the CUDA cell says, in one sentence, that the body was
// neither compiled nor run, and grades nothing: no verdict of the Go
// kernel's stands in for it.
func TestTryCUDAWithoutGPU(t *testing.T) {
	recorded(t)
	out := capture(t)
	e, err := exercises.Lookup("10-kernels/strided-copy")
	require.NoError(t, err)
	p, err := e.CUDA(e.Variant(""))
	require.NoError(t, err)
	// The starter's body with the Go solution: a green Go verdict must not show.
	r := TryCUDA(e.ID, p.Starter, e.Starter)
	require.NotNil(t, r)
	assert.Nil(t, r.Run)
	assert.False(t, r.Pass)
	assert.Empty(t, r.Targets)
	text := out.String()
	assert.Contains(t, text, "your CUDA body was not compiled or run, and nothing of it is graded.")
	assert.Contains(t, text, "(nvcc")
	assert.NotContains(t, text, "passed")
	assert.NotContains(t, text, "target missed")
	assert.NotContains(t, text, "no GPU here: ", "the reason once, not twice over")
	assert.NotContains(t, text, "recorded on", "why the CUDA body did not run, not where the lessons' numbers come from")
}

func TestNoGPUNote(t *testing.T) {
	assert.Equal(t, "No GPU is used here (nvcc not found on PATH), so your CUDA body was not compiled or run, and nothing of it is graded.",
		noGPUNote("no GPU here: nvcc not found on PATH"))
	assert.Equal(t, "No GPU is used here, so your CUDA body was not compiled or run, and nothing of it is graded.", noGPUNote(""))
}

func TestTryCUDAGatherNeedsOrder(t *testing.T) {
	recorded(t)
	capture(t)
	code, stderr := exited(t)
	assert.Nil(t, TryCUDA("10-kernels/gather", "", nil))
	assert.Equal(t, 1, *code)
	assert.Contains(t, stderr.String(), "lab.Gather{Order, Kernel}")
}

// The CUDA harness gets the problem's arguments as they are, in order:
// buffers with their bytes, scalars with their values.
func TestUserKernelOfProblem(t *testing.T) {
	for _, id := range exercises.IDs() {
		t.Run(id, func(t *testing.T) {
			e, err := exercises.Lookup(id)
			require.NoError(t, err)
			p, err := e.CUDA(e.Variant("ada"))
			require.NoError(t, err)
			k := userKernel(p, p.Solution)
			require.NoError(t, k.Validate())
			require.Len(t, k.Args, len(p.Args))
			for i, a := range p.Args {
				u := k.Args[i]
				assert.Equal(t, a.Name, u.Name)
				assert.Equal(t, a.Output, u.Out)
				if a.Scalar() {
					assert.Equal(t, a.Value, u.Int)
				} else {
					assert.Equal(t, int64(len(a.Data)), u.Bytes)
				}
			}
			assert.Equal(t, p.Grid.X, k.Grid.X)
			assert.True(t, strings.Contains(k.Declaration(), p.Name+"("), k.Declaration())
		})
	}
}

// A transpose that forgets the barrier between writing the tile and
// reading it back: the output is wrong, and the cell says why, from the
// race simt saw.
func TestTryMissingSync(t *testing.T) {
	recorded(t)
	out := capture(t)
	r := Try("10-kernels/transpose", func(t *simt.Thread, in, out *simt.Global[float32], tile *simt.Shared[float32], rows, cols int) {
		tx, ty := t.ThreadIdx.X, t.ThreadIdx.Y
		c := t.BlockIdx.X*32 + tx
		for j := 0; j < 32; j += 8 {
			if r := t.BlockIdx.Y*32 + ty + j; r < rows && c < cols {
				tile.Store(t, (ty+j)*33+tx, in.Load(t, r*cols+c))
			}
		}
		r := t.BlockIdx.Y*32 + tx
		for j := 0; j < 32; j += 8 {
			if oc := t.BlockIdx.X*32 + ty + j; r < rows && oc < cols {
				out.Store(t, oc*rows+r, tile.Load(t, tx*33+ty+j))
			}
		}
	})
	require.NotNil(t, r)
	assert.False(t, r.Correct)
	assert.Contains(t, out.String(), "simt saw")
	assert.Contains(t, out.String(), "with no t.Sync() between")
}
