// Package cuda measures the course's experiment specs on a real GPU and
// reads them back in the model's vocabulary, so that the sector model
// (lessons/sectors) and the hardware can be laid side by side.
//
// It is one of four packages under cuda/, each with one job:
//
//   - cuda (this one): the harness and the live GPU. src/ holds the
//     kernels (kernels.cuh), one per kernel of lessons/spec, each with
//     exactly the semantics the spec package states, and the harness
//     (harness.cu) that runs a launch plan on the GPU, checks the result
//     and times it, and the host code the harness shares with a learner's
//     kernel's program (shared.cuh: the exit statuses, the plan's reader,
//     the L2 flush and the timing loop; SharedHeader); they are embedded
//     in every Go binary. A plan, for either program, is one flat JSON
//     object that PlanWriter writes. Builder compiles
//     the harness with nvcc once per content hash into a cache directory;
//     GPU is the live measure.Measurer, which times launches with the
//     harness and reads their counters with Nsight Compute (Measure).
//   - cuda/reference: the recording, the sweep the lessons use
//     (reference/sweep.jsonl) measured on the course's H200, a run file
//     with its provenance (reference/h200.jsonl), for machines without a
//     GPU (reference.Recorded, reference.Measurer).
//   - cuda/toolkit: finding and running nvcc, ncu, compute-sanitizer and
//     nvidia-smi (one Invocation type), and reading what ncu prints.
//   - cuda/usercuda: a kernel a learner wrote, compiled and run on the GPU
//     beside the harness (usercuda.Run), for lab.TryCUDA.
//
// A machine without nvcc, ncu, a driver or a GPU gets a
// *toolkit.MissingError that names what is missing; errors.Is tells which
// (toolkit.ErrNoNvcc, ErrNoNcu, ErrNoDriver, ErrNoGPU). OpenMeasurer makes
// the choice every caller needs: live where this machine can measure, else
// the recording, and the Origin of what it returns says which and why:
//
//	m, err := cuda.OpenMeasurer(ctx, os.Getenv(cuda.ModeEnv), cuda.Builder{})
//	...
//	set, err := m.Measure(ctx, specs, measure.Times|measure.Counters)
//	// set.Label(): "live: NVIDIA H200, ..." or "recorded on NVIDIA H200, ..."
//
// A driver that keeps the GPU's performance counters to administrators
// (the default of NVIDIA's drivers, and so of many workstations and
// clouds) makes ncu fail with ERR_NVGPUCTRPERM. The GPU finds it on its
// first profiled run and does not run ncu again: it keeps timing live and
// takes each launch's counters from the course's recording when this is
// the recording's GPU and the recording holds the launch, else from the
// sector model, each Launch's Counters saying whose; the Set's CountersErr
// is a *toolkit.CountersDeniedError (errors.Is toolkit.ErrCountersDenied)
// whose message ends with the host setting that lets ncu count
// (toolkit.CountersRemedy).
// ProbeCounters finds out before any measurement. A Strict GPU (OpenMeasurer's
// StrictMode, COALESCE_MEASURE=strict) fails instead of borrowing, with an
// error wrapping ErrStandIn, as it does without ncu.
//
// # How a spec is measured
//
// The Go side validates each spec, writes a gather's generated indices to an
// index file (the harness reads indices only from files), and turns the spec
// into a launch plan (Prepare): the kernel's fields and every size the
// kernel table of lessons/spec derives from them (grid, each buffer's bytes,
// the buffer a cudaMemcpy copies), so that the C++ side repeats none of the
// spec's rules. The harness then, for each plan: checks that each buffer
// holds what the kernel touches and that vector accesses are aligned, checks
// that the buffers fit in free device memory, fills the inputs with known
// values (bytes below 0x80; small whole floats), writes 0xA5 into the
// outputs, sets cudaLimitMaxL2FetchGranularity to the spec's value and reads
// it back, launches the kernel once and compares every output element with
// what it must be. Only a verified launch is timed: 3 warm-up launches, then
// 20 (at least 9) launches each between a pair of CUDA events, with the L2
// flushed before each one (a read of twice its size), and the same for a
// cudaMemcpy device to device of the kernel's data buffer: the ceiling a
// copy kernel can reach in that same run.
//
// Under ncu (--profile) each plan's kernel is launched exactly once, still
// verified, so that the i-th profiled k_ kernel is the i-th plan launched:
//
//	ncu --clock-control none --metrics <metrics.Profiled> --csv --page raw \
//	    --print-units base --kernel-name regex:^k_ HARNESS --profile ...
//
// # The harness's protocol
//
// One plan a line in (what coalesce run -emit prints for
// {"kernel":"strided_copy","n":1048576,"stride":32}), one JSON answer a
// line out, in order:
//
//	{"kernel":"strided_copy","n":1048576,"block":256,"elem_bytes":4,
//	 "stride":32,"l2_fetch_granularity":64,"blocks":128,"threads":32768,
//	 "block_x":256,"block_y":1,"grid_x":128,"grid_y":1,"shared_bytes":0,
//	 "bytes_in":4194304,"bytes_out":4194304,
//	 "memcpy_from":"in","memcpy_to":"out"}
//
//	{"line":N, "error":"...", "launched":true?, "cuda_error":"cudaError..."?,
//	 "context_failed":true?}
//	{"line":N, "time_ms":median, "time_ms_min":..., "time_ms_max":...,
//	 "timed_launches":K, "memcpy_ms":..., "memcpy_bytes":...,
//	 "threads":..., "grid_blocks":..., "block":...,
//	 "l2_fetch_granularity":read back, "launched":true, "verified":true}
//
// (the time and memcpy fields are absent under --profile). A 2D kernel's
// plan also holds rows, cols, tile, block_rows and pad, and its block and
// grid have a y (transpose_tiled: shared_bytes of dynamic shared memory).
// context_failed marks a fault inside the kernel (a misaligned
// vectorized_copy: cudaErrorMisalignedAddress): the harness's CUDA context
// is lost and it answers the later lines "not run", so the Go side sends
// them to a fresh harness, and the fault reaches the caller as a
// *measure.GPUError. Its --info line
// is a measure.DeviceInfo. Its exit status is 0, 1 when some line got an
// error, 2 on a usage error, 3 without a CUDA device and 4 without a usable
// driver. What a GPU returns, and what coalesce run writes, is a
// measure.Set: a run file, its provenance first, then one measure.Launch a
// line; every figure derived from a launch (bandwidth, fraction of memcpy)
// is computed by lessons/figures, never stored.
package cuda
