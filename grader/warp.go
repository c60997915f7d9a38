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
// addresses as byte offsets from the buffer's start. Every buffer starts
// 256-byte aligned, so the offsets fall in the same sectors as the
// addresses.
type instr struct {
	Store  bool
	Buffer string
	Expr   string
	Warp   sectors.Warp
}

// warpInstrs returns the memory instructions warp w of block b issues, in
// program order, following the kernel semantics of lessons/spec (the model
// in lessons/sectors walks the same; a test holds the two equal). idx is the
// gather's index array, nil for other kernels. For grid_stride_copy only the
// first trip of the loop is returned.
func warpInstrs(s spec.Spec, idx []int32, b, w int64) []instr {
	block := int64(s.Block)
	t0 := b*block + w*sectors.WarpSize
	present := min(sectors.WarpSize, block-w*sectors.WarpSize)
	if present <= 0 {
		return nil
	}
	// active returns the lanes whose thread t0+lane is below limit.
	active := func(first, limit int64) uint32 {
		k := min(present, max(0, limit-first))
		return uint32((uint64(1) << k) - 1)
	}
	affine := func(base, step uint64, size int, act uint32) sectors.Warp {
		wp := sectors.Warp{Size: size, Active: act}
		for l := range sectors.WarpSize {
			wp.Addr[l] = base + uint64(l)*step
		}
		return wp
	}
	e := uint64(s.ElemBytes)
	var out []instr
	add := func(store bool, buf, expr string, wp sectors.Warp) {
		if wp.Active != 0 {
			out = append(out, instr{Store: store, Buffer: buf, Expr: expr, Warp: wp})
		}
	}
	switch s.Kernel {
	case spec.CoalescedCopy:
		act := active(t0, s.N)
		add(false, "in", "in[i]", affine(uint64(t0)*e, e, int(e), act))
		add(true, "out", "out[i]", affine(uint64(t0)*e, e, int(e), act))
	case spec.StridedCopy, spec.StridedRead, spec.StridedWrite:
		act := active(t0, s.Threads())
		step := uint64(s.Stride) * e
		if s.Kernel != spec.StridedWrite {
			add(false, "in", "in[i*stride]", affine(uint64(t0)*step, step, int(e), act))
		}
		if s.Kernel != spec.StridedRead {
			add(true, "out", "out[i*stride]", affine(uint64(t0)*step, step, int(e), act))
		}
	case spec.OffsetCopy:
		act := active(t0, s.N-s.Offset)
		add(false, "in", "in[i+offset]", affine(uint64(t0+s.Offset)*e, e, int(e), act))
		add(true, "out", "out[i]", affine(uint64(t0)*e, e, int(e), act))
	case spec.VectorizedCopy:
		act := active(t0, s.Threads())
		wb := uint64(4 * s.Width)
		add(false, "in", "in[i] (a vector)", affine(uint64(t0)*wb, wb, int(wb), act))
		add(true, "out", "out[i] (a vector)", affine(uint64(t0)*wb, wb, int(wb), act))
	case spec.GridStrideCopy:
		wb := uint64(4 * s.Width)
		nv := s.N / int64(s.Width)
		total := s.GridBlocks() * block
		for pass := range 2 {
			for u := range int64(s.Unroll) {
				first := t0 + u*total
				act := active(first, nv)
				if pass == 0 {
					add(false, "in", "in[i] (a vector)", affine(uint64(first)*wb, wb, int(wb), act))
				} else {
					add(true, "out", "out[i] (a vector)", affine(uint64(first)*wb, wb, int(wb), act))
				}
			}
		}
	case spec.GatherCopy:
		act := active(t0, s.N)
		add(false, "idx", "idx[i]", affine(uint64(t0)*4, 4, 4, act))
		g := sectors.Warp{Size: 4, Active: act}
		for l := range sectors.WarpSize {
			if act&(1<<l) != 0 && int(t0)+l < len(idx) {
				g.Addr[l] = uint64(idx[t0+int64(l)]) * 4
			}
		}
		add(false, "in", "in[idx[i]]", g)
		add(true, "out", "out[i]", affine(uint64(t0)*4, 4, 4, act))
	case spec.UpdateXAoS:
		act := active(t0, s.N)
		sb := uint64(s.StructBytes)
		base := uint64(t0)*sb + uint64(s.FieldOffset)
		add(false, "p", "p[i].x", affine(base, sb, 4, act))
		add(true, "p", "p[i].x", affine(base, sb, 4, act))
	case spec.UpdateXSoA:
		act := active(t0, s.N)
		add(false, "x", "x[i]", affine(uint64(t0)*4, 4, 4, act))
		add(true, "x", "x[i]", affine(uint64(t0)*4, 4, 4, act))
	case spec.SumFieldsAoS:
		act := active(t0, s.N)
		sb := uint64(s.StructBytes)
		size := uint64(4)
		expr := "p[i].f (4 bytes)"
		if s.Vector {
			size, expr = 16, "p[i] (16 bytes)"
		}
		for f := uint64(0); f < sb; f += size {
			add(false, "p", expr, affine(uint64(t0)*sb+f, sb, int(size), act))
		}
		add(true, "out", "out[i]", affine(uint64(t0)*4, 4, 4, act))
	}
	return out
}
