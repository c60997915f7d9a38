package simt

// callerPC returns the program counter its caller returns to: called from
// Load, the address just after the Load call in the kernel, which names the
// access site. It reads the frame pointer (callerpc_amd64.s): about 10 ns a
// call where runtime.Callers takes about 400 (BenchmarkCallerPC and
// BenchmarkCallersPC, on the course's AMD EPYC build machine), which would
// otherwise be most of a launch's time. Its caller must not be inlined.
func callerPC() uintptr
