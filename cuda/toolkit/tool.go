package toolkit

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/coalescing-course/coalesce/internal/procgroup"
	"github.com/coalescing-course/coalesce/lessons/metrics"
)

// Invocation describes one run of an external program: which, with what,
// for how long. Run starts it under a context; at the timeout (or when the
// context ends) the program is sent an interrupt, then killed after
// waitDelay, so a tool that ignores the interrupt or a pipe held open by a
// grandchild cannot hang the caller.
type Invocation struct {
	Tool    string // name for messages: "nvcc", "ncu", "harness"
	Path    string // the executable
	Args    []string
	Dir     string    // working directory; "" is the caller's
	Env     []string  // added to the environment
	Stdin   io.Reader // nil is no input
	Timeout time.Duration
	// WaitDelay overrides the default waitDelay (5 s) when positive.
	WaitDelay time.Duration
	// Stderr, when set, also receives everything the program writes to its
	// standard error, whether it succeeds or fails.
	Stderr io.Writer
	// Group runs the program in a process group of its own and, at the
	// timeout, interrupts and then kills the whole group: a tool that runs
	// the real program as its child (ncu, compute-sanitizer) cannot leave
	// it running on the GPU. Run then waits for the group to be gone
	// (ToolError.Survived says when it was not).
	Group bool
}

// waitDelay is how long Run waits, after interrupting a program that
// overran its time, before killing it and closing its pipes.
const waitDelay = 5 * time.Second

// groupGoneWithin is how long Run waits, after killing a Group run's
// process group, for every process of it to be gone: a process blocked in
// the GPU driver dies when the driver has stopped its kernel.
const groupGoneWithin = 10 * time.Second

// maxStderr is how much of a tool's standard error an error keeps.
const maxStderr = 8 << 10

// Run runs the program and returns its standard output. A program that
// exits non-zero gives a *ToolError with its stderr and exit status (and
// the stdout it wrote, still returned); one that cannot be started, a
// *StartError.
func (inv Invocation) Run(ctx context.Context) (stdout []byte, err error) {
	if inv.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, inv.Timeout)
		defer cancel()
	}
	cmd := exec.CommandContext(ctx, inv.Path, inv.Args...)
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	if inv.Group {
		procgroup.Own(cmd, os.Interrupt)
	}
	cmd.WaitDelay = waitDelay
	if inv.WaitDelay > 0 {
		cmd.WaitDelay = inv.WaitDelay
	}
	cmd.Dir = inv.Dir
	if len(inv.Env) > 0 {
		cmd.Env = append(os.Environ(), inv.Env...)
	}
	cmd.Stdin = inv.Stdin
	var out bytes.Buffer
	errBuf := &tailBuffer{max: maxStderr}
	cmd.Stdout = &out
	cmd.Stderr = errBuf
	if inv.Stderr != nil {
		cmd.Stderr = io.MultiWriter(errBuf, inv.Stderr)
	}
	if err := cmd.Start(); err != nil {
		return nil, &StartError{Tool: inv.Tool, Path: inv.Path, Err: err}
	}
	werr := cmd.Wait()
	survived := false
	if inv.Group && ctx.Err() != nil {
		survived = !procgroup.Kill(cmd.Process.Pid, groupGoneWithin)
	}
	if werr == nil {
		return out.Bytes(), nil
	}
	te := &ToolError{Tool: inv.Tool, Args: inv.Args, ExitCode: -1, Stderr: errBuf.String(), Err: werr, Survived: survived}
	var ee *exec.ExitError
	if errors.As(werr, &ee) {
		te.ExitCode = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			te.ExitCode = -1
		}
	}
	if ctxErr := ctx.Err(); ctxErr != nil {
		te.Err = ctxErr
		if errors.Is(ctxErr, context.DeadlineExceeded) {
			te.Timeout = inv.Timeout
		}
	}
	return out.Bytes(), te
}

// String returns the command line, for logs and provenance.
func (inv Invocation) String() string {
	parts := append([]string{inv.Path}, inv.Args...)
	for i, p := range parts {
		if p == "" || strings.ContainsAny(p, " \t\"'$\\") {
			parts[i] = "'" + strings.ReplaceAll(p, "'", `'\''`) + "'"
		}
	}
	return strings.Join(parts, " ")
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	max       int
	buf       []byte
	truncated bool
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.buf = append(t.buf, p...)
	if len(t.buf) > t.max {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-t.max:]...)
		t.truncated = true
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	if t.truncated {
		return "..." + string(t.buf)
	}
	return string(t.buf)
}

// ---------------------------------------------------------------------------
// The tools. Each is looked up on the PATH once per process.

// Environment variables that name a tool's executable instead of the PATH
// lookup: for a toolkit installed off the PATH, and for tests that must see
// a machine without one.
const (
	NvccEnv = "COALESCE_NVCC"
	NcuEnv  = "COALESCE_NCU"
)

var (
	lookNvcc = sync.OnceValues(func() (string, error) { return lookTool("nvcc", NvccEnv) })
	lookNcu  = sync.OnceValues(func() (string, error) { return lookTool("ncu", NcuEnv) })
)

// lookTool finds name on the PATH, or at $env when that is set.
func lookTool(name, env string) (string, error) {
	if p := os.Getenv(env); p != "" {
		if _, err := exec.LookPath(p); err != nil {
			return "", fmt.Errorf("%s not found at %s (set by %s)", name, p, env)
		}
		return p, nil
	}
	if _, err := exec.LookPath(name); err != nil {
		return "", fmt.Errorf("%s not found on PATH", name)
	}
	return exec.LookPath(name)
}

// Nvcc is the CUDA compiler.
type Nvcc struct{ Path string }

// FindNvcc returns nvcc from the PATH, or a *MissingError wrapping ErrNoNvcc.
func FindNvcc() (Nvcc, error) { return findNvcc(lookNvcc) }

func findNvcc(look func() (string, error)) (Nvcc, error) {
	p, err := look()
	if err != nil {
		return Nvcc{}, missingTool(err, ErrNoNvcc, "the CUDA toolkit")
	}
	return Nvcc{Path: p}, nil
}

// The architecture flags the harness is built with: for the GPU in this
// machine as nvcc sees it; where it cannot (a container whose driver nvcc
// does not find), for the compute capability nvidia-smi names (ArchFor);
// and without either, ArchFat: machine code for every architecture the
// course's learners have, Turing (T4) to Hopper (H100, H200), and PTX the
// driver compiles for anything newer.
var (
	archNative = []string{"-arch=native"}
	archFat    = []string{
		"-gencode", "arch=compute_75,code=sm_75",
		"-gencode", "arch=compute_80,code=sm_80",
		"-gencode", "arch=compute_86,code=sm_86",
		"-gencode", "arch=compute_89,code=sm_89",
		"-gencode", "arch=compute_90,code=[sm_90,compute_90]",
	}
)

// ArchFor returns the flags that build for compute capability cc, as
// nvidia-smi writes it ("8.9"): its machine code and its PTX.
func ArchFor(cc string) ([]string, error) {
	major, minor, ok := strings.Cut(strings.TrimSpace(cc), ".")
	if !ok || !allDigits(major) || len(minor) != 1 || !allDigits(minor) || len(major) > 2 {
		return nil, fmt.Errorf("cuda: compute capability %q: want major.minor, such as 8.9", cc)
	}
	a := major + minor
	return []string{"-gencode", fmt.Sprintf("arch=compute_%s,code=[sm_%s,compute_%s]", a, a, a)}, nil
}

func allDigits(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}

// buildFlags are the flags every build uses besides the architecture: full
// optimization, and line information so that a profiler can show which
// source line a load came from.
var buildFlags = []string{"-O3", "-lineinfo", "-std=c++17"}

// BuildFlags returns the flags every build uses besides the architecture,
// for a cache key that must change when they do.
func BuildFlags() []string { return slices.Clone(buildFlags) }

// ArchNative returns the flags that build for the GPU in this machine, as
// nvcc sees it.
func ArchNative() []string { return slices.Clone(archNative) }

// ArchFat returns the flags that build for every architecture the course's
// learners have, with PTX for anything newer.
func ArchFat() []string { return slices.Clone(archFat) }

// VersionCmd is `nvcc --version`.
func (n Nvcc) VersionCmd() Invocation {
	return Invocation{Tool: "nvcc", Path: n.Path, Args: []string{"--version"}, Timeout: time.Minute}
}

// BuildCmd compiles src (harness.cu, in dir) into the executable out.
func (n Nvcc) BuildCmd(dir, src, out string, arch []string, timeout time.Duration) Invocation {
	args := append(append(append([]string{}, buildFlags...), arch...), "-o", out, src)
	return Invocation{Tool: "nvcc", Path: n.Path, Args: args, Dir: dir, Timeout: timeout}
}

// Smi is nvidia-smi, the driver's command line: it names the GPU's
// compute capability where nvcc -arch=native cannot see the GPU.
type Smi struct{ Path string }

// SmiEnv names the environment variable that names nvidia-smi's
// executable instead of the PATH lookup.
const SmiEnv = "COALESCE_NVIDIA_SMI"

var lookSmi = sync.OnceValues(func() (string, error) { return lookTool("nvidia-smi", SmiEnv) })

// FindSmi returns nvidia-smi from the PATH, or a *MissingError wrapping
// ErrNoDriver: it comes with the driver.
func FindSmi() (Smi, error) {
	p, err := lookSmi()
	if err != nil {
		return Smi{}, missingTool(err, ErrNoDriver, "the NVIDIA driver")
	}
	return Smi{Path: p}, nil
}

// ComputeCapCmd asks the compute capability of every GPU, one a line ("9.0").
func (s Smi) ComputeCapCmd() Invocation {
	return Invocation{Tool: "nvidia-smi", Path: s.Path, Args: []string{"--query-gpu=compute_cap", "--format=csv,noheader"}, Timeout: 30 * time.Second}
}

// Ncu is Nsight Compute's command line.
type Ncu struct{ Path string }

// FindNcu returns ncu from the PATH, or a *MissingError wrapping ErrNoNcu.
func FindNcu() (Ncu, error) { return findNcu(lookNcu) }

func findNcu(look func() (string, error)) (Ncu, error) {
	p, err := look()
	if err != nil {
		return Ncu{}, missingTool(err, ErrNoNcu, "Nsight Compute (it comes with the CUDA toolkit)")
	}
	return Ncu{Path: p}, nil
}

// VersionCmd is `ncu --version`.
func (n Ncu) VersionCmd() Invocation {
	return Invocation{Tool: "ncu", Path: n.Path, Args: []string{"--version"}, Timeout: time.Minute}
}

// ProfileArgs are ncu's arguments for reading the course's metrics from
// every k_ kernel the harness launches:
//
//   - --clock-control none leaves the GPU's clocks as they are (ncu would
//     otherwise lock them to base), so counts and times come from the same
//     machine state the timing run sees;
//   - --csv --page raw prints one row per kernel, one column per metric;
//   - --print-units base prints bytes as bytes rather than scaled to MB;
//   - --kernel-name regex:^k_ skips the harness's fill, check and flush
//     kernels.
//
// ncu's default cache control stays on: it flushes the caches before each
// profiled kernel, so DRAM counts are those of a cold L2.
func ProfileArgs(harness string, harnessArgs []string) []string {
	return ncuArgs("regex:^k_", harness, harnessArgs)
}

// ncuArgs are ncu's arguments for reading the course's metrics from the
// kernels that filter (--kernel-name) selects in program's launches.
func ncuArgs(filter, program string, programArgs []string) []string {
	args := []string{
		"--clock-control", "none",
		"--metrics", strings.Join(metrics.Profiled, ","),
		"--csv", "--page", "raw", "--print-units", "base",
		"--kernel-name", filter,
		program,
	}
	return append(args, programArgs...)
}

// ProfileCmd runs the harness under ncu.
func (n Ncu) ProfileCmd(harness string, harnessArgs []string, timeout time.Duration) Invocation {
	return Invocation{Tool: "ncu", Path: n.Path, Args: ProfileArgs(harness, harnessArgs), Timeout: timeout}
}

// ProfileKernelCmd runs program under ncu, profiling the first launch of
// the kernel named kernel (an extern "C" name, as ncu prints it) for the
// course's metrics: the harness's ncu arguments (ProfileArgs) with that
// kernel in place of the k_ ones.
func (n Ncu) ProfileKernelCmd(kernel, program string, args []string, timeout time.Duration) Invocation {
	a := ncuArgs("regex:^"+regexp.QuoteMeta(kernel)+"$", program, args)
	a = slices.Insert(a, slices.Index(a, program), "--launch-count", "1")
	return Invocation{Tool: "ncu", Path: n.Path, Args: a, Timeout: timeout, Group: true}
}

// NcuDiagnostics returns the lines ncu writes about itself (==ERROR==,
// ==WARNING==) from its standard output, where its CSV also goes.
func NcuDiagnostics(stdout []byte) string {
	var keep []string
	for line := range strings.Lines(string(stdout)) {
		if strings.HasPrefix(line, "==ERROR==") || strings.HasPrefix(line, "==WARNING==") {
			keep = append(keep, strings.TrimRight(line, "\r\n"))
		}
	}
	return strings.Join(keep, "\n")
}
