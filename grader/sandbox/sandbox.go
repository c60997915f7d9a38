package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"go/token"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"github.com/coalescing-course/coalesce/internal/procgroup"
)

// CourseModule is the course's module path.
const CourseModule = "github.com/coalescing-course/coalesce"

// DefaultGradePackage is the package whose Grade the child calls:
// Grade(id, learner string, kernel any) Report, with Report JSON.
const DefaultGradePackage = CourseModule + "/lessons/exercises"

// The defaults of Config's limits.
const (
	// DefaultBuildTimeout bounds go build: a kernel compiles in about a
	// second once the course's packages are in the build cache; the first
	// build of a cold cache compiles them too.
	DefaultBuildTimeout = 2 * time.Minute
	// DefaultRunTimeout bounds a run's wall clock, and its CPU time.
	DefaultRunTimeout = 30 * time.Second
	// DefaultMemory is the child's address space beyond what the Go
	// runtime has reserved when main starts (RLIMIT_AS: 1.2 GB at
	// start, go1.26.8 linux/amd64, mostly reservations it never touches);
	// the heap's soft limit (debug.SetMemoryLimit) is half of it.
	DefaultMemory = 2 << 30
	// DefaultBuildMemory is the address space of go build and of each
	// compile and link it runs (RLIMIT_AS), reservations included: 1.2 GB
	// of each is reserved at start; the course's command builds in 2 GB.
	DefaultBuildMemory = 4 << 30
	// DefaultMaxOutput is how much of the child's stdout, and of its
	// stderr, is kept; the rest is read and dropped.
	DefaultMaxOutput = 64 << 10
	// MaxReport is the largest report read, in bytes (the child's file
	// size limit, RLIMIT_FSIZE).
	MaxReport = 1 << 20
)

// The kinds of error Run returns for the learner's code, for errors.Is;
// each comes as an *Error saying what happened. Any other error is the
// grading machine's (no go command, no course source, a context done)
// and says nothing of the kernel.
var (
	// ErrRefused is a source the static vetting refuses (see Vet): never
	// built.
	ErrRefused = errors.New("sandbox: refused")
	// ErrCompile is a source the Go compiler refuses; Msg holds its
	// messages, at the kernel's lines.
	ErrCompile = errors.New("sandbox: does not compile")
	// ErrTimeout is a child killed at the wall-clock or CPU limit.
	ErrTimeout = errors.New("sandbox: time limit")
	// ErrMemory is a child that ran out of its memory limit.
	ErrMemory = errors.New("sandbox: memory limit")
	// ErrStack is a child whose stack grew past its limit: unbounded
	// recursion.
	ErrStack = errors.New("sandbox: stack overflow")
	// ErrCrashed is a child that died otherwise: a fatal error of the
	// runtime, a signal, an exit status other than 0.
	ErrCrashed = errors.New("sandbox: crashed")
	// ErrNoReport is a child that exited 0 without a report, or with one
	// that is not a JSON object of at most MaxReport bytes.
	ErrNoReport = errors.New("sandbox: no report")
)

// Error is the learner's code refused or failed, of a kind Err (one of
// the Err variables above).
type Error struct {
	Err error
	// Line is the kernel source's line at fault, 0 when none is.
	Line int
	Msg  string
	// Output is the end of the child's stderr, or the compiler's output,
	// temporary paths removed; "" when none.
	Output string
}

func (e *Error) Error() string {
	s := e.Err.Error() + ": "
	if e.Line > 0 {
		s += fmt.Sprintf("line %d: ", e.Line)
	}
	return s + e.Msg
}

func (e *Error) Unwrap() error { return e.Err }

// Kernel is a learner's kernel to grade: the source of its declarations
// (imports, funcs, types, consts; no package clause), the func in it that
// is the kernel, the exercise id and the learner. Order, when set, names
// the func of the host step that orders a gather's keys: the child then
// grades Gather{Order: Order, Kernel: Func} of the grading package
// (lessons/exercises' 10-kernels/gather).
type Kernel struct {
	Exercise, Learner string
	Source            string
	Func              string
	Order             string
}

// Result is what a child reported.
type Result struct {
	// Report is the JSON object Grade returned, as the child wrote it.
	Report json.RawMessage
	// Stdout and Stderr are the first Config.MaxOutput bytes the child
	// printed (the learner's code may print); Dropped counts the rest.
	Stdout, Stderr []byte
	Dropped        int64
	// Network says how the child was kept off the network.
	Network string
	// Build and Run are the wall-clock times of the two steps.
	Build, Run time.Duration
}

// Config says where the course is and what limits the child gets. Its zero
// value is the defaults.
type Config struct {
	// CourseRoot is the directory of the course's go.mod; "" is the one
	// this package was built from (the course's source tree).
	CourseRoot string
	// GradePackage is the import path of the package whose Grade the
	// child calls; "" is DefaultGradePackage.
	GradePackage string
	// Go is the go command; "" is go on PATH, else GOROOT's.
	Go string
	// BuildTimeout and RunTimeout bound the build and the run; CPU the
	// run's CPU time (RLIMIT_CPU, whole seconds, at least 1); Memory the
	// address space it may map, in bytes, beyond what the runtime has at
	// start (see DefaultMemory); MaxOutput what is kept of stdout and of
	// stderr. Zero is the default of each.
	BuildTimeout, RunTimeout, CPU time.Duration
	Memory                        int64
	MaxOutput                     int
	// BuildMemory is the address space of go build and of each compiler
	// and linker it runs, in bytes; 0 is DefaultBuildMemory.
	BuildMemory int64
}

func (c Config) filled() (Config, error) {
	if c.GradePackage == "" {
		c.GradePackage = DefaultGradePackage
	}
	c.BuildTimeout = or(c.BuildTimeout, DefaultBuildTimeout)
	c.RunTimeout = or(c.RunTimeout, DefaultRunTimeout)
	c.CPU = max(time.Second, or(c.CPU, c.RunTimeout))
	c.Memory = or(c.Memory, DefaultMemory)
	c.MaxOutput = or(c.MaxOutput, DefaultMaxOutput)
	c.BuildMemory = or(c.BuildMemory, DefaultBuildMemory)
	if c.Go == "" {
		c.Go = goCommand()
	}
	if c.CourseRoot == "" {
		_, file, _, ok := runtime.Caller(0)
		if !ok || !filepath.IsAbs(file) {
			return c, errors.New("sandbox: this binary was built without its source paths (-trimpath): set the course's root (the directory of its go.mod)")
		}
		c.CourseRoot = filepath.Dir(filepath.Dir(filepath.Dir(file)))
	}
	mod, err := os.ReadFile(filepath.Join(c.CourseRoot, "go.mod"))
	if err != nil {
		return c, fmt.Errorf("sandbox: the course's source is needed to build a kernel: %w", err)
	}
	if !regexp.MustCompile(`(?m)^module\s+` + regexp.QuoteMeta(CourseModule) + `\s*$`).Match(mod) {
		return c, fmt.Errorf("sandbox: %s is not the course's module %s", filepath.Join(c.CourseRoot, "go.mod"), CourseModule)
	}
	return c, nil
}

func or[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

func goCommand() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	return filepath.Join(runtime.GOROOT(), "bin", "go")
}

// Run grades a learner's kernel in a child process: it vets the source
// (Vet), builds it with a generated main that sets the child's limits and
// then calls Grade, runs it, and returns the report the child wrote. What
// is wrong with the kernel is an *Error (errors.Is ErrRefused, ErrCompile,
// ErrTimeout...); any other error is the grading machine's.
func (c Config) Run(ctx context.Context, k Kernel) (*Result, error) {
	if err := Vet(k.Source, k.Func); err != nil {
		return nil, err
	}
	if k.Order != "" {
		if err := Vet(k.Source, k.Order); err != nil {
			return nil, err
		}
	}
	c, err := c.filled()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "coalesce-sandbox-")
	if err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	defer os.RemoveAll(dir)
	res := &Result{}
	start := time.Now()
	bin, err := c.build(ctx, dir, k)
	res.Build = time.Since(start)
	if err != nil {
		return nil, err
	}
	start = time.Now()
	err = c.run(ctx, dir, bin, res)
	res.Run = time.Since(start)
	if err != nil {
		return res, err
	}
	return res, nil
}

// build writes the child's module in dir and builds it, returning the
// binary's path.
func (c Config) build(ctx context.Context, dir string, k Kernel) (string, error) {
	if !token.IsIdentifier(k.Func) {
		return "", refuse(0, "the kernel's name %q is not a Go identifier", k.Func)
	}
	if k.Order != "" && !token.IsIdentifier(k.Order) {
		return "", refuse(0, "the order's name %q is not a Go identifier", k.Order)
	}
	mod := fmt.Sprintf("module coalesce-sandbox-child\n\ngo 1.26\n\nrequire %s v0.0.0\n\nreplace %s => %s\n", CourseModule, CourseModule, c.CourseRoot)
	sum, err := os.ReadFile(filepath.Join(c.CourseRoot, "go.sum"))
	if err != nil {
		return "", fmt.Errorf("sandbox: %w", err)
	}
	files := map[string]string{
		"go.mod":    mod,
		"go.sum":    string(sum),
		"kernel.go": header + k.Source,
		"main.go":   childMain(c, k),
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			return "", fmt.Errorf("sandbox: %w", err)
		}
	}
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, c.BuildTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.Go, "build", "-trimpath", "-o", "child", ".")
	cmd.Dir = dir
	if cmd.Env, err = buildEnv(c.Go); err != nil {
		return "", err
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	procgroup.Own(cmd, syscall.SIGKILL)
	cmd.WaitDelay = 5 * time.Second
	out := &capped{max: 64 << 10}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		return "", fmt.Errorf("sandbox: go build: %w", err)
	}
	// The compiler's limits, which the compile and link processes inherit:
	// set before the go command, busy reading the module for tens of
	// milliseconds, starts them. A page of constants (s1 = s0+s0, ...) can
	// make the compiler allocate without bound.
	if err := limit(cmd.Process.Pid, syscall.RLIMIT_AS, uint64(c.BuildMemory)); err != nil {
		_ = cmd.Cancel()
		_ = cmd.Wait()
		return "", fmt.Errorf("sandbox: limiting go build's memory: %w", err)
	}
	err = cmd.Wait()
	switch {
	case parent.Err() != nil:
		return "", parent.Err()
	case ctx.Err() != nil:
		return "", &Error{Err: ErrCompile, Msg: fmt.Sprintf("the build ran past its limit of %s (killed)", c.BuildTimeout)}
	case err != nil:
		var exit *exec.ExitError
		if !errors.As(err, &exit) {
			return "", fmt.Errorf("sandbox: go build: %w", err)
		}
		msg, line := compilerMessage(out.String(), dir)
		if strings.Contains(msg, "out of memory") || strings.Contains(msg, "cannot allocate memory") {
			return "", &Error{Err: ErrCompile, Msg: fmt.Sprintf("the compiler ran out of its %s of memory: the source asks it for more than a kernel needs", bytesStr(c.BuildMemory)), Output: shown(msg, dir)}
		}
		if line == 0 {
			// Nothing at the kernel's lines: the course's packages or the
			// child's main do not build, which is the machine's problem.
			return "", fmt.Errorf("sandbox: the child does not build, and not at the kernel's lines: %s", msg)
		}
		return "", &Error{Err: ErrCompile, Line: line, Msg: msg, Output: msg}
	}
	return filepath.Join(dir, "child"), nil
}

// buildEnv is go build's environment: the user's caches and paths, as
// go env reports them, and settings that keep it offline, without cgo and
// on this toolchain.
func buildEnv(goCmd string) ([]string, error) {
	paths, err := goEnv(goCmd)
	if err != nil {
		return nil, err
	}
	var env []string
	for _, k := range []string{"PATH", "HOME", "TMPDIR"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return append(append(env, paths...), "CGO_ENABLED=0", "GOPROXY=off", "GOSUMDB=off", "GOTOOLCHAIN=local",
		"GOWORK=off", "GOFLAGS=-mod=mod -buildvcs=false", "GOENV=off", "GOTELEMETRY=off"), nil
}

var goEnvs sync.Map // go command -> []string

// goEnv is the user's GOROOT, GOPATH, GOCACHE and GOMODCACHE as KEY=value,
// read once per go command: the child's build must find the caches the
// user's go env file may name, with that file turned off.
func goEnv(goCmd string) ([]string, error) {
	if v, ok := goEnvs.Load(goCmd); ok {
		return v.([]string), nil
	}
	keys := []string{"GOROOT", "GOPATH", "GOCACHE", "GOMODCACHE"}
	cmd := exec.Command(goCmd, append([]string{"env", "-json"}, keys...)...)
	cmd.Env = append(os.Environ(), "GOTOOLCHAIN=local")
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("sandbox: %s env: %w", goCmd, err)
	}
	var m map[string]string
	if err := json.Unmarshal(out, &m); err != nil {
		return nil, fmt.Errorf("sandbox: %s env: %w", goCmd, err)
	}
	var env []string
	for _, k := range keys {
		if m[k] != "" {
			env = append(env, k+"="+m[k])
		}
	}
	goEnvs.Store(goCmd, env)
	return env, nil
}

var compilerLine = regexp.MustCompile(`(?m)^(?:\./)?kernel\.go:(\d+)(?::\d+)?: `)

// compilerMessage is go build's output for the learner: temporary paths
// and the package header line gone, kernel.go:N: written line N:; and the
// first line at fault.
func compilerMessage(out, dir string) (string, int) {
	out = strings.ReplaceAll(out, dir+string(filepath.Separator), "")
	out = strings.ReplaceAll(out, dir, ".")
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if strings.HasPrefix(l, "# ") {
			continue
		}
		lines = append(lines, l)
	}
	out = strings.Join(lines, "\n")
	line := 0
	if m := compilerLine.FindStringSubmatch(out); m != nil {
		fmt.Sscan(m[1], &line)
	}
	out = compilerLine.ReplaceAllString(out, "line $1: ")
	return out, line
}

// run runs the child binary bin in dir, with an empty environment, no
// stdin and its output bounded, and reads its report into res.
func (c Config) run(ctx context.Context, dir, bin string, res *Result) error {
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, c.RunTimeout)
	defer cancel()
	stdout, stderr := &capped{max: c.MaxOutput}, &capped{max: c.MaxOutput}
	start := func(isolate bool) (*exec.Cmd, error) {
		cmd := exec.CommandContext(ctx, bin)
		cmd.Dir = dir
		cmd.Env = []string{"GOMAXPROCS=1", "GOTRACEBACK=single"}
		cmd.Stdout, cmd.Stderr = stdout, stderr
		attr := &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		if isolate {
			uid, gid := os.Getuid(), os.Getgid()
			attr.Cloneflags = syscall.CLONE_NEWUSER | syscall.CLONE_NEWNET
			attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
			attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
		}
		cmd.SysProcAttr = attr
		procgroup.Own(cmd, syscall.SIGKILL)
		cmd.WaitDelay = 2 * time.Second
		return cmd, cmd.Start()
	}
	cmd, err := start(netns.usable())
	if err != nil && netns.usable() {
		netns.fail(err)
		cmd, err = start(false)
	}
	if err != nil {
		return fmt.Errorf("sandbox: starting the child: %w", err)
	}
	res.Network = netns.String()
	err = cmd.Wait()
	// Whatever the child left in its process group goes with it.
	procgroup.Kill(cmd.Process.Pid, 0)
	res.Stdout, res.Stderr = stdout.Bytes(), stderr.Bytes()
	res.Dropped = stdout.dropped + stderr.dropped
	tail := shown(stderr.String(), dir)
	if parent.Err() != nil {
		return parent.Err()
	}
	if ctx.Err() != nil {
		return &Error{Err: ErrTimeout, Msg: fmt.Sprintf("still running after %s: killed (an endless loop?)", c.RunTimeout), Output: tail}
	}
	if err != nil {
		var exit *exec.ExitError
		if !errors.As(err, &exit) {
			return fmt.Errorf("sandbox: running the child: %w", err)
		}
		return classify(exit, stderr.String(), tail, c)
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
	case strings.Contains(stderr, "goroutine stack exceeds") || strings.Contains(stderr, "stack overflow"):
		return &Error{Err: ErrStack, Msg: "the stack outgrew its limit: unbounded recursion?", Output: tail}
	case strings.Contains(stderr, "out of memory") || strings.Contains(stderr, "cannot allocate memory"):
		return &Error{Err: ErrMemory, Msg: fmt.Sprintf("out of memory: the child may use %s of address space", bytesStr(c.Memory)), Output: tail}
	case ws.Signaled() && (ws.Signal() == syscall.SIGKILL || ws.Signal() == syscall.SIGXCPU) && cpuUsed(exit) >= c.CPU-time.Second:
		return &Error{Err: ErrTimeout, Msg: fmt.Sprintf("used its %s of CPU time: killed (an endless loop?)", c.CPU.Round(time.Second)), Output: tail}
	case ws.Signaled():
		return &Error{Err: ErrCrashed, Msg: fmt.Sprintf("killed by %s", ws.Signal()), Output: tail}
	case ws.ExitStatus() == exitLimits:
		return fmt.Errorf("sandbox: the child could not set its limits: %s", tail)
	}
	return &Error{Err: ErrCrashed, Msg: fmt.Sprintf("exit status %d: %s", ws.ExitStatus(), firstLine(stderr)), Output: tail}
}

// limit sets a resource limit of process pid (prlimit(2)), soft and
// hard.
func limit(pid, resource int, value uint64) error {
	lim := syscall.Rlimit{Cur: value, Max: value}
	_, _, errno := syscall.RawSyscall6(syscall.SYS_PRLIMIT64, uintptr(pid), uintptr(resource), uintptr(unsafe.Pointer(&lim)), 0, 0, 0)
	if errno != 0 {
		return errno
	}
	return nil
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

func bytesStr(n int64) string {
	if n >= 1<<30 && n%(1<<30) == 0 {
		return fmt.Sprintf("%d GiB", n>>30)
	}
	return fmt.Sprintf("%d MiB", n>>20)
}

// capped keeps the first max bytes written to it and the last tailSize,
// and counts those it drops, so that a child printing without end neither
// blocks nor fills memory, and a fatal error printed after a flood is
// still seen.
type capped struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	max     int
	dropped int64
	tail    []byte // the last tailSize bytes dropped
}

const tailSize = 8 << 10

func (w *capped) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := min(max(0, w.max-w.buf.Len()), len(p))
	w.buf.Write(p[:n])
	rest := p[n:]
	w.dropped += int64(len(rest))
	w.tail = append(w.tail, rest[max(0, len(rest)-tailSize):]...)
	if len(w.tail) > tailSize {
		w.tail = append(w.tail[:0], w.tail[len(w.tail)-tailSize:]...)
	}
	return len(p), nil
}

// Bytes returns the first max bytes written.
func (w *capped) Bytes() []byte {
	w.mu.Lock()
	defer w.mu.Unlock()
	return bytes.Clone(w.buf.Bytes())
}

// String is the first max bytes written and, if some were dropped, the
// last ones.
func (w *capped) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.dropped == 0 {
		return w.buf.String()
	}
	return fmt.Sprintf("%s\n… (%d bytes dropped) …\n%s", w.buf.String(), w.dropped-int64(len(w.tail)), w.tail)
}

// netns remembers whether a child can be given its own network
// namespace, by a user namespace: tried on the first run, and not again
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
