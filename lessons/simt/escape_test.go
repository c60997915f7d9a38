package simt_test

import (
	"errors"
	"runtime"
	"runtime/metrics"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coalescing-course/coalesce/lessons/simt"
)

// hostile is one member of a class of kernels that try to get their work
// past the launch, or to hide a fault from it: the launch it runs in,
// what the launch must fail with, and what its message must say.
type hostile struct {
	name   string
	launch simt.Launch
	// setup makes the kernel, with its buffers made before the launch, as
	// a learner's notebook would; after, when set, runs once the launch
	// returned (to free a goroutine the kernel left waiting).
	setup func() (kernel func(t *simt.Thread), after func())
	is    error
	msg   []string
	// ranAfter, when set, counts what the kernel did after its first
	// fault: it must stay 0, the launch stopping there as a GPU does.
	ranAfter *atomic.Int64
}

// run runs h and checks the class's promises: the launch fails with h's
// error kind and message, returns no result, ends within a hang guard
// far above its goal (a failed launch ends at once), runs nothing of the
// kernel after its first fault, and leaves no goroutine of its own.
func (h hostile) run(t *testing.T) {
	t.Helper()
	before := runtime.NumGoroutine()
	kernel, after := h.setup()
	type outcome struct {
		r   *simt.Result
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		r, err := h.launch.Run(kernel)
		done <- outcome{r, err}
	}()
	var got outcome
	select {
	case got = <-done:
	case <-time.After(30 * time.Second):
		t.Fatalf("%s: the launch did not return within 30 s", h.name)
	}
	if after != nil {
		after()
	}
	assert.Nil(t, got.r, "a failed launch has no result")
	require.ErrorIs(t, got.err, h.is, "%v", got.err)
	for _, m := range h.msg {
		assert.ErrorContains(t, got.err, m)
	}
	if h.ranAfter != nil {
		assert.Zero(t, h.ranAfter.Load(), "the kernel ran on after its first fault")
	}
	assert.LessOrEqual(t, settled(before), before, "every goroutine of the launch is gone")
}

var one = simt.Launch{Grid: simt.Dim{X: 1}, Block: simt.Dim{X: 64}}

// The class "any API use that moves work outside the graded launch": a
// launch inside a kernel (from one thread, in a block with barriers,
// behind a recover), buffers and shared arrays made inside a kernel or
// while it runs, Threads kept or passed to goroutines, a goroutine's own
// launch over the graded launch's buffers, goroutines left running. Each
// fails the launch with ErrEscape and says where.
func TestEscapes(t *testing.T) {
	tests := []hostile{
		{name: "a launch inside the kernel", launch: one, is: simt.ErrEscape, setup: func() (func(*simt.Thread), func()) {
			in, out := simt.NewGlobal("in", make([]float32, 64)), simt.NewGlobal("out", make([]float32, 64))
			return func(t *simt.Thread) {
				if t.ThreadIdx.X == 0 {
					simt.Launch{Grid: simt.Dim{X: 1}, Block: simt.Dim{X: 64}}.Run(func(u *simt.Thread) {
						out.Store(u, u.ThreadIdx.X, in.Load(u, u.ThreadIdx.X))
					})
				}
			}, nil
		}, msg: []string{"simt: work outside the launch: block (0,0) thread (0,0): Launch.Run at escape_test.go:", "inside the kernel"}},
		{name: "a launch inside the kernel, recovered", launch: one, is: simt.ErrEscape, setup: func() (func(*simt.Thread), func()) {
			return func(t *simt.Thread) {
				defer func() { recover() }()
				simt.Launch{Grid: simt.Dim{X: 1}, Block: simt.Dim{X: 1}}.Run(func(*simt.Thread) {})
			}, nil
		}, msg: []string{"Launch.Run at escape_test.go:"}},
		{name: "a launch inside a block with barriers", launch: one, is: simt.ErrEscape, setup: func() (func(*simt.Thread), func()) {
			return func(t *simt.Thread) {
				t.Sync()
				if t.ThreadIdx.X == 7 {
					simt.Launch{Grid: simt.Dim{X: 1}, Block: simt.Dim{X: 1}}.Run(func(*simt.Thread) {})
				}
				t.Sync()
			}, nil
		}, msg: []string{"block (0,0) thread (7,0): Launch.Run at escape_test.go:"}},
		{name: "a buffer made inside the kernel", launch: one, is: simt.ErrEscape, setup: func() (func(*simt.Thread), func()) {
			return func(t *simt.Thread) { simt.NewGlobal("mine", make([]float32, 1)).Store(t, 0, 1) }, nil
		}, msg: []string{"simt.NewGlobal at escape_test.go:", "make the buffer before the launch"}},
		{name: "a shared array made inside the kernel", launch: one, is: simt.ErrEscape, setup: func() (func(*simt.Thread), func()) {
			return func(t *simt.Thread) { simt.NewShared[float32]("s", 64).Store(t, 0, 1) }, nil
		}, msg: []string{"simt.NewShared at escape_test.go:"}},
		{name: "a buffer made by a goroutine while the launch runs", launch: one, is: simt.ErrEscape, setup: func() (func(*simt.Thread), func()) {
			var late *simt.Global[float32]
			return func(t *simt.Thread) {
				if late == nil {
					c := make(chan *simt.Global[float32])
					go func() { c <- simt.NewGlobal("late", make([]float32, 64)) }()
					late = <-c
				}
				late.Store(t, t.ThreadIdx.X, 1)
			}, nil
		}, msg: []string{"buffer late at escape_test.go:", "was made while the launch ran"}},
		{name: "a thread kept from an earlier launch", launch: one, is: simt.ErrEscape, setup: func() (func(*simt.Thread), func()) {
			in := simt.NewGlobal("in", make([]float32, 1))
			var kept *simt.Thread
			_, err := simt.Launch{Grid: simt.Dim{X: 1}, Block: simt.Dim{X: 1}}.Run(func(t *simt.Thread) { kept = t })
			require.NoError(t, err)
			return func(t *simt.Thread) { in.Load(kept, 0) }, nil
		}, msg: []string{"with the *Thread of block (0,0) thread (0,0), which is not running"}},
		{name: "a thread's accesses made by a goroutine", launch: one, is: simt.ErrEscape, setup: func() (func(*simt.Thread), func()) {
			out := simt.NewGlobal("out", make([]float32, 64))
			return func(t *simt.Thread) {
				var wg sync.WaitGroup
				wg.Add(1)
				go func() {
					defer wg.Done()
					defer func() { recover() }() // the goroutine's own panic, outside the launch
					out.Store(t, t.ThreadIdx.X, 1)
				}()
				wg.Wait()
				out.Store(t, t.ThreadIdx.X, 2)
			}, nil
		}, msg: []string{"out.Store at escape_test.go:", "from another goroutine", "must not start goroutines"}},
		{name: "a goroutine's launch over the launch's buffers", launch: one, is: simt.ErrEscape, setup: func() (func(*simt.Thread), func()) {
			in, out := simt.NewGlobal("in", make([]float32, 64)), simt.NewGlobal("out", make([]float32, 64))
			return func(t *simt.Thread) {
				out.Store(t, t.ThreadIdx.X, in.Load(t, t.ThreadIdx.X))
				if t.ThreadIdx.X == 63 {
					var wg sync.WaitGroup
					wg.Add(1)
					go func() {
						defer wg.Done()
						simt.Launch{Grid: simt.Dim{X: 1}, Block: simt.Dim{X: 64}}.Run(func(u *simt.Thread) { out.Store(u, u.ThreadIdx.X, 7) })
					}()
					wg.Wait()
				}
			}, nil
		}, msg: []string{"buffer out at escape_test.go:", "belongs to another launch, which runs"}},
		{name: "a goroutine left running", launch: one, is: simt.ErrEscape, setup: func() (func(*simt.Thread), func()) {
			release := make(chan struct{})
			var once sync.Once
			return func(t *simt.Thread) {
					once.Do(func() { go func() { <-release }() })
				}, func() {
					close(release)
				}
		}, msg: []string{"the kernel started 1 goroutines that still run when its launch ends", "TestEscapes"}},
		{name: "runtime.Goexit in the kernel", launch: one, is: simt.ErrPanic, setup: func() (func(*simt.Thread), func()) {
			return func(t *simt.Thread) {
				if t.ThreadIdx.X == 3 {
					runtime.Goexit()
				}
			}, nil
		}, msg: []string{"block (0,0) thread (3,0): the kernel called runtime.Goexit at escape_test.go:"}},
	}
	for _, h := range tests {
		t.Run(h.name, h.run)
	}
}

// The class "a fault the kernel hides": an out-of-bounds store, a
// misaligned vector, a barrier one thread misses, each behind a deferred
// recover, or recovered and re-raised as another panic, or tried again
// in a loop that would never end. The launch's error is the first fault,
// and nothing of the kernel runs after it.
func TestFaultsCannotBeRecovered(t *testing.T) {
	outOfBounds := func(ran *atomic.Int64, hide func(bad bool, f func())) func() (func(*simt.Thread), func()) {
		return func() (func(*simt.Thread), func()) {
			out := simt.NewGlobal("out", make([]float32, 40))
			return func(t *simt.Thread) {
				hide(t.ThreadIdx.X >= 40, func() { out.Store(t, t.ThreadIdx.X, 1) })
				if t.ThreadIdx.X >= 40 {
					ran.Add(1) // the faulting thread, going on
				}
				if t.ThreadIdx.X > 40 || t.BlockIdx.X > 0 {
					ran.Add(1) // a thread after the faulting one
				}
			}, nil
		}
	}
	recovered := func(_ bool, f func()) {
		defer func() { recover() }()
		f()
	}
	repanicked := func(_ bool, f func()) {
		defer func() {
			if recover() != nil {
				panic("everything is fine")
			}
		}()
		f()
	}
	retried := func(bad bool, f func()) {
		for bad {
			recovered(bad, f)
		}
		f()
	}
	var a, b, c, d, e atomic.Int64
	tests := []hostile{
		{name: "out of bounds, recovered", launch: simt.Launch{Grid: simt.Dim{X: 2}, Block: simt.Dim{X: 64}}, setup: outOfBounds(&a, recovered),
			is: simt.ErrAccess, ranAfter: &a, msg: []string{"block (0,0) thread (40,0): out.Store(t, 40) at escape_test.go:", "index out of range"}},
		{name: "out of bounds, re-panicked", launch: one, setup: outOfBounds(&b, repanicked),
			is: simt.ErrAccess, ranAfter: &b, msg: []string{"thread (40,0): out.Store(t, 40)"}},
		{name: "out of bounds, retried forever", launch: one, setup: outOfBounds(&c, retried),
			is: simt.ErrAccess, ranAfter: &c, msg: []string{"thread (40,0): out.Store(t, 40)"}},
		{name: "misaligned, recovered", launch: one, is: simt.ErrAccess, ranAfter: &d, setup: func() (func(*simt.Thread), func()) {
			in := simt.As[[4]float32](simt.NewGlobal("in", make([]float32, 400)), 1)
			return func(t *simt.Thread) {
				recovered(true, func() { in.Load(t, t.ThreadIdx.X) })
				d.Add(1)
			}, nil
		}, msg: []string{"cudaErrorMisalignedAddress"}},
		{name: "a barrier one thread reaches, recovered", launch: one, is: simt.ErrBarrier, ranAfter: &e, setup: func() (func(*simt.Thread), func()) {
			return func(t *simt.Thread) {
				if t.ThreadIdx.X == 5 {
					recovered(true, t.Sync)
					e.Add(1)
				}
			}, nil
		}, msg: []string{"block (0,0) thread (5,0): reached a barrier"}},
		{name: "a simt call in a deferred function after the fault", launch: one, is: simt.ErrAccess, setup: func() (func(*simt.Thread), func()) {
			out := simt.NewGlobal("out", make([]float32, 64))
			return func(t *simt.Thread) {
				defer out.Store(t, 0, 99) // runs as the thread ends, and is stopped too
				out.Store(t, 64+t.ThreadIdx.X, 1)
			}, nil
		}, msg: []string{"thread (0,0): out.Store(t, 64)"}},
	}
	for _, h := range tests {
		t.Run(h.name, h.run)
	}
}

// The class "a kernel that does not finish": loops that never end, with
// accesses or with barriers alone. Each stops with ErrRunaway once its
// block made MaxBlockAccesses accesses, saying where, and the heap it
// grew on the way stays bounded (the log of the block's accesses, 24
// bytes each, 48 MiB, and what append keeps while it grows: under 200
// MiB).
func TestRunaway(t *testing.T) {
	tests := []hostile{
		{name: "j += 0", launch: simt.Launch{Grid: simt.Dim{X: 40}, Block: simt.Dim{X: 256}}, is: simt.ErrRunaway, setup: func() (func(*simt.Thread), func()) {
			const n, k = 80000, 8
			in, out := simt.NewGlobal("in", make([]float32, n)), simt.NewGlobal("out", make([]float32, n))
			return func(t *simt.Thread) {
				i := t.BlockIdx.X*t.BlockDim.X + t.ThreadIdx.X
				for j := 0; j < k; j += 0 {
					if e := i*k + j; e < n {
						out.Store(t, e, in.Load(t, e))
					}
				}
			}, nil
		}, msg: []string{"simt: the kernel does not finish: block (0,0) thread (0,0): its block made 1048576 accesses", "a loop that never ends?",
			"This thread made 1048576, the last at escape_test.go:"}},
		{name: "barriers forever", launch: one, is: simt.ErrRunaway, setup: func() (func(*simt.Thread), func()) {
			return func(t *simt.Thread) {
				for {
					t.Sync()
				}
			}, nil
		}, msg: []string{"its block made 1048576 accesses", "a loop that never ends?"}},
	}
	for _, h := range tests {
		t.Run(h.name, func(t *testing.T) {
			peak := heapPeak(t)
			h.run(t)
			assert.Less(t, peak(), uint64(200<<20), "the heap's peak while the kernel ran")
		})
	}
}

// heapPeak samples the heap every millisecond until the returned func is
// called, which returns the largest heap seen (runtime/metrics: the bytes
// of live and dead objects not yet swept).
func heapPeak(t *testing.T) func() uint64 {
	runtime.GC() // what earlier tests left
	var peak atomic.Uint64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		for {
			metrics.Read(s)
			if v := s[0].Value.Uint64(); v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	return func() uint64 {
		close(stop)
		<-done
		t.Logf("heap peak: %d MiB", peak.Load()>>20)
		return peak.Load()
	}
}

// A host step that must not use simt (a gather's Order) fails on its
// first simt call, with where it was, whatever it recovers; host code
// that only computes passes.
func TestHost(t *testing.T) {
	in := simt.NewGlobal("in", make([]float32, 1))
	var kept *simt.Thread
	_, err := simt.Launch{Grid: simt.Dim{X: 1}, Block: simt.Dim{X: 1}}.Run(func(t *simt.Thread) { kept = t })
	require.NoError(t, err)
	tests := []struct {
		name string
		f    func()
		msg  string // "" for no error
	}{
		{"a launch", func() {
			defer func() { recover() }()
			simt.Launch{Grid: simt.Dim{X: 1}, Block: simt.Dim{X: 1}}.Run(func(*simt.Thread) {})
		}, "Launch.Run at escape_test.go:" + strconv.Itoa(line()-1) + " in the test's step"},
		{"a buffer", func() { simt.NewGlobal("x", []float32{1}) }, "simt.NewGlobal at escape_test.go:"},
		{"a kept thread", func() { in.Load(kept, 0) }, "which is not running"},
		{"host work", func() {
			s := 0
			for i := range 1000 {
				s += i
			}
			_ = s
		}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := simt.Host("the test's step", tt.f)
			if tt.msg == "" {
				assert.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, simt.ErrEscape)
			assert.ErrorContains(t, err, tt.msg)
		})
	}
}

// Two launches may run at once on goroutines of their own, each with its
// buffers, and one after another over the same buffers: ErrEscape is for
// a launch reaching into another, not for launches side by side.
func TestLaunchesSideBySide(t *testing.T) {
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			in, out := simt.NewGlobal("in", count[float32](1024)), simt.NewGlobal("out", make([]float32, 1024))
			for range 3 {
				_, err := simt.Launch{Grid: simt.Dim{X: 4}, Block: simt.Dim{X: 256}}.Run(func(t *simt.Thread) {
					i := t.BlockIdx.X*256 + t.ThreadIdx.X
					out.Store(t, i, in.Load(t, i))
				})
				errs[i] = errors.Join(errs[i], err)
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		assert.NoError(t, err)
	}
}

// Use says which words a launch loaded and stored: a kernel that loads
// the even floats and stores float4s over the first half leaves float 1
// unloaded (byte 4) and float 512 unstored (byte 2048); a field of a
// struct marks its own word only.
func TestUse(t *testing.T) {
	type pair struct{ A, B float32 }
	in, out := simt.NewGlobal("in", make([]float32, 1024)), simt.NewGlobal("out", make([]float32, 1024))
	pairs := simt.NewGlobal("pairs", make([]pair, 64))
	vec := simt.As[[4]float32](out, 0)
	r, err := simt.Launch{Grid: simt.Dim{X: 1}, Block: simt.Dim{X: 128}}.Run(func(t *simt.Thread) {
		i := t.ThreadIdx.X
		in.Load(t, 2*i)
		in.Load(t, 2*i+256)
		vec.Store(t, i, [4]float32{})
		if i < 64 {
			simt.Field[float32](pairs, "B").Load(t, i)
		}
	})
	require.NoError(t, err)
	u := r.Buffer("in")
	require.NotNil(t, u)
	assert.Equal(t, int64(4), u.Unloaded(0, 4096), "float 1 was never loaded")
	assert.Equal(t, int64(-1), u.Unloaded(0, 4), "float 0 was")
	assert.Equal(t, int64(256), u.Loaded, "128 threads, 2 floats each")
	assert.Equal(t, int64(0), u.Unstored(0, 4), "nothing stored to in")
	o := r.Buffer("out")
	require.NotNil(t, o, "a view's accesses are its buffer's")
	assert.Equal(t, int64(-1), o.Unstored(0, 2048), "128 float4s cover 512 floats")
	assert.Equal(t, int64(2048), o.Unstored(0, 4096))
	assert.Equal(t, int64(512), o.Stored)
	p := r.Buffer("pairs")
	assert.Equal(t, int64(0), p.Unloaded(0, 8), "A of pair 0 was not loaded")
	assert.Equal(t, int64(-1), p.Unloaded(4, 8), "B of pair 0 was")
	assert.Equal(t, int64(64*8), p.Unloaded(63*8+4, 64*8+4), "bytes past the buffer count as not loaded")
	assert.Nil(t, r.Buffer("nothing"))
	assert.Equal(t, int64(0), r.Buffer("nothing").Unloaded(0, 4), "no buffer: nothing loaded")
}

// The trace of a warp whose loop runs long keeps at most MaxTrace
// instructions.
func TestTraceBounded(t *testing.T) {
	in := simt.NewGlobal("in", make([]float32, 32))
	r, err := simt.Launch{Grid: simt.Dim{X: 1}, Block: simt.Dim{X: 32}, Trace: 1}.Run(func(t *simt.Thread) {
		for range 2 * simt.MaxTrace {
			in.Load(t, t.ThreadIdx.X)
		}
	})
	require.NoError(t, err)
	assert.Len(t, r.Trace, simt.MaxTrace)
	assert.Equal(t, float64(2*simt.MaxTrace), r.Modelled.Metrics["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"], "every instruction is counted")
}
