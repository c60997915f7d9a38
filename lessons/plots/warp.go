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

// Warps returns the number of warps the launch of s runs, partial warps
// included: GridBlocks() blocks of ceil(Block/32) warps.
func Warps(s spec.Spec) int64 {
	return s.GridBlocks() * warpsPerBlock(s)
}

func warpsPerBlock(s spec.Spec) int64 {
	return (int64(s.Block) + sectors.WarpSize - 1) / sectors.WarpSize
}

// FirstThread returns the global thread index t of lane 0 of warp w, and
// the number of lanes the warp has (32, or fewer in the last warp of a
// block whose size is not a multiple of 32).
func FirstThread(s spec.Spec, w int64) (t0 int64, lanes int) {
	per := warpsPerBlock(s)
	b, i := w/per, w%per
	t0 = b*int64(s.Block) + i*sectors.WarpSize
	return t0, int(min(sectors.WarpSize, int64(s.Block)-i*sectors.WarpSize))
}

// Instructions returns the memory instructions warp w of the launch s
// issues, in program order. Lanes whose thread fails the kernel's bounds
// check are inactive; an instruction with no active lane sends nothing to
// memory but keeps its place, so instruction i is the same statement in
// every warp. A gather reads its index array (spec.Indices) first.
func Instructions(s spec.Spec, w int64) ([]Instruction, error) {
	if err := s.Validate(); err != nil {
		return nil, wrap(err)
	}
	if n := Warps(s); w < 0 || w >= n {
		return nil, fmt.Errorf("%w: warp %d of a launch of %d warps (0 to %d)", ErrWarp, w, n, n-1)
	}
	var idx []int32
	if s.Kernel == spec.GatherCopy {
		var err error
		if idx, err = s.Indices(); err != nil {
			return nil, wrap(err)
		}
	}
	t0, lanes := FirstThread(s, w)
	g := gen{t0: t0, lanes: lanes}
	e := uint64(s.ElemBytes)
	switch s.Kernel {
	case spec.CoalescedCopy:
		act := g.below(s.N)
		g.affine("load", "in[t]", "in", t0*int64(e), e, e, act)
		g.affine("store", "out[t]", "out", t0*int64(e), e, e, act)
	case spec.StridedCopy, spec.StridedRead, spec.StridedWrite:
		act := g.below(s.Threads())
		step := uint64(s.Stride) * e
		if s.Kernel != spec.StridedWrite {
			g.affine("load", "in[t*stride]", "in", t0*int64(step), step, e, act)
		}
		if s.Kernel != spec.StridedRead {
			g.affine("store", "out[t*stride]", "out", t0*int64(step), step, e, act)
		}
	case spec.OffsetCopy:
		act := g.below(s.N - s.Offset)
		g.affine("load", "in[t+offset]", "in", (t0+s.Offset)*int64(e), e, e, act)
		g.affine("store", "out[t]", "out", t0*int64(e), e, e, act)
	case spec.VectorizedCopy:
		act := g.below(s.Threads())
		v := uint64(4 * s.Width)
		typ := vecType(s.Width)
		g.affine("load", "in[t] ("+typ+")", "in", t0*int64(v), v, v, act)
		g.affine("store", "out[t] ("+typ+")", "out", t0*int64(v), v, v, act)
	case spec.GridStrideCopy:
		g.gridStride(s)
	case spec.GatherCopy:
		act := g.below(s.N)
		g.affine("load", "idx[t]", "idx", t0*4, 4, 4, act)
		in := Instruction{Op: "load", Access: "in[idx[t]]", Buffer: "in", Warp: sectors.Warp{Size: 4, Active: act}}
		for l := range sectors.WarpSize {
			if act&(1<<l) != 0 {
				in.Warp.Addr[l] = uint64(idx[t0+int64(l)]) * 4
			}
		}
		g.out = append(g.out, in)
		g.affine("store", "out[t]", "out", t0*4, 4, 4, act)
	case spec.UpdateXAoS:
		act := g.below(s.N)
		sb := uint64(s.StructBytes)
		field := "p[t].x"
		if s.FieldOffset != 0 {
			field = fmt.Sprintf("p[t].x (bytes %d-%d of %d)", s.FieldOffset, s.FieldOffset+3, s.StructBytes)
		}
		base := t0*int64(sb) + int64(s.FieldOffset)
		g.affine("load", field, "p", base, sb, 4, act)
		g.affine("store", field, "p", base, sb, 4, act)
	case spec.UpdateXSoA:
		act := g.below(s.N)
		g.affine("load", "x[t]", "x", t0*4, 4, 4, act)
		g.affine("store", "x[t]", "x", t0*4, 4, 4, act)
	case spec.SumFieldsAoS:
		act := g.below(s.N)
		sb := uint64(s.StructBytes)
		size := uint64(4)
		if s.Vector {
			size = 16
		}
		for f := uint64(0); f < sb; f += size {
			what := fmt.Sprintf("p[t] bytes %d-%d", f, f+size-1)
			if s.Vector {
				what += " (float4)"
			}
			g.affine("load", what, "p", t0*int64(sb)+int64(f), sb, size, act)
		}
		g.affine("store", "out[t]", "out", t0*4, 4, 4, act)
	}
	return g.out, nil
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

func vecType(width int) string {
	if width == 2 {
		return "float2"
	}
	return "float4"
}

// gen builds a warp's instructions.
type gen struct {
	t0    int64
	lanes int
	out   []Instruction
}

// below returns the mask of the warp's lanes whose thread is below limit,
// as the model's launch does.
func (g *gen) below(limit int64) uint32 {
	return belowMask(g.t0, limit, g.lanes)
}

func belowMask(t0, limit int64, lanes int) uint32 {
	k := min(int64(lanes), max(0, limit-t0))
	return uint32((uint64(1) << k) - 1)
}

// affine appends an instruction whose lane l accesses size bytes at
// base + l*step.
func (g *gen) affine(op, access, buf string, base int64, step, size uint64, act uint32) {
	in := Instruction{Op: op, Access: access, Buffer: buf, Warp: sectors.Warp{Size: int(size), Active: act}}
	for l := range sectors.WarpSize {
		if act&(1<<l) != 0 {
			in.Warp.Addr[l] = uint64(base) + uint64(l)*step
		}
	}
	g.out = append(g.out, in)
}

// gridStride appends one warp's loop of grid_stride_copy: each trip loads
// unroll vectors T threads apart (T the threads of the grid), then stores
// them.
func (g *gen) gridStride(s spec.Spec) {
	v := uint64(4 * s.Width)
	nv := s.N / int64(s.Width)
	total := s.GridBlocks() * int64(s.Block)
	unroll := int64(s.Unroll)
	typ := "float"
	if s.Width > 1 {
		typ = vecType(s.Width)
	}
	for base := g.t0; base < nv; base += total * unroll {
		k0 := (base - g.t0) / total
		for pass, op := range []string{"load", "store"} {
			buf := []string{"in", "out"}[pass]
			for u := range unroll {
				first := base + u*total
				what := fmt.Sprintf("%s[t + %d*T] (%s, T = %d threads)", buf, k0+u, typ, total)
				if k0+u == 0 {
					what = fmt.Sprintf("%s[t] (%s)", buf, typ)
				}
				g.affine(op, what, buf, first*int64(v), v, v, belowMask(first, nv, g.lanes))
			}
		}
	}
}
