package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/coalescing-course/coalesce/internal/capped"
	"github.com/coalescing-course/coalesce/internal/procgroup"
	"github.com/coalescing-course/coalesce/units"
)

// startReserve is the address space the Go runtime reserves before main
// (1.2 GB, go1.26.8 linux/amd64), with room: the child's limit before it
// starts is Config.Memory beyond it, and main tightens it to what was
// reserved in fact.
const startReserve = 2 << 30

// run runs the child bin for k in a directory of its own, through the
// helper (address space, CPU time, file size, open files and no core
// limited before it starts), with nothing of this process's environment,
// no stdin, its output bounded, and reads its report into res.
func (b *Batch) run(ctx context.Context, bin string, k Kernel, res *Result) error {
	release, err := b.acquire(ctx)
	if err != nil {
		return err
	}
	defer release()
	c := b.cfg
	dir := filepath.Join(b.dir, "runs", fmt.Sprint(b.seq.Add(1)))
	defer removeAll(dir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("sandbox: %w", err)
	}
	// The kernel's source, where simt reads a site's line of code.
	if err := os.WriteFile(filepath.Join(dir, "kernel.go"), []byte(k.Source), 0o400); err != nil {
		return fmt.Errorf("sandbox: %w", err)
	}
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, c.RunTimeout)
	defer cancel()
	lim := limits{AS: uint64(c.Memory + startReserve), CPU: uint64(c.CPU / time.Second), FSize: MaxReport, NoFile: 16, Strip: true}
	env := []string{helperEnv + "=" + lim.String(), "GOMAXPROCS=1", "GOTRACEBACK=single"}
	stdout, stderr := &capped.Writer{Max: c.MaxOutput, TailSize: outputTail}, &capped.Writer{Max: c.MaxOutput, TailSize: outputTail}
	cmd, err := b.start(ctx, []string{b.self, bin, k.Exercise, k.Learner}, dir, env, stdout, stderr)
	if err != nil {
		return fmt.Errorf("sandbox: starting the child: %w", err)
	}
	res.Network = netns.String()
	err = cmd.Wait()
	// Whatever the child left in its process group goes with it.
	procgroup.Kill(cmd.Process.Pid, time.Second)
	res.Stdout, res.Stderr = stdout.Bytes(), stderr.Bytes()
	res.Dropped = stdout.Dropped() + stderr.Dropped()
	tail := shown(kept(stderr), dir)
	if parent.Err() != nil {
		return context.Cause(parent)
	}
	if ctx.Err() != nil {
		return &Error{Err: ErrTimeout, Msg: fmt.Sprintf("still running after %s: killed (an endless loop?)", c.RunTimeout), Output: tail}
	}
	if err != nil {
		var exit *exec.ExitError
		if !errors.As(err, &exit) {
			return fmt.Errorf("sandbox: running the child: %w", err)
		}
		return classify(exit, kept(stderr), tail, c)
	}
	f, err := os.Open(filepath.Join(dir, reportFile))
	if err != nil {
		return &Error{Err: ErrNoReport, Msg: "the child exited without writing its report", Output: tail}
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxReport+1))
	if err != nil {
		return fmt.Errorf("sandbox: reading the report: %w", err)
	}
	var obj map[string]json.RawMessage
	switch {
	case len(data) > MaxReport:
		return &Error{Err: ErrNoReport, Msg: fmt.Sprintf("the report is over %d bytes", MaxReport), Output: tail}
	case json.Unmarshal(data, &obj) != nil:
		return &Error{Err: ErrNoReport, Msg: "the report is not a JSON object", Output: tail}
	}
	res.Report = data
	return nil
}

// classify says why a child exited with an error.
func classify(exit *exec.ExitError, stderr, tail string, c Config) error {
	ws, _ := exit.Sys().(syscall.WaitStatus)
	switch {
	case ws.Exited() && ws.ExitStatus() == exitLimits:
		return fmt.Errorf("sandbox: the child could not start with its limits: %s", tail)
	case strings.Contains(stderr, "goroutine stack exceeds") || strings.Contains(stderr, "stack overflow"):
		return &Error{Err: ErrStack, Msg: "the stack outgrew its limit: unbounded recursion?", Output: tail}
	case strings.Contains(stderr, "out of memory") || strings.Contains(stderr, "cannot allocate memory"):
		return &Error{Err: ErrMemory, Msg: fmt.Sprintf("out of memory: the child may use %s of address space", units.BinaryBytes.Format(float64(c.Memory))), Output: tail}
	case ws.Signaled() && (ws.Signal() == syscall.SIGKILL || ws.Signal() == syscall.SIGXCPU) && cpuUsed(exit) >= c.CPU-time.Second:
		return &Error{Err: ErrTimeout, Msg: fmt.Sprintf("used its %s of CPU time: killed (an endless loop?)", c.CPU.Round(time.Second)), Output: tail}
	case ws.Signaled():
		return &Error{Err: ErrCrashed, Msg: fmt.Sprintf("killed by %s", ws.Signal()), Output: tail}
	}
	return &Error{Err: ErrCrashed, Msg: fmt.Sprintf("exit status %d", ws.ExitStatus()), Detail: firstLine(stderr), Output: tail}
}

func cpuUsed(exit *exec.ExitError) time.Duration {
	return exit.UserTime() + exit.SystemTime()
}

// firstLine is the line of a child's stderr that says why it died: the
// runtime's fatal error or panic, else the first.
func firstLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	line := lines[0]
	for _, l := range lines {
		if strings.HasPrefix(l, "fatal error: ") || strings.HasPrefix(l, "panic: ") {
			line = l
			break
		}
	}
	if len(line) > 200 {
		line = line[:200] + "…"
	}
	return line
}

// shown is a child's stderr for an error, the temporary directory
// removed: its start, where a panic or a fatal error says what it is, and
// its end.
func shown(s, dir string) string {
	s = strings.ReplaceAll(s, dir, ".")
	const keep = 2 << 10
	if len(s) > 2*keep {
		s = s[:keep] + "\n…\n" + s[len(s)-keep:]
	}
	return s
}

// kept is what a bounded stream kept, as text: its start and, when some
// was dropped, how much, then its end.
func kept(w *capped.Writer) string {
	start, n, tail := w.Start(), w.Dropped(), w.Tail()
	if n == 0 {
		return start
	}
	return fmt.Sprintf("%s\n… (%s bytes dropped) …\n%s", start, units.Count.Format(float64(n-int64(len(tail)))), tail)
}

// outputTail is how much of a child's dropped output is kept, its end.
const outputTail = 8 << 10

// netns remembers whether a child can be given its own network
// namespace, by a user namespace: tried on the first start, and not again
// once refused.
var netns = &isolation{}

type isolation struct {
	mu  sync.Mutex
	err error
}

func (i *isolation) usable() bool {
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.err == nil
}

func (i *isolation) fail(err error) {
	i.mu.Lock()
	defer i.mu.Unlock()
	i.err = err
}

func (i *isolation) String() string {
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.err == nil {
		return "a network namespace of its own, with no interface up"
	}
	return fmt.Sprintf("not isolated (no user namespace: %v); the import allowlist keeps package net out", i.err)
}
