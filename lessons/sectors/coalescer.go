package sectors

import (
	"math/bits"
	"slices"
)

// coalescer is the launch-level twin of Coalesce: the same sectors, found
// without allocating, because a launch runs it once per warp instruction,
// millions of times. Tests hold the two equal on random warps.
type coalescer struct {
	sec  [2 * WarpSize]uint64 // distinct sector numbers (address / 32)
	used [2 * WarpSize]uint32 // bytes used in each, as in Sector.Used
	n    int

	gen     uint32
	slotGen [tableSize]uint32
	slotIdx [tableSize]uint8
}

const (
	tableBits = 8
	tableSize = 1 << tableBits
)

// contiguous coalesces k active lanes (lanes 0..k-1) that access size bytes
// each, back to back from base, with base a multiple of size: the shape of
// every coalesced instruction in the course, done a sector at a time
// rather than a lane at a time.
func (c *coalescer) contiguous(base uint64, size, k int) (sectors, useful int) {
	c.n = 0
	end := base + uint64(size*k)
	for s := base / SectorBytes; s*SectorBytes < end; s++ {
		lo, hi := max(base, s*SectorBytes), min(end, (s+1)*SectorBytes)
		c.sec[c.n] = s
		c.used[c.n] = byteMask(int(lo-s*SectorBytes), int(hi-s*SectorBytes))
		c.n++
	}
	return c.n, size * k
}

// run coalesces one instruction and returns the number of distinct sectors
// and the distinct bytes the active lanes use.
func (c *coalescer) run(addr *[WarpSize]uint64, size int, active uint32) (sectors, useful int) {
	// First every lane's sector, unmerged; the loop has no data-dependent
	// branch, since for a gather any such branch is a coin toss the CPU
	// mispredicts half the time.
	n := 0
	var descending uint64
	prev := uint64(0)
	if active == AllLanes && c.fullWarp(addr, size) {
		return c.countUseful()
	}
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
	if descending != 0 {
		c.dedupe()
	} else {
		c.mergeRuns()
	}
	return c.countUseful()
}

// fullWarp is run's loop for a warp whose 32 lanes are all active and none
// of whose accesses crosses a sector: the gather's common case, without the
// mask walk. It reports false, having done nothing useful, when some lane
// crosses a sector, and leaves the caller to take the general loop.
func (c *coalescer) fullWarp(addr *[WarpSize]uint64, size int) bool {
	var descending uint64
	prev := uint64(0)
	for l, lo := range addr {
		off := int(lo % SectorBytes)
		if off+size > SectorBytes {
			return false
		}
		s := lo / SectorBytes
		c.sec[l], c.used[l] = s, (uint32(1)<<size-1)<<off
		_, b := bits.Sub64(s, prev, 0)
		descending |= b
		prev = s
	}
	c.n = WarpSize
	if descending != 0 {
		c.dedupe()
	} else {
		c.mergeRuns()
	}
	return true
}

// countUseful returns the sector count and the distinct bytes used.
func (c *coalescer) countUseful() (sectors, useful int) {
	for i := range c.n {
		useful += bits.OnesCount32(c.used[i])
	}
	return c.n, useful
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
// gather) through a small open-addressing table; the generation counter
// spares clearing it between instructions.
func (c *coalescer) dedupe() {
	c.gen++
	if c.gen == 0 {
		c.slotGen = [tableSize]uint32{}
		c.gen = 1
	}
	k := 0
	for i := range c.n {
		s, used := c.sec[i], c.used[i]
		h := (s * 0x9E3779B97F4A7C15) >> (64 - tableBits)
		for {
			if c.slotGen[h] != c.gen {
				c.slotGen[h], c.slotIdx[h] = c.gen, uint8(k)
				c.sec[k], c.used[k] = s, used
				k++
				break
			}
			if j := c.slotIdx[h]; c.sec[j] == s {
				c.used[j] |= used
				break
			}
			h = (h + 1) & (tableSize - 1)
		}
	}
	c.n = k
}

// spread describes the sectors of the last run for the time model: the
// lines they fall in, the fetch blocks of 2^blockShift sectors they fall in,
// with parts the sectors it uses only in part, and the bytes from the first
// sector to the end of the last. It counts runs of the same line (block) in
// the order the sectors are held, which is exact for the sorted and the
// descending orders the coalescer keeps, and for a scattered warp counts a
// line once per run, as a scattered warp seldom touches a line twice.
func (c *coalescer) spread(blockShift uint, parts bool) (lines, blocks, partial int, span uint64) {
	if c.n == 0 {
		return 0, 0, 0, 0
	}
	lo, hi := c.sec[0], c.sec[0]
	line, block := c.sec[0]/sectorsPerLine, c.sec[0]>>blockShift
	lines, blocks = 1, 1
	for _, s := range c.sec[1:c.n] {
		lo, hi = min(lo, s), max(hi, s)
		if l := s / sectorsPerLine; l != line {
			line = l
			lines++
		}
		if b := s >> blockShift; b != block {
			block = b
			blocks++
		}
	}
	if parts {
		for _, u := range c.used[:c.n] {
			if u != ^uint32(0) {
				partial++
			}
		}
	}
	return lines, blocks, partial, (hi - lo + 1) * SectorBytes
}

// lines writes the distinct lines of the last run's sectors to out, in
// the order the sectors are held, and returns how many.
func (c *coalescer) lines(out *[2 * WarpSize]uint64) int {
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
// (lines for per = sectorsPerLine, sectors for 1): a walk of both in step
// where both ascend (every affine access), else a search of keys for each
// sector.
func (c *coalescer) within(keys []uint64, per uint64) int {
	n := 0
	if slices.IsSorted(c.sec[:c.n]) && slices.IsSorted(keys) {
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
