package calibrate

import (
	"github.com/coalescing-course/coalesce/lessons/devices"
	"github.com/coalescing-course/coalesce/lessons/measure"
)

// param is one number of a profile that calibration sets: where it lives
// in profiles.json (one of devices.Paths, which reads and writes it), the
// range a fit searches, and what it is fitted to.
type param struct {
	// path is its JSON path in a profile: "dram.reuse_l2_bytes".
	path string
	// lo and hi bound a fit's search, given the device (capacities scale
	// with its L2); log searches the range on a log scale.
	lo, hi func(measure.DeviceInfo) float64
	log    bool
	// from names the figure it is fitted to, for the report.
	from string
	// start is where FitTime starts a time parameter the base profile has
	// no value for: about what an H100-class GPU shows, so that the search
	// starts in the right decade.
	start float64
	// ofL2 is true for a capacity, a share of the L2: without counters to
	// fit it to, it is the reference's share, on this GPU's L2.
	ofL2 bool
}

// get returns the param's value in p. Every param's path is a number of
// devices.Paths (TestParamsArePaths); one that is not is a mistake in the
// tables below, and panics.
func (q param) get(p *devices.Profile) float64 {
	v, err := p.Number(q.path)
	if err != nil {
		panic("calibrate: " + err.Error())
	}
	return v
}

// set sets the param's value in p to v (an integer truncated).
func (q param) set(p *devices.Profile, v float64) {
	if err := p.SetNumber(q.path, v); err != nil {
		panic("calibrate: " + err.Error())
	}
}

func fixed(v float64) func(measure.DeviceInfo) float64 {
	return func(measure.DeviceInfo) float64 { return v }
}

func ofL2(f float64) func(measure.DeviceInfo) float64 {
	return func(i measure.DeviceInfo) float64 { return f * float64(i.L2Bytes) }
}

// dramParams are the DRAM level's capacities, fitted to ncu's
// dram__bytes_read.sum and dram__bytes_write.sum. The ranges bracket what
// an L2 can keep: a capacity is a share of it, and the spread is how
// gradually it stops keeping lines. The dirty watermark is what a
// read-modify-write across the L2's size (update_x_soa) leaves dirty, a
// share of the L2 (0.43 of the H200's); the fill capacity is how many
// bytes of sectors written in part it holds before it reads the rest of
// them from DRAM (0.14 of the H200's), which a write of one float a line
// (strided_write, stride 32) shows; the profiled residue is what a
// launch that only reads (strided_read over several L2s) still writes,
// a few per cent of it (0.04 of the H200's).
var dramParams = []param{
	{path: "dram.reuse_l2_bytes", lo: ofL2(0.25), hi: ofL2(1), from: "dram__bytes_read.sum", ofL2: true},
	{path: "dram.dirty_l2_bytes", lo: ofL2(0.1), hi: ofL2(1), from: "dram__bytes_write.sum", ofL2: true},
	{path: "dram.sparse_dirty_l2_bytes", lo: ofL2(0.02), hi: ofL2(0.5), log: true, from: "dram__bytes_write.sum of sparse writes", ofL2: true},
	{path: "dram.dirty_watermark_bytes", lo: ofL2(0.1), hi: ofL2(0.8), from: "dram__bytes_write.sum of read-modify-writes across the L2's size", ofL2: true},
	{path: "dram.fill_l2_bytes", lo: ofL2(0), hi: ofL2(0.5), from: "dram__bytes_read.sum of writes of part of a sector (strided_write, stride 32)", ofL2: true},
	{path: "dram.profiled_dirty_bytes", lo: ofL2(0), hi: ofL2(0.1), from: "dram__bytes_write.sum of reads over several L2s", ofL2: true},
	{path: "dram.spread", lo: fixed(0), hi: fixed(0.4), from: "dram__bytes_read.sum and dram__bytes_write.sum across the footprint sweep"},
}

// busyParam is the DRAM level's one parameter that depends on the time
// model: how much more of a copy's output the L2 keeps when the copy runs
// at the copy bandwidth (vectorized_copy) than at half of it
// (coalesced_copy), a tenth of the L2 at most on the H200. FitBusy fits it
// alone, after dramParams, so that it cannot trade against DirtyL2Bytes
// on launches it does not apply to.
var busyParam = param{path: "dram.busy_dirty_l2_bytes", lo: ofL2(0), hi: ofL2(0.3), from: "dram__bytes_write.sum of a copy at the copy bandwidth across the L2's size (vectorized_copy, width 4)", ofL2: true}

// timeParams are the time model's parameters besides the copy bandwidth
// (which the cudaMemcpy rate gives), all fitted together by FitTime to the
// median CUDA-event times of the timed launches, in this order; from says
// which launches set each most.
var timeParams = []param{
	{path: "time.launch_seconds", start: 3e-6, from: "the times of the smallest launches"},
	{path: "time.latency_seconds", start: 5e-7, from: "the times of latency-bound copies"},
	{path: "time.latency_per_byte", start: 4e-11, from: "the times of copies with more bytes in flight"},
	{path: "time.block_rate", start: 1e9, from: "the times of copies in blocks of one warp"},
	{path: "time.dram_access_bytes", start: 100, from: "the times of sparse strided reads"},
	{path: "time.dram_access_spacing", start: 100, from: "the times of sparse strided reads at several strides"},
	{path: "time.dram_rewrite_bytes", start: 100, from: "the times of read-modify-writes of one field a line (update_x_aos, structs of 64 bytes and more)"},
	{path: "time.l2_latency_seconds", start: 3e-7, from: "the times of launches whose loads the L2 holds"},
	{path: "time.l1_line_rate", start: 2e9, from: "the times of loads that touch many lines"},
	{path: "time.l2_store_rate", start: 6e10, from: "the times of stores that touch many lines"},
	{path: "time.shared_wavefront_rate", start: 2e9, from: "the times of shared-memory launches"},
}

// maxTimeThreads leaves out of the time fit the launches the model takes
// long over: FitTime predicts each timed launch once.
const maxTimeThreads = 1 << 24

// timeLaunches picks the launches the time model is fitted to: the timed
// ones of at most maxTimeThreads threads.
func timeLaunches(launches []measure.Launch) []measure.Launch {
	var out []measure.Launch
	for _, l := range distinct(launches) {
		if l.Timed() && l.Spec.Threads() <= maxTimeThreads {
			out = append(out, l)
		}
	}
	return out
}
