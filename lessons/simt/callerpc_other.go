//go:build !amd64

package simt

// callerPC returns the program counter its caller returns to: called from
// Load, the address just after the Load call in the kernel, which names the
// access site. Its caller must not be inlined.
var callerPC = callersPC
