package simt

import (
	"fmt"
	"math/bits"

	"github.com/coalescing-course/coalesce/lessons/sectors"
)

// access is one Load or Store of one thread, as its warp's grouping needs
// it: the site, and what the model needs of the lane's part.
type access struct {
	pc    uintptr // the return address of the Load or Store call: the site
	addr  uint64  // byte offset in the buffer, or in the block's shared memory
	phase int32   // the barriers its thread had passed
	buf   int16   // the allocation's number in the launch, or the shared array's
	size  uint8
	flags uint8
}

// The flags of an access.
const (
	isStore uint8 = 1 << iota
	isShared
)

// issueWarp groups the accesses of one warp's lanes into warp instructions,
// as lockstep execution forms them, and issues them to the model in an
// order every lane's program order agrees with.
func (r *run) issueWarp(lanes []*Thread) {
	var logs [sectors.WarpSize][]access
	var active uint32
	ref := -1
	for l, t := range lanes {
		logs[l] = t.log
		if len(t.log) > 0 {
			active |= 1 << l
			if ref < 0 {
				ref = l
			}
		}
	}
	r.present = uint32(uint64(1)<<len(lanes) - 1)
	r.warp = lanes[0].tid / sectors.WarpSize
	r.warpNo = (r.blocks-1)*int64(r.warps) + int64(r.warp)
	r.block0 = lanes[0].BlockIdx
	if active == 0 {
		return
	}
	if uniform(&logs, ref, active) {
		var acc [sectors.WarpSize]*access
		for i := range logs[ref] {
			for m := active; m != 0; m &= m - 1 {
				l := bits.TrailingZeros32(m)
				acc[l] = &logs[l][i]
			}
			r.emit(&acc, active)
		}
		return
	}
	r.group.run(r, &logs, active)
}

// uniform reports whether every active lane ran the same sites in the same
// order, between the same barriers: straight-line code, or branches every
// lane took alike. Then access i of every lane is instruction i.
func uniform(logs *[sectors.WarpSize][]access, ref int, active uint32) bool {
	want := logs[ref]
	for m := active &^ (1 << ref); m != 0; m &= m - 1 {
		got := logs[bits.TrailingZeros32(m)]
		if len(got) != len(want) {
			return false
		}
		for i := range got {
			if got[i].pc != want[i].pc || got[i].phase != want[i].phase {
				return false
			}
		}
	}
	return true
}

// emit issues the instruction whose lanes in mask made the accesses acc[l]:
// one per allocation (lanes of one site may reach different buffers, which
// the model, one address space a buffer, counts as separate requests).
func (r *run) emit(acc *[sectors.WarpSize]*access, mask uint32) {
	for mask != 0 {
		f := acc[bits.TrailingZeros32(mask)]
		w := sectors.Warp{Size: int(f.size)}
		for m := mask; m != 0; m &= m - 1 {
			l := bits.TrailingZeros32(m)
			if a := acc[l]; a.buf == f.buf && a.flags == f.flags && a.size == f.size {
				w.Addr[l] = a.addr
				w.Active |= 1 << l
			}
		}
		mask &^= w.Active
		store := f.flags&isStore != 0
		var n int
		var err error
		if f.flags&isShared != 0 {
			n, err = r.stream.Shared(store, &w, false)
		} else {
			n, err = r.stream.Global(int(f.buf), store, &w)
		}
		if err != nil {
			// simt checked every index against its buffer: a refusal here
			// is simt's own bug, and says so.
			r.err = fmt.Errorf("simt: the model refused an instruction of warp %d of block %s (a bug in simt): %w", r.warp, r.block0, err)
			return
		}
		r.count(f, w.Active, n)
		if r.warpNo < int64(r.l.Trace) {
			r.keep(f, &w)
		}
	}
}

// keep adds the instruction w, made at a's site, to the trace.
func (r *run) keep(a *access, w *sectors.Warp) {
	if len(r.trace) >= MaxTrace {
		return
	}
	in := sectors.Instruction{Store: a.flags&isStore != 0, Shared: a.flags&isShared != 0, Access: where(a.pc), Warp: *w}
	if in.Shared {
		in.Buffer = r.shareds[a.buf].name
	} else {
		in.Buffer = r.globals[a.buf].name
	}
	r.trace = append(r.trace, Traced{Warp: r.warpNo, Instruction: in})
}

// grouper is the general grouping, for warps whose lanes diverged: its
// scratch is kept from warp to warp.
type grouper struct {
	groups []group
	ids    map[groupKey]int32
	seq    [sectors.WarpSize][]int32 // each lane's groups, in its order
	counts []siteRun
	ready  []int32 // a min-heap of groups all of whose lanes are at them
}

// group is one warp instruction in the making: the lanes that ran a site
// for the same time since the last barrier.
type group struct {
	mask     uint32
	need, at int // lanes in it, and lanes whose next access it is
	acc      [sectors.WarpSize]*access
}

type groupKey struct {
	pc uintptr
	k  int32
}

// siteRun counts a lane's accesses at one site so far.
type siteRun struct {
	pc uintptr
	n  int32
}

// run groups and issues the accesses of a diverged warp, barrier interval
// by interval. Lanes that ran a site for the k-th time in the interval form
// one instruction, as lockstep execution forms it: every lane is at the
// same point of the same code. The instructions then go out in an order
// that respects every lane's own: an instruction goes once all its lanes
// have issued everything they ran before it, the earliest found first (so
// an if's instructions go before its else's). Code whose lanes disagree on
// the order (see Result.Split) has an instruction split where its lanes
// would wait on each other.
func (g *grouper) run(r *run, logs *[sectors.WarpSize][]access, active uint32) {
	if g.ids == nil {
		g.ids = map[groupKey]int32{}
	}
	var pos [sectors.WarpSize]int
	for {
		phase, any := int32(0), false
		for m := active; m != 0; m &= m - 1 {
			l := bits.TrailingZeros32(m)
			if pos[l] < len(logs[l]) && (!any || logs[l][pos[l]].phase < phase) {
				phase, any = logs[l][pos[l]].phase, true
			}
		}
		if !any {
			return
		}
		g.groups = g.groups[:0]
		clear(g.ids)
		for m := active; m != 0; m &= m - 1 {
			l := bits.TrailingZeros32(m)
			g.seq[l] = g.seq[l][:0]
			g.counts = g.counts[:0]
			for ; pos[l] < len(logs[l]) && logs[l][pos[l]].phase == phase; pos[l]++ {
				a := &logs[l][pos[l]]
				key := groupKey{a.pc, g.occurrence(a.pc)}
				id, ok := g.ids[key]
				if !ok {
					id = int32(len(g.groups))
					g.groups = append(g.groups, group{})
					g.ids[key] = id
				}
				grp := &g.groups[id]
				grp.mask |= 1 << l
				grp.need++
				grp.acc[l] = a
				g.seq[l] = append(g.seq[l], id)
			}
		}
		g.merge(r, active)
		if r.err != nil {
			return
		}
	}
}

// occurrence returns how many times the lane ran site pc before, and counts
// this one.
func (g *grouper) occurrence(pc uintptr) int32 {
	for i := range g.counts {
		if g.counts[i].pc == pc {
			g.counts[i].n++
			return g.counts[i].n - 1
		}
	}
	g.counts = append(g.counts, siteRun{pc, 1})
	return 0
}

// merge issues the groups of one interval in an order every lane agrees with.
func (g *grouper) merge(r *run, active uint32) {
	var head [sectors.WarpSize]int
	g.ready = g.ready[:0]
	for m := active; m != 0; m &= m - 1 {
		if l := bits.TrailingZeros32(m); len(g.seq[l]) > 0 {
			g.arrive(g.seq[l][0])
		}
	}
	advance := func(mask uint32) {
		for m := mask; m != 0; m &= m - 1 {
			l := bits.TrailingZeros32(m)
			head[l]++
			if head[l] < len(g.seq[l]) {
				g.arrive(g.seq[l][head[l]])
			}
		}
	}
	for {
		if len(g.ready) == 0 {
			// Either every lane is done, or the lanes wait on each other:
			// issue the first waiting lane's next group for the lanes
			// that are at it, and leave the rest of it for later.
			lane := -1
			for m := active; m != 0; m &= m - 1 {
				if l := bits.TrailingZeros32(m); head[l] < len(g.seq[l]) {
					lane = l
					break
				}
			}
			if lane < 0 {
				return
			}
			id := g.seq[lane][head[lane]]
			grp := &g.groups[id]
			var sub uint32
			for m := grp.mask; m != 0; m &= m - 1 {
				if l := bits.TrailingZeros32(m); head[l] < len(g.seq[l]) && g.seq[l][head[l]] == id {
					sub |= 1 << l
				}
			}
			r.split++
			r.emit(&grp.acc, sub)
			grp.mask &^= sub
			grp.need -= bits.OnesCount32(sub)
			grp.at = 0
			advance(sub)
			continue
		}
		id := g.pop()
		grp := &g.groups[id]
		r.emit(&grp.acc, grp.mask)
		if r.err != nil {
			return
		}
		advance(grp.mask)
	}
}

// arrive notes that one more lane's next access is in group id.
func (g *grouper) arrive(id int32) {
	grp := &g.groups[id]
	grp.at++
	if grp.at == grp.need {
		g.push(id)
	}
}

func (g *grouper) push(id int32) {
	h := append(g.ready, id)
	for i := len(h) - 1; i > 0; {
		p := (i - 1) / 2
		if h[p] <= h[i] {
			break
		}
		h[p], h[i] = h[i], h[p]
		i = p
	}
	g.ready = h
}

func (g *grouper) pop() int32 {
	h := g.ready
	top := h[0]
	n := len(h) - 1
	h[0] = h[n]
	h = h[:n]
	for i := 0; ; {
		c := 2*i + 1
		if c >= n {
			break
		}
		if c+1 < n && h[c+1] < h[c] {
			c++
		}
		if h[i] <= h[c] {
			break
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
	g.ready = h
	return top
}
