package sectors

import (
	"errors"
	"fmt"

	"github.com/coalescing-course/coalesce/lessons/spec"
)

// The 2D kernels, statement by statement as cuda/src writes them. A block
// is dim3(tile, block_rows) threads; its linear thread tid = ty*tile + tx
// makes the warps, and blocks run in the order b = by*gridX + bx, which is
// the order launch numbers them. Each thread loops j = 0, block_rows, ...
// below tile; every access sits inside the kernel's bounds check, so a
// lane past the matrix's last row or column sends nothing.

// matrix is what one warp of a 2D kernel knows before its loop: the
// block's tile and each lane's thread coordinates in it.
type matrix struct {
	bx, by int64
	tx, ty [WarpSize]int64
	lanes  int
}

// matrixWarp places the warp whose lane 0 is thread t0 in its block.
func (m *sim) matrixWarp(t0 int64, present int) matrix {
	s := m.s
	block, tile := int64(s.Block), int64(s.Tile)
	b, tid := t0/block, t0%block
	var w matrix
	w.bx, w.by = b%m.gridX, b/m.gridX
	w.lanes = present
	for l := range present {
		w.tx[l], w.ty[l] = (tid+int64(l))%tile, (tid+int64(l))/tile
	}
	return w
}

// inside returns the mask of the warp's lanes whose element (r, c), as at
// gives it, lies inside the rows x cols matrix: the kernel's bounds check.
func (m *sim) inside(w *matrix, at func(l int) (r, c int64)) uint32 {
	var act uint32
	for l := range w.lanes {
		if r, c := at(l); r < m.s.Rows && c < m.s.Cols {
			act |= 1 << l
		}
	}
	return act
}

// fill sets m.addr to the byte offset 4*index(l) of each lane of act: a
// float index into a global buffer or into shared memory.
func (m *sim) fill(w *matrix, act uint32, index func(l int) int64) {
	addr := m.explicit()
	for l := range w.lanes {
		if act&(1<<l) != 0 {
			addr[l] = uint64(index(l)) * 4
		}
	}
}

// global sets the next global access's addresses to 4*index(l) for each
// lane. With tile 32 a warp is one row of its block (tx = lane, ty the
// same for all) and every index of the course is linear in tx, so the
// lanes are affine and take the coalescer's fast path.
func (m *sim) global(w *matrix, act uint32, index func(l int) int64) {
	if m.s.Tile == WarpSize && w.lanes == WarpSize {
		if i0, i1 := index(0), index(1); i1 >= i0 {
			m.affine(uint64(i0)*4, uint64(i1-i0)*4)
			return
		}
	}
	m.fill(w, act, index)
}

// copy2D is copy_rows, copy_columns and the two naive transposes. With
// rowWalk, c = bx*tile+tx and r = by*tile+ty+j (x walks a row); without,
// r = bx*tile+tx and c = by*tile+ty+j (x walks a column). The store goes
// to (r, c) of out or, transposed, to (c, r) of the cols x rows out.
func copy2D(rowWalk, transpose bool) func(m *sim) warpFunc {
	return func(m *sim) warpFunc {
		in, out := m.buf("in"), m.buf("out")
		m.grid2D()
		s := m.s
		tile, step := int64(s.Tile), int64(s.BlockRows)
		store := "out[r*cols+c]"
		if transpose {
			store = "out[c*rows+r]"
		}
		return func(t0 int64, present int) {
			w := m.matrixWarp(t0, present)
			for j := int64(0); j < tile; j += step {
				at := func(l int) (int64, int64) {
					along, across := w.bx*tile+w.tx[l], w.by*tile+w.ty[l]+j
					if rowWalk {
						return across, along
					}
					return along, across
				}
				act := m.inside(&w, at)
				m.global(&w, act, func(l int) int64 { r, c := at(l); return r*s.Cols + c })
				m.ld(in, 4, act, "in[r*cols+c]")
				if transpose {
					m.global(&w, act, func(l int) int64 { r, c := at(l); return c*s.Rows + r })
				}
				m.st(out, 4, act, store)
			}
		}
	}
}

// transposeTiled is transpose_tiled: phase 1 copies rows of the tile into
// rows of s, phase 2 columns of s into rows of out.
func transposeTiled(m *sim) warpFunc {
	in, out := m.buf("in"), m.buf("out")
	m.grid2D()
	s := m.s
	tile, step, width := int64(s.Tile), int64(s.BlockRows), int64(s.Tile+s.Pad)
	return func(t0 int64, present int) {
		w := m.matrixWarp(t0, present)
		for j := int64(0); j < tile; j += step {
			// c = bx*tile+tx, r = by*tile+ty+j
			at := func(l int) (int64, int64) { return w.by*tile + w.ty[l] + j, w.bx*tile + w.tx[l] }
			act := m.inside(&w, at)
			m.global(&w, act, func(l int) int64 { r, c := at(l); return r*s.Cols + c })
			m.ld(in, 4, act, "in[r*cols+c]")
			m.fill(&w, act, func(l int) int64 { return (w.ty[l]+j)*width + w.tx[l] })
			m.shared(true, act, "s[(ty+j)*(tile+pad)+tx]", true)
		}
		// __syncthreads() lies between the phases: no count depends on it,
		// and the L2 sees each warp's two phases in turn, as it sees
		// warps in turn.
		for j := int64(0); j < tile; j += step {
			// r = by*tile+tx, c = bx*tile+ty+j
			at := func(l int) (int64, int64) { return w.by*tile + w.tx[l], w.bx*tile + w.ty[l] + j }
			act := m.inside(&w, at)
			m.fill(&w, act, func(l int) int64 { return w.tx[l]*width + w.ty[l] + j })
			m.shared(false, act, "s[tx*(tile+pad)+ty+j]", false)
			m.global(&w, act, func(l int) int64 { r, c := at(l); return c*s.Rows + r })
			m.st(out, 4, act, "out[c*rows+r]")
		}
	}
}

// grid2D keeps the launch's gridX, which places a block from its number.
func (m *sim) grid2D() { m.gridX = m.s.Shape().GridX }

// sumFieldsSoA is sum_fields_soa: thread t loads field f of element t at
// float f*n+t, field after field, then stores its sum.
func sumFieldsSoA(m *sim) warpFunc {
	p, out, fields := m.buf("p"), m.buf("out"), int64(m.s.StructBytes/4)
	n := m.s.N
	return func(t0 int64, present int) {
		act := below(t0, n, present)
		for f := range fields {
			m.affine(uint64(f*n+t0)*4, 4)
			m.ld(p, 4, act, m.label(func() string { return fmt.Sprintf("p[%d*n+t] (field %d)", f, f) }))
		}
		m.affine(uint64(t0)*4, 4)
		m.st(out, 4, act, "out[t]")
	}
}

// ErrMisaligned is an access the GPU refuses because a lane's address is
// not a multiple of its size; Model returns it, wrapped with the
// launch's misalignment, rather than counting sectors of a launch that
// faults.
var ErrMisaligned = errors.New("sectors: misaligned access")

// Faults returns, wrapping ErrMisaligned, why the GPU would stop the
// launch s with a fault, or nil when it runs. It costs nothing to ask (it
// reads the spec, not the warps), so a runner can keep a launch that
// faults away from a profiler, which ends the whole profiled process at
// the fault.
func Faults(s spec.Spec) error {
	if s.Kernel == spec.VectorizedCopy {
		return misaligned(s)
	}
	return nil
}

// misaligned returns the error for vectorized_copy's loads when its offset
// is not a multiple of its width, and nil otherwise.
func misaligned(s spec.Spec) error {
	size := int64(4 * s.Width)
	off := 4 * s.Offset % size
	if off == 0 {
		return nil
	}
	return fmt.Errorf("%w: offset %d floats puts every %d-byte load of in %d bytes past a %d-byte boundary; "+
		"the GPU refuses a misaligned %d-byte load: cudaErrorMisalignedAddress", ErrMisaligned, s.Offset, size, off, size, size)
}
