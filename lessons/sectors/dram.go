package sectors

import (
	"math"
	"math/bits"

	"github.com/coalescing-course/coalesce/lessons/devices"
)

// l2 is the model's DRAM level: an L2 that sees every sector the L1
// requests and decides what crosses the memory bus.
//
// The rules, each measured on the device (see the package documentation):
//   - A load that misses fetches the missing sectors of its aligned block of
//     l2_fetch_granularity bytes, not only its own 32 bytes.
//   - A store allocates its sector in the L2 without reading DRAM; the
//     sector goes back to DRAM, 32 bytes, when it is evicted. A sector that
//     was written only in part is first filled from DRAM (32 bytes read).
//   - The L2 keeps what it saw last: a sector is still there when fewer
//     than ReuseL2Bytes have been brought in since it was last touched (LRU,
//     with the bytes inserted since as the distance). Dirty sectors still
//     there when the launch ends never reach DRAM inside it, which is why a
//     small copy shows almost no DRAM writes.
//
// Tracking every sector of a multi-gigabyte launch would cost more memory
// and time than the answer is worth, so each buffer tracks a fixed-size
// sample of its blocks, chosen by a hash of the block number, and scales the
// sample's traffic by the sampling rate (spatial sampling, as in SHARDS,
// Waldspurger et al., FAST 2015). Buffers up to sampleBlocks blocks are
// tracked whole, so small launches are exact.
type l2 struct {
	fetch     uint64 // l2_fetch_granularity in bytes
	perBlock  uint64 // sectors per fetch block
	blockBits int    // log2(perBlock)
	capacity  float64
	dirtyCap  float64
	fill      bool
	clock     float64 // bytes brought into the L2 so far, estimated
	bufs      []*l2Buffer
	readBytes float64
	writeBack float64
}

const sampleBlocks = 1 << 14

type l2Buffer struct {
	threshold uint64 // a block is tracked when mix(block) <= threshold
	scale     float64
	sectors   map[uint64]l2Sector
}

type l2Sector struct {
	stamp   float64 // clock when last touched
	present bool
	dirty   bool
	used    uint32 // bytes written while present
}

func newL2(d devices.Profile, fetch int, bufBytes []int64) *l2 {
	m := &l2{
		fetch:     uint64(fetch),
		perBlock:  uint64(fetch / SectorBytes),
		blockBits: bits.TrailingZeros(uint(fetch / SectorBytes)),
		capacity:  float64(d.DRAM.ReuseL2Bytes),
		dirtyCap:  float64(d.DRAM.DirtyL2Bytes),
		fill:      d.DRAM.PartialWriteFill,
	}
	for _, size := range bufBytes {
		blocks := (uint64(size) + m.fetch - 1) / m.fetch
		b := &l2Buffer{threshold: math.MaxUint64, scale: 1, sectors: map[uint64]l2Sector{}}
		if blocks > sampleBlocks {
			rate := float64(sampleBlocks) / float64(blocks)
			b.threshold = uint64(rate * math.MaxUint64)
			b.scale = 1 / rate
		}
		m.bufs = append(m.bufs, b)
	}
	return m
}

// mix is Fibonacci hashing: block numbers in any arithmetic progression
// land spread evenly over the 64-bit range (a Weyl sequence), so a regular
// access pattern samples its blocks at the nominal rate.
func mix(x uint64) uint64 { return x * 0x9E3779B97F4A7C15 }

func (m *l2) tracked(b *l2Buffer, sector uint64) bool {
	return mix(sector>>m.blockBits) <= b.threshold
}

// resident reports whether sector state s is still in the L2; one evicted
// while dirty is written back (and filled first, if written in part).
func (m *l2) resident(b *l2Buffer, s *l2Sector) bool {
	if !s.present {
		return false
	}
	if m.clock-s.stamp < m.capacity {
		return true
	}
	m.evict(b, s)
	return false
}

func (m *l2) evict(b *l2Buffer, s *l2Sector) {
	if s.dirty {
		m.writeBack += SectorBytes * b.scale
		if m.fill && s.used != math.MaxUint32 {
			m.readBytes += SectorBytes * b.scale
		}
	}
	*s = l2Sector{}
}

// load is a load of sector, which must be tracked.
func (m *l2) load(b *l2Buffer, sector uint64) {
	s := b.sectors[sector]
	if m.resident(b, &s) {
		s.stamp = m.clock
		b.sectors[sector] = s
		return
	}
	first := sector - sector%m.perBlock
	for x := first; x < first+m.perBlock; x++ {
		xs := b.sectors[x]
		if m.resident(b, &xs) {
			continue
		}
		m.readBytes += SectorBytes * b.scale
		m.clock += SectorBytes * b.scale
		b.sectors[x] = l2Sector{present: true, stamp: m.clock, used: math.MaxUint32}
	}
}

// store is a store of the bytes used of sector, which must be tracked.
func (m *l2) store(b *l2Buffer, sector uint64, used uint32) {
	s := b.sectors[sector]
	if m.resident(b, &s) {
		s.used |= used
		s.dirty = true
		s.stamp = m.clock
		b.sectors[sector] = s
		return
	}
	m.clock += SectorBytes * b.scale
	b.sectors[sector] = l2Sector{present: true, dirty: true, used: used, stamp: m.clock}
}

// finish accounts for the dirty sectors at the end of the launch: those
// written more than dirtyCap bytes ago have been written back by now, the
// rest stay in the L2 and cost no DRAM traffic inside the launch.
func (m *l2) finish() (read, write float64) {
	for _, b := range m.bufs {
		for _, s := range b.sectors {
			if s.present && s.dirty && m.clock-s.stamp >= m.dirtyCap {
				m.evict(b, &s)
			}
		}
	}
	return m.readBytes, m.writeBack
}
