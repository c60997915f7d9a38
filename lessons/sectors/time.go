package sectors

import (
	"math"

	"github.com/coalescing-course/coalesce/lessons/devices"
	"github.com/coalescing-course/coalesce/lessons/metrics"
	"github.com/coalescing-course/coalesce/lessons/spec"
)

// estimateTime is the time model. A launch costs its fixed overhead plus
// the longest of three limits:
//
//   - bandwidth: the DRAM bytes the model predicts, at the device's copy
//     bandwidth;
//   - latency (Little's law): a warp that waits for its load keeps only
//     that load in flight, so each SM finishes about (warps resident ×
//     loads in flight per warp) requests per latency, and the latency
//     itself grows with the bytes in flight (queueing). This is why the
//     seed's one-float-per-thread copy reaches only about two thirds of
//     cudaMemcpy: 64 warps × 128 bytes per SM is not enough in flight;
//   - block starts: the device starts at most BlockRate blocks a second,
//     which caps tiny blocks.
//
// The parameters are fitted per device (devices.Time). The model is meant
// for the copy family (coalesced, offset, vectorized and grid-stride
// copies); sparse accesses cost DRAM more than their bytes (a 32-byte
// access still occupies a DRAM burst), which it leaves out.
func estimateTime(d devices.Profile, s spec.Spec, p Prediction) TimeParts {
	t := d.Time
	dram := p.Metrics[metrics.DRAMRead] + p.Metrics[metrics.DRAMWrite]
	bandwidth := dram / t.CopyBandwidth

	warpsPerBlock := (int64(s.Block) + WarpSize - 1) / WarpSize
	perSM := float64(min(int64(d.MaxBlocksPerSM), int64(d.MaxThreadsPerSM/WarpSize)/warpsPerBlock) * warpsPerBlock)
	perSM = max(1, min(perSM, float64(p.Warps)/float64(d.SMs)))
	inFlight, depth := loadsInFlight(s)
	// The bytes one request keeps in flight: its sectors'. A kernel that
	// only stores still waits on its stores.
	requests, sectorsOf := p.Metrics[metrics.LdRequests], p.Metrics[metrics.LdSectors]
	if requests == 0 {
		requests, sectorsOf = p.Metrics[metrics.StRequests], p.Metrics[metrics.StSectors]
	}
	bytesPerRequest := 0.0
	if requests > 0 {
		bytesPerRequest = sectorsOf / requests * SectorBytes
	}
	latency := t.LatencySeconds + t.LatencyPerByte*perSM*inFlight*bytesPerRequest
	waves := requests / (float64(d.SMs) * perSM * inFlight)
	latencyBound := depth * waves * latency

	blocks := float64(s.GridBlocks()) / t.BlockRate
	parts := TimeParts{Launch: t.LaunchSeconds, Bandwidth: bandwidth, Latency: latencyBound, Blocks: blocks,
		Latency1: latency, InFlightPerSM: perSM * inFlight * bytesPerRequest, Bound: "bandwidth"}
	switch math.Max(bandwidth, math.Max(latencyBound, blocks)) {
	case latencyBound:
		parts.Bound = "latency"
	case blocks:
		parts.Bound = "block starts"
	}
	return parts
}

// TimeParts is the time model's working: each limit on its own, and which
// one set the time.
type TimeParts struct {
	// Launch is the fixed cost of a launch.
	Launch float64 `json:"launch_seconds"`
	// Bandwidth is the predicted DRAM bytes at the copy bandwidth.
	Bandwidth float64 `json:"bandwidth_seconds"`
	// Latency is the time to wait out every load at the latency that the
	// bytes in flight give (Little's law).
	Latency float64 `json:"latency_seconds"`
	// Blocks is the time the device needs to start every block.
	Blocks float64 `json:"blocks_seconds"`
	// Latency1 is the latency of one load with InFlightPerSM bytes in flight.
	Latency1 float64 `json:"load_latency_seconds"`
	// InFlightPerSM is the bytes of loads one SM keeps in flight.
	InFlightPerSM float64 `json:"in_flight_per_sm_bytes"`
	// Bound names the limit that set the time: "bandwidth", "latency" or
	// "block starts".
	Bound string `json:"bound"`
}

// Total returns the launch time: the overhead plus the largest limit.
func (t TimeParts) Total() float64 {
	return t.Launch + math.Max(t.Bandwidth, math.Max(t.Latency, t.Blocks))
}

// loadsInFlight returns how many independent loads one thread has in
// flight at once, and how many loads must wait for one another in turn:
// the kernel's own answer (addresses), else one.
func loadsInFlight(s spec.Spec) (inFlight, depth float64) {
	if km, ok := addresses[s.Kernel]; ok && km.inFlight != nil {
		return km.inFlight(s)
	}
	return 1, 1
}
