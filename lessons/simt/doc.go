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
//   - An instruction the compiler predicates rather than branches around:
//     a GPU warp executes it with no lane active, and ncu counts it; a Go
//     thread that skips the call leaves no trace. The tiled transpose's
//     first shared store is one (sectors.Instruction.Predicated): where the
//     tile does not divide the matrix, smsp__inst_executed_op_shared_st.sum
//     is Model's less those instructions (TestTransposeEdgePredicatedStores).
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
