// Package sectors is the course's model of what a warp's global-memory
// accesses cost: exact where the hardware is exact, and honest about where
// it is an estimate.
//
// # Sectors, lines and requests
//
// A warp's 32 lanes issue one memory instruction together. The L1 turns the
// 32 addresses into one request and looks up the 32-byte sectors they fall
// in; four sectors make a 128-byte line. Only the sectors some lane touches
// are fetched, so the cost of an instruction is the number of distinct
// sectors, and its efficiency is the bytes the lanes use over 32 bytes per
// sector:
//
//	32 consecutive floats      128 bytes, 4 sectors    100 %
//	floats 32 apart            32 lines, 32 sectors    12.5 %
//	x of 16-byte structs       512 bytes, 16 sectors   25 %
//
// Coalesce does this for one warp; Model does it for every warp of a
// launch described by an experiment spec, and reports the counts under
// the names Nsight Compute gives them (package metrics), so that a learner
// can hold the model against ncu. The L1 counts are exact: they depend on
// the addresses alone. A Stream takes warp instructions worked out
// elsewhere, one at a time, through the same model: package simt runs a
// learner's kernel written in Go and hands it its warps.
//
// # The DRAM level
//
// What crosses the memory bus is decided by the L2, which the seed's
// arithmetic leaves out: it counts 32 bytes for every sector, where an H200
// moves more for a sparse read and less for a small write. The model's L2
// (dram.go) follows what ncu measured on the H200 with the course's own
// kernels. Every figure below is dram__bytes_read.sum or
// dram__bytes_write.sum from cuda/testdata/probe_metrics.jsonl, made on the
// device machine with
//
//	coalesce run -ncu cuda/testdata/probe.jsonl
//
// (NVIDIA H200, driver 580.159.04, CUDA 13.0, ncu 2025.3.1 with
// --clock-control none and its default --cache-control all, 2026-11-29),
// and cuda/reference/h200.jsonl, recorded the same way from
// cuda/reference/sweep.jsonl.
//
// The fetch granularity decides what a sparse read costs. strided_read of
// 4-byte elements 32 apart (n = 2^26, one read per 128-byte line) read
// 67.1 MB with l2_fetch_granularity 32, 134.2 MB with 64 (the default) and
// 268.4 MB with 128: 32, 64 and 128 bytes of DRAM per 4 useful bytes, where
// the seed's arithmetic says 32 in every case.
//
// A partly written sector is read before it is written back. strided_write
// at strides 2 to 8 (every sector written in part, 268 MB of sectors) read
// 261 MB and wrote 253 MB. At n = 2^20, where the buffer stays in the L2,
// the same kind of launch read nothing: the fill happens on eviction, not
// on the write.
//
// The L2 spends a whole line on a lone sector, and keeps few lines that
// hold nothing but a written sector or two: strided_write at stride 32,
// one sector per line, leaves about 2 MB of them in the L2 when it ends,
// and at n = 2^20 (1 MB of such sectors) it leaves all of them: no DRAM
// traffic at all.
//
// What a launch leaves dirty in the L2 is what cuda/reference/l2edge.jsonl
// measures: twelve kernels at every n from 2^20 to 2^26, footprints from
// 4 MB to 1 GB around the H200's 60 MB L2 (coalesce run -ncu
// runs/l2edge-specs.jsonl, 2026-12-01, same device and tools).
// Bytes written minus dram__bytes_write.sum, from n = 2^23 on:
//
//   - a copy leaves about 19.5 MB of its writes in the L2 (coalesced_copy,
//     n = 2^23 to 2^26; the model, 17.9 MB at 2^26). The model's
//     parameter for this, DirtyL2Bytes (41.1 MB, 39 MiB, for the H200), is
//     an LRU stack distance:
//     a dirty line stays if less than that much distinct traffic, reads and
//     writes, followed its last touch, and a copy, half reads, keeps half
//     of it;
//   - a read-modify-write leaves about 27 MB (update_x_soa: 26.8 MB
//     at 2^26; the model, 26.6), not the 41 its distance would keep:
//     every line it touches is dirty, and counting from the newest the L2
//     keeps no more than DirtyWatermarkBytes of dirty data;
//   - a copy that streams DRAM at the copy bandwidth leaves more: the same
//     float4 grid-stride copy of 2^23 floats wrote back 14.9 MB with 132
//     blocks and 12.5 MB with a full wave, and a copy of 16-byte elements
//     12.5 MB where 64-thread blocks of floats wrote 15.1
//     (cuda/reference/writeback.jsonl, runs/writeback.sh). For lines
//     written whole and never read the model widens DirtyL2Bytes by up to
//     BusyDirtyL2Bytes (9.1 MB for the H200), in step with how far above
//     70 % of its time the launch would take to stream its DRAM bytes at
//     the copy bandwidth; a random gather, busy with scattered rows rather
//     than streaming, gets none, and the H200 agrees;
//   - strided_write at stride 8, one float in every sector, reads back
//     from DRAM all but the newest 6 to 7 MB of the sectors it wrote in
//     part, though it writes back all but 13 to 19 MB: a sector written in
//     part is filled once FillL2Bytes of such sectors came after it,
//     written back or not;
//   - a launch that stores nothing writes 2.1 to 2.9 MB (strided_read, every
//     stride and fetch granularity, at 2^26), once its own traffic is a few
//     tens of MB: dirty data the L2 held when the launch started under ncu
//     (the harness writes its buffers just before), which the model starts
//     with too (ProfiledDirtyBytes).
//
// Reuse is lost once the footprint outgrows the L2. gather_copy with a
// random permutation read 33.8 MB at n = 2^22 (idx and in once each, 16 MB
// apiece), 163 MB at 2^23, 774 MB at 2^24 and 4252 MB at 2^26, where almost
// every gathered 4-byte element costs a 64-byte fetch.
//
// The parameters these facts fix (ReuseL2Bytes, DirtyL2Bytes,
// SparseDirtyL2Bytes, DirtyWatermarkBytes, FillL2Bytes, ProfiledDirtyBytes,
// Spread, and BusyDirtyL2Bytes, fitted after them) live in the device profile (package devices), fitted by replaying
// each launch's L2 trace (Trace) under candidate profiles. Counting a read
// or write count as right within 15 % or 1 MB of ncu, the model has both
// right on 359 of 373 launches it was fitted to (the probe, the recorded sweep
// and the L2-edge sweep) and on 77 of 86 held out: the 50 launches of
// cuda/testdata/holdout_metrics.jsonl (coalesce run -ncu
// cuda/testdata/holdout.jsonl, 2026-11-29) and the L2-edge sweep's n = 5, 7
// and 10 x 2^20, none of which the fit saw. The misses: the writes of
// random gathers whose output is 12 to 21 MB (the model keeps a third
// more of them in the L2 than the H200 does; its L2 is one LRU list
// where the H200's is two partitions, each caching what the other side's
// SMs read); stride-8 writes of 12 to 34 MB; and the naive transpose
// that writes columns (transpose_coalesced_read), where ncu reads and writes 16 to 19 % more than the model at 4096x4096
// and 8192x8192: its 32 KB-strided stores fall into the same L2 sets,
// which a fully associative model cannot see, so partly written sectors
// leave the L2, are filled and written back, and are written again.
//
// # Shared memory
//
// The tiled transpose stages its tile in shared memory, which the model
// prices by the hardware's bank rule (shared.go): 32 banks of 4 bytes, and
// a warp's access takes as many wavefronts as its busiest bank has
// distinct words. Against ncu on the H200 (runs/log/
// matrix_compare.txt, 38 matrix launches of every tile, pad and edge, and
// runs/log/gputest_matrix1_cuda.txt, 2026-12-01):
//
//   - shared instructions (smsp__inst_executed_op_shared_ld.sum, _st.sum)
//     are exact once the predicated store of the first phase is counted:
//     ptxas guards it with a predicate, not a branch, so every warp
//     executes it on every trip, even with no lane inside the matrix;
//   - wavefronts (l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,
//     _st.sum) follow the rule on small launches only. On 42 launches of
//     tile 32 (pads 0, 1 and 2) and tile 16 (block_rows 4 and 16) from
//     256x256 to 8192x8192 (cuda/reference/wavefronts.jsonl, 2026-12-01;
//     cuda/NOTES.md has the commands), ncu's load wavefronts
//     are the rule's within 0.3 % at 256x256 and within 1.2 % at
//     1024x1024 for tile 32, and grow with the launch from there: the
//     padded 32-wide tile, which the rule gives one wavefront a request,
//     measures 7 % more at 2048x2048, 8 % at 4096x4096 and 8192x2048, 9 %
//     at 8192x8192; tile 16 up to 10 % more with block_rows 16 and 7 %
//     with block_rows 4; the 32-way conflicts of the unpadded 32-wide
//     tile 2 %. Store wavefronts are up to 6 % above the rule. ncu counts
//     more wavefronts than the warps' addresses need; the rule does not
//     say why, and the model predicts the rule;
//   - bank conflicts (l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum)
//     follow, and are never quite 0 where the rule says 0: a padded
//     32-wide tile shows 312 on 32768 conflict-free loads. The rule counts
//     what the warps' addresses ask of the banks; ncu's counter holds a
//     few more, which the rule does not explain and the model does not
//     predict.
//
// # Time
//
// The time model (time.go, EstimateTime) takes the longest of its limits,
// each the time one part of the GPU needs for the launch's traffic alone,
// plus a fixed launch cost. Its parameters (devices.Time) are fitted by
// calibrate.FitTime to the median CUDA-event times of the recorded sweep,
// the L2-edge sweep and the time model's own questions
// (cuda/reference/h200.jsonl, l2edge.jsonl and time.jsonl, NVIDIA H200,
// driver 580.159.04, CUDA 13.0, coalesce run -ncu -record), with ncu's
// DRAM bytes in the model's place, so that the fit sees the time model's
// error and not the DRAM model's. With the model's own DRAM bytes it is
// within 16 % of the measured time on 49 of the 54 copy-family launches of
// the recorded sweep (25 % on all), within 25 % on 157 of its 158
// launches, and on 46 of the 50 timed launches of
// cuda/testdata/holdout_metrics.jsonl, which the fit never saw (go test
// ./calibrate -run TestTimeAccuracy -v prints the table per kernel, both
// ways). The limits:
//
// Bandwidth: the DRAM bytes at the copy bandwidth, a sparse access charged
// the DRAM time it occupies. A request's DRAM blocks (fetch blocks for
// loads, sectors for stores) are binned by their spacing, the bytes the
// request spans over its blocks; a block at spacing s costs
// DRAMAccessBytes × (1 - DRAMAccessSpacing / s) bytes' time where that is
// more than its bytes. Evidence: strided_read over 256 MB at strides 32, 64
// and 128 (64-byte blocks 128, 256 and 512 bytes apart) read 134, 67 and 34
// MB in 36.4, 24.0 and 15.2 µs, 3.7, 2.8 and 2.2 TB/s where a copy moves
// 4.2; at L2 fetch 32 B the same strides took 32.6, 22.8 and 14.7 µs for
// half the bytes. The time follows the accesses, not the bytes: about 60,
// 80 and 90 bytes' time each. The strided copy at stride 32, 1.5 times the
// old model's time, is now close: strided_copy at stride 32 took 99.7 µs
// where the model says 88.8. A kernel that only stores reads what its
// partial sectors fill at its stores' spacing (strided_write at stride 32:
// 65 MB read and 65 MB written in 78.5 µs).
//
// A sector written back to a line its warp has just read, a
// read-modify-write (Traffic.Rewrite), costs DRAMRewriteBytes × (1 -
// DRAMAccessSpacing / s) more (fitted 106 bytes). Evidence: at the copy
// bandwidth, one float a line read and written back took the H200 212
// bytes' time a line (update_x_aos with 128-byte structs, 2^24 of them),
// more than strided_copy at the same spacing, 202, which reads the same
// 64-byte blocks and also fills every sector it writes from DRAM, a
// quarter more bytes; strided_read alone took 74 and strided_write, fill
// included, 159 (all at stride 32, n 2^26). Writing back the line just
// read costs about as much as a second sparse access, where a write to
// another buffer does not. A dense read-modify-write (update_x_soa) pays
// nothing: its spacing is below DRAMAccessSpacing. With it, update_x_aos
// with structs of 64 bytes and more takes 0.98 to 1.15 times the model's
// time, where it took 1.34 to 1.71 without. Limit: one access curve for
// every fetch size (in cuda/reference/time.jsonl, strided_read at stride
// 24 and L2 fetch 32 B is 1.30 times faster than the model, a random
// gather of 2^23 at L2 fetch 128 B 1.31 times slower).
//
// Latency (Little's law): each SM finishes (warps resident × loads in
// flight per warp) requests per latency, the latency growing with the bytes
// in flight, counted up to a line a request: more than a line is what the
// bandwidth limit charges (TimeParts.InFlightPerSM reports the bytes in
// flight uncapped, every sector of every request). A gather's two loads wait in turn (in[idx[t]]
// needs idx[t]). A load the L2 holds waits L2LatencySeconds, and the share
// of load sectors DRAM sends, or that a request asks for again while the
// request before it has their fetch in flight (Traffic.LdAgain), waits
// LatencySeconds. Evidence: strided_read at strides 1, 2 and 4 over 256 MB
// took 163.7, 87.6 and 61.5 µs, one latency a wave of requests however
// many sectors each holds, until the bandwidth limit; random gathers of 12
// to 100 MB (n 2^20 to 2^23, in the L2 after their first touch) took 12.9
// to 85.6 µs, about 1 µs a load; offset_copy of 2^28 bytes at offset 1,
// each warp's two sectors one its neighbour is fetching, took 676.4 µs,
// 0.68 µs a wave of requests, as DRAM sends every sector.
// Limit: the fit puts the L2's latency (1.11 µs) above DRAM's (0.60): the
// only launches that set it are those gathers, whose requests each touch 32
// lines, so it stands for a scattered request's wait for its last line, not
// for one hit's latency.
//
// L1 lines: an SM's L1 looks up one line a cycle (L1LineRate, fitted 1.9 G
// a second, about the H200's 1.98 GHz clock), so a request whose lanes
// touch 32 lines costs 32 cycles whether they hit or miss. Evidence:
// sum_fields_aos, one float a load, with structs of 32, 64 and 128 bytes
// and n = 2^24 took 144, 529 and 2074 µs; its loads touch 34, 134 and 537 M
// lines, at 261 G lines a second 128, 514 and 2057 µs, where its DRAM bytes
// need 141, 268 and 520.
//
// L2 stores: every line a store request touches is a packet to the L2, and
// every sector it writes in part a merge there (L2StoreRate). Evidence:
// transpose_coalesced_read, whose stores each touch 32 lines, took 283 µs
// for 4096 × 4096 floats, 1094 for 8192 × 8192, where its DRAM bytes need
// 32 and 145. Limit: it is still up to 1.26 times slower than the rate
// fitted to the rest.
//
// Shared banks: every shared-memory wavefront is a cycle of its SM
// (SharedWavefrontRate). Evidence: transpose_tiled without padding, whose
// column reads are 32-way bank conflicts, took 81.4 µs for 4096 × 4096
// floats, padded 50.8.
//
// Block starts: the device starts at most BlockRate blocks a second, which
// caps tiny blocks (coalesced_copy with blocks of 32 threads, 1276 µs).
//
// What is left out: the ramp of a small launch (a vectorized copy of 4 M
// floats is up to 1.35 times slower than the model), DRAM refresh and the
// clocks of the run.
package sectors
