// Package usercuda runs a kernel a learner wrote in CUDA on this machine's
// GPU, knowing nothing of the exercise: lab.TryCUDA says which exercise and
// which buffers, this package compiles, runs, checks and profiles. It sits
// beside the harness (package cuda), whose Builder (nvcc, the cache
// directory) and GPU (the device, ncu, whether the driver lets ncu count)
// it uses; the tools themselves are package cuda/toolkit's.
//
//	k := &usercuda.Kernel{Name: "copy", Body: body, Args: args, Grid: grid, Block: block}
//	res, err := usercuda.Run(ctx, gpu, k, usercuda.Options{Counters: true})
//	// res.Outputs, res.MedianMs, res.Counters (ncu's, for one launch)
//
// A Kernel gives the entry's name, its args (C types from a fixed list,
// each buffer's bytes and input, which are outputs, each value), the
// learner's body and the launch. Kernel.Source generates the program (the
// body after `#line 1 "kernel.cu"`, so that nvcc's and compute-sanitizer's
// line numbers are the learner's; the host side is kernelsrc/host.cu
// after cuda.SharedHeader, the harness's own flush, timing loop and exit
// statuses);
// Compile builds it with nvcc into the cache directory under its content
// hash (a refusal is a *CompileError holding nvcc's message as
// "kernel.cu(3): error: ..."). The program reads its launch from a plan
// (plan.json, written by cuda.PlanWriter as the harness's plans are) and
// its inputs from files, launches the kernel once for the outputs, then
// times warm-up and timed launches with CUDA events as the harness does,
// restoring every buffer (and flushing the L2) before each, so that a
// kernel that updates in place is timed on the same data every time. On request it runs first under
// compute-sanitizer (memcheck or racecheck: a finding is a
// *SanitizerError) and last under ncu for the course's metrics of one
// launch (a driver that refuses them sets the result's CountersErr to a
// *toolkit.CountersDeniedError, and the GPU remembers it). A fault is a
// *LaunchError naming CUDA's error; a kernel that does not return is
// killed at the timeout, with every process of its group (*TimeoutError).
//
// The learner's text is untrusted: Kernel.Validate bounds the body, the
// args and the buffers (MaxBodyBytes, MaxArgs, MaxArgBytes, MaxTotalBytes,
// MaxSharedBytes) before anything is written or compiled, every run has a
// timeout, and what nvcc and compute-sanitizer print is bounded.
// Errors start with "cuda: ", as the course has always printed them.
package usercuda
