// Package calibrate fits the model to the GPU at hand: it says what to
// measure, measures it (coalesce calibrate), fits a device profile to the
// measurements, caches it per GPU, and chooses the profile the notebooks
// use.
//
// The model (go doc lessons/sectors) counts sectors exactly whatever the
// GPU; what differs from one GPU to another is a handful of numbers in
// its profile (go doc lessons/devices), and each comes from one
// measurement:
//
//   - Geometry, from the device itself (harness --info): the SMs and the
//     threads each holds decide how many warps are in flight; the L2's
//     size is the scale of every capacity below; the default L2 fetch
//     granularity is what a miss brings from DRAM, 32 to 128 bytes, and so
//     what a sparse read costs. The resident blocks per SM come from the
//     compute capability.
//   - time.copy_bandwidth, from the cudaMemcpy the harness times beside
//     every launch: the ceiling no copy passes, so the time of every
//     bandwidth-bound launch.
//   - dram.*, from Nsight Compute's DRAM bytes over a footprint sweep
//     across the L2's size (specs.jsonl): how much of a launch's reads the
//     L2 keeps for a second use (reuse_l2_bytes), how many written lines
//     it still holds when the launch ends and so never writes back inside
//     it (dirty_l2_bytes, and sparse_dirty_l2_bytes for lines written only
//     in part), and how gradually it lets go (spread); how many dirty
//     bytes a read-modify-write across the L2's size (update_x_soa) leaves
//     in it (dirty_watermark_bytes); how many bytes of sectors written in
//     part it holds before filling them from DRAM (fill_l2_bytes, from the
//     stride-32 write); and the dirty data a profiled launch finds in it,
//     which a read over several L2s (strided_read) writes back
//     (profiled_dirty_bytes). These decide the DRAM bytes of every launch
//     of 8 to 256 MB on an H200. Where counters cannot be read they are
//     the H200's shares of its L2, marked as estimates.
//   - time.* besides the bandwidth, from the times of the copies: a tiny
//     launch gives the fixed cost of one; blocks of one warp the rate the
//     GPU starts blocks; grid-stride copies with too few threads to hide
//     the latency, with more and wider loads per thread, give the latency
//     and how it grows with the bytes in flight (Little's law, in
//     lessons/sectors/time.go); sparse strided reads what a DRAM access
//     costs, and a read-modify-write of one float in each 128-byte struct
//     (update_x_aos) what writing back a line just read costs besides
//     (dram_rewrite_bytes). A pointer chase (harness --calibrate)
//     measures the load latency of DRAM and of the L2 alone, one load at a
//     time, which the report shows beside the fitted latency.
//
// Fit runs these levels in that order, each on what the ones before it
// settled, with a table of parameters (params.go: the JSON path, how to
// read and set it, the range searched, the figure it is fitted to) and one
// coarse-then-fine search (search.go). TestRefitH200 refits the course's
// h200 profile from the committed recording with the same Fit, and holds
// it to the shipped numbers and accuracy.
//
// Calibrations are cached as profile JSON in <cache>/profiles/<gpu>.json
// (CachePath), each value with its source (devices.Profile.Citations:
// "measured on <GPU> by coalesce calibrate, <date>: <how>" for a fitted
// one, the device's own answer for the geometry) and what no measurement
// gave listed in Estimated (the DRAM level, without counters). A
// calibration is named for the shipped profile of its GPU, or the GPU, with
// "-calibrated" (CalibratedName: "t4-calibrated"), and claims no driver
// name (Match), so the shipped profile keeps its own and a spec may ask for
// either.
//
// Choose picks the profile for a GPU: its calibration from the cache, of
// the same SMs and L2; else the shipped profile whose match is the
// driver's name (devices.Match); else the H200's, and says which and why.
// Adopt registers a calibration from the cache (devices.Register) and
// makes the choice the profile a spec without "device" gets (devices.Use).
// The notebooks call it when they open a live GPU, and lab.Status prints
// the reason: "Profile: calibrated on this Tesla T4, 2026-12-01.", or
// "Profile: this machine's NVIDIA L4, by its name; 14 fields estimated,
// ...". Without a GPU the model stays on the course's H200.
package calibrate
