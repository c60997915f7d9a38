package grader

import (
	"slices"

	"github.com/coalescing-course/coalesce/lessons/sectors"
	"github.com/coalescing-course/coalesce/lessons/spec"
)

// firstIndices returns the first k indices of a gather spec's idx array.
// sorted_random is "the random indices, sorted" (spec.IndexPatterns): its
// first k are the k smallest of the random pattern's, found without
// sorting all n of them as Indices must.
func firstIndices(s spec.Spec, k int) ([]int32, error) {
	if s.IndexPattern != "sorted_random" || s.IndexFile != "" {
		idx, err := s.Indices()
		if err != nil {
			return nil, err
		}
		return idx[:min(k, len(idx))], nil
	}
	r := s
	r.IndexPattern = "random"
	idx, err := r.Indices()
	if err != nil {
		return nil, err
	}
	k = min(k, len(idx))
	// Keep the k smallest in a sorted window: one pass, O(n·k) at worst
	// and about O(n) for random input, since few values beat the window.
	low := make([]int32, 0, k)
	for _, v := range idx {
		if len(low) == k && v >= low[k-1] {
			continue
		}
		i, _ := slices.BinarySearch(low, v)
		if len(low) < k {
			low = append(low, 0)
		}
		copy(low[i+1:], low[i:len(low)-1])
		low[i] = v
	}
	return low, nil
}

// instr is one memory instruction of one warp, for an explanation: which
// buffer, load or store, what the kernel's source calls it, and the lanes'
// addresses as byte offsets from the buffer's start.
type instr struct {
	Store  bool
	Buffer string
	Expr   string
	Warp   sectors.Warp
}

// warpInstrs returns the memory instructions warp w of block b issues that
// have an active lane, in program order, as the model issues them
// (sectors.WarpInstructions). idx holds at least the warp's indices for a
// gather, nil otherwise. For grid_stride_copy only the first trip of the
// loop is returned.
func warpInstrs(s spec.Spec, idx []int32, b, w int64) []instr {
	per := (int64(s.Block) + sectors.WarpSize - 1) / sectors.WarpSize
	if w >= per {
		return nil
	}
	ins, err := sectors.WarpInstructions(s, idx, b*per+w)
	if err != nil {
		return nil
	}
	if s.Kernel == spec.GridStrideCopy {
		ins = ins[:min(len(ins), 2*s.Unroll)]
	}
	var out []instr
	for _, in := range ins {
		if in.Warp.Active != 0 {
			out = append(out, instr{Store: in.Store, Buffer: in.Buffer, Expr: in.Access, Warp: in.Warp})
		}
	}
	return out
}
