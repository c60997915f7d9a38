package sectors

import (
	"errors"
	"fmt"

	"github.com/coalescing-course/coalesce/lessons/spec"
)

// Instruction is one warp-wide memory instruction of a launch, as the model
// issues it: what the kernel's source accesses and the address each lane
// sends. The plots draw it and the grader explains it, so both show what
// Model counted.
type Instruction struct {
	// Store is true for a store, false for a load.
	Store bool
	// Shared is true for an access to the block's shared memory, which the
	// bank rule prices (Wavefronts) and the L1's global counts leave out.
	Shared bool
	// Predicated is true for a shared access the compiler guards with a
	// predicate instead of a branch: the warp executes it, and ncu counts
	// it as an instruction, even when no lane is active.
	Predicated bool
	// Buffer names the allocation the addresses point into: in, out, idx,
	// p (the array of structs) or x; SharedBuffer ("s") for shared memory.
	Buffer string
	// Access is the element thread t accesses, as the kernel's source
	// writes it: "in[t*stride]", "p[t].x", "in[idx[t]]".
	Access string
	// Warp holds each lane's address as a byte offset from the start of
	// Buffer. Every buffer starts 256-byte aligned, so these offsets fall in
	// the same sectors and lines as the real addresses; a shared array
	// starts at bank 0.
	Warp Warp
}

// ErrWarp is a warp number outside the launch.
var ErrWarp = errors.New("sectors: no such warp")

// Warps returns the number of warps the launch of s runs, partial warps
// included: GridBlocks() blocks of ceil(Block/32) warps.
func Warps(s spec.Spec) int64 {
	return s.GridBlocks() * ((int64(s.Block) + WarpSize - 1) / WarpSize)
}

// FirstThread returns the thread index of lane 0 of warp w, and how many
// lanes the warp has (fewer than 32 in the last warp of a block whose size
// is not a multiple of 32).
func FirstThread(s spec.Spec, w int64) (t0 int64, lanes int) {
	per := (int64(s.Block) + WarpSize - 1) / WarpSize
	b, i := w/per, w%per
	return b*int64(s.Block) + i*WarpSize, int(min(WarpSize, int64(s.Block)-i*WarpSize))
}

// Instructions returns every memory instruction warp w of the launch s
// issues, in program order, each trip of grid_stride_copy's loop included.
// An instruction whose lanes all fail the kernel's bounds check is kept
// with an Active mask of 0, so that instruction i is the same statement in
// every warp. A gather's indices come from spec.Indices.
func Instructions(s spec.Spec, w int64) ([]Instruction, error) {
	var idx []int32
	if s.Kernel == spec.GatherCopy {
		var err error
		if idx, err = s.Indices(); err != nil {
			return nil, fmt.Errorf("sectors: %w", err)
		}
	}
	return WarpInstructions(s, idx, w)
}

// WarpInstructions is Instructions with the gather's indices given: idx
// must hold idx[t] for every thread t of warp w (a prefix of the index
// array is enough for the first warps), and is ignored by other kernels.
func WarpInstructions(s spec.Spec, idx []int32, w int64) ([]Instruction, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if n := Warps(s); w < 0 || w >= n {
		return nil, fmt.Errorf("%w: warp %d of a launch of %d warps (0 to %d)", ErrWarp, w, n, n-1)
	}
	t0, lanes := FirstThread(s, w)
	if s.Kernel == spec.GatherCopy {
		if need := min(t0+int64(lanes), s.N); int64(len(idx)) < need {
			return nil, fmt.Errorf("sectors: %w: warp %d needs idx[%d:%d], got %d indices", spec.ErrIndices, w, t0, need, len(idx))
		}
	}
	var out []Instruction
	m, err := newSim(s, idx, &out)
	if err != nil {
		return nil, err
	}
	m.warp(t0, lanes)
	return out, nil
}

// keep records one instruction in record mode.
func (m *sim) keep(store bool, buf, size int, active uint32, access string) {
	in := Instruction{Store: store, Buffer: m.bufs[buf].Name, Access: access, Warp: Warp{Size: size, Active: active}}
	switch {
	case m.affineSet:
		for l := range WarpSize {
			in.Warp.Addr[l] = m.base + uint64(l)*m.step
		}
	case m.gathered != nil:
		m.ungather(size)
		in.Warp.Addr = m.addr
	default:
		in.Warp.Addr = m.addr
	}
	*m.record = append(*m.record, in)
}

// label returns f() when instructions are being recorded, and "" on the
// hot path, where no one reads it.
func (m *sim) label(f func() string) string {
	if m.record == nil {
		return ""
	}
	return f()
}
