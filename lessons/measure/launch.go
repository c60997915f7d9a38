package measure

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/coalescing-course/coalesce/lessons/metrics"
	"github.com/coalescing-course/coalesce/lessons/spec"
)

// Launch is one launch as a GPU ran it: how long it took, how fast a
// cudaMemcpy of its data went beside it, and what Nsight Compute counted.
// A launch that could not be measured has Error set and nothing else but
// Spec and Line.
type Launch struct {
	// Line is the spec's line in its input, when it came from one.
	Line int       `json:"line,omitempty"`
	Spec spec.Spec `json:"spec"`
	// Error says why the launch was not measured: refused before it ran
	// (it does not fit in memory, its index file is bad), a wrong result,
	// or a source that does not hold it.
	Error string `json:"error,omitempty"`
	// CUDAError names the CUDA error behind Error when the GPU gave one
	// ("cudaErrorMisalignedAddress": the kernel faulted); "" otherwise.
	// Err turns it into a *GPUError.
	CUDAError string `json:"cuda_error,omitempty"`

	// TimeMs is the median of TimedLaunches launches, each timed alone
	// between a CUDA event pair after warm-up launches, with the L2
	// flushed before each; 0 when the launch was not timed.
	TimeMs        float64 `json:"time_ms,omitempty"`
	TimeMsMin     float64 `json:"time_ms_min,omitempty"`
	TimeMsMax     float64 `json:"time_ms_max,omitempty"`
	TimedLaunches int     `json:"timed_launches,omitempty"`
	// MemcpyMs is the median time of a device-to-device cudaMemcpy of
	// MemcpyBytes of the launch's data, timed the same way in the same
	// run: the ceiling a copy can reach.
	MemcpyMs    float64 `json:"memcpy_ms,omitempty"`
	MemcpyBytes int64   `json:"memcpy_bytes,omitempty"`

	// Threads and GridBlocks are the launch's shape as it ran.
	Threads    int64 `json:"threads,omitempty"`
	GridBlocks int64 `json:"grid_blocks,omitempty"`
	// L2Fetch is cudaLimitMaxL2FetchGranularity as read back after
	// setting it to the spec's.
	L2Fetch int `json:"l2_fetch_granularity,omitempty"`
	// Verified is true when the harness checked every output element.
	Verified bool `json:"verified,omitempty"`

	// Metrics are the launch's counts, keyed by ncu's metric names; nil
	// when it was not profiled. Counters says where they come from.
	Metrics metrics.Set `json:"metrics,omitempty"`
	// Counters says where Metrics come from when Nsight Compute did not
	// read them for this launch: CountersModel, or the label of a
	// recording of the same spec ("recorded on NVIDIA H200, 2026-11-29")
	// when the GPU would not let ncu read its counters (cuda's
	// CountersDeniedError). "" is ncu's own reading of this launch, which
	// is all the files written before this field hold.
	Counters string `json:"counters,omitempty"`
}

// CountersModel is Launch.Counters of counts the sector model filled in:
// its L1 counts are exact, its DRAM bytes an estimate.
const CountersModel = "model"

// CountersFrom names where the launch's counters come from, for a label:
// "ncu", "model", or a recording's label; "" when it has none.
func (l Launch) CountersFrom() string {
	switch {
	case !l.Profiled():
		return ""
	case l.Counters == "":
		return "ncu"
	}
	return l.Counters
}

// CountersBorrowed reports whether the launch's counters were not read by
// ncu when it ran: the model's, or a recording's of the same spec.
func (l Launch) CountersBorrowed() bool { return l.Profiled() && l.Counters != "" }

// Failed reports whether the launch was not measured.
func (l Launch) Failed() bool { return l.Error != "" }

// Err returns why the launch was not measured, as measured at origin: a
// *GPUError when the GPU reported a CUDA error (a fault inside the kernel,
// a launch it refused), an error holding Error otherwise; nil when the
// launch was measured.
func (l Launch) Err(origin Origin) error {
	switch {
	case !l.Failed():
		return nil
	case l.CUDAError != "":
		return &GPUError{Spec: l.Spec, Name: l.CUDAError, Message: l.Error, Origin: origin}
	}
	return errors.New(l.Error)
}

// GPUError is a launch the GPU failed with a CUDA error: most often a
// fault inside the kernel, such as the misaligned vector loads of a
// vectorized_copy whose offset is not a multiple of its width, which the
// GPU refuses rather than splits. It is the same error whether the fault
// happened just now or was recorded: Origin says which.
type GPUError struct {
	Spec    spec.Spec
	Name    string // cudaGetErrorName: "cudaErrorMisalignedAddress"
	Message string // the harness's message, with cudaGetErrorString's
	Origin  Origin // where and when the GPU reported it
}

func (e *GPUError) Error() string {
	return fmt.Sprintf("measure: %s: the GPU reported %s (%s): %s", e.Spec.Brief(), e.Name, e.Origin, e.Message)
}

// Recorded reports whether the error comes from a recording or a run file
// rather than from this machine's GPU just now.
func (e *GPUError) Recorded() bool { return e.Origin.Kind != Live }

// Timed reports whether the launch has a time.
func (l Launch) Timed() bool { return !l.Failed() && l.TimeMs > 0 }

// Profiled reports whether the launch has ncu's counters.
func (l Launch) Profiled() bool { return !l.Failed() && l.Metrics != nil }

// Seconds is the launch's median time in seconds; 0 when not timed.
func (l Launch) Seconds() float64 { return l.TimeMs / 1e3 }

// MemcpyBandwidth is the cudaMemcpy beside the launch in bytes per
// second, counting every byte read and written as the launch's useful
// bytes do; 0 when not timed.
func (l Launch) MemcpyBandwidth() float64 {
	if l.MemcpyMs <= 0 {
		return 0
	}
	return 2 * float64(l.MemcpyBytes) / (l.MemcpyMs / 1e3)
}

// MarshalJSON writes the launch as a line of a run file; the answer to a
// bad input line, which has no spec, is written without one.
func (l Launch) MarshalJSON() ([]byte, error) {
	type plain Launch // without this method
	if l.Spec.Kernel == "" {
		return json.Marshal(struct {
			Line  int    `json:"line,omitempty"`
			Error string `json:"error"`
		}{l.Line, l.Error})
	}
	return json.Marshal(plain(l))
}
