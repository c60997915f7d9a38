//go:build !amd64 && !arm64

package simt

import (
	"bytes"
	"runtime"
	"strconv"
)

// getg returns the running goroutine's identity: its id, read from the
// first line of its stack ("goroutine 18 [running]:"). About a
// microsecond, where the assembly of amd64 and arm64 takes one
// nanosecond; on these architectures simt checks it at a launch's rarer
// calls only (see goroutineChecks).
func getg() uintptr {
	var buf [64]byte
	b := buf[:runtime.Stack(buf[:], false)]
	b = bytes.TrimPrefix(b, []byte("goroutine "))
	if i := bytes.IndexByte(b, ' '); i > 0 {
		if id, err := strconv.ParseUint(string(b[:i]), 10, 64); err == nil {
			return uintptr(id)
		}
	}
	return 0
}
