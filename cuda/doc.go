// Package cuda measures the course's experiment specs on a real GPU and
// reads them back in the model's vocabulary, so that the sector model
// (lessons/sectors) and the hardware can be laid side by side.
//
// It has three parts:
//
//   - src/: the kernels (kernels.cuh), one per kernel of lessons/spec, each
//     with exactly the semantics the spec package states, and the harness
//     (harness.cu) that runs a spec line on the GPU, checks the result and
//     times it. They are embedded in every Go binary (sources).
//   - the Go driver: Builder compiles the harness with nvcc once per content
//     hash into a cache directory; GPU runs it (Run), runs it under Nsight
//     Compute (Profile), or both (Measure).
//   - reference/: the sweep the lessons use (sweep.jsonl) and its
//     measurements on the course's H200 with their provenance (h200.json),
//     for machines without a GPU (Recorded).
//
// A machine without nvcc, ncu, a driver or a GPU gets a *MissingError that
// names what is missing; errors.Is tells which (ErrNoNvcc, ErrNoNcu,
// ErrNoDriver, ErrNoGPU). Callers then use Recorded:
//
//	gpu, err := cuda.Open(ctx, cuda.Builder{})
//	if errors.As(err, new(*cuda.MissingError)) {
//		ref, _ := cuda.Recorded()
//		r, ok := ref.Lookup(s) // measured on the H200; ref.Label() says so
//		...
//	}
//
// # How a spec is measured
//
// The Go side validates each spec (spec.Validate) and, for a gather with an
// index_pattern, writes spec.Indices() to an index file in a temporary
// directory; the harness reads indices only from files. The harness then,
// for each line: re-checks the spec (stride 0, misaligned vectors, indices
// out of range), checks that its buffers fit in free device memory, fills
// the inputs with known values (bytes below 0x80; small whole floats),
// writes 0xA5 into the outputs, sets cudaLimitMaxL2FetchGranularity to the
// spec's value and reads it back, launches the kernel once and compares
// every output element with what it must be. Only a verified spec is timed:
// 3 warm-up launches, then 20 (at least 9) launches each between a pair of
// CUDA events, with the L2 flushed before each one (a read of twice its
// size), and the same for a cudaMemcpy device to device of the kernel's
// data buffer: the ceiling a copy kernel can reach in that same run.
//
// Under ncu (--profile) each spec's kernel is launched exactly once, still
// verified, so that the i-th profiled k_ kernel is the i-th spec launched:
//
//	ncu --clock-control none --metrics <metrics.All> --csv --page raw \
//	    --print-units base --kernel-name regex:^k_ HARNESS --profile ...
//
// # JSON schema
//
// The harness answers each input line N with one JSON object, in order:
//
//	{"line":N, "error":"...", "launched":true?, "cuda_error":"cudaError..."?}
//	{"line":N, "time_ms":median, "time_ms_min":..., "time_ms_max":...,
//	 "timed_launches":K, "useful_bytes":B, "useful_gbps":B/time,
//	 "memcpy_ms":..., "memcpy_gbps":2*memcpy_bytes/memcpy time,
//	 "memcpy_bytes":..., "threads":..., "grid_blocks":..., "block":...,
//	 "l2_fetch_granularity":read back, "launched":true, "verified":true}
//
// (the time and memcpy fields are absent under --profile). Its --info line
// is DeviceInfo. Its exit status is 0, 1 when some line got an error, 2 on a
// usage error, 3 without a CUDA device and 4 without a usable driver.
//
// coalesce run writes one Result per spec line ({"line":N, "spec":{...},
// "time_ms":..., ..., "metrics":{ncu name: value}} with -ncu), or
// {"line":N, "error":"..."} in its place. A reference file (WriteTo) is
//
//	{"provenance": Provenance, "records": [Result, ...]}
//
// with one record per line.
package cuda
