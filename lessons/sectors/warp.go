package sectors

import (
	"errors"
	"fmt"
	"math/bits"
	"slices"
)

// Geometry of global memory as the L1 and L2 see it on every GPU the course
// covers (Volta through Hopper).
const (
	WarpSize    = 32
	SectorBytes = 32
	LineBytes   = 128
	// MaxAccessBytes is the widest access one lane can make (a 16-byte
	// vector load such as float4).
	MaxAccessBytes = 16
)

// Warp is one warp-wide memory instruction: the byte address each lane
// accesses, how many bytes every lane accesses, and which lanes take part.
// Lanes whose Active bit is clear (a failed bounds check, a partial warp)
// send no address.
type Warp struct {
	Addr   [WarpSize]uint64
	Size   int
	Active uint32
}

// AllLanes is the Active mask of a full warp.
const AllLanes = ^uint32(0)

// Sector is one 32-byte sector a warp touches.
type Sector struct {
	// Addr is the sector's first byte address, a multiple of 32.
	Addr uint64
	// Used has bit i set when byte Addr+i is accessed by some lane.
	Used uint32
	// Lanes has bit l set when lane l touches this sector.
	Lanes uint32
}

// Line returns the address of the 128-byte line the sector belongs to.
func (s Sector) Line() uint64 { return s.Addr &^ (LineBytes - 1) }

// UsedBytes returns how many of the sector's 32 bytes the warp accesses.
func (s Sector) UsedBytes() int { return bits.OnesCount32(s.Used) }

// Access is what one warp instruction costs at the L1: one request, the
// distinct sectors and lines it touches, and the bytes it uses out of the
// bytes those sectors hold.
type Access struct {
	// Requests is 1 when any lane is active, else 0: an instruction whose
	// lanes are all off sends nothing to memory.
	Requests int
	// Sectors lists the distinct sectors touched, in address order.
	Sectors []Sector
	// Lines is the number of distinct 128-byte lines touched.
	Lines int
	// RequestedBytes is Size times the number of active lanes.
	RequestedBytes int
	// UsefulBytes counts each accessed byte once: lanes that read the same
	// address (a broadcast) share their bytes.
	UsefulBytes int
}

// FetchedBytes returns the bytes the touched sectors hold: 32 per sector.
func (a Access) FetchedBytes() int { return SectorBytes * len(a.Sectors) }

// Efficiency returns UsefulBytes / FetchedBytes, or 0 for an idle warp.
func (a Access) Efficiency() float64 {
	if len(a.Sectors) == 0 {
		return 0
	}
	return float64(a.UsefulBytes) / float64(a.FetchedBytes())
}

// ErrSize is an access size the hardware has no instruction for.
var ErrSize = errors.New("sectors: access size must be 1, 2, 4, 8 or 16 bytes")

// CheckSize returns ErrSize, wrapped with the value, unless size is 1, 2,
// 4, 8 or 16.
func CheckSize(size int) error {
	switch size {
	case 1, 2, 4, 8, 16:
		return nil
	}
	return fmt.Errorf("%w, got %d", ErrSize, size)
}

// MaxAddress bounds the addresses a Warp may hold; GPUs use 49 to 57 bits
// of virtual address, so 2^62 leaves room for every sector arithmetic.
const MaxAddress = 1 << 62

// ErrAddress is a lane address at or above MaxAddress.
var ErrAddress = errors.New("sectors: address out of range")

// Coalesce turns a warp's addresses into the sectors the hardware fetches.
// Addresses need not be aligned: a lane whose bytes cross a sector boundary
// touches both sectors (real hardware faults on a misaligned access; the
// model counts what an aligned equivalent would cost).
func Coalesce(w Warp) (Access, error) {
	if err := CheckSize(w.Size); err != nil {
		return Access{}, err
	}
	var a Access
	for lane := range WarpSize {
		if w.Active&(1<<lane) == 0 {
			continue
		}
		if w.Addr[lane] >= MaxAddress {
			return Access{}, fmt.Errorf("%w: lane %d accesses %#x, want an address below 2^62", ErrAddress, lane, w.Addr[lane])
		}
		a.Requests = 1
		a.RequestedBytes += w.Size
		lo, hi := w.Addr[lane], w.Addr[lane]+uint64(w.Size)
		for s := lo &^ (SectorBytes - 1); s < hi; s += SectorBytes {
			i, found := slices.BinarySearchFunc(a.Sectors, s, func(x Sector, t uint64) int {
				switch {
				case x.Addr < t:
					return -1
				case x.Addr > t:
					return 1
				}
				return 0
			})
			if !found {
				a.Sectors = slices.Insert(a.Sectors, i, Sector{Addr: s})
			}
			first, last := max(lo, s)-s, min(hi, s+SectorBytes)-s
			a.Sectors[i].Used |= byteMask(int(first), int(last))
			a.Sectors[i].Lanes |= 1 << lane
		}
	}
	var line uint64 = 1 // no line is at address 1
	for _, s := range a.Sectors {
		a.UsefulBytes += s.UsedBytes()
		if s.Line() != line {
			a.Lines++
			line = s.Line()
		}
	}
	return a, nil
}

// byteMask returns a mask with bits first..last-1 set, for 0 <= first < last <= 32.
func byteMask(first, last int) uint32 {
	return uint32((uint64(1)<<last)-1) &^ uint32((uint64(1)<<first)-1)
}
