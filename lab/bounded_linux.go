package lab

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/coalescing-course/coalesce/cuda"
	"github.com/coalescing-course/coalesce/internal/attempt"
	"github.com/coalescing-course/coalesce/internal/capped"
	"github.com/coalescing-course/coalesce/internal/procgroup"
	"github.com/coalescing-course/coalesce/internal/rlimit"
	"github.com/coalescing-course/coalesce/lessons/exercises"
	"github.com/coalescing-course/coalesce/lessons/simt"
	"github.com/coalescing-course/coalesce/units"
)

// startAllowance is the time the child may take to reach the kernel: to
// start, and to run the code of the cell before the call again.
const startAllowance = 10 * time.Second

// The child's file descriptors besides 0 to 2: its report, and the pipes
// the kernel's standard output and error go to once the child reaches the
// kernel (what the cell's code before the call prints again goes to 1
// and 2, and is dropped).
const (
	reportFD = 3
	outFD    = 4
	errFD    = 5
)

// childEnv is the child's environment: the program's, less GoNB's pipes
// (the child displays nothing), the spec log and the attempt store (it
// records nothing), measuring from the recording only (it uses no GPU
// again), one processor and a traceback of the failing goroutine alone.
func childEnv(n int64, l TryLimits) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "GONB_PIPE", "GONB_PIPE_BACK", SpecLogEnv, attempt.DirEnv, cuda.ModeEnv, tryChildEnv, "GOMAXPROCS", "GOTRACEBACK":
			continue
		}
		env = append(env, kv)
	}
	return append(env, attempt.DirEnv+"=off", cuda.ModeEnv+"=recorded", "GOMAXPROCS=1", "GOTRACEBACK=single",
		fmt.Sprintf("%s=n=%d,timeout=%d,memory=%d", tryChildEnv, n, l.Timeout.Milliseconds(), l.Memory))
}

// runChild runs bounded run n in a child: this program again, which runs
// up to run n and there only the kernel, and reports on reportFD.
func runChild(n int64, l TryLimits, e *exercises.Exercise, v exercises.Variant, kernel any) (*exercises.Outcome, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("lab: running the kernel in a process of its own: %w", err)
	}
	// The report, the kernel's output and its errors, read here into
	// bounded buffers; what the child printed before the kernel is kept
	// (bounded) only for a child that died before it.
	report, kout, kerr, pre := &capped.Writer{Max: maxReport + 1, TailSize: outputTail}, &capped.Writer{Max: l.Output, TailSize: outputTail},
		&capped.Writer{Max: l.Output, TailSize: outputTail}, &capped.Writer{Max: 16 << 10, TailSize: outputTail}
	var readers sync.WaitGroup
	var ends []*os.File
	for _, w := range []*capped.Writer{report, kout, kerr} {
		r, pw, err := os.Pipe()
		if err != nil {
			for _, f := range ends {
				f.Close()
			}
			return nil, fmt.Errorf("lab: running the kernel in a process of its own: %w", err)
		}
		ends = append(ends, pw)
		readers.Add(1)
		go func() {
			defer readers.Done()
			defer r.Close()
			_, _ = io.Copy(w, r)
		}()
	}
	ctx, cancel := context.WithTimeout(context.Background(), startAllowance+l.Timeout+2*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, os.Args[1:]...)
	cmd.Env = childEnv(n, l)
	cmd.Stdout, cmd.Stderr = pre, pre
	cmd.ExtraFiles = ends
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	procgroup.Own(cmd, syscall.SIGKILL)
	cmd.WaitDelay = 2 * time.Second
	// Pdeathsig follows the thread that started the child: keep this one
	// until the child is gone.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	start := time.Now()
	err = cmd.Start()
	for _, f := range ends {
		f.Close()
	}
	if err != nil {
		readers.Wait()
		return nil, fmt.Errorf("lab: running the kernel in a process of its own: %w", err)
	}
	waitErr := cmd.Wait()
	wasKilled := ctx.Err() != nil
	procgroup.Kill(cmd.Process.Pid, time.Second) // what it left in its group, holding the pipes
	done := make(chan struct{})
	go func() { readers.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(2 * time.Second): // a process out of the group holds a pipe: what was read is enough
	}
	elapsed := time.Since(start)
	var peak int64
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		peak = ru.Maxrss << 10
	}
	data := report.Bytes()
	clean := waitErr == nil && len(data) > 0
	if s := shown(kout); s != "" {
		printf("%s", s) // the kernel's own prints, through the gate
	}
	if s := shown(kerr); clean && s != "" {
		fmt.Fprint(stderr(), s)
	}
	out := &exercises.Outcome{ID: e.ID, Variant: v}
	if clean && len(data) <= maxReport {
		var rep childReport
		if err := json.Unmarshal(data, &rep); err == nil {
			return rep.outcome(out, kernel, peak)
		}
	}
	tb := kept(kerr)
	if !strings.Contains(tb, "goroutine ") {
		tb = kept(pre) // it died before the kernel
	}
	s := classify(waitErr, tb, wasKilled, elapsed, l, kernel)
	if len(data) > maxReport {
		s = &Stopped{Why: "crash", Msg: fmt.Sprintf("The kernel's process wrote a report of more than %s.", units.BinaryBytes.Format(float64(maxReport)))}
	}
	s.Peak = peak
	out.Fault = s
	return out, nil
}

// classify says why a child that wrote no report ended, from its exit,
// the end of its standard error (the runtime's fatal error and
// traceback) and whether the parent killed it.
func classify(waitErr error, stderr string, killed bool, elapsed time.Duration, l TryLimits, kernel any) *Stopped {
	at := where(kernel, kernelFrames(parseTraceback(stderr), kernel))
	var exit *exec.ExitError
	errors.As(waitErr, &exit)
	var ws syscall.WaitStatus
	if exit != nil {
		ws, _ = exit.Sys().(syscall.WaitStatus)
	}
	first := fatalLine(stderr)
	switch {
	case killed:
		return &Stopped{Why: "time", At: at, Msg: fmt.Sprintf("The kernel did not finish after %s, and its process was killed: a loop that never ends? (Try gives a kernel %s: %s.)",
			elapsed.Round(100*time.Millisecond), l.Timeout, TryTimeoutEnv)}
	case strings.Contains(stderr, "goroutine stack exceeds"):
		return &Stopped{Why: "stack", At: at, Msg: fmt.Sprintf("The kernel's stack grew past its limit of %s: a recursion that never ends?", units.BinaryBytes.Format(float64(l.Memory/4)))}
	case strings.Contains(stderr, "out of memory") || strings.Contains(stderr, "cannot allocate memory"):
		return &Stopped{Why: "memory", At: at, Msg: fmt.Sprintf("The kernel's process ran out of its %s of memory (%s): an allocation that never ends, or a buffer too big?", units.BinaryBytes.Format(float64(l.Memory)), TryMemoryEnv)}
	case ws.Signaled() && (ws.Signal() == syscall.SIGXCPU || ws.Signal() == syscall.SIGKILL && exit.UserTime()+exit.SystemTime() >= l.Timeout):
		// RLIMIT_CPU: SIGXCPU, which Go ignores, then SIGKILL.
		return &Stopped{Why: "time", At: at, Msg: fmt.Sprintf("The kernel used up its CPU time (%s) and its process was killed: a loop that never ends?", (exit.UserTime() + exit.SystemTime()).Round(100*time.Millisecond))}
	case ws.Signaled():
		return &Stopped{Why: "crash", At: at, Msg: fmt.Sprintf("The kernel's process was killed by %s.", ws.Signal())}
	case waitErr == nil:
		return &Stopped{Why: "exit", Msg: "The kernel's process ended before the kernel finished, with no error: os.Exit in the kernel, or in the cell before lab.Try?"}
	case first != "":
		return &Stopped{Why: "crash", At: at, Msg: "The kernel's process crashed: " + strings.TrimSuffix(first, ".") + "."}
	}
	return &Stopped{Why: "crash", At: at, Msg: fmt.Sprintf("The kernel's process ended with %v.", waitErr)}
}

// serve is the child's side of run c.n: it sends what the kernel prints
// to the pipes the parent reads it from, limits its own process, starts
// the watchdog, runs the kernel and writes the report to reportFD, then
// ends the process. It never returns.
func (c *childSpec) serve(e *exercises.Exercise, v exercises.Variant, kernel any) {
	rep := os.NewFile(reportFD, "report")
	var once sync.Once
	toParent := func(r childReport) {
		once.Do(func() {
			data, err := json.Marshal(r)
			if err == nil {
				_, err = rep.Write(data)
			}
			if err != nil {
				fmt.Fprintf(os.Stderr, "lab: the report of the kernel's process: %v\n", err)
				os.Exit(3)
			}
			rep.Close()
			os.Exit(0)
		})
		select {} // another goroutine is sending, and ends the process
	}
	for _, fd := range [][2]int{{outFD, 1}, {errFD, 2}} {
		if err := syscall.Dup3(fd[0], fd[1], 0); err != nil {
			toParent(childReport{Error: fmt.Sprintf("lab: the kernel's process: dup3(%d, %d): %v", fd[0], fd[1], err)})
		}
		syscall.Close(fd[0])
	}
	mem := c.limits.Memory
	l := rlimit.Limits{FSize: 64 << 20, NoFile: 256}
	if used, err := cpuTime(); err == nil {
		l.CPU = uint64((used + c.limits.Timeout + 5*time.Second).Seconds())
	}
	mapped, err := rlimit.Mapped()
	if err == nil {
		l.AS = mapped + uint64(mem)
		err = l.Apply()
	}
	if err != nil {
		toParent(childReport{Error: fmt.Sprintf("lab: limiting the kernel's process: %v", err)})
	}
	debug.SetMemoryLimit(mem * 3 / 4)
	debug.SetMaxStack(int(mem / 4))
	go watch(c.limits, kernel, toParent)
	out, err := e.Run(v, kernel)
	if err != nil {
		toParent(childReport{Error: err.Error()})
	}
	toParent(childReport{Outcome: reportOf(out)})
}

// watch stops the kernel that runs past its time, or whose process
// nears its memory: it reports where the kernel was (its goroutine's
// stack) and how many accesses simt counted, and ends the process.
func watch(l TryLimits, kernel any, toParent func(childReport)) {
	start := time.Now()
	deadline := start.Add(l.Timeout)
	s := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	used := func() int64 {
		metrics.Read(s)
		return int64(s[0].Value.Uint64()) - int64(s[1].Value.Uint64())
	}
	base := used()
	last, lastChange := simt.Accesses(), start
	tick := time.NewTicker(10 * time.Millisecond)
	for range tick.C {
		now := time.Now()
		if a := simt.Accesses(); a != last {
			last, lastChange = a, now
		}
		var why string
		switch {
		case now.After(deadline):
			why = "time"
		case used()-base > l.Memory*9/10:
			why = "memory"
		default:
			continue
		}
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		toParent(childReport{Stopped: &stoppedReport{Why: why, After: now.Sub(start), Accesses: last, Idle: now.Sub(lastChange),
			Memory: used() - base, Frames: kernelFrames(parseTraceback(string(buf)), kernel)}})
	}
}

// cpuTime returns the CPU time this process has used.
func cpuTime() (time.Duration, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, err
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), nil
}
