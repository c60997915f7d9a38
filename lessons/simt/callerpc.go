package simt

import "runtime"

// callersPC is callerPC by runtime.Callers, for the architectures without
// callerpc_amd64.s: some 40 times slower (BenchmarkCallersPC). Frames: 0 runtime.Callers, 1
// callersPC, 2 its caller (Load), 3 the caller's caller (the kernel). It
// must be called directly or through a func variable, which adds no frame.
//
//go:noinline
func callersPC() uintptr {
	var pc [1]uintptr
	runtime.Callers(3, pc[:])
	return pc[0]
}
