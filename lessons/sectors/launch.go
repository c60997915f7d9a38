package sectors

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"math/bits"
	"runtime"
	"slices"
	"sync"

	"github.com/coalescing-course/coalesce/lessons/devices"
	"github.com/coalescing-course/coalesce/lessons/metrics"
	"github.com/coalescing-course/coalesce/lessons/spec"
)

// Launch is the model's account of one launch: the counts it
// predicts, under Nsight Compute's names, and its time. The figures
// derived from them (sectors per request, efficiency, bandwidths) are
// lessons/figures'.
type Launch struct {
	// Spec is the launch, defaults filled in.
	Spec spec.Spec `json:"spec"`
	// Metrics holds the counts Nsight Compute reports, under its names:
	// metrics.All for every kernel, metrics.Shared too for a kernel that
	// uses shared memory.
	Metrics metrics.Set `json:"metrics"`
	// Warps is the number of warps launched, partial ones included.
	Warps int64 `json:"warps"`
	// L1UsefulBytes sums, over every instruction, the distinct bytes its
	// lanes access: what the sectors fetched were for.
	L1UsefulBytes int64 `json:"l1_useful_bytes"`
	// TimeSeconds is the time model's estimate of one launch, and Time
	// how it got there.
	TimeSeconds float64   `json:"time_seconds"`
	Time        TimeParts `json:"time"`
	// Traffic is what the time model reads of the launch besides the
	// counts: how many lines its requests visit and how closely their
	// DRAM blocks lie.
	// It is the model's working, not a count, and stays out of the JSON.
	Traffic Traffic `json:"-"`
}

// Model runs the model over every warp of the launch s describes and
// returns its counts. It fails only when s is invalid, its indices cannot
// be read, or the GPU would refuse its accesses (ErrMisaligned).
func Model(s spec.Spec) (Launch, error) {
	if err := s.Validate(); err != nil {
		return Launch{}, err
	}
	d, err := devices.Lookup(s.Device)
	if err != nil {
		return Launch{}, fmt.Errorf("sectors: %w", err)
	}
	return ModelOn(s, d)
}

// ModelOn is Model on the device d rather than the profile s names:
// a profile being fitted, or calibrated on this machine's GPU, is not
// among the registered ones. s.Device is left as it is, d is what counts.
func ModelOn(s spec.Spec, d devices.Profile) (Launch, error) {
	idx, err := prepare(s, d)
	if err != nil {
		return Launch{}, err
	}
	return predictOn(s, idx, d)
}

// prepare validates s and d and draws s's indices if it is a gather: what
// each way of running the model on a profile does first.
func prepare(s spec.Spec, d devices.Profile) ([]int32, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if err := d.Validate(); err != nil {
		return nil, fmt.Errorf("sectors: %w", err)
	}
	if s.Kernel != spec.GatherCopy {
		return nil, nil
	}
	idx, err := s.Indices()
	if err != nil {
		return nil, fmt.Errorf("sectors: %w", err)
	}
	return idx, nil
}

// ModelIndices is Model for a gather whose indices the caller already
// holds (idx[t] for every thread t, as Spec.Indices returns them), so that
// a caller who needs them too, an answer key explaining warp 0, draws them
// once: a random permutation of 2^25 indices is 128 MiB, and drawing it
// twice doubles a key's memory. For other kernels idx must be nil.
func ModelIndices(s spec.Spec, idx []int32) (Launch, error) {
	if err := s.Validate(); err != nil {
		return Launch{}, err
	}
	switch {
	case s.Kernel == spec.GatherCopy && int64(len(idx)) != s.N:
		return Launch{}, fmt.Errorf("sectors: %w: %s needs n = %d indices, got %d", spec.ErrIndices, s.Kernel, s.N, len(idx))
	case s.Kernel != spec.GatherCopy && idx != nil:
		return Launch{}, fmt.Errorf("sectors: %s reads no indices, got %d (only %s does)", s.Kernel, len(idx), spec.GatherCopy)
	}
	return predictWith(s, idx)
}

// Retime returns p with its time on the device d: the time model alone,
// over the counts p already holds, which d.Time does not change. A fit of
// d.Time tries thousands of candidates; the counts of a launch are worth
// predicting once, not once for each.
func Retime(p Launch, d devices.Profile) Launch {
	p.Time = EstimateTime(d, p)
	p.TimeSeconds = p.Time.Total()
	return p
}

// predictWith is Model once the spec is valid and its indices, if any,
// are in hand; the benchmark calls it to time the model alone.
func predictWith(s spec.Spec, idx []int32) (Launch, error) {
	d, err := devices.Lookup(s.Device)
	if err != nil {
		return Launch{}, fmt.Errorf("sectors: %w", err)
	}
	return predictOn(s, idx, d)
}

// predictOn is predictWith on the device d.
func predictOn(s spec.Spec, idx []int32, d devices.Profile) (Launch, error) {
	p, _, err := runOn(s, idx, d, false)
	return p, err
}

// runOn runs the model of s on d and, when trace is set, also returns the
// L2 accesses it tracked, in order.
func runOn(s spec.Spec, idx []int32, d devices.Profile, trace bool) (Launch, []l2Access, error) {
	m, p, err := runToEnd(s, idx, d, trace)
	if err != nil {
		return Launch{}, nil, err
	}
	return settle(m.l2, d, p), m.trace, nil
}

// runToEnd is runOn up to the end of the launch, before its L2 settles:
// the model and the counts above the L2.
func runToEnd(s spec.Spec, idx []int32, d devices.Profile, trace bool) (*sim, Launch, error) {
	m, err := newSim(s, idx, nil)
	if err != nil {
		return nil, Launch{}, err
	}
	if trace {
		m.trace = []l2Access{}
	}
	m.l2 = newL2(d, s.L2Fetch, m.bufs, true)
	m.launch()
	p := m.counts()
	p.Spec = s
	return m, p, nil
}

// counts returns what the model counted above the L2: the metrics but
// DRAM's (settle adds them), the useful bytes, the warps and the traffic.
func (m *sim) counts() Launch {
	p := Launch{
		Metrics: metrics.Set{
			metrics.LdRequests: float64(m.ldReq),
			metrics.LdSectors:  float64(m.ldSec),
			metrics.StRequests: float64(m.stReq),
			metrics.StSectors:  float64(m.stSec),
		},
		Warps:         m.warps,
		L1UsefulBytes: m.useful,
		Traffic:       m.traffic,
	}
	// The shared counts belong to the kernels that use shared memory, as
	// the global ones belong to all.
	if m.shLdExec+m.shStExec > 0 {
		p.Metrics[metrics.ShLdRequests] = float64(m.shLdExec)
		p.Metrics[metrics.ShStRequests] = float64(m.shStExec)
		p.Metrics[metrics.ShLdWavefronts] = float64(m.shLdWave)
		p.Metrics[metrics.ShStWavefronts] = float64(m.shStWave)
		p.Metrics[metrics.ShLdBankConflicts] = float64(m.shLdWave - m.shLdReq)
		p.Metrics[metrics.ShStBankConflicts] = float64(m.shStWave - m.shStReq)
	}
	return p
}

// settle ends the launch on its L2: p with the DRAM bytes of the dirty
// lines that leave it, and the time they give. How many leave depends on
// how busy the launch keeps DRAM (BusyDirtyL2Bytes), which the time model
// says from the DRAM bytes of a launch at rest; one more pass with that
// answer settles it (the second pass moves the time by the few MB it
// keeps back, not enough to change how busy the launch is).
func settle(l2 *l2, d devices.Profile, p Launch) Launch {
	read, write := l2.finish(0)
	p = withDRAM(p, d, read, write)
	if b := busy(d, p); b > 0 && l2.busyDirty > 0 {
		read, write = l2.finish(b)
		p = withDRAM(p, d, read, write)
	}
	return p
}

// withDRAM returns p with the given DRAM bytes and its time from them.
func withDRAM(p Launch, d devices.Profile, read, write float64) Launch {
	p.Metrics = maps.Clone(p.Metrics)
	p.Metrics[metrics.DRAMRead], p.Metrics[metrics.DRAMWrite] = math.Round(read), math.Round(write)
	return Retime(p, d)
}

// busyFrom is the share of its time a launch streams DRAM at the copy
// bandwidth from which DRAM counts as busy. The H200's float copies, whose
// write-backs DirtyL2Bytes was fitted to, spend 35 to 68 % of theirs so
// (cuda/reference/l2edge.jsonl): below busyFrom, a launch's speed leaves
// its write-backs as they are.
const busyFrom = 0.7

// busy returns how busy the launch p keeps DRAM, from 0 (streaming its
// DRAM bytes at the copy bandwidth takes busyFrom of its time or less) to
// 1 (all of it). It counts bytes, not the bandwidth limit's charge for
// scattered blocks: a random gather that waits on DRAM row after row keeps
// DRAM occupied without streaming it, and the H200 writes its output back
// as the model without busy says (l2edge.jsonl, gather_copy at 7 and 8 x
// 2^20; TestFitBusyH200 holds the gathers to it).
func busy(d devices.Profile, p Launch) float64 {
	t := p.Time
	longest := max(t.Bandwidth, t.Latency, t.Blocks, t.L1Lines, t.L2Stores, t.Shared)
	if longest <= 0 || d.Time.CopyBandwidth <= 0 {
		return 0
	}
	stream := (p.Metrics[metrics.DRAMRead] + p.Metrics[metrics.DRAMWrite]) / d.Time.CopyBandwidth
	return min(1, max(0, (stream/longest-busyFrom)/(1-busyFrom)))
}

// Trace is a launch as the model's L2 saw it: the accesses to the lines it
// tracks, in order, and the counts that do not depend on the DRAM level.
// ModelOn runs only the L2 again over them, for another profile, which
// costs a small part of a Model call: a fit of the DRAM parameters tries
// dozens of profiles on the same launches.
type Trace struct {
	base Launch
	bufs []spec.Buffer
	acc  []l2Access
}

// l2Access is one sector access the L2 tracked.
type l2Access struct {
	sector uint64
	used   uint32 // the bytes a store wrote; 0 for a load
	buf    uint16
	store  bool
}

// NewTrace runs the model of s on d, as ModelOn does, and keeps what its
// L2 saw.
func NewTrace(s spec.Spec, d devices.Profile) (*Trace, error) {
	idx, err := prepare(s, d)
	if err != nil {
		return nil, err
	}
	p, acc, err := runOn(s, idx, d, true)
	if err != nil {
		return nil, err
	}
	return &Trace{base: p, bufs: s.Buffers(), acc: acc}, nil
}

// ModelOn returns the model's account of the traced launch on d: the counts
// above the L2 as traced, the DRAM bytes and the time d's own. The L2's
// sampling depends only on the buffers, so it is the launch
// sectors.ModelOn makes.
func (t *Trace) ModelOn(d devices.Profile) Launch {
	s := t.base.Spec
	l2 := newL2(d, s.L2Fetch, t.bufs, true)
	for _, a := range t.acc {
		if a.store {
			l2.store(l2.bufs[a.buf], a.sector, a.used)
		} else {
			l2.load(l2.bufs[a.buf], a.sector)
		}
	}
	return settle(l2, d, t.base)
}

// Ended is a launch the model ran to its end on a profile, before its L2
// settled which dirty lines go back to DRAM. Only that settling reads
// dram.busy_dirty_l2_bytes, so Ended models the launch at any value of
// it for the cost of the settling alone: the fit of that one parameter
// (calibrate.FitBusy) tries dozens of values on each launch. An Ended is
// not for concurrent use.
type Ended struct {
	l2   *l2
	d    devices.Profile
	base Launch
}

// RunToEnd runs the model of s on d, as ModelOn does, to the end of the
// launch.
func RunToEnd(s spec.Spec, d devices.Profile) (*Ended, error) {
	idx, err := prepare(s, d)
	if err != nil {
		return nil, err
	}
	m, p, err := runToEnd(s, idx, d, false)
	if err != nil {
		return nil, err
	}
	return &Ended{l2: m.l2, d: d, base: p}, nil
}

// ModelBusy returns the account ModelOn gives of the launch on the
// profile RunToEnd was given, with its dram.busy_dirty_l2_bytes set to
// busy. The L2's end leaves it as it was, so it may be asked again.
func (e *Ended) ModelBusy(busy int64) (Launch, error) {
	d := e.d
	d.DRAM.BusyDirtyL2Bytes = busy
	if err := d.Validate(); err != nil {
		return Launch{}, fmt.Errorf("sectors: %w", err)
	}
	e.l2.busyDirty = float64(busy)
	return settle(e.l2, d, e.base), nil
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
	// affineSet says the addresses are base + lane*step, and gathered,
	// when not nil, that they are gathered[lane] times the access size
	// (a full warp of a gather), not m.addr.
	affineSet  bool
	base, step uint64
	gathered   *[WarpSize]int32
	warps      int64

	ldReq, ldSec, stReq, stSec int64
	useful                     int64
	// traffic is the time model's account of the requests, and
	// fetchShift the log2 of the sectors of one L2 fetch block.
	traffic    Traffic
	fetchShift uint
	// loaded holds the lines of the warp's last load (nLoaded of them, of
	// buffer loadedBuf, lowest loadedLo, highest loadedHi), so that its
	// stores can tell a read-modify-write.
	loaded             [2 * WarpSize]uint64
	nLoaded            int
	loadedBuf          int
	loadedLo, loadedHi uint64
	loadedAscending    bool
	// lastLd holds the sectors of the last load request of any warp
	// (nLastLd of them, of buffer lastLdBuf, from lastLdLo to lastLdHi), so
	// that the next can tell the sectors it asks for again while their
	// fetch is in flight.
	lastLd             [2 * WarpSize]uint64
	nLastLd            int
	lastLdBuf          int
	lastLdLo, lastLdHi uint64
	lastLdAscending    bool

	// The shared-memory side: requests and wavefronts by the bank rule.
	banks banks
	// shLdReq and shStReq count the shared accesses with some lane
	// active, the bank rule's requests; shLdExec and shStExec the
	// instructions the warps execute, predicated-off ones included (ncu's
	// smsp__inst_executed_op_shared_*).
	shLdReq, shLdWave, shStReq, shStWave int64
	shLdExec, shStExec                   int64
	// gridX places a block of a 2D kernel from its number.
	gridX int64

	// record, when set, collects the instructions instead of counting them.
	record *[]Instruction
	// loadsOnly issues the loads and skips the stores (ColdWarp).
	loadsOnly bool
	// trace, when not nil, collects every access the L2 tracks (NewTrace).
	trace []l2Access
}

// newSim sets up the model of the launch s: its buffers and its kernel's
// address function. record, when set, collects instructions instead of
// counting them.
func newSim(s spec.Spec, idx []int32, record *[]Instruction) (*sim, error) {
	m := &sim{s: s, idx: idx, bufs: s.Buffers(), record: record,
		fetchShift: uint(bits.TrailingZeros(uint(max(s.L2Fetch, SectorBytes) / SectorBytes)))}
	km, ok := addresses[s.Kernel]
	if !ok {
		return nil, fmt.Errorf("sectors: kernel %s has no address function", s.Kernel)
	}
	m.warp = km.warp(m)
	if m.err != nil {
		return nil, m.err
	}
	// A launch that faults has no counts; its instructions can still be
	// drawn, which shows why it faults.
	if record == nil && s.Kernel == spec.VectorizedCopy {
		if err := misaligned(s); err != nil {
			return nil, err
		}
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

// issue counts one global instruction and returns its sectors.
func (m *sim) issue(store bool, buf, size int, active uint32, access string) int {
	if m.record != nil {
		m.keep(store, buf, size, active, access)
		return 0
	}
	if active == 0 || store && m.loadsOnly {
		return 0
	}
	b := m.l2.bufs[buf]
	// Stores fill no fetch block: their DRAM blocks are sectors.
	r := request{shift: m.fetchShift, threshold: b.threshold}
	if store {
		r.shift = 0
	}
	m.coalesce(size, active, r)
	c := &m.co
	m.useful += int64(c.useful)
	rewritten := 0
	if store && m.nLoaded > 0 && buf == m.loadedBuf {
		rewritten = c.within(m.loaded[:m.nLoaded], m.loadedLo, m.loadedHi, sectorsPerLine, m.loadedAscending)
	}
	m.traffic.add(store, c, rewritten)
	if store {
		m.stReq++
		m.stSec += int64(c.n)
	} else {
		m.ldReq++
		m.ldSec += int64(c.n)
		if m.nLastLd > 0 && buf == m.lastLdBuf {
			m.traffic.LdAgain += int64(c.within(m.lastLd[:m.nLastLd], m.lastLdLo, m.lastLdHi, 1, m.lastLdAscending))
		}
		m.nLastLd, m.lastLdBuf = copy(m.lastLd[:], c.sec[:c.n]), buf
		m.nLoaded, m.loadedBuf = c.lineKeys(&m.loaded), buf
		// The lines of ascending sectors ascend too.
		m.lastLdAscending, m.loadedAscending = c.ascending, c.ascending
		m.lastLdLo, m.lastLdHi = c.lo, c.hi
		m.loadedLo, m.loadedHi = c.lo/sectorsPerLine, c.hi/sectorsPerLine
	}
	for t := c.tracked; t != 0; t &= t - 1 {
		i := bits.TrailingZeros64(t)
		if store {
			m.l2.store(b, c.sec[i], c.used[i])
		} else {
			m.l2.load(b, c.sec[i])
		}
		if m.trace != nil {
			a := l2Access{sector: c.sec[i], buf: uint16(buf), store: store}
			if store {
				a.used = c.used[i]
			}
			m.trace = append(m.trace, a)
		}
	}
	return c.n
}

// coalesce runs the coalescer on the instruction's addresses, taking the
// contiguous fast path when an affine call laid the lanes back to back
// from an aligned base, the gather's when a full warp gathers, and filling
// m.addr only when it is needed.
func (m *sim) coalesce(size int, active uint32, r request) {
	switch {
	case m.affineSet:
		if m.step == uint64(size) && m.base%uint64(size) == 0 && active&(active+1) == 0 {
			m.co.contiguous(m.base, size, bits.OnesCount32(active), r)
			return
		}
		if active == AllLanes && stridedTakes(m.base, m.step, size, r) {
			m.co.strided(m.base, m.step, size, r)
			return
		}
		for l := range WarpSize {
			m.addr[l] = m.base + uint64(l)*m.step
		}
	case m.gathered != nil:
		if active == AllLanes && m.co.gather(m.gathered, size, r) {
			return
		}
		m.ungather(size)
	}
	m.co.run(&m.addr, size, active, r)
}

// ungather writes the gathered addresses of an access of size bytes out
// to m.addr.
func (m *sim) ungather(size int) {
	for l, v := range m.gathered {
		m.addr[l] = uint64(v) * uint64(size)
	}
}

// explicit returns m.addr for the caller to fill with the next
// instruction's addresses.
func (m *sim) explicit() *[WarpSize]uint64 {
	m.affineSet, m.gathered = false, nil
	return &m.addr
}

// gather sets the next instruction's addresses to idx[lane] times its
// access size.
func (m *sim) gather(idx *[WarpSize]int32) {
	m.affineSet, m.gathered = false, idx
}

// below returns the mask of lanes whose thread t0+lane is below limit,
// among the first present lanes.
func below(t0, limit int64, present int) uint32 {
	k := min(int64(present), max(0, limit-t0))
	return uint32((uint64(1) << k) - 1)
}

// affine sets the next instruction's addresses to base + lane*step.
func (m *sim) affine(base, step uint64) {
	m.affineSet, m.gathered, m.base, m.step = true, nil, base, step
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
			m.nLoaded = 0
			m.warp(t0, present)
		}
	}
}

// ColdWarp returns what the loads of warp w of the launch s cost from a
// cold L2, by the model's own L2 run over that warp alone: the bytes DRAM
// sends (whole blocks of l2_fetch_granularity bytes) and the bytes the
// lanes use. idx holds the gather's indices as for WarpInstructions.
func ColdWarp(s spec.Spec, idx []int32, w int64) (fetched, used int64, err error) {
	if err := s.Validate(); err != nil {
		return 0, 0, err
	}
	if n := Warps(s); w < 0 || w >= n {
		return 0, 0, fmt.Errorf("%w: warp %d of a launch of %d warps", ErrWarp, w, n)
	}
	d, err := devices.Lookup(s.Device)
	if err != nil {
		return 0, 0, fmt.Errorf("sectors: %w", err)
	}
	t0, lanes := FirstThread(s, w)
	if s.Kernel == spec.GatherCopy && int64(len(idx)) < min(t0+int64(lanes), s.N) {
		return 0, 0, fmt.Errorf("sectors: %w: warp %d needs idx[%d:%d], got %d indices", spec.ErrIndices, w, t0, t0+int64(lanes), len(idx))
	}
	m, err := newSim(s, idx, nil)
	if err != nil {
		return 0, 0, err
	}
	// One warp touches a few lines: track them all, whatever the buffers' size.
	m.loadsOnly = true
	m.l2 = newL2(d, s.L2Fetch, m.bufs, false)
	m.warp(t0, lanes)
	return int64(math.Round(m.l2.readBytes)), m.useful, nil
}

// ModelAll runs Model on each spec, several at a time, and returns the
// launches in the order of specs. It models a spec that appears twice
// once, draws the indices that gathers share (the same pattern, n and
// seed, or index file: one random permutation of 2^25 takes seconds, most
// of such a gather's modelling) once for all of them, and starts the
// largest launches first, so that none is left running alone at the end.
// The launches are Model's, byte for byte.
func ModelAll(specs ...spec.Spec) ([]Launch, error) {
	out := make([]Launch, len(specs))
	errs := make([]error, len(specs))
	jobs, first := predictJobs(specs)
	work := make(chan []int)
	var wg sync.WaitGroup
	for range min(len(jobs), runtime.GOMAXPROCS(0)) {
		wg.Go(func() {
			for job := range work {
				predictJob(specs, job, out, errs)
			}
		})
	}
	for _, job := range jobs {
		work <- job
	}
	close(work)
	wg.Wait()
	for i, f := range first {
		if f != i {
			out[i], errs[i] = out[f], errs[f]
			out[i].Metrics = maps.Clone(out[f].Metrics)
		}
	}
	for i, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("sectors: spec %d, %s: %w", i, specs[i].Brief(), err)
		}
	}
	return out, nil
}

// predictJobs groups the distinct specs (first[i] is the index of the
// first spec equal to specs[i]) into jobs, each the indices of one spec or
// of the gathers that read one index array, the costliest job first.
func predictJobs(specs []spec.Spec) (jobs [][]int, first []int) {
	first = make([]int, len(specs))
	seen := make(map[spec.Spec]int, len(specs))
	draws := map[drawKey]int{}
	var cost []int64
	for i, s := range specs {
		if f, ok := seen[s]; ok {
			first[i] = f
			continue
		}
		seen[s], first[i] = i, i
		threads := max(1, s.Threads())
		// An invalid spec is Model's alone, which fails before it draws.
		if s.Kernel == spec.GatherCopy && s.Validate() == nil {
			k := drawKey{s.N, s.IndexPattern, s.Seed, s.IndexFile}
			if j, ok := draws[k]; ok {
				jobs[j] = append(jobs[j], i)
				cost[j] += threads
				continue
			}
			draws[k] = len(jobs)
			threads += s.N // the draw
		}
		jobs = append(jobs, []int{i})
		cost = append(cost, threads)
	}
	order := make([]int, len(jobs))
	for j := range order {
		order[j] = j
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(cost[b], cost[a]) })
	sorted := make([][]int, len(jobs))
	for k, j := range order {
		sorted[k] = jobs[j]
	}
	return sorted, first
}

// drawKey is what Spec.Indices reads of a gather's spec.
type drawKey struct {
	n       int64
	pattern string
	seed    uint64
	file    string
}

// predictJob predicts the specs of one job into out and errs: a gather
// group on one draw of its indices, as ModelIndices would.
func predictJob(specs []spec.Spec, job []int, out []Launch, errs []error) {
	if len(job) == 1 {
		out[job[0]], errs[job[0]] = Model(specs[job[0]])
		return
	}
	idx, err := specs[job[0]].Indices()
	for _, i := range job {
		if err != nil {
			// Model says why, as it would alone.
			out[i], errs[i] = Model(specs[i])
			continue
		}
		out[i], errs[i] = predictDrawn(specs[i], idx)
	}
}

// predictDrawn is Model for a gather whose indices are drawn: the same
// checks, in the same order, with the same errors.
func predictDrawn(s spec.Spec, idx []int32) (Launch, error) {
	if err := s.Validate(); err != nil {
		return Launch{}, err
	}
	d, err := devices.Lookup(s.Device)
	if err != nil {
		return Launch{}, fmt.Errorf("sectors: %w", err)
	}
	if err := d.Validate(); err != nil {
		return Launch{}, fmt.Errorf("sectors: %w", err)
	}
	return predictOn(s, idx, d)
}
