package sandbox

import (
	"context"
	"errors"
	"fmt"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"

	"github.com/coalescing-course/coalesce/internal/capped"
	"github.com/coalescing-course/coalesce/internal/procgroup"
	"github.com/coalescing-course/coalesce/units"
)

// writeChild writes the child's module for k in dir: go.mod, main.go, and
// the learner's package (kernel/kernel.go, the source under header;
// kernel/sandbox_export.go, exportFile).
func (b *Batch) writeChild(dir string, k Kernel) error {
	if !token.IsIdentifier(k.Func) {
		return refuse(0, "the kernel's name %q is not a Go identifier", k.Func)
	}
	if k.Order != "" && !token.IsIdentifier(k.Order) {
		return refuse(0, "the order's name %q is not a Go identifier", k.Order)
	}
	files := map[string]string{
		"go.mod":                              childGoMod(b.course),
		"main.go":                             childMain(b.cfg, k),
		filepath.Join(kernelPkg, "kernel.go"): header + k.Source,
		filepath.Join(kernelPkg, "sandbox_export.go"): exportFile(k),
	}
	for name, text := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return fmt.Errorf("sandbox: %w", err)
		}
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			return fmt.Errorf("sandbox: %w", err)
		}
	}
	return nil
}

// buildChild builds k's child into bin: in a directory of its own, with a
// clone of the base cache that goes with it; what the build added to the
// cache is measured (res.CacheGrowth) and held to MaxBuildCache. The child
// is kept for reuse as key.
func (b *Batch) buildChild(ctx context.Context, k Kernel, key, bin string, res *Result) error {
	release, err := b.acquire(ctx)
	if err != nil {
		return err
	}
	defer release()
	start := time.Now()
	defer func() { res.Build = time.Since(start) }()
	dir := filepath.Join(b.dir, "builds", fmt.Sprint(b.seq.Add(1)))
	defer removeAll(dir)
	if err := b.writeChild(dir, k); err != nil {
		return err
	}
	cache := filepath.Join(dir, "gocache")
	if err := cloneCache(filepath.Join(b.cfg.CacheDir, baseDir), cache); err != nil {
		return fmt.Errorf("sandbox: cloning the base cache: %w", err)
	}
	_, err = b.goBuild(ctx, dir, cache, 1, b.cfg.BuildTimeout)
	res.CacheGrowth = treeSize(cache, true)
	for old := b.stats.maxGrowth.Load(); res.CacheGrowth > old && !b.stats.maxGrowth.CompareAndSwap(old, res.CacheGrowth); old = b.stats.maxGrowth.Load() {
	}
	b.stats.builds.Add(1)
	if err != nil {
		return err
	}
	if res.CacheGrowth > b.cfg.MaxBuildCache {
		return &Error{Err: ErrCompile, Msg: fmt.Sprintf("the build wrote %s into its cache, over the %s allowed: a kernel's package is tens of kilobytes (a huge constant or table?)",
			units.BinaryBytes.Format(float64(res.CacheGrowth)), units.BinaryBytes.Format(float64(b.cfg.MaxBuildCache)))}
	}
	if err := os.Rename(filepath.Join(dir, "child"), bin); err != nil {
		return fmt.Errorf("sandbox: %w", err)
	}
	keepBinary(filepath.Join(b.cfg.CacheDir, binDir), key, bin)
	return nil
}

// goBuild runs go build in dir, with cache as its GOCACHE, through the
// helper: the build's memory, CPU time and file size limited before the
// go command starts, and each compile and link (-toolexec, the helper
// again) limited the same and killed with the go command. procs, when
// above 0, is the build's parallelism (-p, GOMAXPROCS). Its output is the
// compiler's, bounded; what it returns is nil, an *Error of the
// learner's code, or the machine's error.
func (b *Batch) goBuild(ctx context.Context, dir, cache string, procs int, timeout time.Duration) (string, error) {
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if strings.ContainsAny(b.self, "'\" ") {
		return "", fmt.Errorf("sandbox: this program's path %q holds a quote or a space, which go build's -toolexec cannot take", b.self)
	}
	args := append([]string{b.self, b.cfg.Go, "build"}, buildFlags...)
	args = append(args, "-toolexec", b.self, "-o", "child")
	if procs > 0 {
		args = append(args, "-p", fmt.Sprint(procs))
	}
	args = append(args, ".")
	lim := limits{AS: uint64(b.cfg.BuildMemory), CPU: uint64(max(1, timeout/time.Second)), FSize: uint64(b.cfg.BuildFileSize)}
	tmp := filepath.Join(dir, "tmp")
	home := filepath.Join(dir, "home")
	for _, d := range []string{tmp, home} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return "", fmt.Errorf("sandbox: %w", err)
		}
	}
	env := append([]string{
		helperEnv + "=" + lim.String(),
		"PATH=" + os.Getenv("PATH"), "HOME=" + home, "TMPDIR=" + tmp,
		"GOCACHE=" + cache, "GOPATH=" + filepath.Join(b.dir, "gopath"), "GOMODCACHE=" + filepath.Join(b.dir, "gopath", "pkg", "mod"),
		"CGO_ENABLED=0", "GOPROXY=off", "GOSUMDB=off", "GONOSUMDB=", "GOPRIVATE=", "GOTOOLCHAIN=local", "GOWORK=off", "GOENV=off",
		"GOFLAGS=-mod=mod -buildvcs=false",
	}, b.goEnv...)
	if procs > 0 {
		env = append(env, fmt.Sprintf("GOMAXPROCS=%d", procs))
	}
	out := &capped.Writer{Max: 64 << 10, TailSize: outputTail}
	cmd, err := b.start(ctx, args, dir, env, out, out)
	if err != nil {
		return "", fmt.Errorf("sandbox: go build: %w", err)
	}
	err = cmd.Wait()
	procgroup.Kill(cmd.Process.Pid, time.Second)
	text := kept(out)
	switch {
	case parent.Err() != nil:
		return "", context.Cause(parent)
	case ctx.Err() != nil:
		return "", &Error{Err: ErrCompile, timedOut: true, Msg: fmt.Sprintf("the build ran past its limit of %s (killed)", timeout)}
	case err == nil:
		return text, nil
	}
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		return "", fmt.Errorf("sandbox: go build: %w", err)
	}
	if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.ExitStatus() == exitLimits {
		return "", fmt.Errorf("sandbox: go build could not start with its limits: %s", strings.TrimSpace(text))
	}
	msg, line := compilerMessage(text, dir)
	switch {
	case strings.Contains(text, "file too large"):
		return "", &Error{Err: ErrCompile, Msg: fmt.Sprintf("the build would write a file over its limit of %s: a kernel's package is tens of kilobytes (a huge constant or table?)",
			units.BinaryBytes.Format(float64(b.cfg.BuildFileSize))), Output: msg}
	case strings.Contains(text, "out of memory") || strings.Contains(text, "cannot allocate memory"):
		return "", &Error{Err: ErrCompile, Msg: fmt.Sprintf("the compiler ran out of its %s of memory: the source asks it for more than a kernel needs", units.BinaryBytes.Format(float64(b.cfg.BuildMemory))), Output: msg}
	case strings.Contains(text, "signal: killed") || strings.Contains(text, "signal: cpu time limit exceeded"):
		return "", &Error{Err: ErrCompile, timedOut: true, Msg: fmt.Sprintf("the compiler was killed at its limit of %s of CPU time", timeout), Output: msg}
	case line == 0:
		// Nothing at the kernel's lines: the course's packages or the
		// child's main do not build, which is the machine's problem.
		return "", fmt.Errorf("sandbox: the child does not build, and not at the kernel's lines: %s", msg)
	}
	return "", &Error{Err: ErrCompile, Line: line, Detail: strings.TrimPrefix(msg, fmt.Sprintf("line %d: ", line)), Output: msg}
}

// start starts args[0] with args (the helper, args[1] its program) in dir
// with env, as the leader of a process group killed whole when ctx ends,
// killed too when this process dies, and in a network namespace of its
// own where user namespaces allow.
func (b *Batch) start(ctx context.Context, args []string, dir string, env []string, stdout, stderr *capped.Writer) (*exec.Cmd, error) {
	mk := func(isolate bool) (*exec.Cmd, error) {
		cmd := exec.CommandContext(ctx, args[0], args[1:]...)
		cmd.Dir, cmd.Env = dir, env
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
	cmd, err := mk(netns.usable())
	if err != nil && netns.usable() {
		netns.fail(err)
		cmd, err = mk(false)
	}
	return cmd, err
}

// buildFlags are go build's flags for every child: paths trimmed, so
// that the course's packages compile the same from any batch's copy; no
// symbol table or DWARF, which the child does not read (simt names sites
// from the runtime's own tables), so a smaller, quicker link.
var buildFlags = []string{"-trimpath", "-ldflags=-s -w"}

var compilerLine = regexp.MustCompile(`(?m)^(?:\./)?(?:` + kernelPkg + `/)?kernel\.go:(\d+)(?::\d+)?: `)

// compilerMessage is go build's output for the learner: temporary paths
// and the package header lines gone, kernel.go:N: written line N:; and
// the first line at fault.
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
