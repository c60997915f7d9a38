//go:build amd64 || arm64

package spec

// prefetch asks the CPU to bring the cache line of *p into its caches,
// without waiting for it: an instruction that never faults and changes no
// result (PREFETCHT0 on amd64, PRFM PLDL1KEEP on arm64).
//
//go:noescape
func prefetch(p *int32)
