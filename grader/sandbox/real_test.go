package sandbox

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coalescing-course/coalesce/lessons/exercises"
	"github.com/coalescing-course/coalesce/lessons/simt"
)

// realKernels are kernels for the course's exercises, some right, some
// hostile, in one source (one child serves every case that names its
// funcs).
const realKernels = `import (
	"slices"

	"github.com/coalescing-course/coalesce/lessons/simt"
)

func sortKeys(keys []int32) []int32 { slices.Sort(keys); return keys }

func asGiven(keys []int32) []int32 { return keys }

func wideKeys(keys []int64) []int64 { return keys }

func gather(t *simt.Thread, table *simt.Global[float32], keys, outKey *simt.Global[int32], outVal *simt.Global[float32], n int) {
	if i := t.BlockIdx.X*t.BlockDim.X + t.ThreadIdx.X; i < n {
		k := keys.Load(t, i)
		outKey.Store(t, i, k)
		outVal.Store(t, i, table.Load(t, int(k)))
	}
}

func copyGrid(t *simt.Thread, in, out *simt.Global[float32], n, k int) {
	T := t.GridDim.X * t.BlockDim.X
	for i := t.BlockIdx.X*t.BlockDim.X + t.ThreadIdx.X; i < n; i += T {
		out.Store(t, i, in.Load(t, i))
	}
}

// copyInside does all of the copy from one thread, in a launch of its own.
func copyInside(t *simt.Thread, in, out *simt.Global[float32], n, k int) {
	if t.BlockIdx.X == 0 && t.ThreadIdx.X == 0 {
		simt.Launch{Grid: simt.Dim{X: 1, Y: 1}, Block: simt.Dim{X: 1, Y: 1}}.Run(func(u *simt.Thread) {
			for i := range n {
				out.Store(u, i, in.Load(u, i))
			}
		})
	}
}

// copyRecovered copies right, and swallows the fault of a store past the
// end.
func copyRecovered(t *simt.Thread, in, out *simt.Global[float32], n, k int) {
	copyGrid(t, in, out, n, k)
	func() {
		defer func() { recover() }()
		out.Store(t, n+7, 0)
	}()
}
`

// TestRealExercises grades kernels of the course's own exercises as
// coalesce grade -kernels does: built against the source in the binary,
// observed in the child, judged here (exercises.Judge) with a reference
// the child never saw. A gather whose host step sorts the keys passes (1
// point for the output, 1 for each of its two targets); with the keys as
// they came it misses the load target; an order of the wrong type is the
// learner's error, in the observation, not a child that does not build;
// work moved into a launch of its own inside the kernel gets nothing.
func TestRealExercises(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the real exercises package in a child: seconds; run without -short")
	}
	c := testConfig()
	c.Course, c.GradePackage = nil, DefaultGradePackage // the production path: the embedded source
	b := testBatch(t, c)
	for _, tt := range []struct {
		name, id, fn, order string
		pass                bool
		points              int
		msg                 string
	}{
		{name: "gather sorted", id: "10-kernels/gather", fn: "gather", order: "sortKeys", pass: true, points: 3},
		{name: "gather as given", id: "10-kernels/gather", fn: "gather", order: "asGiven", points: 2},
		{name: "coalesced copy", id: "10-kernels/strided-copy", fn: "copyGrid", pass: true, points: 3},
		{name: "an order of the wrong type", id: "10-kernels/gather", fn: "gather", order: "wideKeys", msg: "the order is func([]int64) []int64, want func([]int32) []int32"},
		{name: "an order for an exercise without one", id: "10-kernels/strided-copy", fn: "copyGrid", order: "sortKeys", msg: "an order is a gather's host step"},
		// Whatever simt makes of a launch inside a launch (a fault, or
		// counts of its own, which Judge finds short): no point.
		{name: "the copy done inside a launch of its own", id: "10-kernels/strided-copy", fn: "copyInside", msg: "*"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res, err := b.Run(context.Background(), Kernel{Exercise: tt.id, Learner: "ada", Source: realKernels, Func: tt.fn, Order: tt.order})
			require.NoError(t, err)
			obs, err := exercises.ParseObservation(res.Report)
			require.NoError(t, err)
			rep := exercises.Judge(tt.id, "ada", obs)
			assert.Equal(t, tt.pass, rep.Pass, "%+v", rep)
			assert.Equal(t, tt.points, rep.Points, "%+v", rep)
			assert.Equal(t, "ada", rep.Learner)
			switch tt.msg {
			case "":
				assert.Empty(t, rep.Error)
				assert.True(t, rep.Correct)
			case "*":
				assert.False(t, rep.Correct)
			default:
				assert.Contains(t, rep.Error, tt.msg)
			}
		})
	}
	_, err := b.Run(context.Background(), Kernel{Exercise: "10-kernels/gather", Source: realKernels, Func: "gather", Order: "no such"})
	assert.ErrorIs(t, err, ErrRefused, "an order that is no Go name")
}

// TestRecoveredFaultGetsNothing: a kernel that swallows its own fault
// (recover around a store past the end) gets no point in the sandbox. The
// launch must stop at its first fault, as a GPU does; that is simt's to
// hold, and until it does this test says so and skips.
func TestRecoveredFaultGetsNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the real exercises package in a child: seconds; run without -short")
	}
	inProcess := exercises.Grade("10-kernels/strided-copy", "ada", exercises.StridedCopyKernel(func(t *simt.Thread, in, out *simt.Global[float32], n, k int) {
		T := t.GridDim.X * t.BlockDim.X
		for i := t.BlockIdx.X*t.BlockDim.X + t.ThreadIdx.X; i < n; i += T {
			out.Store(t, i, in.Load(t, i))
		}
		func() {
			defer func() { _ = recover() }()
			out.Store(t, n+7, 0)
		}()
	}))
	if inProcess.Points > 0 {
		t.Skipf("waits on lessons/simt: a recovered fault still lets the launch run on (%d points in process)", inProcess.Points)
	}
	c := testConfig()
	c.Course, c.GradePackage = nil, DefaultGradePackage
	res, err := testBatch(t, c).Run(context.Background(), Kernel{Exercise: "10-kernels/strided-copy", Learner: "ada", Source: realKernels, Func: "copyRecovered"})
	var e *Error
	if errors.As(err, &e) {
		return // the child stopped: no points either
	}
	require.NoError(t, err)
	obs, err := exercises.ParseObservation(res.Report)
	require.NoError(t, err)
	rep := exercises.Judge("10-kernels/strided-copy", "ada", obs)
	assert.Zero(t, rep.Points, "%+v", rep)
	assert.NotEmpty(t, rep.Error)
}
