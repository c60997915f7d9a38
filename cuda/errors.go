package cuda

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Sentinels for what a machine can lack. Every *MissingError wraps one, so a
// caller that can fall back on the recorded reference asks
//
//	if errors.Is(err, cuda.ErrNoGPU) { ... }
//
// or, for any of them, errors.As(err, new(*cuda.MissingError)).
var (
	// ErrNoNvcc is a machine without the CUDA compiler on its PATH.
	ErrNoNvcc = errors.New("nvcc not found")
	// ErrNoNcu is a machine without Nsight Compute's command line on its PATH.
	ErrNoNcu = errors.New("ncu not found")
	// ErrNoGPU is a machine whose driver sees no CUDA device.
	ErrNoGPU = errors.New("no CUDA GPU")
	// ErrNoDriver is a machine with no usable NVIDIA driver.
	ErrNoDriver = errors.New("no usable NVIDIA driver")
	// ErrNoReference is a build without the recorded reference.
	ErrNoReference = errors.New("no recorded reference")
)

// MissingError says what this machine lacks to measure on a GPU, in a
// sentence a learner can act on.
type MissingError struct {
	Err    error  // one of ErrNoNvcc, ErrNoNcu, ErrNoGPU, ErrNoDriver
	Detail string // what was seen: "nvcc not found on PATH", the driver's message
	Hint   string // what to do about it
}

func (e *MissingError) Error() string {
	if e.Hint == "" {
		return "cuda: " + e.Detail
	}
	return "cuda: " + e.Detail + ": " + e.Hint
}

// Unwrap returns the sentinel.
func (e *MissingError) Unwrap() error { return e.Err }

const fallbackHint = "use the recorded reference (coalesce compare falls back on it)"

func missingTool(lookErr error, sentinel error, what string) *MissingError {
	return &MissingError{
		Err:    sentinel,
		Detail: lookErr.Error(),
		Hint:   "install " + what + ", or " + fallbackHint,
	}
}

// ToolError is an external tool that ran and failed: it exited with a
// non-zero status, or was stopped by a signal or a timeout. Stderr holds
// what it printed there (its tail, when long), which is usually the reason.
type ToolError struct {
	Tool     string // "nvcc", "ncu", "harness"
	Args     []string
	ExitCode int           // -1 when killed by a signal
	Timeout  time.Duration // non-zero when the run was stopped at its timeout
	Stderr   string
	Err      error // the *exec.ExitError, or context.DeadlineExceeded
}

func (e *ToolError) Error() string {
	var b strings.Builder
	switch {
	case e.Timeout > 0:
		fmt.Fprintf(&b, "cuda: %s did not finish within %v", e.Tool, e.Timeout)
	case e.ExitCode < 0:
		fmt.Fprintf(&b, "cuda: %s was stopped: %v", e.Tool, e.Err)
	default:
		fmt.Fprintf(&b, "cuda: %s exited with status %d", e.Tool, e.ExitCode)
	}
	if s := strings.TrimSpace(e.Stderr); s != "" {
		b.WriteString(": ")
		b.WriteString(s)
	}
	return b.String()
}

// Unwrap returns the underlying error, an *exec.ExitError or a context error.
func (e *ToolError) Unwrap() error { return e.Err }

// StartError is an external tool that could not be started at all: the file
// exists but is not executable, or the system refused to run it.
type StartError struct {
	Tool string
	Path string
	Err  error
}

func (e *StartError) Error() string {
	return fmt.Sprintf("cuda: could not start %s (%s): %v", e.Tool, e.Path, e.Err)
}

// Unwrap returns the error from os/exec.
func (e *StartError) Unwrap() error { return e.Err }

// OutputError is harness or ncu output that does not say what it must:
// a line that is not the JSON the harness writes, a CSV without the metrics
// asked for, or a different number of answers than questions.
type OutputError struct {
	Source string // "harness" or "ncu"
	Line   int    // 1-based line of the output, 0 when not about one line
	Msg    string
}

func (e *OutputError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("cuda: %s output line %d: %s", e.Source, e.Line, e.Msg)
	}
	return fmt.Sprintf("cuda: %s output: %s", e.Source, e.Msg)
}
