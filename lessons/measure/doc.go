// Package measure holds what a GPU measured of the course's launches, and
// the one file format they are kept in. The sector model (lessons/sectors)
// predicts a launch; a Launch is the same launch as the hardware ran it:
// its median time, the time of a cudaMemcpy of its data beside it, and
// Nsight Compute's counters under the metric names the model uses.
//
// Launches come in a Set, which says where they come from (Origin: "live:
// NVIDIA H200, 2026-12-01 14:03 UTC", "recorded on NVIDIA H200,
// 2026-11-29"), with the Provenance of the run when it is known. Every
// table, chart and verdict of the course names its measurements by the
// Set's label, and nothing else makes one up.
//
// A Measurer gives Sets: this machine's GPU (package cuda), a recording
// built into the course (package cuda/reference), or a file written by `coalesce
// run` (ReadFile). FromSet turns a Set into a Measurer that looks launches
// up instead of running them; cuda.OpenMeasurer picks live or recorded.
//
// Nothing derived is kept: a useful bandwidth or a fraction of memcpy is
// computed from a Launch where it is shown (lessons/figures), so there is
// one definition of each.
//
// # File format
//
// A run file is JSON lines, written by Writer and read by Reader, the
// first optionally the run's provenance, then one launch a line in the
// order measured:
//
//	{"provenance":{"device":{"gpu":"NVIDIA H200",...},"driver":"580.159.04","cuda":"13.0",...}}
//	{"line":1,"spec":{...},"time_ms":0.197,"time_ms_min":...,"time_ms_max":...,
//	 "timed_launches":20,"memcpy_ms":0.127,"memcpy_bytes":268435456,
//	 "threads":67108864,"grid_blocks":262144,"l2_fetch_granularity":64,
//	 "verified":true,"metrics":{"dram__bytes_read.sum":268468224,...}}
//	{"line":2,"spec":{...},"error":"verification failed: ..."}
//	{"line":3,"spec":{...},"error":"...misaligned address...","cuda_error":"cudaErrorMisalignedAddress"}
//
// A launch the GPU failed with a CUDA error (a fault inside the kernel)
// keeps the error's name in cuda_error: read back, it is the same
// *GPUError the live run gave (Launch.Err), labelled with the file's
// origin, and a recording hands it out for its spec (Set.Fault).
//
// A launch whose counters Nsight Compute could not read (the GPU denies
// them to users: ERR_NVGPUCTRPERM) may carry counts from elsewhere, with
// "counters" saying where: "model" (the sector model's) or the label of a
// recording of the same spec on the same GPU ("recorded on NVIDIA H200,
// 2026-11-29"). A launch without "counters" has ncu's own.
//
// A launch that was only profiled has metrics and no times; one that was
// only timed has times and no metrics. Reader also reads the form the
// first build of the course wrote, one JSON object {"provenance":{...},
// "records":[...]}, and drops the derived fields it kept (useful_bytes,
// useful_gbps, memcpy_gbps, of_memcpy, moved_gbps). A line that is not a
// launch is a *SyntaxError naming the file and line.
package measure
