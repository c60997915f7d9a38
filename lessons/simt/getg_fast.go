//go:build amd64 || arm64

package simt

// getg returns the running goroutine's identity: the address of its g
// (getg_amd64.s, getg_arm64.s). Two goroutines alive at once never share
// one; a goroutine that has ended may hand its g to a later one.
func getg() uintptr
