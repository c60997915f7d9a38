package sectors

import (
	"fmt"

	"github.com/coalescing-course/coalesce/lessons/spec"
)

// warpFunc issues every memory instruction one warp executes, in program
// order; t0 is the thread index of its lane 0 and present its lanes
// (fewer than 32 in the last warp of a block whose size is not a multiple
// of 32).
type warpFunc func(t0 int64, present int)

// kernelModel is what the model knows of one kernel.
type kernelModel struct {
	// warp returns, given the model of one launch, what one warp of the
	// kernel does: the model's copy of the kernel's CUDA body
	// (cuda/src/kernels.cuh), statement by statement. Buffers are found by
	// the names spec.Buffers gives them.
	warp func(m *sim) warpFunc
	// inFlight is how many independent loads one thread keeps in flight
	// at once (the time model's Little's law); nil is one.
	inFlight func(s spec.Spec) float64
}

// addresses holds each kernel's model.
var addresses = map[spec.Kernel]kernelModel{
	spec.CoalescedCopy: {warp: func(m *sim) warpFunc {
		in, out, e := m.buf("in"), m.buf("out"), uint64(m.s.ElemBytes)
		return func(t0 int64, present int) {
			act := below(t0, m.s.N, present)
			m.affine(uint64(t0)*e, e)
			m.ld(in, int(e), act, "in[t]")
			m.st(out, int(e), act, "out[t]")
		}
	}},
	spec.StridedCopy:  {warp: stridedAccess},
	spec.StridedRead:  {warp: stridedAccess},
	spec.StridedWrite: {warp: stridedAccess},
	spec.OffsetCopy: {warp: func(m *sim) warpFunc {
		in, out, e := m.buf("in"), m.buf("out"), uint64(m.s.ElemBytes)
		return func(t0 int64, present int) {
			act := below(t0, m.s.N-m.s.Offset, present)
			m.affine(uint64(t0+m.s.Offset)*e, e)
			m.ld(in, int(e), act, "in[t+offset]")
			m.affine(uint64(t0)*e, e)
			m.st(out, int(e), act, "out[t]")
		}
	}},
	spec.VectorizedCopy: {warp: func(m *sim) warpFunc {
		in, out, w := m.buf("in"), m.buf("out"), uint64(4*m.s.Width)
		vec := vectorType(m.s.Width)
		threads, off := m.s.Threads(), uint64(4*m.s.Offset)
		return func(t0 int64, present int) {
			act := below(t0, threads, present)
			m.affine(off+uint64(t0)*w, w)
			m.ld(in, int(w), act, m.label(func() string {
				if m.s.Offset != 0 {
					return fmt.Sprintf("(in+%d)[t] (%s)", m.s.Offset, vec)
				}
				return "in[t] (" + vec + ")"
			}))
			m.affine(uint64(t0)*w, w)
			m.st(out, int(w), act, m.label(func() string { return "out[t] (" + vec + ")" }))
		}
	}},
	spec.GridStrideCopy: {warp: func(m *sim) warpFunc {
		// Each trip of the loop loads unroll vectors T threads apart,
		// then stores them. The warp loops while its first lane has a
		// vector left, as the kernel's vote decides: lanes of one warp
		// never run different trips in one instruction.
		in, out, w := m.buf("in"), m.buf("out"), uint64(4*m.s.Width)
		vec := vectorType(m.s.Width)
		nv := m.s.N / int64(m.s.Width)
		total := m.s.GridBlocks() * int64(m.s.Block)
		unroll := int64(m.s.Unroll)
		return func(t0 int64, present int) {
			for base := t0; base < nv; base += total * unroll {
				for u := range unroll {
					first := base + u*total
					m.affine(uint64(first)*w, w)
					m.ld(in, int(w), below(first, nv, present), m.label(func() string { return "in[t+u*T] (" + vec + ")" }))
				}
				for u := range unroll {
					first := base + u*total
					m.affine(uint64(first)*w, w)
					m.st(out, int(w), below(first, nv, present), m.label(func() string { return "out[t+u*T] (" + vec + ")" }))
				}
			}
		}
	},
		inFlight: func(s spec.Spec) float64 { return float64(s.Unroll) },
	},
	spec.GatherCopy: {warp: func(m *sim) warpFunc {
		in, out, idx := m.buf("in"), m.buf("out"), m.buf("idx")
		return func(t0 int64, present int) {
			act := below(t0, m.s.N, present)
			m.affine(uint64(t0)*4, 4)
			m.ld(idx, 4, act, "idx[t]")
			if act == AllLanes {
				m.gather((*[WarpSize]int32)(m.idx[t0 : t0+WarpSize]))
			} else {
				addr := m.explicit()
				for l := range WarpSize {
					if act&(1<<l) != 0 {
						addr[l] = uint64(m.idx[t0+int64(l)]) * 4
					}
				}
			}
			m.ld(in, 4, act, "in[idx[t]]")
			m.affine(uint64(t0)*4, 4)
			m.st(out, 4, act, "out[t]")
		}
		// in[idx[t]] cannot start before idx[t] arrives: one load in
		// flight, so the time model waits out both loads in turn.
	}},
	spec.SumFieldsSoA: {warp: sumFieldsSoA,
		// As sum_fields_aos: the compiler unrolls the field loop by four.
		inFlight: func(s spec.Spec) float64 { return float64(min(4, s.StructBytes/4)) },
	},
	spec.CopyRows:                {warp: copy2D(true, false)},
	spec.CopyColumns:             {warp: copy2D(false, false)},
	spec.TransposeCoalescedRead:  {warp: copy2D(true, true)},
	spec.TransposeCoalescedWrite: {warp: copy2D(false, true)},
	spec.TransposeTiled:          {warp: transposeTiled},
	spec.UpdateXAoS: {warp: func(m *sim) warpFunc {
		p, sb, fo := m.buf("p"), uint64(m.s.StructBytes), m.s.FieldOffset
		field := "p[t].x"
		if fo != 0 {
			field = fmt.Sprintf("p[t].x (bytes %d-%d of %d)", fo, fo+3, sb)
		}
		return func(t0 int64, present int) {
			act := below(t0, m.s.N, present)
			m.affine(uint64(t0)*sb+uint64(fo), sb)
			m.ld(p, 4, act, field)
			m.st(p, 4, act, field)
		}
	}},
	spec.UpdateXSoA: {warp: func(m *sim) warpFunc {
		x := m.buf("x")
		return func(t0 int64, present int) {
			act := below(t0, m.s.N, present)
			m.affine(uint64(t0)*4, 4)
			m.ld(x, 4, act, "x[t]")
			m.st(x, 4, act, "x[t]")
		}
	}},
	spec.SumFieldsAoS: {warp: func(m *sim) warpFunc {
		p, out, sb := m.buf("p"), m.buf("out"), uint64(m.s.StructBytes)
		size, suffix := uint64(4), ""
		if m.s.Vector {
			size, suffix = 16, " (float4)"
		}
		return func(t0 int64, present int) {
			act := below(t0, m.s.N, present)
			for f := uint64(0); f < sb; f += size {
				m.affine(uint64(t0)*sb+f, sb)
				m.ld(p, int(size), act, m.label(func() string { return fmt.Sprintf("p[t] bytes %d-%d%s", f, f+size-1, suffix) }))
			}
			m.affine(uint64(t0)*4, 4)
			m.st(out, 4, act, "out[t]")
		}
	},
		inFlight: func(s spec.Spec) float64 {
			size := 4
			if s.Vector {
				size = 16
			}
			// The compiler unrolls the field loop by four.
			return float64(min(4, s.StructBytes/size))
		},
	},
}

// stridedAccess is strided_copy, strided_read and strided_write: the load, the
// store or both of element t*stride.
func stridedAccess(m *sim) warpFunc {
	e, step := uint64(m.s.ElemBytes), uint64(m.s.Stride)*uint64(m.s.ElemBytes)
	load, store := m.s.Kernel != spec.StridedWrite, m.s.Kernel != spec.StridedRead
	var in int
	if load {
		in = m.buf("in")
	}
	out := m.buf("out")
	threads := m.s.Threads()
	return func(t0 int64, present int) {
		act := below(t0, threads, present)
		m.affine(uint64(t0)*step, step)
		if load {
			m.ld(in, int(e), act, "in[t*stride]")
		}
		if store {
			m.st(out, int(e), act, "out[t*stride]")
		}
	}
}

func vectorType(width int) string {
	switch width {
	case 1:
		return "float"
	case 2:
		return "float2"
	}
	return "float4"
}
