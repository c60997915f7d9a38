package plots

import (
	"errors"
	"fmt"

	"github.com/coalescing-course/coalesce/lessons/sectors"
	"github.com/coalescing-course/coalesce/lessons/spec"
)

// Instruction is one warp-wide memory instruction of a kernel: what the
// warp's threads access, and the addresses its 32 lanes send, exactly as
// the sector model issues them (lessons/sectors, launch.go).
type Instruction struct {
	// Op is "load" or "store".
	Op string
	// Access is the element each thread t accesses, as the kernel's C
	// source writes it: "in[t*stride]", "p[t].x", "in[idx[t]]".
	Access string
	// Buffer names the allocation the addresses point into: in, out, idx,
	// p (the array of structs) or x.
	Buffer string
	// Warp holds each lane's address as a byte offset from the start of
	// Buffer. Every buffer starts 256-byte aligned, so the sectors and
	// lines of these offsets are those of the real addresses.
	Warp sectors.Warp
}

// String returns "load in[t*stride]".
func (in Instruction) String() string { return in.Op + " " + in.Access }

// Errors of the warp functions, for errors.Is.
var (
	// ErrWarp is a warp number outside the launch.
	ErrWarp = errors.New("plots: no such warp")
	// ErrInstr is an instruction number outside the warp's program.
	ErrInstr = errors.New("plots: no such instruction")
)

// Warps returns the number of warps the launch of s runs (sectors.Warps).
func Warps(s spec.Spec) int64 { return sectors.Warps(s) }

// FirstThread returns the thread index of lane 0 of warp w and its number
// of lanes (sectors.FirstThread).
func FirstThread(s spec.Spec, w int64) (t0 int64, lanes int) { return sectors.FirstThread(s, w) }

// Instructions returns the memory instructions warp w of the launch s
// issues, in program order, exactly as the model issues them
// (sectors.Instructions): an instruction with no active lane keeps its
// place, so instruction i is the same statement in every warp.
func Instructions(s spec.Spec, w int64) ([]Instruction, error) {
	ins, err := sectors.Instructions(s, w)
	if errors.Is(err, sectors.ErrWarp) {
		return nil, fmt.Errorf("%w: %w", ErrWarp, err)
	}
	if err != nil {
		return nil, wrap(err)
	}
	out := make([]Instruction, len(ins))
	for i, in := range ins {
		op := "load"
		if in.Store {
			op = "store"
		}
		out[i] = Instruction{Op: op, Access: in.Access, Buffer: in.Buffer, Warp: in.Warp}
	}
	return out, nil
}

// WarpOf returns the lane addresses of instruction instr of warp w of the
// launch s: the warp the model coalesces there (see Instructions).
func WarpOf(s spec.Spec, w int64, instr int) (sectors.Warp, error) {
	in, err := InstructionOf(s, w, instr)
	return in.Warp, err
}

// InstructionOf returns instruction instr of warp w of the launch s.
func InstructionOf(s spec.Spec, w int64, instr int) (Instruction, error) {
	ins, err := Instructions(s, w)
	if err != nil {
		return Instruction{}, err
	}
	return pick(ins, s, w, instr)
}

// pick returns ins[instr], or an error listing the instructions.
func pick(ins []Instruction, s spec.Spec, w int64, instr int) (Instruction, error) {
	if instr < 0 || instr >= len(ins) {
		list := ""
		for i, in := range ins {
			if i > 0 {
				list += ", "
			}
			list += fmt.Sprintf("%d %s", i, in)
		}
		return Instruction{}, fmt.Errorf("%w: instruction %d of warp %d: %s issues %d per warp: %s",
			ErrInstr, instr, w, s.Kernel, len(ins), list)
	}
	return ins[instr], nil
}
