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
	assert.Contains(t, text, "(target at most 12,500)")
	assert.Regexp(t, `starters\.go:\d+\s+load\s+in\[\].*out\.Store\(t, e, in\.Load\(t, e\)\)`, text, "the sites, named by the starter's source lines, with their code")
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

// Without a GPU the CUDA cell says so, and still shows the Go kernel's
// outcome.
func TestTryCUDAWithoutGPU(t *testing.T) {
	recorded(t)
	out := capture(t)
	e, err := exercises.Lookup("10-kernels/strided-copy")
	require.NoError(t, err)
	p, err := e.CUDA(e.Variant(""))
	require.NoError(t, err)
	r := TryCUDA(e.ID, p.Solution, e.Starter)
	require.NotNil(t, r)
	assert.Nil(t, r.Run)
	assert.Contains(t, out.String(), "No GPU here")
	assert.Contains(t, out.String(), "right output, target missed", "the Go side still graded")
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
