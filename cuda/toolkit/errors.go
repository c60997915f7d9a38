package toolkit

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/coalescing-course/coalesce/lessons/measure"
)

// Sentinels for what a machine can lack. Every *MissingError wraps one, so a
// caller that can fall back on the recorded reference asks
//
//	if errors.Is(err, toolkit.ErrNoGPU) { ... }
//
// or, for any of them, errors.As(err, new(*toolkit.MissingError)).
var (
	// ErrNoNvcc is a machine without the CUDA compiler on its PATH.
	ErrNoNvcc = errors.New("nvcc not found")
	// ErrNoNcu is a machine without Nsight Compute's command line on its PATH.
	ErrNoNcu = errors.New("ncu not found")
	// ErrNoSanitizer is a machine without compute-sanitizer on its PATH.
	ErrNoSanitizer = errors.New("compute-sanitizer not found")
	// ErrNoGPU is a machine whose driver sees no CUDA device.
	ErrNoGPU = errors.New("no CUDA GPU")
	// ErrNoDriver is a machine with no usable NVIDIA driver.
	ErrNoDriver = errors.New("no usable NVIDIA driver")
)

// MissingError says what this machine lacks to measure on a GPU, in a
// sentence a learner can act on.
type MissingError struct {
	Err    error  // one of ErrNoNvcc, ErrNoNcu, ErrNoSanitizer, ErrNoGPU, ErrNoDriver
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

// FallbackHint ends a *MissingError's hint: what a machine that cannot
// measure does instead.
const FallbackHint = "use the recorded reference (coalesce compare falls back on it)"

func missingTool(lookErr error, sentinel error, what string) *MissingError {
	return &MissingError{
		Err:    sentinel,
		Detail: lookErr.Error(),
		Hint:   "install " + what + ", or " + FallbackHint,
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
	// Survived marks a Group run stopped at its timeout some of whose
	// processes were still there after it was killed.
	Survived bool
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
	if e.Survived {
		b.WriteString(" (and some of its processes were still running after it was killed)")
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
	Tool string // "harness" or "ncu"
	Line int    // 1-based line of the output, 0 when not about one line
	Msg  string
}

func (e *OutputError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("cuda: %s output line %d: %s", e.Tool, e.Line, e.Msg)
	}
	return fmt.Sprintf("cuda: %s output: %s", e.Tool, e.Msg)
}

// ErrCountersDenied is a GPU whose driver lets only administrators read
// its performance counters, so that Nsight Compute fails with
// ERR_NVGPUCTRPERM: the default of NVIDIA's drivers since 2019 (418.43 on
// Linux, 419.17 on Windows), and so of many workstations and clouds. The
// GPU still times launches; a *CountersDeniedError wraps it.
var ErrCountersDenied = errors.New("GPU performance counters not permitted (ERR_NVGPUCTRPERM)")

// ncuDeniedCode is what ncu prints when the driver refuses it the counters:
//
//	==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU Performance Counters on the target device 0. ...
const ncuDeniedCode = "ERR_NVGPUCTRPERM"

// CountersRemedy says how to let a user read the counters, after NVIDIA's
// page on the error,
// https://developer.nvidia.com/nvidia-development-tools-solutions-ERR_NVGPUCTRPERM-permission-issue-performance-counters
// (ncu's message links it as https://developer.nvidia.com/ERR_NVGPUCTRPERM):
// the driver's module option NVreg_RestrictProfilingToAdminUsers=0 in a
// modprobe.d file, in force after a reboot (with the initramfs rebuilt
// where the module loads from it); or running as root or with
// CAP_SYS_ADMIN; a container inherits the host's setting, or gets the
// capability with --cap-add=SYS_ADMIN; on Windows, and so for WSL, the
// NVIDIA Control Panel's Developer > Manage GPU Performance Counters.
const CountersRemedy = "To let Nsight Compute read them: " +
	"on a Linux host, run `echo 'options nvidia NVreg_RestrictProfilingToAdminUsers=0' | sudo tee /etc/modprobe.d/nvidia-profiling.conf` " +
	"and reboot (or reload the nvidia module; where it loads from the initramfs, run `sudo update-initramfs -u` first), " +
	"or run as root or with the CAP_SYS_ADMIN capability; " +
	"in Docker, set that on the host or start the container with `docker run --gpus all --cap-add SYS_ADMIN ...`; " +
	"on Windows or WSL, tick \"Allow access to the GPU performance counters to all users\" in the NVIDIA Control Panel (Desktop > Enable Developer Settings, then Developer > Manage GPU Performance Counters). " +
	"See https://developer.nvidia.com/ERR_NVGPUCTRPERM."

// CountersDeniedError is Nsight Compute refused the GPU's performance
// counters (ErrCountersDenied). It wraps measure.ErrNoCounters too: like a
// machine without ncu, the GPU gives times and no counters.
type CountersDeniedError struct {
	GPU    string // the GPU's name, as the driver gives it
	Detail string // ncu's line about it
}

func (e *CountersDeniedError) Error() string {
	return fmt.Sprintf("cuda: the driver does not let this user read the %s's performance counters, so Nsight Compute cannot count (%s). %s", e.GPU, e.Detail, CountersRemedy)
}

// Unwrap returns ErrCountersDenied and measure.ErrNoCounters.
func (e *CountersDeniedError) Unwrap() []error {
	return []error{ErrCountersDenied, measure.ErrNoCounters}
}

// CountersDeniedIn returns the *CountersDeniedError ncu's output says, or
// nil when it does not say the counters were refused.
func CountersDeniedIn(gpu string, outputs ...string) *CountersDeniedError {
	for _, out := range outputs {
		for line := range strings.Lines(out) {
			if strings.Contains(line, ncuDeniedCode) {
				return &CountersDeniedError{GPU: gpu, Detail: strings.TrimSpace(line)}
			}
		}
	}
	return nil
}
