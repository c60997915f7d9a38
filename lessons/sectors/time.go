package sectors

import (
	"math/bits"

	"github.com/coalescing-course/coalesce/lessons/devices"
	"github.com/coalescing-course/coalesce/lessons/metrics"
	"github.com/coalescing-course/coalesce/lessons/spec"
)

// The names TimeParts.Bound gives the limit that set a launch's time.
const (
	BoundBandwidth = "bandwidth"
	BoundLatency   = "latency"
	BoundBlocks    = "block starts"
	BoundL1Lines   = "L1 lines"
	BoundL2Stores  = "L2 stores"
	BoundShared    = "shared banks"
)

// EstimateTime is the time model: a launch costs its fixed overhead plus
// the longest of its limits, each the time one part of the GPU needs for
// the launch's traffic on its own (the package documentation says what
// each models and on what evidence):
//
//   - bandwidth: the DRAM bytes p predicts at the device's copy bandwidth,
//     a sparse access charged at least the DRAM time it occupies, and a
//     sparse write of a line the warp read (a read-modify-write) more;
//   - latency (Little's law): a warp that waits for its load keeps only
//     that load in flight, so each SM finishes about (warps resident ×
//     loads in flight per warp) requests per latency, and the latency
//     grows with the bytes in flight (queueing);
//   - L1 lines: an SM's L1 looks up one line a cycle, so a request whose
//     lanes touch 32 lines costs 32 cycles whether they hit or not;
//   - L2 stores: every line a store request touches is a packet to the
//     L2, and every sector it writes in part a merge there;
//   - shared banks: every shared-memory wavefront is a cycle of the SM;
//   - block starts: the device starts at most BlockRate blocks a second.
//
// p's DRAM bytes are the model's own in Model; a caller that has measured
// them (calibrate, the accuracy tests) may put ncu's in their place to see
// the time model's error alone.
func EstimateTime(d devices.Profile, p Launch) TimeParts {
	t, s := d.Time, p.Spec
	parts := TimeParts{Launch: t.LaunchSeconds}

	read, write := p.Metrics[metrics.DRAMRead], p.Metrics[metrics.DRAMWrite]
	// A kernel that only stores reads what its partial stores fill: at
	// the stores' spacing, a sector at a time.
	reads, block := &p.Traffic.Ld, float64(max(s.L2Fetch, SectorBytes))
	if p.Traffic.LdLines == 0 {
		reads, block = &p.Traffic.St, SectorBytes
	}
	parts.Bandwidth = (read*reads.cost(t, block) + write*(p.Traffic.St.cost(t, SectorBytes)+p.Traffic.rewriteCost(t))) / t.CopyBandwidth

	warpsPerBlock := (int64(s.Block) + WarpSize - 1) / WarpSize
	perSM := float64(min(int64(d.MaxBlocksPerSM), int64(d.MaxThreadsPerSM/WarpSize)/warpsPerBlock) * warpsPerBlock)
	perSM = max(1, min(perSM, float64(p.Warps)/float64(d.SMs)))
	inFlight := loadsInFlight(s)
	// The bytes one request keeps in flight are its sectors'. The queue
	// that lengthens the latency counts them only up to a line: more than
	// a line a request is what the bandwidth limit charges, and the queue
	// is of requests. A kernel that only stores still waits on its stores.
	requests, sectorsOf := p.Metrics[metrics.LdRequests], p.Metrics[metrics.LdSectors]
	if requests == 0 {
		requests, sectorsOf = p.Metrics[metrics.StRequests], p.Metrics[metrics.StSectors]
	}
	bytesPerRequest, queuedPerRequest, miss := 0.0, 0.0, 1.0
	if requests > 0 {
		bytesPerRequest = sectorsOf / requests * SectorBytes
		queuedPerRequest = min(LineBytes, bytesPerRequest)
	}
	// A load the L2 holds waits only the L2's latency: the share of load
	// sectors DRAM sends, and of those asked for again while DRAM sends
	// them, is the share that waits DRAM's.
	if p.Metrics[metrics.LdSectors] > 0 {
		miss = min(1, (read+float64(p.Traffic.LdAgain)*SectorBytes)/(p.Metrics[metrics.LdSectors]*SectorBytes))
	}
	hit := t.LatencySeconds
	if t.L2LatencySeconds > 0 {
		hit = t.L2LatencySeconds
	}
	parts.Latency1 = hit + (t.LatencySeconds-hit)*miss + t.LatencyPerByte*perSM*inFlight*queuedPerRequest
	parts.RequestsInFlightPerSM = perSM * inFlight
	parts.InFlightPerSM = parts.RequestsInFlightPerSM * bytesPerRequest
	parts.Latency = requests / (float64(d.SMs) * perSM * inFlight) * parts.Latency1

	parts.Blocks = float64(s.GridBlocks()) / t.BlockRate
	parts.L1Lines = rate(float64(p.Traffic.LdLines+p.Traffic.StLines), t.L1LineRate*float64(d.SMs))
	parts.L2Stores = rate(float64(p.Traffic.StPackets), t.L2StoreRate)
	parts.Shared = rate(p.Metrics[metrics.ShLdWavefronts]+p.Metrics[metrics.ShStWavefronts], t.SharedWavefrontRate*float64(d.SMs))

	parts.Bound = BoundBandwidth
	longest := parts.Bandwidth
	for _, l := range []struct {
		name    string
		seconds float64
	}{{BoundLatency, parts.Latency}, {BoundL1Lines, parts.L1Lines}, {BoundL2Stores, parts.L2Stores}, {BoundShared, parts.Shared}, {BoundBlocks, parts.Blocks}} {
		if l.seconds > longest {
			parts.Bound, longest = l.name, l.seconds
		}
	}
	return parts
}

// rate is the seconds n things take at r a second, 0 where r is 0: a
// limit the profile leaves out.
func rate(n, r float64) float64 {
	if r <= 0 {
		return 0
	}
	return n / r
}

// TimeParts is the time model's working: each limit on its own, and which
// one set the time.
type TimeParts struct {
	// Launch is the fixed cost of a launch.
	Launch float64 `json:"launch_seconds"`
	// Bandwidth is the predicted DRAM bytes at the copy bandwidth, sparse
	// accesses charged the DRAM time they occupy.
	Bandwidth float64 `json:"bandwidth_seconds"`
	// Latency is the time to wait out every load at the latency that the
	// bytes in flight give (Little's law).
	Latency float64 `json:"latency_seconds"`
	// Blocks is the time the device needs to start every block.
	Blocks float64 `json:"blocks_seconds"`
	// L1Lines is the time the L1s need to look up every line the
	// requests touch.
	L1Lines float64 `json:"l1_lines_seconds"`
	// L2Stores is the time the L2 needs to take every line stores send it
	// and merge every sector they write in part.
	L2Stores float64 `json:"l2_stores_seconds"`
	// Shared is the time the SMs need for every shared-memory wavefront.
	Shared float64 `json:"shared_seconds"`
	// Latency1 is the latency of one load with RequestsInFlightPerSM
	// requests in flight, each counted up to a line of bytes.
	Latency1 float64 `json:"load_latency_seconds"`
	// RequestsInFlightPerSM is the load requests one SM keeps in flight:
	// its resident warps times the loads each has outstanding.
	RequestsInFlightPerSM float64 `json:"requests_in_flight_per_sm"`
	// InFlightPerSM is the bytes of the sectors those requests touch:
	// RequestsInFlightPerSM times the sector bytes of a request, uncapped
	// (a float4 load of 32 lanes keeps 512 bytes on their way).
	InFlightPerSM float64 `json:"in_flight_per_sm_bytes"`
	// Bound names the limit that set the time: BoundBandwidth,
	// BoundLatency, BoundL1Lines, BoundL2Stores, BoundShared or
	// BoundBlocks.
	Bound string `json:"bound"`
}

// Total returns the launch time: the overhead plus the largest limit.
func (t TimeParts) Total() float64 {
	return t.Launch + max(t.Bandwidth, t.Latency, t.Blocks, t.L1Lines, t.L2Stores, t.Shared)
}

// loadsInFlight returns how many independent loads one thread has in
// flight at once: the kernel's own answer (addresses), else one.
func loadsInFlight(s spec.Spec) float64 {
	if km, ok := addresses[s.Kernel]; ok && km.inFlight != nil {
		return km.inFlight(s)
	}
	return 1
}

// Traffic is the time model's account of a launch's global requests,
// gathered as the model walks them.
type Traffic struct {
	// LdLines and StLines count, over every load (store) request, the
	// 128-byte lines it touches.
	LdLines, StLines int64
	// StPackets counts, over every store request, the larger of its lines
	// and the sectors it writes in part: the L2 takes a line's sectors in
	// one go, but merges a partial sector into the sector it holds.
	StPackets int64
	// LdAgain counts, over every load request, the sectors the load
	// request just before it (any warp's, of the same buffer) asked for
	// too: the L2 holds them only as a fetch in flight, which they wait out
	// as a miss does (offset_copy's neighbouring warps share a sector).
	LdAgain int64
	// Ld and St are the requests' DRAM blocks (fetch blocks for loads,
	// sectors for stores) by how far apart they lie.
	Ld, St Spacing
	// Rewrite holds, of St's sectors, those whose line the warp's last
	// load read, from the same buffer: a read-modify-write (update_x_aos),
	// which costs the DRAM more than a write alone.
	Rewrite Spacing
}

// spacingBins bins spacings from 1 byte to 2^40.
const spacingBins = 41

// Spacing bins a launch's requests by the spacing of their DRAM blocks:
// the bytes from a request's first sector to the end of its last, divided
// by its blocks. A coalesced request's blocks touch (spacing = block); a
// strided one's lie the stride apart; a random gather's are spread over
// the whole buffer. Bin k holds the spacings from 2^k to 2^(k+1) bytes.
type Spacing struct {
	// Blocks is each bin's blocks, and Spread the sum of their spacings.
	Blocks, Spread [spacingBins]float64
}

// add counts the request the coalescer holds: its lines, and its blocks
// (of the request's shift) by their spacing; rewritten of a store's
// sectors lie in lines the warp has just loaded.
func (t *Traffic) add(store bool, c *coalescer, rewritten int) {
	lines, blocks := c.lines, c.blocks
	sp := &t.Ld
	if store {
		t.StLines += int64(lines)
		t.StPackets += int64(max(lines, c.partial()))
		sp = &t.St
	} else {
		t.LdLines += int64(lines)
	}
	if blocks == 0 {
		return
	}
	spacing := c.span() / uint64(blocks)
	k := min(spacingBins-1, bits.Len64(spacing)-1)
	sp.Blocks[k] += float64(blocks)
	sp.Spread[k] += float64(blocks) * float64(spacing)
	if rewritten > 0 {
		t.Rewrite.Blocks[k] += float64(rewritten)
		t.Rewrite.Spread[k] += float64(rewritten) * float64(spacing)
	}
}

// cost returns how many bytes of DRAM time a byte of these requests
// occupies: 1 for blocks close together, more for blocks of block bytes far
// apart, each of which costs DRAMAccessBytes × (1 - DRAMAccessSpacing /
// spacing) when that is more than its bytes.
func (s *Spacing) cost(t devices.Time, block float64) float64 {
	var n, c float64
	for k, b := range s.Blocks {
		if b == 0 {
			continue
		}
		spacing := s.Spread[k] / b
		n += b * block
		c += b * max(block, t.DRAMAccessBytes*(1-t.DRAMAccessSpacing/spacing))
	}
	if n == 0 || t.DRAMAccessBytes == 0 {
		return 1
	}
	return c / n
}

// rewriteCost returns how many bytes of DRAM time a byte the stores write
// occupies on top of St.cost for the sectors they rewrite: each rewritten
// sector at spacing s costs DRAMRewriteBytes × (1 - DRAMAccessSpacing / s)
// more, nothing where that is below 0 (a dense read-modify-write,
// update_x_soa, streams like a copy).
func (t *Traffic) rewriteCost(tm devices.Time) float64 {
	var n, c float64
	for k, b := range t.St.Blocks {
		n += b * SectorBytes
		if r := t.Rewrite.Blocks[k]; r > 0 {
			c += r * tm.DRAMRewriteBytes * max(0, 1-tm.DRAMAccessSpacing/(t.Rewrite.Spread[k]/r))
		}
	}
	if n == 0 {
		return 0
	}
	return c / n
}
