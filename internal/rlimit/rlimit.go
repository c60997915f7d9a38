package rlimit

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Limits are the resource limits of a process, each set soft and hard
// alike; 0 leaves one as it is. Core files are always turned off
// (RLIMIT_CORE 0): a core file would write the process's memory where the
// file size limit does not reach.
type Limits struct {
	// AS is the address space in bytes (RLIMIT_AS), CPU the CPU time in
	// seconds (RLIMIT_CPU: SIGXCPU, then SIGKILL a second later), FSize
	// the largest file it may write in bytes (RLIMIT_FSIZE: a longer write
	// fails), NoFile the file descriptors it may hold (RLIMIT_NOFILE).
	AS, CPU, FSize, NoFile uint64
}

// ErrUnsupported is a limit this operating system cannot set here.
var ErrUnsupported = errors.New("rlimit: not supported on this system")

// String writes l as Parse reads it: "as=N,cpu=N,fsize=N,nofile=N".
func (l Limits) String() string {
	return fmt.Sprintf("as=%d,cpu=%d,fsize=%d,nofile=%d", l.AS, l.CPU, l.FSize, l.NoFile)
}

// Parse reads Limits written by String: comma-separated key=number pairs
// of the keys as, cpu, fsize and nofile, each at most once; a key left
// out is 0.
func Parse(s string) (Limits, error) {
	var l Limits
	seen := map[string]bool{}
	for kv := range strings.SplitSeq(s, ",") {
		k, v, ok := strings.Cut(kv, "=")
		n, err := strconv.ParseUint(v, 10, 64)
		if !ok || err != nil {
			return Limits{}, fmt.Errorf("rlimit: %q in %q: want key=number (as, cpu, fsize, nofile)", kv, s)
		}
		if seen[k] {
			return Limits{}, fmt.Errorf("rlimit: %s twice in %q", k, s)
		}
		seen[k] = true
		switch k {
		case "as":
			l.AS = n
		case "cpu":
			l.CPU = n
		case "fsize":
			l.FSize = n
		case "nofile":
			l.NoFile = n
		default:
			return Limits{}, fmt.Errorf("rlimit: unknown limit %q in %q: want as, cpu, fsize or nofile", k, s)
		}
	}
	return l, nil
}
