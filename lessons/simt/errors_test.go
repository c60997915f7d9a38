package simt_test

import (
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coalescing-course/coalesce/lessons/simt"
)

// A learner's mistake is an error that says what and where, never a panic
// out of Run nor a hang.
func TestErrors(t *testing.T) {
	one := simt.Launch{Grid: simt.Dim{X: 1}, Block: simt.Dim{X: 64}}
	in := simt.NewGlobal("in", make([]float32, 40))
	var kept *simt.Thread
	_, err := one.Run(func(t *simt.Thread) {
		if t.ThreadIdx.X == 0 {
			kept = t
		}
	})
	require.NoError(t, err)
	var at int // the line of the kernel's faulting call, where the test knows it
	type bad struct {
		ID [2]float32
		P  *int
	}
	type vec3 struct{ X, Y, Z float32 }
	// A kernel's buffers and shared arrays are made before its launch.
	var (
		empty       = simt.NewShared[int32]("s", 0)
		big         = simt.NewShared[float32]("big", 12289)
		tile, tile2 = simt.NewShared[float32]("tile", 1), simt.NewShared[float32]("tile", 1)
		in2         = simt.NewGlobal("in", make([]float32, 1))
		p           = simt.NewGlobal("p", make([]bad, 1))
		v           = simt.NewGlobal("v", make([]vec3, 1))
	)
	tests := []struct {
		name   string
		launch simt.Launch
		kernel func(t *simt.Thread)
		is     error
		msg    []string
	}{
		{"index past the end", one, func(t *simt.Thread) { in.Load(t, t.ThreadIdx.X); at = line() },
			simt.ErrAccess, []string{"block (0,0) thread (40,0)", "in.Load(t, 40) at errors_test.go:", "index out of range: in has 40 elements (0 to 39)"}},
		{"negative index", one, func(t *simt.Thread) { in.Store(t, -1, 0); at = line() },
			simt.ErrAccess, []string{"thread (0,0)", "in.Store(t, -1)"}},
		{"shared index", one, func(t *simt.Thread) { empty.Load(t, 0) },
			simt.ErrAccess, []string{"s.Load(t, 0)", "shared s has 0 words"}},
		{"nil thread", one, func(t *simt.Thread) { in.Load(nil, 0); at = line() },
			simt.ErrAccess, []string{"thread (0,0)", "in.Load at errors_test.go:", "with a nil *Thread"}},
		{"thread of another launch", one, func(t *simt.Thread) { in.Load(kept, 0) },
			simt.ErrEscape, []string{"with the *Thread of block (0,0) thread (0,0), which is not running"}},
		{"thread of another thread", one, func(t *simt.Thread) {
			if t.ThreadIdx.X == 0 {
				kept = t
			}
			in.Load(kept, 0)
		}, simt.ErrEscape, []string{"block (0,0) thread (1,0): ", "with the *Thread of block (0,0) thread (0,0), which is not running"}},
		{"sync in one thread", one, func(t *simt.Thread) {
			if t.ThreadIdx.X == 5 {
				t.Sync()
			}
		}, simt.ErrBarrier, []string{"block (0,0) thread (5,0): reached a barrier (Sync at errors_test.go:", "thread (0,0) of its block finished without one"}},
		{"a thread skips the sync", one, func(t *simt.Thread) {
			if t.ThreadIdx.X != 5 {
				t.Sync()
			}
		}, simt.ErrBarrier, []string{"block (0,0) thread (5,0) finished after 0 barriers while block (0,0) thread (63,0) waits at barrier 1"}},
		{"odd threads sync twice", one, func(t *simt.Thread) {
			for range t.ThreadIdx.X%2 + 1 {
				t.Sync()
			}
		}, simt.ErrBarrier, []string{"thread (62,0) finished after 1 barrier while block (0,0) thread (63,0) waits at barrier 2"}},
		{"panic", one, func(t *simt.Thread) {
			if t.ThreadIdx.X == 3 {
				panic("boom")
			}
		}, simt.ErrPanic, []string{"block (0,0) thread (3,0): boom at errors_test.go:"}},
		{"go index out of range after a sync", one, func(t *simt.Thread) {
			t.Sync()
			_ = []int{1}[t.ThreadIdx.X]
			at = line() - 1
		}, simt.ErrPanic, []string{"block (0,0) thread (1,0): runtime error: index out of range [1] with length 1 at errors_test.go:"}},
		{"block too big", simt.Launch{Grid: simt.Dim{X: 1}, Block: simt.Dim{X: 1025}}, func(*simt.Thread) {},
			simt.ErrLaunch, []string{"block (1025,1) has 1025 threads: a block has at most 1024"}},
		{"block too big in 2D", simt.Launch{Grid: simt.Dim{X: 1}, Block: simt.Dim{X: 64, Y: 32}}, func(*simt.Thread) {},
			simt.ErrLaunch, []string{"block (64,32) has 2048 threads"}},
		{"zero block", simt.Launch{Grid: simt.Dim{X: 1}}, func(*simt.Thread) {},
			simt.ErrLaunch, []string{"block (0,1): each dimension must be at least 1"}},
		{"negative grid", simt.Launch{Grid: simt.Dim{X: 4, Y: -1}, Block: simt.Dim{X: 1}}, func(*simt.Thread) {},
			simt.ErrLaunch, []string{"grid (4,-1): each dimension must be at least 1"}},
		{"grid too tall", simt.Launch{Grid: simt.Dim{X: 1, Y: 65536}, Block: simt.Dim{X: 1}}, func(*simt.Thread) {},
			simt.ErrLaunch, []string{"at most 2147483647 blocks in x and 65535 in y"}},
		{"too many threads", simt.Launch{Grid: simt.Dim{X: 1 << 16}, Block: simt.Dim{X: 1024}}, func(*simt.Thread) {},
			simt.ErrLaunch, []string{"67108864 threads: simt runs at most 16777216 (2^24) in one launch"}},
		{"nil kernel", one, nil, simt.ErrLaunch, []string{"the kernel is nil"}},
		{"unknown device", simt.Launch{Grid: simt.Dim{X: 1}, Block: simt.Dim{X: 1}, Device: "gtx480"}, func(*simt.Thread) {},
			simt.ErrLaunch, []string{`unknown device "gtx480"`}},
		{"negative trace", simt.Launch{Grid: simt.Dim{X: 1}, Block: simt.Dim{X: 1}, Trace: -1}, func(*simt.Thread) {},
			simt.ErrLaunch, []string{"Trace -1"}},
		{"shared too big", one, func(t *simt.Thread) { big.Store(t, 0, 1) },
			simt.ErrLaunch, []string{"the block's shared arrays need 49156 bytes; a block may declare at most 49152 (48 KiB)"}},
		{"two shared arrays of one name", one, func(t *simt.Thread) {
			tile.Load(t, 0)
			tile2.Load(t, 0)
		}, simt.ErrAccess, []string{"two shared arrays of one launch named tile"}},
		{"two buffers of one name", one, func(t *simt.Thread) {
			in2.Load(t, 0)
			in.Load(t, 0)
		}, simt.ErrAccess, []string{"two buffers of one launch named in"}},
		{"nil buffer", one, func(t *simt.Thread) { (*simt.Global[float32])(nil).Load(t, 0) },
			simt.ErrAccess, []string{"from a nil *Global"}},
		{"pointer element", one, func(t *simt.Thread) { p.Load(t, 0) },
			simt.ErrAccess, []string{"buffer p of simt_test.bad: a ptr is no value in device memory"}},
		{"12-byte element", one, func(t *simt.Thread) { v.Load(t, 0) },
			simt.ErrAccess, []string{"one simt_test.vec3 is 12 bytes", "simt.Field"}},
		{"field of another type", one, func(t *simt.Thread) { simt.Field[float64](v, "Y").Load(t, 0) },
			simt.ErrAccess, []string{"field Y of buffer v is a float32, not a float64"}},
		{"no such field", one, func(t *simt.Thread) { simt.Field[float32](v, "W").Load(t, 0) },
			simt.ErrAccess, []string{"simt_test.vec3 has no field W"}},
		{"misaligned vector", one, func(t *simt.Thread) { simt.As[[4]float32](in, 1).Load(t, 0) },
			simt.ErrAccess, []string{"in(as [4]float32 from 1)", "start at byte 4", "cudaErrorMisalignedAddress"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			at = 0
			before := runtime.NumGoroutine()
			r, err := tt.launch.Run(tt.kernel)
			assert.LessOrEqual(t, settled(before), before, "every coroutine of a failed block is stopped")
			assert.Nil(t, r)
			require.ErrorIs(t, err, tt.is)
			for _, m := range tt.msg {
				assert.ErrorContains(t, err, m)
			}
			if at != 0 {
				assert.ErrorContains(t, err, "errors_test.go:"+strconv.Itoa(at))
			}
		})
	}
}

// settled returns the number of goroutines once it is at most want, or
// after a second: others come and go (the runtime's, the race detector's),
// where a coroutine left waiting would stay.
func settled(want int) int {
	n := runtime.NumGoroutine()
	for deadline := time.Now().Add(time.Second); n > want && time.Now().Before(deadline); n = runtime.NumGoroutine() {
		time.Sleep(time.Millisecond)
	}
	return n
}

// Outside any launch there is no error to return: a Load with a stale
// Thread panics, with the message Run would give.
func TestStaleThreadOutsideALaunch(t *testing.T) {
	var kept *simt.Thread
	in := simt.NewGlobal("in", make([]float32, 1))
	_, err := simt.Launch{Grid: simt.Dim{X: 1}, Block: simt.Dim{X: 1}}.Run(func(t *simt.Thread) { kept = t })
	require.NoError(t, err)
	defer func() {
		err, ok := recover().(error)
		require.True(t, ok, "the panic is an error")
		assert.ErrorIs(t, err, simt.ErrEscape)
		assert.ErrorContains(t, err, "with the *Thread of block (0,0) thread (0,0), which is not running")
	}()
	in.Load(kept, 0)
	t.Error("Load with a stale Thread returned")
}
