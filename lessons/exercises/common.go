package exercises

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/coalescing-course/coalesce/lessons/sectors"
	"github.com/coalescing-course/coalesce/lessons/simt"
)

// blockSize is the block of every one-dimensional launch: 256 threads,
// 8 warps, as the course's kernels use.
const blockSize = 256

// gridFor returns the blocks of blockSize threads that cover threads.
func gridFor(threads int) int { return (threads + blockSize - 1) / blockSize }

// line returns the one-dimensional launch of threads threads.
func line(threads int) simt.Launch {
	return simt.Launch{Grid: simt.Dim{X: gridFor(threads), Y: 1}, Block: simt.Dim{X: blockSize, Y: 1}}
}

// span returns the 32-byte sectors bytes [a, b) touch: what one warp
// instruction over them costs at least, and costs when every byte of the
// range is some lane's. 0 for an empty range.
func span(a, b int64) int64 {
	if b <= a {
		return 0
	}
	const s = sectors.SectorBytes
	return (b+s-1)/s - a/s
}

// values returns n floats drawn from r, whole numbers from 1 to 2^20:
// exact in float32, so that a sum of two is exact too, in Go and in CUDA
// alike, and a value moved to the wrong place shows.
func values(r *rand.Rand, n int) []float32 {
	out := make([]float32, n)
	for i := range out {
		out[i] = float32(1 + r.IntN(1<<20))
	}
	return out
}

// between draws from min to max, both included.
func between(r *rand.Rand, min, max int) int { return min + r.IntN(max-min+1) }

// sameFloats compares got with want element by element.
func sameFloats(name string, got, want []float32) *Mismatch {
	if len(got) != len(want) {
		return &Mismatch{Buffer: name, Index: min(len(got), len(want)), Got: fmt.Sprintf("%d elements", len(got)), Want: fmt.Sprintf("%d elements", len(want))}
	}
	for i := range want {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			return &Mismatch{Buffer: name, Index: i, Got: fmt.Sprint(got[i]), Want: fmt.Sprint(want[i])}
		}
	}
	return nil
}

// floatsOut returns the output called name as floats: the Go slice, or a
// GPU's bytes decoded; a missing output or one of the wrong size is a
// mismatch at element 0.
func floatsOut(outputs map[string]any, name string, n int) ([]float32, *Mismatch) {
	switch o := outputs[name].(type) {
	case []float32:
		return o, nil
	case []byte:
		if len(o) != 4*n {
			return nil, &Mismatch{Buffer: name, Got: fmt.Sprintf("%d bytes", len(o)), Want: fmt.Sprintf("%d bytes (%d floats)", 4*n, n)}
		}
		out := make([]float32, n)
		for i := range out {
			out[i] = math.Float32frombits(binary.LittleEndian.Uint32(o[4*i:]))
		}
		return out, nil
	}
	return nil, &Mismatch{Buffer: name, Got: "no output", Want: fmt.Sprintf("%d floats", n)}
}

// intsOut is floatsOut for an int buffer.
func intsOut(outputs map[string]any, name string, n int) ([]int32, *Mismatch) {
	switch o := outputs[name].(type) {
	case []int32:
		return o, nil
	case []byte:
		if len(o) != 4*n {
			return nil, &Mismatch{Buffer: name, Got: fmt.Sprintf("%d bytes", len(o)), Want: fmt.Sprintf("%d bytes (%d ints)", 4*n, n)}
		}
		out := make([]int32, n)
		for i := range out {
			out[i] = int32(binary.LittleEndian.Uint32(o[4*i:]))
		}
		return out, nil
	}
	return nil, &Mismatch{Buffer: name, Got: "no output", Want: fmt.Sprintf("%d ints", n)}
}

// floatBytes and intBytes are a buffer's bytes as a GPU holds them.
func floatBytes(v []float32) []byte {
	out := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(out[4*i:], math.Float32bits(x))
	}
	return out
}

func intBytes(v []int32) []byte {
	out := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(out[4*i:], uint32(x))
	}
	return out
}
