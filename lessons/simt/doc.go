// Package simt runs a kernel written in Go the way a GPU runs a CUDA
// kernel, computes what it computes, and prices its memory accesses with
// the course's model (package sectors): the learner's own code, with or
// without a GPU.
//
//	in, out := simt.NewGlobal("in", src), simt.NewGlobal("out", dst)
//	copy := func(t *simt.Thread) {
//		i := t.BlockIdx.X*t.BlockDim.X + t.ThreadIdx.X
//		if i < n {
//			out.Store(t, i, in.Load(t, i))
//		}
//	}
//	r, err := simt.Launch{Grid: simt.Dim{X: n / 256}, Block: simt.Dim{X: 256}}.Run(copy)
//	// dst holds the copy; r.Modelled.Metrics holds ncu's counts for it.
//
// # SIMT
//
// A GPU runs a kernel as threads, grouped in blocks, and executes them in
// warps: 32 threads of a block (threads ty*blockDim.x+tx in order) that
// issue each instruction together, one instruction for the 32 lanes (single
// instruction, multiple threads). When the kernel says in[i], each lane
// sends its own address, and the warp's load is one request to the L1,
// which fetches every 32-byte sector some lane touches: 4 sectors for 32
// neighbouring floats, 32 for floats 32 apart. What a kernel costs is
// decided warp instruction by warp instruction, not thread by thread.
//
// simt runs the threads one after another, each to its end (or to its
// next barrier), and records every Load and Store with its site: the call
// in the source, named by its program counter. A warp's instructions are
// then what lockstep execution makes of its lanes' records: the lanes that
// ran a site for the k-th time since the last barrier issued it together,
// as one instruction, with those lanes active. Each goes to the model
// (sectors.Stream) in an order that every lane's own order agrees with,
// warp after warp, block after block, as Model issues the course's
// kernels: for those, written in Go statement by statement, simt's counts
// are Model's, to the byte (TestSpecKernelsMatchModel).
//
// # Divergence
//
// Lanes that take different sides of a branch (if on the thread's index),
// or loop a different number of times, cannot run the same instruction at
// once: the warp runs each side, or each trip, with only its own lanes
// active. Every instruction then costs a request for fewer lanes' bytes.
// Result.Sites gives each site's instructions, sectors and active lanes,
// and counts its partial instructions (Site.Partial, with the first one's
// active mask): a bounds check at the end of an array, an if/else on odd
// and even threads, a loop whose trip count depends on the thread.
//
// # Barriers and shared memory
//
// A Shared array is a block's own __shared__ memory; its threads exchange
// data through it, and Sync (__syncthreads) makes each wait until all of
// its block got there. simt runs a block whose threads call Sync interval
// by interval: every thread up to the barrier, then every thread on to the
// next. A block whose threads do not all reach the same barriers, which on
// a GPU hangs, is an error (ErrBarrier). Two threads that touch the same
// shared word between barriers, one of them writing, race: the result
// depends on an order the GPU does not promise; simt lists them
// (Result.Races), as compute-sanitizer's racecheck does. The model prices
// shared memory by the bank rule: 32 banks of 4 bytes, and a warp's
// access takes as many wavefronts as its busiest bank has distinct words.
//
// # What simt cannot see
//
// simt groups a warp's accesses as the source reads: the lanes that ran a
// site for the k-th time issue one instruction. The compiler may group
// them otherwise. Each item below was measured on the H200 (driver
// 580.159.04, nvcc 13.0.88 -O3 -lineinfo, ncu 2025.3.1) with the smallest
// kernel that shows it, its counts read from ncu's source counters per
// SASS instruction (runs/issue25_run1.sh, runs/log/issue25_run1.log; the
// pages are cuda/toolkit/testdata/ncusource); cuda/twin names each one on
// the line of a learner's CUDA body where it happens.
//
//   - Loop unrolling across lanes' trips. A loop whose trip count differs
//     between lanes (a grid-stride loop with the stride hoisted into a
//     variable) is unrolled by nvcc after a remainder loop: `for (e = i; e <
//     n; e += stride) out[e] = in[e]` becomes one load in the remainder loop
//     and four in the unrolled body (sc_hoisted: 5 LDG and 5 STG on one
//     line). In a warp whose lanes run different trip counts, lanes a trip
//     apart then share an instruction, which touches the sectors of both
//     trips: 10-kernels/strided-copy's hoisted-stride loop, 32,622 load
//     sectors on the GPU where simt counts 32,614 (ada's variant), 23,988
//     where it counts 23,977 (issue25's). Where every warp's lanes run the
//     same trips (the default variant, n = 100000, n mod T a multiple of
//     32), the unrolled loop costs exactly simt's 12,500; with the stride
//     written inline, nvcc does not unroll it.
//   - Merged branch loads. `if (i % 2 == 0) v = in[i]; else v = in[n - i];`
//     (4 blocks of 256, n = 1000: bl_select) compiles to a select of the
//     address and one load on the line that uses v: 32 load instructions
//     where simt counts 64 (two sites of 16 lanes a warp), and 247 sectors
//     where simt counts 250 (a sector both halves touch is fetched once).
//   - Predicated shared operations. A shared reduction's halving loop
//     `if (t < w) s[t] += s[t + w]` (4 blocks of 256: bl_reduce) is unrolled
//     and predicated: each of its 16 shared loads executes in all 32 warps,
//     whatever the lanes: 516 shared load instructions in all where simt,
//     counting warps with a lane on, has 100 (5.16 times fewer); the
//     wavefronts agree (100).
//     The tiled transpose's first shared store is one too
//     (sectors.Instruction.Predicated): where the tile does not divide the
//     matrix, smsp__inst_executed_op_shared_st.sum is Model's less those
//     instructions (TestTransposeEdgePredicatedStores). Global ones alike:
//     a guarded LDG executes in warps with no lane on (sc_solution: 3,136
//     executions, 3,125 requests); l1tex__t_requests counts only the
//     requests, which are simt's.
//   - ncu's wavefront excess on large launches. A 16x16 tile read down its
//     columns, an 8-way conflict (bl_wave256, bl_wave2048): at 256x256, the
//     hardware's l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum is
//     16,384, the bank rule's exactly; at 2048x2048, 1,095,162 where the
//     rule (and ncu's own source counter of the same launch,
//     memory_l1_wavefronts_shared) says 1,048,576: 4.4 % more, and the
//     stores 138,521 against 131,072 with no conflict at all. The course's
//     transposes measure the same (tile 32 pad 1: 1.07x at 2048², 1.09x at
//     8192²; an exact 2-way conflict at tile 16, 2.000 a warp at 256², 2.09
//     to 2.19 at 1024² to 4096²; runs/log/issue25_wavefronts, the
//     coordinator's run). The bank rule is what a warp's addresses ask of
//     the banks; the excess is the hardware's, and no kernel of the
//     learner's can remove it.
//   - A helper function Go does not inline is one site for all its calls,
//     where CUDA inlines device functions and gives each call its own:
//     lanes that reach it from different calls under divergence may then
//     disagree on the order of the sites, and simt splits the instruction
//     where they would wait on each other (Result.Split). A helper Go
//     inlines has a site per call.
//   - One site that reaches two buffers (a pointer chosen per lane) is
//     counted as one request per buffer: the model gives each buffer an
//     address space of its own.
//   - Time: the time model reads a spec, and a learner's kernel has none.
//
// Threads run in order, on the calling goroutine; a kernel must not start
// goroutines of its own, nor keep a *Thread past its own call (an error,
// ErrAccess). A kernel that never returns never lets Run return: a grader
// runs learner code under a time limit of its own.
package simt
