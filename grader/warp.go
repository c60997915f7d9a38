package grader

import (
	"github.com/coalescing-course/coalesce/lessons/sectors"
	"github.com/coalescing-course/coalesce/lessons/spec"
)

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
