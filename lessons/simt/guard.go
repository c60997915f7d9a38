package simt

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// This file holds what keeps a launch's work inside the launch: which
// goroutines run which launch's kernel, the host steps that may not use
// simt at all, the launch's own goroutine and the count of the goroutines
// its kernel left behind.

// ErrEscape is work a kernel moved out of the launch it runs in, where
// the launch's counts would not see it: a launch started from inside a
// kernel, a Global or Shared made inside one (or while its launch ran), a
// goroutine touching a launch, a Thread of another thread or launch or kept
// past its call, a buffer in use by another launch that runs, a goroutine
// of the kernel's still running when the launch ends, simt used from a
// host step that must not use it (Host). The launch fails with it, as it
// would with a fault.
var ErrEscape = errors.New("simt: work outside the launch")

// ErrRunaway is a kernel that does not finish: a block that made more than
// MaxBlockAccesses accesses, a loop that never ends in all likelihood.
var ErrRunaway = errors.New("simt: the kernel does not finish")

// MaxBlockAccesses bounds the Loads, Stores and Syncs of one block: simt
// keeps a block's accesses (24 bytes each) until its warps are issued, so
// that a loop that never ends stops with ErrRunaway within a second, its
// log at 24 MiB, instead of growing until the machine has none. The
// course's exercises make at most a few thousand a block.
const MaxBlockAccesses = 1 << 20

// MaxBuffers bounds the Globals one launch touches.
const MaxBuffers = 1 << 12

// MaxTrace bounds the warp instructions a Result's Trace keeps.
const MaxTrace = 1 << 12

// fastG says getg is the assembly's one-nanosecond read, which every Load
// and Store can afford to check: a *Thread passed to another goroutine is
// then refused at once. Elsewhere simt checks goroutines only where a
// launch starts and where a buffer is made.
const fastG = runtime.GOARCH == "amd64" || runtime.GOARCH == "arm64"

// kernels maps a goroutine (getg) to the launch whose kernel code it runs:
// a launch's own goroutine, and each coroutine a block with barriers gives
// a thread. hosts maps a goroutine that runs a host step (Host) to it.
var (
	kernels = registry[*run]{m: map[uintptr]*run{}}
	hosts   = registry[*host]{m: map[uintptr]*host{}}
)

// registry is a map from goroutines to what they run, for any goroutine
// to read: a mutex and a map, some 50 ns a change where a sync.Map takes
// several times that (a block with barriers makes two a thread).
type registry[T any] struct {
	mu sync.Mutex
	m  map[uintptr]T
}

func (r *registry[T]) Store(g uintptr, v T) {
	r.mu.Lock()
	r.m[g] = v
	r.mu.Unlock()
}

func (r *registry[T]) Delete(g uintptr) {
	r.mu.Lock()
	delete(r.m, g)
	r.mu.Unlock()
}

func (r *registry[T]) Load(g uintptr) (T, bool) {
	r.mu.Lock()
	v, ok := r.m[g]
	r.mu.Unlock()
	return v, ok
}

// launches numbers the launches of the process as they start; a buffer is
// stamped with it when made (born), so that a launch knows a buffer made
// after it started, which only code inside it could have reached.
var launches atomic.Int64

// accesses counts the Loads, Stores and Syncs of every launch of the
// process, published a block (or 2^16 accesses) at a time.
var accesses atomic.Int64

// Accesses returns the Loads, Stores and Syncs that every launch of this
// process has made so far, give or take the last 65,536: what a watchdog
// says of a kernel it stops ("did not finish after N accesses").
func Accesses() int64 { return accesses.Load() }

// running returns the launch whose kernel the calling goroutine runs, or
// nil.
func running() *run {
	r, _ := kernels.Load(getg())
	return r
}

// hostStep returns the host step the calling goroutine runs, or nil.
func hostStep() *host {
	h, _ := hosts.Load(getg())
	return h
}

// outside stops the caller of verb (a Launch.Run, a NewGlobal, ...) when
// it is inside a launch's kernel or a host step: the launch (or step)
// fails with ErrEscape, recorded before the calling thread stops, which no
// recover of the kernel's can undo. Elsewhere it returns.
func outside(pc uintptr, verb, why string) {
	if r := running(); r != nil {
		r.stop(failure{ErrEscape, fmt.Sprintf("%s at %s inside the kernel: %s", verb, where(pc), why)})
	}
	if h := hostStep(); h != nil {
		h.stop(failure{ErrEscape, fmt.Sprintf("%s at %s in %s: %s", verb, where(pc), h.what, why)})
	}
}

// stop records f as the launch's failure, unless it failed already, and
// ends the calling goroutine, which runs the launch's kernel: the kernel's
// deferred calls run, and no recover in them stops it (runtime.Goexit), so
// that the launch stops at its first fault, as a GPU does.
func (r *run) stop(f failure) {
	r.record(f)
	runtime.Goexit()
}

// record keeps f, naming the running thread, as the launch's failure
// unless it has one.
func (r *run) record(f failure) {
	if r.err != nil {
		return
	}
	if t := r.current; t != nil {
		r.err = fmt.Errorf("%w: %s: %s", f.kind, t, f.msg)
		return
	}
	r.err = f
}

// tamper fails launch r from another goroutine, one that touched it while
// it ran: r's own goroutine reads it at its next block, and at its end.
func (r *run) tamper(f failure) {
	r.tampered.CompareAndSwap(nil, &f)
}

// host is a host step running under Host.
type host struct {
	what string
	err  error
}

func (h *host) stop(f failure) {
	if h.err == nil {
		h.err = f
	}
	runtime.Goexit()
}

// Host runs f, host code that must not use simt (what names it: "the
// gather's Order"), and returns why it failed: nil, or an ErrEscape error
// naming the first simt call f made (a launch, a buffer, a Thread's
// access), which also stops f there, whatever f recovers. An exercise's
// host step that reorders the keys a kernel looks up runs so: the work is
// the kernel's, and a launch of the step's own would do it where the
// graded launch does not count it. f runs on a goroutine of its own; a
// panic of f's is not recovered: f recovers its own.
func Host(what string, f func()) error {
	h := &host{what: what}
	done := make(chan struct{})
	go func() {
		defer close(done)
		g := getg()
		hosts.Store(g, h)
		defer hosts.Delete(g)
		f()
	}()
	<-done
	return h.err
}

// labelKey is the goroutine label (runtime/pprof) a launch's goroutine
// carries, which every goroutine it and its coroutines start inherit: how
// the launch counts, at its end, the goroutines its kernel left running.
const labelKey = "simt.launch"

// labelled returns ctx with the label of launch seq.
func labelled(seq int64) context.Context {
	return pprof.WithLabels(context.Background(), pprof.Labels(labelKey, strconv.FormatInt(seq, 10)))
}

// strays returns how many goroutines carry the label of launch seq
// besides the one asking, and where the first of them was started: the
// goroutines the launch's kernel started that still run.
func strays(seq int64) (int, string) {
	var buf bytes.Buffer
	if err := pprof.Lookup("goroutine").WriteTo(&buf, 1); err != nil {
		return 0, ""
	}
	return parseStrays(buf.Bytes(), strconv.FormatInt(seq, 10))
}

// parseStrays reads a goroutine profile of debug level 1 (records "N @
// pc...", then "# labels: {...}" and "#\tpc\tfunc+off\tfile:line" lines)
// and counts the goroutines labelled with launch id less the caller, with
// the entry function of the first other one: its last frame.
func parseStrays(profile []byte, id string) (int, string) {
	want := fmt.Sprintf("%q:%q", labelKey, id)
	n, first := 0, ""
	var count int
	var labelled, self bool
	var last string
	flush := func() {
		if labelled {
			c := count
			if self {
				c-- // the goroutine asking, in strays
			}
			if c > 0 && first == "" {
				first = last
			}
			n += c
		}
		count, labelled, self, last = 0, false, false, ""
	}
	sc := bufio.NewScanner(bytes.NewReader(profile))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.Contains(line, " @ ") && !strings.HasPrefix(line, "#"):
			flush()
			count, _ = strconv.Atoi(strings.Fields(line)[0])
		case strings.HasPrefix(line, "# labels: "):
			labelled = strings.Contains(line, want)
		case strings.HasPrefix(line, "#\t"):
			f := strings.Split(line, "\t")
			if len(f) >= 4 {
				fn := f[2]
				if i := strings.LastIndex(fn, "+0x"); i > 0 {
					fn = fn[:i]
				}
				if strings.HasSuffix(fn, "simt.strays") {
					self = true
				}
				last = fn + " (" + base(strings.TrimSpace(f[3])) + ")"
			}
		}
	}
	flush()
	return n, first
}
