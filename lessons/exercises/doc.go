// Package exercises holds the course's "fix this kernel" exercises: a
// kernel the learner writes in Go, run by lessons/simt through the model,
// and the same kernel body in CUDA, for a GPU. Each exercise hands the
// learner a starter kernel whose output is right but whose memory
// accesses are not coalesced, and asks for the same output within counter
// targets: Nsight Compute's metrics (package metrics) at most a count
// worked out for the learner's own variant.
//
//	e, _ := exercises.Lookup("10-kernels/strided-copy")
//	v := e.Variant("ada")                  // ada's n and k
//	out, err := e.Run(v, myKernel)         // out.Correct, out.Targets, out.Result
//	obs := exercises.Observe(e.ID, "ada", myKernel, nil) // in a sandbox's child: what it did
//	rep := exercises.Judge(e.ID, "ada", obs)             // in the parent: the verdict, as JSON
//	p, err := e.CUDA(v)                    // the CUDA side: signature, args, Check
//
// # The exercises
//
//   - 10-kernels/strided-copy: a copy where each thread moves k
//     neighbouring floats, so a warp's lanes are k floats apart. The fix
//     deals the elements out a grid apart. Targets: load and store sectors
//     at most ceil(4n/32), the sectors the n floats fill.
//   - 10-kernels/aos-soa: out[i] = x + vx of particle i, particles of
//     `fields` floats with x and vx at seeded fields. The learner gets the
//     same particles twice, as an array of structs (aos[i*fields+f]) and
//     as a struct of arrays (soa[f*n+i]), writes out, and only out is
//     compared: the fix is to read the layout where a field's values lie
//     side by side. n is a multiple of 256, so each field's array starts
//     on a sector. Targets: load sectors at most 2*4n/32, store sectors
//     4n/32.
//   - 10-kernels/transpose: a rows x cols transpose, sizes from 96 to 768,
//     mostly not multiples of 32, blocks of 32x8 threads a 32x32 tile, and
//     a shared tile of 32x33 floats (TileWords) passed to the Go kernel
//     (the CUDA body declares its own). Targets: load and store sectors at
//     most those of reading each tile row as one run of up to 32 floats
//     (a run that starts mid-sector costs a sector more), and no
//     bank conflicts (l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld
//     and _st, the model's wavefronts less its instructions).
//   - 10-kernels/gather: n keys looked up in a table of m floats, n from m
//     to 4m so that sorted keys lie densely. The answer is a Gather: a host
//     step (Order) that reorders the keys, and the kernel. The output is
//     the pairs (key, table[key]) in out_key and out_val, in any order: the
//     check takes them as a multiset. Why this shape: sorting the keys
//     makes the table loads of a warp contiguous, but if the output had to
//     stay in the keys' first order, each thread would store to where its
//     key came from, and the scatter would move from the loads to the
//     stores; with pairs in any order the stores stay coalesced too, and
//     the check stays exact. Order is the learner's code on the host, as a
//     sort is in a real program, and the same Order serves the CUDA path
//     (Problem.Ordered). Targets: load sectors at most the keys' own
//     4n/32 plus the table's with the keys sorted (the distinct sectors of
//     each warp's 32 keys; sorting by sector, key/8, gives the same);
//     store sectors at most 2*4n/32.
//   - 10-kernels/aligned-vector: copy in[off:off+n] to out[off:off+n]
//     with one float4 a thread, off not a multiple of 4. The starter views
//     the window from off as float4s, which the GPU refuses
//     (cudaErrorMisalignedAddress) and simt.As reports as a fault. The fix
//     copies the floats up to the first 16-byte boundary one by one, the
//     middle as float4s and the rest one by one. Targets: requests at most
//     ceil(nv/32)+2 for the nv float4s of the middle (one instruction each
//     for a head and a tail), and sectors at most those of that copy with
//     the head peeled to the first 16-byte boundary, loads and stores
//     alike (peeling to a 32-byte boundary meets them too).
//
// # Variants
//
// A learner's parameters come from sha256(id + "\x00" + learner): the
// first 8 bytes are Variant.Seed, the next 16 seed the draw of the
// parameters, each within its Param's range (and the exercise's
// constraints: fx and fv differ, off is not a multiple of 4, ...); the
// data (whole floats from 1 to 2^20, the keys) comes from the same hash.
// The key (reference output and targets) is recomputed for each variant,
// so a neighbour's numbers do not pass. The empty learner gets every
// Param's Default: a fixed variant for a notebook run by no one.
//
// # Running learner code
//
// Run takes the kernel as any and checks it against the exercise's Go
// type (a func type whose underlying type is the same is taken; for the
// gather, a Gather or *Gather); a wrong type is an error naming both.
// The launch is the variant's, never the learner's. A kernel that faults
// or panics is an Outcome with a Fault (simt recovers kernel panics; a
// panicking Order is recovered here), never a panic; a kernel that never
// returns never lets Run return, so a grader runs learner code in a
// process of its own under a time limit (grader/sandbox), and so does
// lab.Try in a notebook.
//
// The grade is the graded launch's, so the work must be in it. simt fails
// a launch whose kernel moves work out of it (simt.ErrEscape: a launch
// inside the kernel, a Thread kept or given to a goroutine, ...), and a
// gather's Order runs as a simt.Host step, which fails on any use of
// simt. A right output must also be the launch's own: every word of it
// that is not 0 (outputs start zeroed) stored by a thread of the launch,
// and every word of input it depends on (each exercise says which: all of
// in for a copy, x and vx of each particle from either layout, every key
// and the table's word at each) loaded by one (simt's Result.Buffers).
// An output worked out on the host, written around Store, or made from a
// copy of the inputs the notebook can reach is a Fault, ErrUncounted,
// that names the first word at fault: its counts say nothing of the
// kernel.
//
// Where a target is missed, Target.Why names the sites that cost more
// than their bytes need (simt's Result.Sites), with how far apart the
// first warp's lanes are (Result.Trace): lanes 28 B apart put each 4-byte
// access in a sector of its own; tile words 32 apart put a warp in one
// bank; scattered keys touch a sector a lane.
//
// # Observed in one process, judged in another
//
// A grader that runs learner code in a child process (grader/sandbox)
// splits Run in two. The child calls Observe, which runs the kernel and
// reports what it saw: the output buffers' bytes, the model's counts, and
// why each target's metric costs what it does (Observation, JSON). The
// parent calls Judge with it: Judge works out the variant's reference and
// targets itself, compares the bytes, holds each count to its target and
// gives the points. The child decides nothing; what is learner text in
// an observation (a panic's value, a source line) is cut to MaxText.
//
// Judge (and Run) also hold each sector count to the least a right output
// needs: the distinct sectors of the input it must read (values drawn at
// random, which no kernel knows without loading them) and of the output it
// must write. An output that came with fewer accesses than that was made
// where the graded launch could not see (a launch started inside the
// kernel): it is not right, and its Fault is ErrUncounted.
//
// # JSON schema
//
// Grade (Judge of Observe, in one process) returns a Report, which encodes as one JSON object with these
// fields, always present:
//
//	id          string   the exercise, "10-kernels/transpose"
//	learner     string   the learner's id as given ("" is the default variant)
//	params      object   the variant's parameters, name to integer
//	correct     bool     the output equals the reference
//	mismatch    object   null, or the first difference:
//	                       buffer string, index int, got string, want string,
//	                       why string (omitted when empty)
//	targets     array    one object per target, in Exercise.Metrics' order
//	                     (empty when the kernel could not be run at all):
//	                       metric string (Nsight Compute's name), want number,
//	                       got number (the model's count; 0 when the launch
//	                       did not finish), pass bool (got <= want),
//	                       why string (omitted when met)
//	pass        bool     correct and every target met
//	points      int      1 for a correct output plus 1 a target met; 0 if wrong
//	max_points  int      1 plus the number of targets
//	error       string   "" or why it was not graded in full: an unknown id,
//	                     a kernel of the wrong type, a fault, a panic
//
// # The CUDA side: how lab.TryCUDA judges a body
//
// A CUDA body passes when it runs, its output is right (Problem.Check) and
// every target is met by the GPU's own count: ncu's hardware counter of
// the launch, except the bank conflicts, taken from ncu's source counters
// (each shared instruction's wavefronts less its ideal ones, the bank
// rule of the addresses it was given), because the hardware's counter
// grows past the rule on large launches (lessons/simt's doc).
//
// The compiler may group a warp's accesses into instructions otherwise
// than simt, which takes the k-th trip of every lane together: nvcc
// unrolls a loop whose trip count differs between lanes (a grid-stride
// loop with a hoisted `int stride = blockDim.x * gridDim.x`) after a
// remainder loop, and in the warp whose lanes run different trip counts,
// lanes a trip apart then share one instruction, which touches a sector
// more. Measured on the H200 (runs/log/issue25_run2_lab.txt): the
// textbook hoisted-stride solution of 10-kernels/strided-copy costs 32,622
// load sectors for ada's variant against a target of 32,614, and 23,988
// against 23,977 for issue25's, where simt's count of its Go twin is the
// target exactly. Such a body is not wrong, and passes: a target the GPU
// misses by at most 1 % (lab.RegroupAllowance; at least one) is judged on
// the model, per line, when
//
//   - a Go twin is given, right and meeting the target, and every line of
//     the body whose count differs from the twin's (cuda/twin pairs them by
//     buffer and access order) differs by a transformation its SASS shows
//     (unrolled, merged, predicated); a line that differs for no known
//     reason fails the target;
//   - or, without a Go twin, a line of the body shows an unrolled loop in
//     its SASS (more instructions of an access than the text has).
//
// No wrong solution fits in the allowance: the exercises' mistakes cost a
// quarter or more above the target (lanes 8 bytes apart in
// 10-kernels/strided-copy: twice; a struct's field read from the array of
// structs: its stride over 4 bytes; an unpadded tile: 32 wavefronts a
// warp; keys in their first order: a sector a lane; one float a thread
// where float4s fit: four times the requests). lab's TestGPULearnerStyles
// holds this on the GPU with learner-style bodies of every exercise, right
// and wrong, and with and without their Go twins.
//
// # CUDA
//
// CUDA returns a Problem: the kernel's fixed signature, starter, solution
// and wrong bodies, the arguments as plain data (name, C type, element
// bytes, the buffer's bytes before the launch, output or not, a scalar's
// value), the launch, and Check, which compares the output bytes with the
// reference Run uses. Nothing here runs CUDA: the harness (package cuda)
// does, given the Problem turned into its own terms by lab.
package exercises
