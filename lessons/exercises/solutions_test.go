package exercises

import (
	"slices"

	"github.com/coalescing-course/coalesce/lessons/exercises/exercisestest"
	"github.com/coalescing-course/coalesce/lessons/simt"
)

// The answers the tests hold each exercise to, and a wrong kernel for
// each: they live in tests, out of the package a learner imports.

func stridedCopySolution(t *simt.Thread, in, out *simt.Global[float32], n, k int) {
	i := t.BlockIdx.X*t.BlockDim.X + t.ThreadIdx.X
	threads := t.GridDim.X * t.BlockDim.X
	for j := 0; j < k; j++ {
		if e := j*threads + i; e < n {
			out.Store(t, e, in.Load(t, e))
		}
	}
}

// stridedCopyWrong misses the last element.
func stridedCopyWrong(t *simt.Thread, in, out *simt.Global[float32], n, k int) {
	i := t.BlockIdx.X*t.BlockDim.X + t.ThreadIdx.X
	for j := 0; j < k; j++ {
		if e := i*k + j; e < n-1 {
			out.Store(t, e, in.Load(t, e))
		}
	}
}

func aosSoASolution(t *simt.Thread, aos, soa, out *simt.Global[float32], n, fields, fx, fv int) {
	if i := t.BlockIdx.X*t.BlockDim.X + t.ThreadIdx.X; i < n {
		out.Store(t, i, soa.Load(t, fx*n+i)+soa.Load(t, fv*n+i))
	}
}

// aosSoAWrong adds x to itself.
func aosSoAWrong(t *simt.Thread, aos, soa, out *simt.Global[float32], n, fields, fx, fv int) {
	if i := t.BlockIdx.X*t.BlockDim.X + t.ThreadIdx.X; i < n {
		out.Store(t, i, soa.Load(t, fx*n+i)+soa.Load(t, fx*n+i))
	}
}

func sortKeys(keys []int32) []int32 {
	slices.Sort(keys)
	return keys
}

// bucketKeys is a counting sort by sector (key/8): the bucketing the
// package documentation says meets the target as a sort does.
func bucketKeys(keys []int32) []int32 {
	var most int32
	for _, k := range keys {
		most = max(most, k/8)
	}
	start := make([]int, most+2)
	for _, k := range keys {
		start[k/8+1]++
	}
	for b := 1; b < len(start); b++ {
		start[b] += start[b-1]
	}
	out := make([]int32, len(keys))
	for i := len(keys) - 1; i >= 0; i-- { // from the end, so that a bucket is in reverse: not sorted within
		k := keys[i]
		out[start[k/8]] = k
		start[k/8]++
	}
	return out
}

var (
	gatherSolution = Gather{Order: sortKeys, Kernel: gatherStarter}
	gatherBucketed = Gather{Order: bucketKeys, Kernel: gatherStarter}
	gatherWrong    = Gather{Order: sortKeys, Kernel: func(t *simt.Thread, table *simt.Global[float32], keys, outKey *simt.Global[int32], outVal *simt.Global[float32], n int) {
		if i := t.BlockIdx.X*t.BlockDim.X + t.ThreadIdx.X; i < n {
			k := keys.Load(t, i)
			outKey.Store(t, i, k)
			outVal.Store(t, i, table.Load(t, int(k)/2))
		}
	}}
)

// alignedVectorSolution peels the floats before the first 16-byte
// boundary, copies the middle as float4s and the rest one by one.
var alignedVectorSolution = alignedVectorPeeled(4)

// alignedVector32 peels to a 32-byte boundary (up to 7 floats) instead of
// a 16-byte one: another right answer, which the targets must take.
var alignedVector32 = alignedVectorPeeled(8)

// alignedVectorPeeled is the aligned copy that peels floats one by one up
// to a multiple of align floats (4: 16 bytes), then copies float4s.
func alignedVectorPeeled(align int) AlignedVectorKernel {
	return func(t *simt.Thread, in, out *simt.Global[float32], off, n int) {
		i := t.BlockIdx.X*t.BlockDim.X + t.ThreadIdx.X
		head := min((align-off%align)%align, n)
		nv := (n - head) / 4
		src, dst := simt.As[[4]float32](in, off+head), simt.As[[4]float32](out, off+head)
		if i < nv {
			dst.Store(t, i, src.Load(t, i))
		}
		if i < head {
			out.Store(t, off+i, in.Load(t, off+i))
		}
		tail := off + head + 4*nv
		if i < n-head-4*nv {
			out.Store(t, tail+i, in.Load(t, tail+i))
		}
	}
}

// alignedVectorScalar copies the window a float at a time, four a thread,
// coalesced: right, but four times the requests of float4s.
func alignedVectorScalar(t *simt.Thread, in, out *simt.Global[float32], off, n int) {
	i := t.BlockIdx.X*t.BlockDim.X + t.ThreadIdx.X
	threads := t.GridDim.X * t.BlockDim.X
	for j := 0; j < 4; j++ {
		if e := j*threads + i; e < n {
			out.Store(t, off+e, in.Load(t, off+e))
		}
	}
}

// alignedVectorWrong forgets the head.
func alignedVectorWrong(t *simt.Thread, in, out *simt.Global[float32], off, n int) {
	i := t.BlockIdx.X*t.BlockDim.X + t.ThreadIdx.X
	head := min((4-off%4)%4, n)
	nv := (n - head) / 4
	src, dst := simt.As[[4]float32](in, off+head), simt.As[[4]float32](out, off+head)
	if i < nv {
		dst.Store(t, i, src.Load(t, i))
	}
	tail := off + head + 4*nv
	if i < n-head-4*nv {
		out.Store(t, tail+i, in.Load(t, tail+i))
	}
}

// answers are each exercise's solution and wrong kernel.
var answers = map[string]struct{ solution, wrong any }{
	"10-kernels/strided-copy":   {StridedCopyKernel(stridedCopySolution), StridedCopyKernel(stridedCopyWrong)},
	"10-kernels/aos-soa":        {AoSSoAKernel(aosSoASolution), AoSSoAKernel(aosSoAWrong)},
	"10-kernels/transpose":      {TransposeKernel(exercisestest.TransposeSolution), TransposeKernel(exercisestest.TransposeWrong)},
	"10-kernels/gather":         {gatherSolution, gatherWrong},
	"10-kernels/aligned-vector": {AlignedVectorKernel(alignedVectorSolution), AlignedVectorKernel(alignedVectorWrong)},
}
