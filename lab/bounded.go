package lab

import (
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coalescing-course/coalesce/internal/capped"
	"github.com/coalescing-course/coalesce/lessons/exercises"
	"github.com/coalescing-course/coalesce/units"
)

// This file runs a learner's Go kernel for Try (and for TryCUDA's Go
// twin) in a process of its own, under limits: the notebook's program
// started again, which runs up to the same call and there runs only the
// kernel and reports; see "Learner kernels, bounded" in the package
// documentation.

// The environment variables of Try's limits.
const (
	// TryTimeoutEnv is the wall-clock time a learner's kernel may run, a
	// Go duration from 1s to 10m; unset, DefaultTryLimits.Timeout.
	TryTimeoutEnv = "COALESCE_TRY_TIMEOUT"
	// TryMemoryEnv is the memory it may take, on top of what the Go
	// runtime has reserved when it starts: bytes, or a number with KiB,
	// MiB or GiB, from 64MiB to 16GiB; unset, DefaultTryLimits.Memory.
	TryMemoryEnv = "COALESCE_TRY_MEMORY"
)

// TryLimits are the limits of a learner's kernel in Try's process.
type TryLimits struct {
	// Timeout is the wall-clock time the kernel may run; its CPU time
	// is bounded a little above it.
	Timeout time.Duration
	// Memory is the address space the process may add to what the Go
	// runtime had mapped when the kernel started (RLIMIT_AS; the heap's
	// soft limit is three quarters of it, the stack's a quarter).
	Memory int64
	// Output is how much of what the kernel prints is shown, per stream.
	Output int
}

// DefaultTryLimits are the limits without TryTimeoutEnv and TryMemoryEnv:
// ten seconds, where the course's exercises take well under one, and 512
// MiB, where they take tens; a hub node hosting dozens of learners keeps
// its memory, since each learner's kernel has a bound far below it.
var DefaultTryLimits = TryLimits{Timeout: 10 * time.Second, Memory: 512 << 20, Output: 64 << 10}

// ErrStopped is a learner's kernel that its process stopped, or that
// ended its process: past its time or its memory, a recursion past its
// stack, a crash, an exit. The Outcome's Fault is a *Stopped.
var ErrStopped = errors.New("lab: the kernel was stopped")

// Stopped says why and where Try's process stopped a learner's kernel.
type Stopped struct {
	// Why is "time", "memory", "stack", "crash" or "exit"; Msg says it
	// in a sentence.
	Why, Msg string
	// At is where the kernel was, "MyCopy line 4: for j := 0; j < k; j
	// += 0 {", when its stack said; "" otherwise.
	At string
	// Peak is the most memory the process held (its peak resident set),
	// in bytes; 0 when unknown.
	Peak int64
}

func (s *Stopped) Error() string {
	msg := "lab: " + s.Msg
	if s.At != "" {
		msg += " It was at " + s.At + "."
	}
	return msg
}

func (s *Stopped) Unwrap() error { return ErrStopped }

// tryLimits returns the limits the environment sets, or why it sets them
// wrong.
func tryLimits(getenv func(string) string) (TryLimits, error) {
	l := DefaultTryLimits
	if v := strings.TrimSpace(getenv(TryTimeoutEnv)); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < time.Second || d > 10*time.Minute {
			return l, fmt.Errorf("lab: %s=%q: want a duration from 1s to 10m, such as 10s", TryTimeoutEnv, v)
		}
		l.Timeout = d
	}
	if v := strings.TrimSpace(getenv(TryMemoryEnv)); v != "" {
		n, err := parseBytes(v)
		if err != nil || n < 64<<20 || n > 16<<30 {
			return l, fmt.Errorf("lab: %s=%q: want a size from 64MiB to 16GiB, such as 512MiB or 1GiB", TryMemoryEnv, v)
		}
		l.Memory = n
	}
	return l, nil
}

// parseBytes reads a size: a whole number of bytes, or one followed by
// KiB, MiB or GiB (K, M and G alike).
func parseBytes(s string) (int64, error) {
	num := strings.TrimRightFunc(s, func(r rune) bool { return r < '0' || r > '9' })
	unit := strings.TrimSpace(s[len(num):])
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("lab: size %q: want a whole number, then KiB, MiB or GiB", s)
	}
	shift := map[string]uint{"": 0, "B": 0, "K": 10, "KiB": 10, "M": 20, "MiB": 20, "G": 30, "GiB": 30}
	sh, ok := shift[unit]
	if !ok {
		return 0, fmt.Errorf("lab: size %q: unit %q: want KiB, MiB or GiB", s, unit)
	}
	if n > math.MaxInt64>>sh {
		return 0, fmt.Errorf("lab: size %q is too large", s)
	}
	return n << sh, nil
}

// tryChildEnv marks the process Try started: "n=3,timeout=10000,memory=536870912",
// the number of the bounded run it is for (counting in the program's
// order, from 1), its time in milliseconds and its memory in bytes. The
// report goes to file descriptor 3.
const tryChildEnv = "COALESCE_TRY_CHILD"

// childSpec is what tryChildEnv says.
type childSpec struct {
	n      int64
	limits TryLimits
}

// asChild reads tryChildEnv once, and removes it from the environment, so
// that a program the kernel starts is no child of Try's.
var asChild = sync.OnceValues(func() (*childSpec, error) {
	v, ok := os.LookupEnv(tryChildEnv)
	if !ok {
		return nil, nil
	}
	os.Unsetenv(tryChildEnv)
	c := &childSpec{limits: DefaultTryLimits}
	var ms int64
	_, err := fmt.Sscanf(v, "n=%d,timeout=%d,memory=%d", &c.n, &ms, &c.limits.Memory)
	if err != nil || c.n < 1 || ms < 1 || c.limits.Memory < 1 {
		return nil, fmt.Errorf("lab: %s=%q: not what Try sets", tryChildEnv, v)
	}
	c.limits.Timeout = time.Duration(ms) * time.Millisecond
	return c, nil
})

// errEarlier is the Outcome's Fault, in a child, of a Try call before the
// child's own: what the cell's code does with it is not shown.
var errEarlier = errors.New("lab: a kernel run before this one, in a process of its own")

// runs counts the bounded runs of this program, in order: the child
// knows its own by it.
var runs atomic.Int64

// bounded tells whether runKernel starts a child: not in a test binary,
// which started again would run its tests again (lab's tests of the child
// build a program of their own).
var bounded = !testing.Testing()

// runKernel runs kernel on v of e: in a process of its own under the
// limits (TryLimits) when bounded, else here. The error is what Run
// returns (a kernel of the wrong type), or why the process could not be
// run; what the kernel did, a limit it hit included, is in the Outcome.
func runKernel(e *exercises.Exercise, v exercises.Variant, kernel any) (*exercises.Outcome, error) {
	n := runs.Add(1)
	c, err := asChild()
	if err != nil {
		return nil, err
	}
	if c != nil {
		if n < c.n {
			// An earlier call of the cell's, whose kernel ran in a child
			// of its own (and may not have finished): not run again.
			return &exercises.Outcome{ID: e.ID, Variant: v, Fault: errEarlier}, nil
		}
		c.serve(e, v, kernel)
	}
	// The status line is the parent's: a child's stderr is the kernel's.
	done := working(fmt.Sprintf("running your kernel for %s through the model, thread by thread", e.ID))
	defer done()
	if !bounded {
		return e.Run(v, kernel)
	}
	l, err := tryLimits(os.Getenv)
	if err != nil {
		return nil, err
	}
	return runChild(n, l, e, v, kernel)
}

// maxReport bounds the report the child writes: the sites of a kernel,
// the first warp's instructions (at most simt.MaxTrace) and the targets
// take well under a megabyte.
const maxReport = 16 << 20

// outputTail is how much of a dropped stream is kept, its end, where a
// runtime's fatal error ends.
const outputTail = 16 << 10

// kept is all that w kept: the start, and the end if some was cut.
func kept(w *capped.Writer) string { return w.Start() + "\n" + string(w.Tail()) }

// shown is what the cell shows of the stream: the start, and how much
// more there was.
func shown(w *capped.Writer) string {
	s := w.Start()
	if n := w.Dropped(); n > 0 {
		s += fmt.Sprintf("\n… the kernel printed %s more, not shown (lab shows the first %s of each stream)\n", units.BinaryBytes.Format(float64(n)), units.BinaryBytes.Format(float64(w.Max)))
	}
	return s
}

// fatalLine is the line of a runtime's traceback that says what killed
// it: "fatal error: ...", or "panic: ..." (a goroutine of the kernel's
// that panicked), cut to 300 bytes.
func fatalLine(stderr string) string {
	for _, line := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(line, "fatal error: ") || strings.HasPrefix(line, "panic: ") {
			if len(line) > 300 {
				line = line[:300] + "…"
			}
			return line
		}
	}
	return ""
}
