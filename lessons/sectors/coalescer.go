package sectors

import (
	"math/bits"
	"slices"
)

// coalescer is the launch-level twin of Coalesce: the same sectors, found
// without allocating, because a launch runs it once per warp instruction,
// millions of times. Tests hold the two equal on random warps.
//
// It keeps each sector where the lanes first reach it, lane order, which
// is address order for the coalesced instructions of the course, and
// describes the request for the time model and the L2 (its lines, fetch
// blocks and span, the sectors the L2 samples) as it finds the sectors, in
// loops without a data-dependent branch: a random gather of 2^26 threads
// is two million warps, and the model's speed goal (issue 13) is 300
// million addresses a second on one core.
type coalescer struct {
	sec  [2 * WarpSize]uint64 // distinct sector numbers (address / 32)
	used [2 * WarpSize]uint32 // bytes used in each, as in Sector.Used
	n    int
	// useful is the distinct bytes the lanes use.
	useful int
	// lines and blocks count the runs of one line, and of one block of
	// 2^shift sectors, in the order sec holds the sectors; lo and hi are
	// the lowest and highest sector. Runs are exact for the sorted and the
	// descending orders of coalesced instructions, and count a scattered
	// warp's line once per run, as a scattered warp seldom touches a line
	// twice.
	lines, blocks int
	lo, hi        uint64
	// tracked has bit i set when the L2 tracks the line of sec[i].
	tracked uint64
	// ascending says sec is in ascending order by construction (an affine
	// instruction's), which spares within checking.
	ascending bool

	// stamp is a filter of the sectors (or lines) seen in this
	// instruction: a slot, chosen by a hash of the sector (line), holds
	// gen when one that hashes there was seen. A gather's lanes seldom
	// share a sector, or a line, and a slot not stamped proves a lane's
	// new without searching. The generation spares clearing the slots
	// between instructions.
	gen   uint8
	stamp [1 << stampBits]uint8
	// sstamp is full's filter of sectors, beside stamp's of lines: lanes
	// that share a line but not a sector (a stride of a sector or more)
	// need no search for a repeat.
	sstamp [1 << stampBits]uint8
}

// request is what the time model and the L2 ask of an instruction's
// sectors: the log2 of the sectors of one fetch block, and the sampling
// threshold of the buffer's L2 (l2Buffer.threshold).
type request struct {
	shift     uint
	threshold uint64
}

// stampBits sizes the stamp filter: 8192 slots, which the lines of 32
// random lanes share falsely in about one warp in 16.
const stampBits = 13

// contiguous coalesces k active lanes (lanes 0..k-1), k at least one, that
// access size bytes each, back to back from base, with base a multiple of
// size: the shape of every coalesced instruction in the course, done a
// sector at a time rather than a lane at a time.
func (c *coalescer) contiguous(base uint64, size, k int, r request) {
	end := base + uint64(size*k)
	first, last := base/SectorBytes, (end-1)/SectorBytes
	c.n, c.tracked = int(last-first+1), 0
	for i := range c.n {
		s := first + uint64(i)
		c.sec[i], c.used[i] = s, fullSector
		if mix(s/sectorsPerLine) <= r.threshold {
			c.tracked |= 1 << (i & 63)
		}
	}
	// Only the first and the last sector can be used in part.
	c.used[0] &= byteMask(int(base%SectorBytes), SectorBytes)
	c.used[c.n-1] &= byteMask(0, int(end-last*SectorBytes))
	c.useful = size * k
	c.lines = int(last/sectorsPerLine - first/sectorsPerLine + 1)
	c.blocks = int(last>>r.shift - first>>r.shift + 1)
	c.lo, c.hi = first, last
	c.ascending = true
}

// strided coalesces a full warp whose lane l accesses size bytes at
// base + l*step, with base and step multiples of size and step at least
// twice size (sum_fields_aos, strided_copy, a column walk): what fullWarp
// finds for such a warp, without its search for repeats. The lanes rise,
// so a sector repeats only as the one before, and their bytes never
// overlap, so every lane's size bytes are useful.
// TestCoalescerMatchesSpecification holds it to the specification.
func (c *coalescer) strided(base, step uint64, size int, r request) {
	used := &usedAt[bits.TrailingZeros(uint(size))]
	k, lines, blocks := 0, 0, 0
	prev := ^uint64(0) // no sector: sectors lie below 2^62 / 32
	var tracked uint64
	for l := range uint64(WarpSize) {
		a := base + l*step
		s, u := a/SectorBytes, used[a%SectorBytes]
		if s == prev {
			c.used[k-1] |= u
			continue
		}
		// runs' count, of sectors in ascending order.
		if s/sectorsPerLine != prev/sectorsPerLine {
			lines++
		}
		if s>>r.shift != prev>>r.shift {
			blocks++
		}
		c.sec[k], c.used[k] = s, u
		if mix(s/sectorsPerLine) <= r.threshold {
			tracked |= 1 << k
		}
		prev = s
		k++
	}
	c.n, c.useful, c.tracked = k, WarpSize*size, tracked
	c.lines, c.blocks, c.lo, c.hi = lines, blocks, c.sec[0], c.sec[k-1]
	c.ascending = true
}

// stridedTakes reports whether strided takes a full warp's affine access
// of size bytes at base + lane*step: exactly the affine warps fullWarp
// takes (every lane aligned, an access full takes) whose lanes rise below
// MaxAddress without touching, step being neither 0 (a broadcast) nor
// size (contiguous) nor, as an unsigned step can be, a descent.
func stridedTakes(base, step uint64, size int, r request) bool {
	return fullTakes(size, r) && step > uint64(size) && (base|step)%uint64(size) == 0 &&
		base < MaxAddress && step <= (MaxAddress-1-base)/(WarpSize-1)
}

// run coalesces one instruction: its distinct sectors in c.sec and c.used,
// and what c's other fields say of them.
func (c *coalescer) run(addr *[WarpSize]uint64, size int, active uint32, r request) {
	c.ascending = false
	if active == AllLanes && c.fullWarp(addr, size, r) {
		return
	}
	// First every lane's sector, unmerged; the loop has no data-dependent
	// branch, since for a gather any such branch is a coin toss the CPU
	// mispredicts half the time.
	n := 0
	var descending uint64
	prev := uint64(0)
	for m := active; m != 0; m &= m - 1 {
		lo := addr[bits.TrailingZeros32(m)&(WarpSize-1)]
		off := int(lo % SectorBytes)
		s := lo / SectorBytes
		if off+size > SectorBytes {
			// The lane's bytes cross into the next sector.
			c.sec[n], c.used[n] = s, byteMask(off, SectorBytes)
			c.sec[n+1], c.used[n+1] = s+1, byteMask(0, off+size-SectorBytes)
			_, b := bits.Sub64(s, prev, 0)
			descending |= b
			prev = s + 1
			n += 2
			continue
		}
		c.sec[n], c.used[n] = s, (uint32(1)<<size-1)<<off
		_, b := bits.Sub64(s, prev, 0)
		descending |= b
		prev = s
		n++
	}
	c.n = n
	// Sectors in address order keep each sector's repeats together, and
	// merging neighbours keeps them where they first came, as dedupe does.
	if descending != 0 {
		c.dedupe()
	} else {
		c.mergeRuns()
	}
	c.useful, c.tracked = 0, 0
	for i, s := range c.sec[:c.n] {
		c.useful += bits.OnesCount32(c.used[i])
		if mix(s/sectorsPerLine) <= r.threshold {
			c.tracked |= 1 << (i & 63)
		}
	}
	c.runs(r.shift)
}

// fullWarp is run for a warp whose 32 lanes are all active and access
// aligned elements (none of which crosses a sector). It reports false,
// having done nothing, for a warp whose elements are not aligned or an
// access it does not take (see full), and leaves the caller to take the
// general way.
func (c *coalescer) fullWarp(addr *[WarpSize]uint64, size int, r request) bool {
	if !fullTakes(size, r) {
		return false
	}
	used := &usedAt[bits.TrailingZeros(uint(size))]
	var or uint64
	lo, hi := ^uint64(0), uint64(0)
	for l, a := range addr {
		or |= a
		s := a / SectorBytes
		c.sec[l], c.used[l] = s, used[a%SectorBytes]
		lo, hi = min(lo, s), max(hi, s)
	}
	if or&uint64(size-1) != 0 {
		return false
	}
	c.full(size, r, lo, hi)
	return true
}

// gather is fullWarp for a gather's 32 lanes, lane l accessing size bytes
// at idx[l]*size, aligned by construction: the addresses are never
// written out.
func (c *coalescer) gather(idx *[WarpSize]int32, size int, r request) bool {
	if !fullTakes(size, r) {
		return false
	}
	c.ascending = false
	used := &usedAt[bits.TrailingZeros(uint(size))]
	lo, hi := ^uint64(0), uint64(0)
	for l, v := range idx {
		a := uint64(v) * uint64(size)
		s := a / SectorBytes
		c.sec[l], c.used[l] = s, used[a%SectorBytes]
		lo, hi = min(lo, s), max(hi, s)
	}
	c.full(size, r, lo, hi)
	return true
}

// fullTakes reports whether full takes an access of size bytes: a power
// of two, so that aligned elements cross no sector, and fetch blocks no
// longer than a line.
func fullTakes(size int, r request) bool {
	return size&(size-1) == 0 && size <= MaxAccessBytes && r.shift <= 2
}

// full finishes fullWarp and gather, whose loop left the 32 lanes'
// sectors in c.sec and c.used and the lowest and highest in lo and hi.
// Its loop, without a branch (split from theirs to keep each loop's
// variables in registers), finds which sectors the L2 tracks and which
// lanes may share a line with an earlier lane: those whose line's stamp
// slot is taken. A gather's lanes seldom do, and when none does its 32
// sectors lie in 32 lines and 32 fetch blocks, in the order of the lanes,
// with nothing to merge. Otherwise the few lanes flagged are searched for
// and the runs counted.
func (c *coalescer) full(size int, r request, lo, hi uint64) {
	gen := c.nextGen()
	var shared, tracked uint64
	var slot [WarpSize]uint16
	for l, s := range c.sec[:WarpSize] {
		// One hash serves the L2's sampling of the line and the stamps,
		// which take the bits below the top byte: a sampled buffer
		// tracks the lines whose hash is small.
		m := mix(s / sectorsPerLine)
		h := m >> (64 - 8 - stampBits) & (1<<stampBits - 1)
		if c.stamp[h] == gen {
			shared |= 1 << (l & 63)
		}
		c.stamp[h] = gen
		slot[l] = uint16(h)
		if m <= r.threshold {
			tracked |= 1 << (l & 63)
		}
	}
	c.n, c.useful, c.tracked = WarpSize, WarpSize*size, tracked
	if shared == 0 {
		// A fetch block lies within a line (r.shift <= 2).
		c.lines, c.blocks, c.lo, c.hi = WarpSize, WarpSize, lo, hi
		return
	}
	// Lanes share lines: only those whose sector's slot is taken may
	// repeat a sector, and need a search. A sector's slot is its line's
	// moved by its place in the line, so that the four sectors of a line
	// never share one.
	var maybe uint64
	for l, s := range c.sec[:WarpSize] {
		hs := (uint64(slot[l]) + s%sectorsPerLine<<(stampBits-2)) & (1<<stampBits - 1)
		if c.sstamp[hs] == gen {
			maybe |= 1 << (l & 63)
		}
		c.sstamp[hs] = gen
	}
	c.merge(maybe, size, r.threshold)
	c.runs(r.shift)
}

// usedAt[k][off] is Sector.Used for a lane that accesses 2^k bytes from
// byte off of its sector.
var usedAt = func() (u [5][SectorBytes]uint32) {
	for k := range u {
		for off := range SectorBytes {
			u[k][off] = (uint32(1)<<(1<<k) - 1) << off
		}
	}
	return u
}()

// merge merges into its first place each of the 32 sectors in c.sec that
// repeats an earlier one, given maybe, the lanes that might (every lane
// whose sector repeats an earlier one's is among them).
func (c *coalescer) merge(maybe uint64, size int, threshold uint64) {
	k := 0
	c.useful, c.tracked = 0, 0
	for l := range WarpSize {
		s, u := c.sec[l], c.used[l]
		if maybe&(1<<l) != 0 {
			if j := c.find(s, k); j >= 0 {
				c.useful += bits.OnesCount32(u &^ c.used[j])
				c.used[j] |= u
				continue
			}
		}
		c.sec[k], c.used[k] = s, u
		c.useful += size
		if mix(s/sectorsPerLine) <= threshold {
			c.tracked |= 1 << k
		}
		k++
	}
	c.n = k
}

// nextGen starts a new instruction's stamps and returns its generation.
func (c *coalescer) nextGen() uint8 {
	c.gen++
	if c.gen == 0 {
		c.stamp = [1 << stampBits]uint8{}
		c.sstamp = [1 << stampBits]uint8{}
		c.gen = 1
	}
	return c.gen
}

// find returns the index of sector s among the first k kept, or -1.
func (c *coalescer) find(s uint64, k int) int {
	for j, x := range c.sec[:k] {
		if x == s {
			return j
		}
	}
	return -1
}

// mergeRuns merges equal neighbours of sectors already in address order.
func (c *coalescer) mergeRuns() {
	k := 0
	for i := range c.n {
		if k > 0 && c.sec[k-1] == c.sec[i] {
			c.used[k-1] |= c.used[i]
			continue
		}
		c.sec[k], c.used[k] = c.sec[i], c.used[i]
		k++
	}
	c.n = k
}

// dedupe merges repeated sectors of an out-of-order instruction (a
// gather), keeping each where it first came; the stamps spare searching
// for all but the few a hash puts in a slot already taken.
func (c *coalescer) dedupe() {
	gen := c.nextGen()
	k := 0
	for i := range c.n {
		s, u := c.sec[i], c.used[i]
		h := mix(s) >> (64 - stampBits)
		if c.stamp[h] == gen {
			if j := c.find(s, k); j >= 0 {
				c.used[j] |= u
				continue
			}
		}
		c.stamp[h] = gen
		c.sec[k], c.used[k] = s, u
		k++
	}
	c.n = k
}

// runs sets c.lines, c.blocks, c.lo and c.hi from the sectors c holds.
func (c *coalescer) runs(shift uint) {
	// A sector starts a new line (block) when it differs from the one
	// before in more than the low 2 (shift) bits: the borrow of
	// 3 - (s^prev) counts it without a branch.
	lines, blocks := uint64(0), uint64(0)
	inBlock := uint64(1)<<shift - 1
	prev := ^uint64(0) // no sector: sectors lie below 2^62 / 32
	lo, hi := ^uint64(0), uint64(0)
	for _, s := range c.sec[:c.n] {
		x := s ^ prev
		_, newLine := bits.Sub64(sectorsPerLine-1, x, 0)
		_, newBlock := bits.Sub64(inBlock, x, 0)
		lines += newLine
		blocks += newBlock
		prev = s
		lo, hi = min(lo, s), max(hi, s)
	}
	c.lines, c.blocks, c.lo, c.hi = int(lines), int(blocks), lo, hi
}

// partial counts the sectors the instruction uses only in part.
func (c *coalescer) partial() int {
	n := 0
	for _, u := range c.used[:c.n] {
		if u != ^uint32(0) {
			n++
		}
	}
	return n
}

// span is the bytes from the instruction's lowest sector to the end of its
// highest.
func (c *coalescer) span() uint64 {
	if c.n == 0 {
		return 0
	}
	return (c.hi - c.lo + 1) * SectorBytes
}

// lineKeys writes the lines of the last run's sectors to out, a line once
// per run in the order the sectors are held (within, their reader, does
// not mind a repeat), and returns how many.
func (c *coalescer) lineKeys(out *[2 * WarpSize]uint64) int {
	k := 0
	for _, s := range c.sec[:c.n] {
		if l := s / sectorsPerLine; k == 0 || out[k-1] != l {
			out[k] = l
			k++
		}
	}
	return k
}

// within returns how many of the last run's sectors s have s / per in keys
// (lines for per = sectorsPerLine, sectors for 1), whose lowest and
// highest are lo and hi, and which keysAscending says are in ascending
// order by construction: a walk of both in step
// where both ascend (every affine access), else a search of keys for each
// sector.
func (c *coalescer) within(keys []uint64, lo, hi, per uint64, keysAscending bool) int {
	// Most instructions lie wholly apart from the keys (the next warp's
	// part of the same buffer): their range says so at once.
	if c.n == 0 || c.hi/per < lo || c.lo/per > hi {
		return 0
	}
	// A load of the sectors the last one asked for (the next field of the
	// same structs) holds them all.
	if per == 1 && slices.Equal(c.sec[:c.n], keys) {
		return c.n
	}
	n := 0
	// Both ways count the same; the walk is the quicker.
	if c.ascending && keysAscending || slices.IsSorted(c.sec[:c.n]) && slices.IsSorted(keys) {
		i := 0
		for _, s := range c.sec[:c.n] {
			k := s / per
			for i < len(keys) && keys[i] < k {
				i++
			}
			if i < len(keys) && keys[i] == k {
				n++
			}
		}
		return n
	}
	for _, s := range c.sec[:c.n] {
		if slices.Contains(keys, s/per) {
			n++
		}
	}
	return n
}
