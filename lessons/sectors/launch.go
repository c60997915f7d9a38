package sectors

import (
	"fmt"
	"math"
	"math/bits"

	"github.com/coalescing-course/coalesce/lessons/devices"
	"github.com/coalescing-course/coalesce/lessons/metrics"
	"github.com/coalescing-course/coalesce/lessons/spec"
)

// Prediction is the model's account of one launch.
type Prediction struct {
	// Spec is the launch, defaults filled in.
	Spec spec.Spec `json:"spec"`
	// Metrics holds the counts Nsight Compute reports, under its names.
	Metrics metrics.Set `json:"metrics"`
	// Warps is the number of warps launched, partial ones included.
	Warps int64 `json:"warps"`
	// UsefulBytes is what the kernel must move to do its work (spec.UsefulBytes).
	UsefulBytes int64 `json:"useful_bytes"`
	// L1UsefulBytes sums, over every instruction, the distinct bytes its
	// lanes access: the numerator of Efficiency.
	L1UsefulBytes int64 `json:"l1_useful_bytes"`
	// FetchedBytes is 32 bytes for every sector requested, loads and stores.
	FetchedBytes int64 `json:"fetched_bytes"`
	// LdSectorsPerRequest and StSectorsPerRequest are the ratio the seed's
	// table calls sectors per warp; 0 where the kernel has no such request.
	LdSectorsPerRequest float64 `json:"ld_sectors_per_request"`
	StSectorsPerRequest float64 `json:"st_sectors_per_request"`
	// Efficiency is L1UsefulBytes / FetchedBytes.
	Efficiency float64 `json:"efficiency"`
	// DRAMBytesPerUsefulByte is (DRAM read + write) / UsefulBytes: the
	// hardware's answer to the seed's efficiency.
	DRAMBytesPerUsefulByte float64 `json:"dram_bytes_per_useful_byte"`
	// TimeSeconds is the time model's estimate of one launch, and Time
	// how it got there.
	TimeSeconds float64   `json:"time_seconds"`
	Time        TimeParts `json:"time"`
}

// Predict runs the model over every warp of the launch s describes and
// returns its counts. It fails only when s is invalid or its indices cannot
// be read.
func Predict(s spec.Spec) (Prediction, error) {
	if err := s.Validate(); err != nil {
		return Prediction{}, err
	}
	var err error
	var idx []int32
	if s.Kernel == spec.GatherCopy {
		if idx, err = s.Indices(); err != nil {
			return Prediction{}, fmt.Errorf("sectors: %w", err)
		}
	}
	return predictWith(s, idx)
}

// predictWith is Predict once the spec is valid and its indices, if any,
// are in hand; the benchmark calls it to time the model alone.
func predictWith(s spec.Spec, idx []int32) (Prediction, error) {
	d, err := devices.Lookup(s.Device)
	if err != nil {
		return Prediction{}, fmt.Errorf("sectors: %w", err)
	}
	m, err := newSim(s, idx, nil)
	if err != nil {
		return Prediction{}, err
	}
	m.l2 = newL2(d, s.L2Fetch, m.bufs)
	m.launch()
	read, write := m.l2.finish()

	p := Prediction{
		Spec: s,
		Metrics: metrics.Set{
			metrics.LdRequests: float64(m.ldReq),
			metrics.LdSectors:  float64(m.ldSec),
			metrics.StRequests: float64(m.stReq),
			metrics.StSectors:  float64(m.stSec),
			metrics.DRAMRead:   math.Round(read),
			metrics.DRAMWrite:  math.Round(write),
		},
		Warps:         m.warps,
		UsefulBytes:   s.UsefulBytes(),
		L1UsefulBytes: m.useful,
		FetchedBytes:  SectorBytes * (m.ldSec + m.stSec),
	}
	p.LdSectorsPerRequest = ratio(m.ldSec, m.ldReq)
	p.StSectorsPerRequest = ratio(m.stSec, m.stReq)
	p.Efficiency = ratio(p.L1UsefulBytes, p.FetchedBytes)
	p.DRAMBytesPerUsefulByte = (math.Round(read) + math.Round(write)) / float64(p.UsefulBytes)
	p.Time = estimateTime(d, s, p)
	p.TimeSeconds = p.Time.Total()
	return p, nil
}

func ratio(a, b int64) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// sim walks a launch warp by warp, in block order, feeding every warp
// instruction to the coalescer and every sector it touches to the L2.
type sim struct {
	s    spec.Spec
	idx  []int32
	bufs []spec.Buffer
	warp warpFunc
	err  error
	l2   *l2
	co   coalescer
	addr [WarpSize]uint64
	// affineSet says the addresses are base + lane*step, not m.addr.
	affineSet  bool
	base, step uint64
	warps      int64

	ldReq, ldSec, stReq, stSec int64
	useful                     int64

	// record, when set, collects the instructions instead of counting them.
	record *[]Instruction
}

// newSim sets up the model of the launch s: its buffers and its kernel's
// address function. record, when set, collects instructions instead of
// counting them.
func newSim(s spec.Spec, idx []int32, record *[]Instruction) (*sim, error) {
	m := &sim{s: s, idx: idx, bufs: s.Buffers(), record: record}
	addr, ok := addresses[s.Kernel]
	if !ok {
		return nil, fmt.Errorf("sectors: kernel %s has no address function", s.Kernel)
	}
	m.warp = addr(m)
	if m.err != nil {
		return nil, m.err
	}
	return m, nil
}

// buf returns the index of the buffer the kernel calls name.
func (m *sim) buf(name string) int {
	for i, b := range m.bufs {
		if b.Name == name {
			return i
		}
	}
	m.err = fmt.Errorf("sectors: kernel %s has no buffer %q (spec.Buffers gives %v)", m.s.Kernel, name, m.bufs)
	return 0
}

// ld and st issue one warp instruction on buffer buf, with addresses in
// m.addr relative to the buffer's start (which is 256-byte aligned, so
// sectors and lines are the same as for absolute addresses).
func (m *sim) ld(buf, size int, active uint32, access string) {
	m.issue(false, buf, size, active, access)
}

func (m *sim) st(buf, size int, active uint32, access string) {
	m.issue(true, buf, size, active, access)
}

func (m *sim) issue(store bool, buf, size int, active uint32, access string) {
	if m.record != nil {
		m.keep(store, buf, size, active, access)
		return
	}
	if active == 0 {
		return
	}
	n, useful := m.coalesce(size, active)
	m.useful += int64(useful)
	b := m.l2.bufs[buf]
	if store {
		m.stReq++
		m.stSec += int64(n)
		for i := range n {
			if tracked(b, m.co.sec[i]) {
				m.l2.store(b, m.co.sec[i], m.co.used[i])
			}
		}
		return
	}
	m.ldReq++
	m.ldSec += int64(n)
	for i := range n {
		if tracked(b, m.co.sec[i]) {
			m.l2.load(b, m.co.sec[i])
		}
	}
}

// coalesce runs the coalescer on the instruction's addresses, taking the
// contiguous fast path when an affine call laid the lanes back to back
// from an aligned base, and filling m.addr only when it is needed.
func (m *sim) coalesce(size int, active uint32) (int, int) {
	if m.affineSet {
		if m.step == uint64(size) && m.base%uint64(size) == 0 && active&(active+1) == 0 {
			return m.co.contiguous(m.base, size, bits.OnesCount32(active))
		}
		for l := range WarpSize {
			m.addr[l] = m.base + uint64(l)*m.step
		}
	}
	return m.co.run(&m.addr, size, active)
}

// below returns the mask of lanes whose thread t0+lane is below limit,
// among the first present lanes.
func below(t0, limit int64, present int) uint32 {
	k := min(int64(present), max(0, limit-t0))
	return uint32((uint64(1) << k) - 1)
}

// affine sets the next instruction's addresses to base + lane*step.
func (m *sim) affine(base, step uint64) {
	m.affineSet, m.base, m.step = true, base, step
}

func (m *sim) launch() {
	s := m.s
	block := int64(s.Block)
	warpsPerBlock := (block + WarpSize - 1) / WarpSize
	blocks := s.GridBlocks()
	for b := range blocks {
		for w := range warpsPerBlock {
			present := int(min(WarpSize, block-w*WarpSize))
			t0 := b*block + w*WarpSize
			m.warps++
			m.warp(t0, present)
		}
	}
}
