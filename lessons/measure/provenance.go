package measure

import (
	"fmt"
	"time"
)

// Provenance says where a run's measurements come from: which GPU, which
// software, when, and the command that made them.
type Provenance struct {
	Device DeviceInfo `json:"device"`
	// Driver is the driver version nvidia-smi reports ("580.159.04").
	Driver string `json:"driver,omitempty"`
	// CUDA is the runtime the harness was linked with ("13.0").
	CUDA string `json:"cuda"`
	Nvcc string `json:"nvcc"`
	Ncu  string `json:"ncu,omitempty"`
	// Clocks are nvidia-smi's clock readings (and power, temperature),
	// taken as the run ended.
	Clocks map[string]string `json:"clocks,omitempty"`
	// HarnessArch are the flags the harness was built for, HarnessKey the
	// content hash of its build (sources, nvcc version, flags).
	HarnessArch string `json:"harness_arch"`
	HarnessKey  string `json:"harness_key"`
	// Timing describes how times were taken.
	Timing string `json:"timing"`
	// Profiling is the ncu command line the metrics come from, the
	// harness's path shortened to "harness".
	Profiling string `json:"profiling,omitempty"`
	Date      string `json:"date"` // RFC 3339, UTC
	Command   string `json:"command"`
}

// DeviceInfo is what the harness reports about the GPU it runs on.
type DeviceInfo struct {
	GPU               string `json:"gpu"`
	ComputeCapability string `json:"compute_capability"`
	SMs               int    `json:"sms"`
	L2Bytes           int64  `json:"l2_bytes"`
	MaxThreadsPerSM   int    `json:"max_threads_per_sm"`
	MemoryClockKHz    int    `json:"memory_clock_khz"`
	SMClockKHz        int    `json:"sm_clock_khz"`
	MemoryBusBits     int    `json:"memory_bus_bits"`
	// DriverVersion and RuntimeVersion are CUDA versions as the runtime
	// encodes them: 13000 is 13.0.
	DriverVersion  int   `json:"driver_version"`
	RuntimeVersion int   `json:"runtime_version"`
	FreeBytes      int64 `json:"free_bytes"`
	TotalBytes     int64 `json:"total_bytes"`
	// DefaultL2Fetch is cudaLimitMaxL2FetchGranularity before the harness set it.
	DefaultL2Fetch int `json:"default_l2_fetch_granularity"`
}

// CUDAVersion writes a CUDA version as the runtime encodes it (13000) the
// way people do (13.0).
func CUDAVersion(v int) string {
	if v <= 0 {
		return ""
	}
	return fmt.Sprintf("%d.%d", v/1000, v%1000/10)
}

// check reports what a provenance lacks to say where a run comes from.
func (p *Provenance) check() error {
	if p.Device.GPU == "" || p.Date == "" || p.Command == "" {
		return fmt.Errorf("provenance needs device.gpu, date and command: got %q, %q, %q", p.Device.GPU, p.Date, p.Command)
	}
	if _, err := time.Parse(time.RFC3339, p.Date); err != nil {
		return fmt.Errorf("provenance date %q: want RFC 3339, such as 2026-11-29T21:30:00Z", p.Date)
	}
	return nil
}

// when returns the run's date.
func (p *Provenance) when() time.Time {
	t, _ := time.Parse(time.RFC3339, p.Date)
	return t
}
