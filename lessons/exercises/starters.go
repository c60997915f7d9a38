package exercises

import "github.com/coalescing-course/coalesce/lessons/simt"

// The starters, what each exercise hands the learner to fix. Their source
// is Exercise.StarterGo (this file is embedded): what runs is what the
// notebook shows.

// StridedCopy copies n floats from in to out. Each thread copies k
// neighbouring elements, so the lanes of a warp are k elements apart.
func stridedCopyStarter(t *simt.Thread, in, out *simt.Global[float32], n, k int) {
	i := t.BlockIdx.X*t.BlockDim.X + t.ThreadIdx.X
	for j := 0; j < k; j++ {
		if e := i*k + j; e < n {
			out.Store(t, e, in.Load(t, e))
		}
	}
}

// AoSSoA writes out[i] = x + vx of particle i, reading the particles as
// an array of structs: particle i's field f is aos[i*fields+f].
func aosSoAStarter(t *simt.Thread, aos, soa, out *simt.Global[float32], n, fields, fx, fv int) {
	if i := t.BlockIdx.X*t.BlockDim.X + t.ThreadIdx.X; i < n {
		out.Store(t, i, aos.Load(t, i*fields+fx)+aos.Load(t, i*fields+fv))
	}
}

// Transpose writes the rows x cols matrix in as the cols x rows matrix
// out. Each block covers a 32x32 tile with 32x8 threads, 4 rows a thread;
// the reads are along rows, the writes down columns.
func transposeStarter(t *simt.Thread, in, out *simt.Global[float32], tile *simt.Shared[float32], rows, cols int) {
	c := t.BlockIdx.X*32 + t.ThreadIdx.X
	for j := 0; j < 32; j += 8 {
		if r := t.BlockIdx.Y*32 + t.ThreadIdx.Y + j; r < rows && c < cols {
			out.Store(t, c*rows+r, in.Load(t, r*cols+c))
		}
	}
}

// Order returns the keys in the order the kernel's threads take them:
// thread i looks up keys[i]. The starter keeps the order they came in.
func gatherStarterOrder(keys []int32) []int32 { return keys }

// Gather writes, for each key, the pair (key, table[key]).
func gatherStarter(t *simt.Thread, table *simt.Global[float32], keys, outKey *simt.Global[int32], outVal *simt.Global[float32], n int) {
	if i := t.BlockIdx.X*t.BlockDim.X + t.ThreadIdx.X; i < n {
		k := keys.Load(t, i)
		outKey.Store(t, i, k)
		outVal.Store(t, i, table.Load(t, int(k)))
	}
}

// AlignedVector copies in[off : off+n] to out[off : off+n], four floats
// a thread as one float4, the last n%4 one by one.
func alignedVectorStarter(t *simt.Thread, in, out *simt.Global[float32], off, n int) {
	i := t.BlockIdx.X*t.BlockDim.X + t.ThreadIdx.X
	src, dst := simt.As[[4]float32](in, off), simt.As[[4]float32](out, off)
	if i < n/4 {
		dst.Store(t, i, src.Load(t, i))
	}
	if e := off + n/4*4 + i; i < n%4 {
		out.Store(t, e, in.Load(t, e))
	}
}
