package simt

import (
	"errors"
	"fmt"
	"iter"
	"os"
	"runtime"
	"runtime/pprof"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/coalescing-course/coalesce/lessons/devices"
	"github.com/coalescing-course/coalesce/lessons/sectors"
)

// Dim is a launch's shape in x and y: CUDA's dim3 without z. A Y of 0
// means 1, as dim3's default does.
type Dim struct{ X, Y int }

func (d Dim) String() string { return fmt.Sprintf("(%d,%d)", d.X, d.Y) }

// The limits of a launch: CUDA's on every GPU the course covers (the CUDA
// C++ Programming Guide's table of compute capabilities 7.0 to 9.0), and
// MaxThreads, simt's own.
const (
	// MaxBlockThreads bounds a block's threads, X times Y, and each of X
	// and Y on its own.
	MaxBlockThreads = 1024
	// MaxGridX and MaxGridY bound the grid's blocks in x and y.
	MaxGridX = 1<<31 - 1
	MaxGridY = 65535
	// MaxSharedBytes is the static shared memory one block may declare.
	MaxSharedBytes = 48 << 10
	// MaxThreads bounds the threads of one launch: simt runs them one
	// after another on one core, about 0.1 µs a thread of a copy
	// (BenchmarkCopy), so 2^24 threads keep a notebook cell waiting a
	// couple of seconds; the 2^26 of the course's largest specs would
	// take four times that.
	MaxThreads = 1 << 24
)

// Launch is one launch of a kernel: Grid blocks of Block threads, priced
// by the model of Device.
type Launch struct {
	Grid, Block Dim
	// Device names the GPU profile (package devices) whose L2 prices the
	// launch; "" is devices.Current(), the course's H200 unless this
	// machine's GPU was chosen. The L1 counts are the same on every one.
	Device string
	// L2Fetch is the L2 fetch granularity in bytes, 32, 64 or 128; 0 is
	// the device's default, as a spec without l2_fetch_granularity has.
	L2Fetch int
	// Trace is how many of the launch's first warps keep their warp
	// instructions in Result.Trace, for a warp diagram.
	Trace int
}

// The kinds of error Run returns, for errors.Is; each is wrapped with what
// went wrong, which thread and where.
var (
	// ErrLaunch is a launch the GPU would refuse: a dimension below 1 or
	// past its limit, too many threads, too much shared memory.
	ErrLaunch = errors.New("simt: launch refused")
	// ErrAccess is a Load or Store the GPU would fault on, or that simt
	// cannot place: an index outside the buffer, a misaligned access, an
	// element type with no access of its size, a nil or foreign *Thread.
	ErrAccess = errors.New("simt: bad access")
	// ErrBarrier is a block whose threads do not all reach the same
	// barriers: on a GPU it hangs, or worse.
	ErrBarrier = errors.New("simt: barrier divergence")
	// ErrPanic is a kernel that panicked.
	ErrPanic = errors.New("simt: kernel panicked")
)

// Thread is one thread of a launch, as the kernel sees it: its block and
// its place in it, and the launch's shape. Every Load, Store and Sync
// takes it, so that simt knows which thread accesses what; it belongs to
// the one call of the kernel it was passed to.
type Thread struct {
	BlockIdx, ThreadIdx, BlockDim, GridDim Dim

	r     *run
	tid   int // ThreadIdx.Y*BlockDim.X + ThreadIdx.X, which makes the warps
	log   []access
	syncs int
	// syncPC is where it last called Sync, yield how it leaves the block's
	// round at a barrier: nil when it runs as a plain call.
	syncPC uintptr
	yield  func(struct{}) bool
	done   bool
	// g is the goroutine its code runs on (getg): the launch's, or its
	// coroutine's in a block with barriers.
	g atomic.Uintptr
}

func (t *Thread) String() string {
	return "block " + t.BlockIdx.String() + " thread " + t.ThreadIdx.String()
}

// Sync is __syncthreads(): the thread waits until every thread of its
// block has reached the barrier. Every thread of a block must reach the
// same number of barriers; a block whose threads do not is an error
// (ErrBarrier), where a GPU would hang.
//
//go:noinline
func (t *Thread) Sync() {
	pc := callerPC()
	r := t.mine(pc, "", "Sync")
	t.syncs++
	t.syncPC = pc
	if t.yield == nil {
		r.stop(fault(ErrBarrier, "reached a barrier (Sync at %s), but thread (0,0) of its block finished without one: "+
			"every thread of a block must reach the same barriers, or on a GPU the block hangs", where(pc)))
	}
	r.current = nil
	if !t.yield(struct{}{}) {
		// The launch stopped while this thread waited: it ends here.
		runtime.Goexit()
	}
}

// mine returns t's launch, or stops the thread (see foreign) when t cannot
// be the thread that is running: nil, kept from another call of the
// kernel, or passed to another goroutine. name and verb say what t was
// passed to: "in" and "Load". It counts the access against the block's
// MaxBlockAccesses, and ends the calling thread at once when the launch
// has failed already (a recovered fault, a deferred call after one).
func (t *Thread) mine(pc uintptr, name, verb string) *run {
	if t == nil || t.r == nil || (fastG && t.g.Load() != getg()) || t.r.current != t {
		t.foreign(pc, name, verb)
	}
	r := t.r
	if r.err != nil {
		runtime.Goexit()
	}
	r.blockN++
	if r.blockN > MaxBlockAccesses {
		t.runaway(pc)
	}
	return r
}

// runaway stops a thread whose block has made MaxBlockAccesses accesses.
// Apart from mine, so that mine's frame stays small: a coroutine's stack
// starts small, and grows by copying.
//
//go:noinline
func (t *Thread) runaway(pc uintptr) {
	r := t.r
	r.stop(fault(ErrRunaway, "its block made %d accesses (Loads, Stores and Syncs), and goes on: a loop that never ends? "+
		"This thread made %d, the last at %s; a block may make at most %d (2^20)", r.blockN-1, len(t.log)+t.syncs, where(pc), MaxBlockAccesses))
}

// foreign stops the thread that passed t, which is not running on this
// goroutine, to name's verb: the launch this goroutine runs a kernel of
// fails, and so does the launch t belongs to if it runs (a goroutine of
// the kernel's reaching into it). Outside any launch it panics with the
// error.
//
//go:noinline
func (t *Thread) foreign(pc uintptr, name, verb string) {
	what := verb
	if name != "" {
		what = name + "." + verb
	}
	var f failure
	switch {
	case t == nil:
		f = fault(ErrAccess, "%s at %s with a nil *Thread: pass the t the kernel was called with", what, where(pc))
	case t.r == nil:
		f = fault(ErrAccess, "%s at %s with a *Thread simt did not make: pass the t the kernel was called with", what, where(pc))
	case t.r.current == t && t.r.live.Load():
		f = fault(ErrEscape, "%s at %s with the *Thread of %s from another goroutine: a kernel must not start goroutines, "+
			"and a thread's accesses are its own, made where simt runs it", what, where(pc), t)
	default:
		f = fault(ErrEscape, "%s at %s with the *Thread of %s, which is not running: a t belongs to its own call of the kernel, in its own launch", what, where(pc), t)
	}
	if t != nil && t.r != nil && t.r.live.Load() && t.r != running() {
		t.r.tamper(f)
	}
	if r := running(); r != nil {
		r.stop(f)
	}
	if h := hostStep(); h != nil {
		h.stop(f)
	}
	panic(f)
}

// failure is an error of the given kind (ErrAccess, ErrBarrier, ...)
// that stops a thread: recorded in its launch, which returns it (see
// run.stop), or outside any launch, panicked, where it reads as an error.
type failure struct {
	kind error
	msg  string
}

func fault(kind error, format string, args ...any) failure {
	return failure{kind, fmt.Sprintf(format, args...)}
}

func (f failure) Error() string { return f.kind.Error() + ": " + f.msg }
func (f failure) Unwrap() error { return f.kind }

// Result is what a launch did: the model's counts of its warp
// instructions, and what each access site of the kernel cost.
type Result struct {
	// Modelled holds the counts under Nsight Compute's names, as
	// sectors.Model gives them for the course's kernels (Metrics,
	// L1UsefulBytes, Warps), so that lessons/figures derives the same
	// figures from it. Its Spec is empty, and it has no time: the time
	// model reads a spec.
	Modelled sectors.Launch
	// Threads is the number of threads that ran.
	Threads int64
	// Sites lists every access site that issued an instruction, in the
	// order each first did.
	Sites []Site
	// Races lists the first data races found in shared memory (at most
	// MaxRaces), and RaceCount counts them all.
	Races     []Race
	RaceCount int64
	// Split counts the instructions simt had to split because the lanes
	// of a warp disagree on the order of the sites: code that lockstep
	// execution cannot follow site by site (a helper that loads, called
	// from two places under a divergent branch). 0 for structured code.
	Split int64
	// Trace holds the instructions of the first Launch.Trace warps, in
	// the order they were issued, at most MaxTrace of them.
	Trace []Traced
	// Buffers says, for each Global the launch touched, in the order it
	// first did, which of its words the launch loaded and stored (Buffer
	// finds one by name).
	Buffers []*Use
}

// Traced is one warp instruction of a traced warp: what the model was
// given, as sectors.Instructions gives it for the course's kernels (its
// Access is the site, "kernel.go:12"), and the warp that issued it.
type Traced struct {
	// Warp numbers the warp in the launch: warps are numbered block by
	// block (block by*Grid.X+bx), and within a block by their threads
	// (thread ty*Block.X+tx is in warp (ty*Block.X+tx)/32).
	Warp        int64
	Instruction sectors.Instruction
}

// Divergent returns the sites some of whose instructions ran with fewer
// lanes than their warp has.
func (r *Result) Divergent() []Site {
	var out []Site
	for _, s := range r.Sites {
		if s.Partial > 0 {
			out = append(out, s)
		}
	}
	return out
}

// Run runs kernel for every thread of the launch, block after block, and
// returns what the model makes of its accesses. What the kernel stores is
// in the buffers' slices when Run returns, error or not; on an error the
// launch stops at the first one, as a GPU stops at a fault: the fault is
// the launch's before the faulting thread stops, and the thread stops
// whatever its kernel recovers (its deferred calls run, as on a
// runtime.Goexit; a simt call in them ends them).
//
// Run runs the launch on a goroutine of its own and waits for it. A
// launch's work must stay in it (ErrEscape): Run called from inside a
// kernel fails the calling launch; a Global or Shared is one running
// launch's at a time, and must be made before the launch that uses it;
// a kernel must not start goroutines. A kernel that never returns never
// lets Run return (one that keeps accessing memory stops with
// ErrRunaway): lab runs a learner's kernel in a process of its own, under
// a time and memory limit, and so does a grader.
//
//go:noinline
func (l Launch) Run(kernel func(t *Thread)) (*Result, error) {
	outside(callerPC(), "Launch.Run", "a kernel cannot launch another; the inner launch's accesses would count there, not in this launch")
	if kernel == nil {
		return nil, fmt.Errorf("%w: the kernel is nil", ErrLaunch)
	}
	l, err := l.checked()
	if err != nil {
		return nil, err
	}
	d, err := l.device()
	if err != nil {
		return nil, err
	}
	stream, err := sectors.NewStream(d, l.L2Fetch)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrLaunch, err)
	}
	r := newRun(l, stream)
	done := make(chan struct{})
	go r.launch(kernel, done)
	<-done
	switch {
	case r.err != nil:
		return nil, r.err
	case r.res == nil:
		return nil, fmt.Errorf("%w: the launch's goroutine ended before its last block: the kernel called runtime.Goexit", ErrPanic)
	}
	return r.res, nil
}

// launch runs every block of the launch on the goroutine it is called
// on, which it registers as the launch's (see running) and labels (see
// strays), and closes done when it ends, whether by returning or by a
// thread's runtime.Goexit.
func (r *run) launch(kernel func(*Thread), done chan<- struct{}) {
	g := getg()
	defer close(done)
	defer kernels.Delete(g)
	defer r.release()
	kernels.Store(g, r)
	pprof.SetGoroutineLabels(labelled(r.seq))
	for by := range r.l.Grid.Y {
		for bx := range r.l.Grid.X {
			r.runBlock(Dim{bx, by}, kernel)
			accesses.Add(r.blockN - r.published)
			r.published = 0
			if f := r.tampered.Load(); f != nil {
				r.record(*f)
			}
			if r.err != nil {
				return
			}
		}
	}
	if n, first := strays(r.seq); n > 0 {
		r.record(fault(ErrEscape, "the kernel started %d goroutines that still run when its launch ends (the first runs %s): "+
			"a kernel's threads are simt's to run, and it must not start goroutines", n, first))
		return
	}
	p, err := r.stream.Finish()
	if err != nil {
		r.err = err
		return
	}
	l := r.l
	threads := l.Block.X * l.Block.Y
	blocks := int64(l.Grid.X) * int64(l.Grid.Y)
	p.Warps = blocks * int64((threads+sectors.WarpSize-1)/sectors.WarpSize)
	res := &Result{Modelled: p, Threads: blocks * int64(threads), Races: r.races, RaceCount: r.raceCount, Split: r.split, Trace: r.trace}
	for _, s := range r.sites {
		res.Sites = append(res.Sites, s.named())
	}
	for _, a := range r.globals {
		res.Buffers = append(res.Buffers, a.use)
	}
	r.res = res
}

// release ends the launch: no Thread of it works from now on, and its
// buffers are free for the next launch.
func (r *run) release() {
	r.live.Store(false)
	r.current = nil
	for _, a := range r.globals {
		a.run.CompareAndSwap(r, nil)
	}
	for _, s := range r.shareds {
		s.run.CompareAndSwap(r, nil)
	}
}

// checked returns l with its defaults filled in, or why the GPU refuses it.
func (l Launch) checked() (Launch, error) {
	for _, d := range []*Dim{&l.Grid, &l.Block} {
		if d.Y == 0 {
			d.Y = 1
		}
	}
	b, g := l.Block, l.Grid
	switch {
	case b.X < 1 || b.Y < 1:
		return l, fmt.Errorf("%w: block %s: each dimension must be at least 1", ErrLaunch, b)
	case g.X < 1 || g.Y < 1:
		return l, fmt.Errorf("%w: grid %s: each dimension must be at least 1", ErrLaunch, g)
	case b.X > MaxBlockThreads || b.Y > MaxBlockThreads || b.X*b.Y > MaxBlockThreads:
		return l, fmt.Errorf("%w: block %s has %d threads: a block has at most %d", ErrLaunch, b, int64(b.X)*int64(b.Y), MaxBlockThreads)
	case g.X > MaxGridX || g.Y > MaxGridY:
		return l, fmt.Errorf("%w: grid %s: at most %d blocks in x and %d in y", ErrLaunch, g, MaxGridX, MaxGridY)
	case l.Trace < 0:
		return l, fmt.Errorf("%w: Trace %d: the number of warps to trace is 0 or more", ErrLaunch, l.Trace)
	}
	if n := int64(g.X) * int64(g.Y) * int64(b.X*b.Y); n > MaxThreads {
		return l, fmt.Errorf("%w: %d threads: simt runs at most %d (2^24) in one launch", ErrLaunch, n, MaxThreads)
	}
	return l, nil
}

// device returns the profile the launch is priced on.
func (l Launch) device() (devices.Profile, error) {
	if l.Device == "" {
		d, _ := devices.Current()
		return d, nil
	}
	d, err := devices.Lookup(l.Device)
	if err != nil {
		return devices.Profile{}, fmt.Errorf("%w: %w", ErrLaunch, err)
	}
	return d, nil
}

// run is one launch in progress.
type run struct {
	l       Launch
	seq     int64 // its number among the process's launches (launches)
	stream  *sectors.Stream
	threads []*Thread // the block's, reused from block to block
	warps   int       // warps per block
	current *Thread   // the thread whose kernel code runs now
	err     error
	res     *Result
	// live is true while the launch runs; tampered is a failure another
	// goroutine found in it (run.tamper).
	live     atomic.Bool
	tampered atomic.Pointer[failure]
	// blockN counts the block's accesses (MaxBlockAccesses); published
	// how many of them went to the process's count (accesses).
	blockN, published int64

	// phase counts the barriers the block has passed; blocks counts the
	// blocks begun (so a Shared knows to clear itself, and a warp its
	// number), epoch the barrier intervals of the launch (so a race check
	// knows what is stale).
	phase  int32
	blocks int64
	epoch  uint32

	globals     []*alloc
	shareds     []*sharedMem
	sharedBytes int

	sites  []*siteCount
	siteOf map[siteKey]*siteCount
	group  grouper
	split  int64
	// The warp being issued: its lanes, its number in its block and in
	// the launch, its block.
	present uint32
	warp    int
	warpNo  int64
	block0  Dim
	trace   []Traced

	races     []Race
	raceCount int64
}

func newRun(l Launch, stream *sectors.Stream) *run {
	n := l.Block.X * l.Block.Y
	r := &run{l: l, seq: launches.Add(1), stream: stream, threads: make([]*Thread, n), warps: (n + sectors.WarpSize - 1) / sectors.WarpSize,
		siteOf: map[siteKey]*siteCount{}}
	r.live.Store(true)
	for i := range r.threads {
		r.threads[i] = &Thread{r: r, tid: i, ThreadIdx: Dim{i % l.Block.X, i / l.Block.X}, BlockDim: l.Block, GridDim: l.Grid}
	}
	return r
}

// runBlock runs one block. Thread 0 runs first as a coroutine: if it finishes
// without reaching a barrier, so must every thread, and the rest run as
// plain calls, warp by warp; if it stops at one, every thread of the block
// gets a coroutine and the block runs barrier interval by interval. A
// thread that faults ends the launch's goroutine (run.stop) from here.
func (r *run) runBlock(idx Dim, kernel func(*Thread)) {
	r.blocks++
	r.epoch++
	r.phase = 0
	r.blockN, r.published = 0, 0
	for _, t := range r.threads {
		t.BlockIdx, t.log, t.syncs, t.done, t.yield = idx, t.log[:0], 0, false, nil
	}
	next0, stop0 := iter.Pull(r.body(r.threads[0], kernel))
	r.current = r.threads[0]
	if _, waits := next0(); waits {
		r.barriers(kernel, next0, stop0)
		return
	}
	r.threads[0].done = true
	stop0()
	if r.err != nil {
		return
	}
	for w := range r.warps {
		lanes := r.threads[w*sectors.WarpSize : min(len(r.threads), (w+1)*sectors.WarpSize)]
		for _, t := range lanes {
			if t.tid == 0 {
				continue
			}
			r.call(t, kernel)
			if r.err != nil {
				return
			}
		}
		r.issueWarp(lanes)
		if r.err != nil {
			return
		}
		if r.blockN-r.published >= 1<<16 {
			accesses.Add(r.blockN - r.published)
			r.published = r.blockN
		}
	}
}

// barriers runs a block whose thread 0 waits at a barrier: every other
// thread up to its first barrier, then all of them, interval by interval,
// until they all finish, and issues its warps' instructions.
func (r *run) barriers(kernel func(*Thread), next0 func() (struct{}, bool), stop0 func()) {
	next := make([]func() (struct{}, bool), len(r.threads))
	stop := make([]func(), len(r.threads))
	next[0], stop[0] = next0, stop0
	for i, t := range r.threads[1:] {
		next[i+1], stop[i+1] = iter.Pull(r.body(t, kernel))
	}
	defer r.stopAll(stop)
	first := 1 // thread 0 has run its first interval
	for {
		for _, t := range r.threads[first:] {
			if t.done {
				continue
			}
			r.current = t
			if _, waits := next[t.tid](); !waits {
				t.done = true
			}
			if r.err != nil {
				return
			}
		}
		first = 0
		var finished, waiting *Thread
		for _, t := range r.threads {
			if t.done {
				finished = t
			} else {
				waiting = t
			}
		}
		if waiting == nil {
			break
		}
		if finished != nil {
			r.current = nil
			r.record(fault(ErrBarrier, "%s finished after %s while %s waits at barrier %d (Sync at %s): "+
				"every thread of a block must reach the same barriers, or on a GPU the block hangs",
				finished, nBarriers(finished.syncs), waiting, waiting.syncs, where(waiting.syncPC)))
			return
		}
		r.phase++
		r.epoch++
	}
	for w := range r.warps {
		r.issueWarp(r.threads[w*sectors.WarpSize : min(len(r.threads), (w+1)*sectors.WarpSize)])
		if r.err != nil {
			return
		}
	}
}

// stopAll stops the coroutines of a block's threads. Those that finished
// stop at once; one waiting at a barrier ends in its Sync by
// runtime.Goexit, which stop passes on to whoever calls it: a goroutine of
// its own calls it, so that the launch's goroutine goes on stopping the
// rest.
func (r *run) stopAll(stops []func()) {
	var wg sync.WaitGroup
	for i, s := range stops {
		if r.threads[i].done {
			s()
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			s()
		}()
		wg.Wait()
	}
}

// nBarriers writes n barriers in words: "1 barrier", "0 barriers".
func nBarriers(n int) string {
	if n == 1 {
		return "1 barrier"
	}
	return fmt.Sprintf("%d barriers", n)
}

// body is thread t's coroutine: the kernel, with t able to wait at a
// barrier, on a goroutine registered as the launch's (running).
func (r *run) body(t *Thread, kernel func(*Thread)) iter.Seq[struct{}] {
	return func(yield func(struct{}) bool) {
		g := getg()
		kernels.Store(g, r)
		defer kernels.Delete(g)
		t.yield = yield
		r.call(t, kernel)
		t.yield = nil
	}
}

// call runs the kernel for thread t, turning what stops it early into the
// launch's error: a panic, or a runtime.Goexit of the kernel's own (simt's
// stops record their error first).
func (r *run) call(t *Thread, kernel func(*Thread)) {
	returned := false
	defer func() {
		if v := recover(); v != nil {
			r.fail(t, v)
		} else if !returned && r.err == nil {
			r.current = t
			r.record(fault(ErrPanic, "the kernel called runtime.Goexit%s", goexitSite()))
		}
	}()
	r.current = t
	t.g.Store(getg())
	kernel(t)
	returned = true
	r.current = nil
}

// fail records why thread t stopped, unless the launch already failed.
func (r *run) fail(t *Thread, v any) {
	if r.err != nil {
		return
	}
	if f, ok := v.(failure); ok {
		r.err = fmt.Errorf("%w: %s: %s", f.kind, t, f.msg)
		return
	}
	r.err = fmt.Errorf("%w: %s: %v%s", ErrPanic, t, v, panicSite())
}

// goexitSite returns " at file:line" for the kernel's call of
// runtime.Goexit: called from a deferred function while the goroutine
// exits, the stack holds the frames above runtime.Goexit.
func goexitSite() string {
	pcs := make([]uintptr, 64)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(2, pcs)])
	exiting := false
	for {
		f, more := frames.Next()
		switch {
		case f.Function == "runtime.Goexit":
			exiting = true
		case exiting && !strings.HasPrefix(f.Function, "runtime."):
			return " at " + place(f, os.Getenv(NotebookDirEnv))
		}
		if !more {
			return ""
		}
	}
}

// panicSite returns " at file:line" for the kernel's code that panicked:
// called from a deferred recover, the stack still holds the panicking
// frames above runtime.gopanic.
func panicSite() string {
	pcs := make([]uintptr, 64)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(2, pcs)])
	panicking := false
	for {
		f, more := frames.Next()
		switch {
		case f.Function == "runtime.gopanic":
			panicking = true
		case panicking && !strings.HasPrefix(f.Function, "runtime."):
			return " at " + place(f, os.Getenv(NotebookDirEnv))
		}
		if !more {
			return ""
		}
	}
}
