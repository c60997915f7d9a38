package sectors

import (
	"math"
	"math/bits"
	"slices"

	"github.com/coalescing-course/coalesce/lessons/devices"
	"github.com/coalescing-course/coalesce/lessons/spec"
)

// l2 is the model's DRAM level: an L2 that sees every sector the L1
// requests and decides what crosses the memory bus.
//
// Its rules, each measured with ncu on the device (see the package
// documentation for the runs):
//   - The L2 holds 128-byte lines, each with four 32-byte sectors that are
//     valid or not. A line takes a whole line of capacity however few of
//     its sectors it holds, which is why a stride that leaves one sector
//     per line used also leaves the L2 three quarters empty.
//   - A load that misses fetches the missing sectors of its aligned block
//     of l2_fetch_granularity bytes (32, 64 or 128), not only its own.
//   - A store needs no read: it allocates its sector and marks the bytes it
//     wrote. A dirty sector goes back to DRAM, 32 bytes, when its line is
//     evicted; a sector written only in part and never read is first filled
//     from DRAM then (32 bytes read), since DRAM cannot take a partial one.
//   - Lines are replaced least recently used first: a line is still there
//     when the distinct lines touched since its own last touch fill less
//     than ReuseL2Bytes (its LRU stack distance). Dirty lines still there
//     when the launch ends are not written back inside it, which is why a
//     copy that fits in the L2 shows almost no DRAM writes.
//
// Tracking every line of a multi-gigabyte launch would cost more memory and
// time than the answer is worth, so each buffer tracks a fixed-size sample
// of its lines, chosen by a hash of the line number, and scales the
// sample's traffic and stack distances by the sampling rate (spatial
// sampling, as in SHARDS, Waldspurger et al., FAST 2015). Buffers of up to
// sampleLines lines are tracked whole, so small launches are exact.
//
// Stack distances come from a Fenwick tree over the tracked accesses in
// order: the access that is some line's latest holds that line's weight
// (its bytes, scaled), so the weight after a line's last access is the
// footprint of the distinct lines touched since.
type l2 struct {
	perBlock  uint64 // sectors per fetch block: 1, 2 or 4
	capacity  float64
	dirtyCap  float64
	sparseCap float64
	watermark float64
	fillDist  float64
	residue   float64
	busyDirty float64
	spread    float64
	fill      bool
	recent    fenwick // weight of each line at the time of its latest access
	bufs      []*l2Buffer
	readBytes float64
	writeBack float64
}

const (
	sampleLines    = 1 << 14
	sectorsPerLine = LineBytes / SectorBytes
	fullSector     = math.MaxUint32
)

type l2Buffer struct {
	threshold uint64 // a line is tracked when mix(line) <= threshold
	scale     float64
	lines     lineTable
}

// l2Line is one tracked line: when it was last touched, and which sectors
// are valid (hold DRAM's data) or dirty.
type l2Line struct {
	last  int // index of its latest access in m.recent
	valid uint8
	dirty uint8
}

// lineWrites is, for each sector of a tracked line, the bytes stores
// wrote: zero for a sector that is not dirty. Loads, most of a launch's
// lookups, seldom need it, so the table keeps it apart from the line's
// l2Line and a lookup reads less memory.
type lineWrites = [sectorsPerLine]uint32

// holds reports whether the L2 holds all of sector s of a line: read from
// DRAM, or written whole.
func holds(l *l2Line, w *lineWrites, s uint64) bool {
	return l.valid&(1<<s) != 0 || l.dirty&(1<<s) != 0 && w[s] == fullSector
}

// lineTable holds a buffer's tracked lines by line number: an
// open-addressing hash table with linear probing, for a launch's lookups,
// one per tracked sector. Unlike a Go map it hands back the line in place,
// with no copy in and out, and its slots are small.
type lineTable struct {
	slots   []lineSlot   // a power of two of them, at most three quarters full
	written []lineWrites // each slot's line's
	n       int
}

// lineSlot is one slot of a lineTable: key is the line number plus one,
// 0 for an empty slot (line numbers lie far below 2^64 - 1).
type lineSlot struct {
	key  uint64
	line l2Line
}

// get returns line's state, a zero one just added when the table did not
// hold it, and whether it did. The pointers hold until the next get.
func (t *lineTable) get(line uint64) (*l2Line, *lineWrites, bool) {
	if 4*(t.n+1) > 3*len(t.slots) {
		t.grow()
	}
	key, mask := line+1, uint64(len(t.slots)-1)
	// mix's high bits choose which lines a sampled buffer tracks, so they
	// are alike among its lines; fold the whole key into the index.
	i := (key ^ key>>29) * 0xBF58476D1CE4E5B9 >> 32 & mask
	for {
		s := &t.slots[i]
		switch s.key {
		case key:
			return &s.line, &t.written[i], true
		case 0:
			s.key = key
			t.n++
			return &s.line, &t.written[i], false
		}
		i = (i + 1) & mask
	}
}

// grow doubles the table and adds its lines again.
func (t *lineTable) grow() {
	old, oldWritten := t.slots, t.written
	n := max(64, 2*len(old))
	t.slots, t.written, t.n = make([]lineSlot, n), make([]lineWrites, n), 0
	for i, s := range old {
		if s.key != 0 {
			l, w, _ := t.get(s.key - 1)
			*l, *w = s.line, oldWritten[i]
		}
	}
}

// newL2 returns an empty L2 for a launch of the given buffers, each
// sampled when it is larger than sampleLines lines and sample is set.
func newL2(d devices.Profile, fetch int, bufs []spec.Buffer, sample bool) *l2 {
	m := &l2{
		perBlock:  uint64(fetch / SectorBytes),
		capacity:  float64(d.DRAM.ReuseL2Bytes),
		dirtyCap:  float64(d.DRAM.DirtyL2Bytes),
		sparseCap: float64(d.DRAM.SparseDirtyL2Bytes),
		watermark: float64(d.DRAM.DirtyWatermarkBytes),
		fillDist:  float64(d.DRAM.FillL2Bytes),
		residue:   float64(d.DRAM.ProfiledDirtyBytes),
		busyDirty: float64(d.DRAM.BusyDirtyL2Bytes),
		spread:    d.DRAM.Spread,
		fill:      d.DRAM.PartialWriteFill,
	}
	for _, buf := range bufs {
		m.addBuffer(buf.Bytes, sample)
	}
	return m
}

// addBuffer adds a buffer of the given bytes, sampled when it is larger
// than sampleLines lines and sample is set.
func (m *l2) addBuffer(bytes int64, sample bool) {
	lines := (uint64(bytes) + LineBytes - 1) / LineBytes
	b := &l2Buffer{threshold: math.MaxUint64, scale: 1}
	if sample && lines > sampleLines {
		rate := float64(sampleLines) / float64(lines)
		b.threshold = uint64(rate * math.MaxUint64)
		b.scale = 1 / rate
	}
	m.bufs = append(m.bufs, b)
}

// mix is Fibonacci hashing: line numbers in any arithmetic progression land
// spread evenly over the 64-bit range (a Weyl sequence), so a regular access
// pattern samples its lines at the nominal rate.
func mix(x uint64) uint64 { return x * 0x9E3779B97F4A7C15 }

// touch returns the state of line after an access to it, allocating the
// line (and evicting what was there) when it is no longer resident.
func (m *l2) touch(b *l2Buffer, line uint64) (*l2Line, *lineWrites) {
	l, w, seen := b.lines.get(line)
	if seen {
		since := m.recent.total() - m.recent.prefix(l.last)
		m.recent.drop(l.last, LineBytes*b.scale)
		if !m.kept(since, m.capacity, line, l.last) {
			m.evict(b, l, w)
			*l, *w = l2Line{}, lineWrites{}
		}
	}
	l.last = m.recent.push(LineBytes * b.scale)
	return l, w
}

// evict writes a line's dirty sectors back, filling first those written
// only in part over data never read.
func (m *l2) evict(b *l2Buffer, l *l2Line, w *lineWrites) {
	for s := range uint64(sectorsPerLine) {
		if l.dirty&(1<<s) == 0 {
			continue
		}
		m.writeBack += SectorBytes * b.scale
		if m.fill && !holds(l, w, s) {
			m.readBytes += SectorBytes * b.scale
		}
	}
}

// load is a load of sector, which must be tracked.
func (m *l2) load(b *l2Buffer, sector uint64) {
	line, s := sector/sectorsPerLine, sector%sectorsPerLine
	l, w := m.touch(b, line)
	if !holds(l, w, s) {
		first := s - s%m.perBlock
		for x := first; x < first+m.perBlock; x++ {
			if !holds(l, w, x) {
				m.readBytes += SectorBytes * b.scale
				l.valid |= 1 << x
			}
		}
	}
}

// store is a store of the bytes used of sector, which must be tracked.
func (m *l2) store(b *l2Buffer, sector uint64, used uint32) {
	line, s := sector/sectorsPerLine, sector%sectorsPerLine
	l, w := m.touch(b, line)
	l.dirty |= 1 << s
	w[s] |= used
}

// finish writes back the dirty lines that are no longer resident when the
// launch ends; the rest stay in the L2 and cost no DRAM traffic inside it.
// Two limits decide which stay, both measured on the H200
// (cuda/reference/l2edge.jsonl, ncu's dram__bytes_write.sum):
//
//   - distance: a dirty line stays when the distinct traffic since its
//     last touch, reads and writes, is under DirtyL2Bytes (SparseDirtyL2Bytes
//     for sparse lines). A copy, half reads, keeps about half of it: 19.5 MB
//     of every large float copy's writes stay in the H200's L2.
//   - watermark: counting from the most recent, the dirty bytes kept stop
//     at DirtyWatermarkBytes. A read-modify-write, all of whose lines are
//     dirty, keeps about 27 MB, not the distance's 41.
//
// A sector written only in part is filled from DRAM, whether or not its
// line is then written back, once FillL2Bytes of such sectors were written
// after it: strided_write at stride 8, one float in every sector, read all
// but the last 6 to 7 MB of its sectors from DRAM at every n from 2^22 to
// 2^26, though it wrote back all but the last 13 to 19 MB; strided_copy at
// stride 2, whose half-written sectors come between reads, filled almost
// none at n = 2^21 (8.4 MB of them).
//
// Then the dirty data the L2 held before the launch began
// (ProfiledDirtyBytes) goes back to DRAM as the launch's own traffic pushes
// it out: the oldest lines of all, at the distance of the whole launch.
//
// busy, from 0 to 1, is how close the launch keeps DRAM to its copy
// bandwidth (see settle): lines written whole and never read stay at
// distances up to DirtyL2Bytes + busy × BusyDirtyL2Bytes. finish leaves
// the L2 as it found it, so that it may be asked again at another busy.
func (m *l2) finish(busy float64) (read, write float64) {
	read0, write0 := m.readBytes, m.writeBack
	defer func() { m.readBytes, m.writeBack = read0, write0 }()
	total := m.recent.total()
	type dirtyLine struct {
		b    *l2Buffer
		line uint64
		l    l2Line
		w    lineWrites
	}
	var dirty []dirtyLine
	for _, b := range m.bufs {
		for i, s := range b.lines.slots {
			if s.key != 0 && s.line.dirty != 0 {
				dirty = append(dirty, dirtyLine{b, s.key - 1, s.line, b.lines.written[i]})
			}
		}
	}
	// Most recent first: the watermark keeps the newest dirty lines.
	slices.SortFunc(dirty, func(a, b dirtyLine) int { return b.l.last - a.l.last })
	kept, newerPartial := 0.0, 0.0
	for _, d := range dirty {
		parts := float64(partial(&d.l, &d.w)) * SectorBytes * d.b.scale
		capacity := m.dirtyCap
		switch {
		case sparse(&d.l, &d.w):
			capacity = m.sparseCap
		case d.l.valid == 0:
			capacity += busy * m.busyDirty
		}
		since := total - m.recent.prefix(d.l.last)
		if m.kept(since, capacity, d.line, d.l.last) && (m.watermark <= 0 || m.kept(kept, m.watermark, d.line, -d.l.last)) {
			kept += float64(bits.OnesCount8(d.l.dirty)) * SectorBytes * d.b.scale
			if parts > 0 && m.fill && m.fillDist > 0 && !m.kept(newerPartial, m.fillDist, d.line, d.l.last+1) {
				m.readBytes += parts
			}
			newerPartial += parts
			continue
		}
		newerPartial += parts
		m.evict(d.b, &d.l, &d.w)
	}
	if m.residue > 0 {
		lo, hi := m.dirtyCap*(1-m.spread), m.dirtyCap*(1+m.spread)
		switch {
		case total >= hi:
			m.writeBack += m.residue
		case total > lo:
			m.writeBack += m.residue * (total - lo) / (hi - lo)
		}
	}
	return m.readBytes, m.writeBack
}

// kept reports whether a line whose LRU stack distance is since bytes is
// still in an L2 of the given capacity. A real L2 is not one LRU list: it
// is hashed into sets and split into two partitions, so lines leave over a
// range of distances rather than at one. The model keeps a line for sure
// below capacity*(1-spread), never above capacity*(1+spread), and in
// between with a probability falling linearly; the draw is a hash of the
// line and the access, so the same launch always gets the same answer.
func (m *l2) kept(since, capacity float64, line uint64, at int) bool {
	lo, hi := capacity*(1-m.spread), capacity*(1+m.spread)
	switch {
	case since < lo:
		return true
	case since >= hi:
		return false
	}
	u := float64(mix(line^uint64(at)<<40)>>11) / (1 << 53)
	return u < (hi-since)/(hi-lo)
}

// partial counts a line's dirty sectors written only in part over data
// never read: those a write-back must fill first.
func partial(l *l2Line, w *lineWrites) int {
	n := 0
	for s := range uint64(sectorsPerLine) {
		if l.dirty&(1<<s) != 0 && !holds(l, w, s) {
			n++
		}
	}
	return n
}

// sparse reports whether a line holds written data only in part: no data
// read from DRAM, and fewer than four sectors dirty or a sector written
// only in part. The H200 keeps far fewer such lines to the end of a launch
// (measured, probe_metrics: strided_write leaves under 3 MB of the 16 to
// 67 MB it writes in the L2 at strides 32 and 128, and 4 MB of 16 at
// stride 8, where a copy leaves 19.5 MB), so they have a capacity of their
// own, SparseDirtyL2Bytes (a stack distance, as DirtyL2Bytes is; see
// finish).
func sparse(l *l2Line, w *lineWrites) bool {
	if l.valid != 0 {
		return false
	}
	if l.dirty != 1<<sectorsPerLine-1 {
		return true
	}
	for _, x := range w {
		if x != fullSector {
			return true
		}
	}
	return false
}

// fenwick is a binary indexed tree of float64 weights that grows as
// weights are pushed: prefix sums and updates in O(log n). A weight is
// pushed once and dropped at most once, all the L2 needs, so the tree
// keeps no copy of the weights: the caller knows what it pushed.
type fenwick struct {
	tree []float64 // 1-based (tree[0] unused)
	sum  float64
}

// push appends a weight and returns its index.
func (f *fenwick) push(w float64) int {
	if len(f.tree) == cap(f.tree) {
		// Doubling: a launch pushes millions, and append grows a large
		// slice by a quarter at a time, copying it each time.
		tree := make([]float64, len(f.tree), max(1024, 2*cap(f.tree)))
		copy(tree, f.tree)
		f.tree = tree
		if len(f.tree) == 0 {
			f.tree = f.tree[:1]
		}
	}
	i := len(f.tree)
	// A new last node covers (i - lowbit(i), i]: sum those weights, then
	// add its own, as adding w to a zero weight at i would.
	t := 0.0
	for j := i - 1; j > i-(i&-i); j -= j & -j {
		t += f.tree[j]
	}
	f.tree = append(f.tree, t+w)
	f.sum += w
	return i
}

// drop sets the weight at index i, which is w, to zero.
func (f *fenwick) drop(i int, w float64) {
	d := 0 - w
	f.sum += d
	for j := i; j < len(f.tree); j += j & -j {
		f.tree[j] += d
	}
}

// prefix returns the sum of the weights at indexes 1..i.
func (f *fenwick) prefix(i int) float64 {
	s := 0.0
	for j := i; j > 0; j -= j & -j {
		s += f.tree[j]
	}
	return s
}

func (f *fenwick) total() float64 { return f.sum }
