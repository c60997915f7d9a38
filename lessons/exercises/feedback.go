package exercises

import (
	"cmp"
	"fmt"
	"math/bits"
	"slices"
	"strings"

	"github.com/coalescing-course/coalesce/lessons/metrics"
	"github.com/coalescing-course/coalesce/lessons/sectors"
	"github.com/coalescing-course/coalesce/lessons/simt"
	"github.com/coalescing-course/coalesce/units"
)

// explain says why a target on metric was missed, from the sites of the
// kernel that cost more than their bytes need: the two worst, each with
// how far apart its lanes are in the first warp (Result.Trace).
func explain(metric string, r *simt.Result) string {
	store, shared := metrics.IsStore(metric), metrics.IsShared(metric)
	requests := metric == metrics.LdRequests || metric == metrics.StRequests || metric == metrics.ShLdRequests || metric == metrics.ShStRequests
	type costly struct {
		site   simt.Site
		excess int64
	}
	var worst []costly
	for _, s := range r.Sites {
		if s.Store != store || s.Shared != shared || s.Instructions == 0 {
			continue
		}
		var excess int64
		switch {
		case shared && requests:
			// A shared access moves 4 bytes a lane, the one size the
			// bank rule models: no instruction of it folds into fewer.
		case shared:
			excess = s.Wavefronts - s.Instructions
		case requests:
			if s.Size < 16 { // a lane could move 16 bytes at once
				excess = s.Instructions
			}
		default:
			excess = s.Sectors - span(0, s.Lanes*int64(s.Size))
		}
		if excess > 0 {
			worst = append(worst, costly{s, excess})
		}
	}
	if len(worst) == 0 {
		return "no single access costs more than its bytes need: count the accesses (each is a request of its own)"
	}
	slices.SortStableFunc(worst, func(a, b costly) int { return cmp.Compare(b.excess, a.excess) })
	var parts []string
	for _, w := range worst {
		// Two loads of one statement (aos[..fx] + aos[..fv]) read alike:
		// say it once.
		if why := siteWhy(w.site, metric, r); !slices.Contains(parts, why) && len(parts) < 2 {
			parts = append(parts, why)
		}
	}
	return strings.Join(parts, "; ")
}

// siteWhy is one site's explanation.
func siteWhy(s simt.Site, metric string, r *simt.Result) string {
	verb := "Load"
	if s.Store {
		verb = "Store"
	}
	at := fmt.Sprintf("%s.%s at %s (%d B a lane)", s.Buffer, verb, s.Where, s.Size)
	lanes := float64(s.Lanes) / float64(s.Instructions)
	switch {
	case s.Shared:
		why := fmt.Sprintf("%s: %s wavefronts an instruction, where 1 serves 32 lanes in 32 banks", at, units.Ratio.Format(s.PerRequest()))
		if d, ok := laneStride(s, r); ok {
			words := d / sectors.BankBytes
			banks := 32 / gcd(abs(words), 32)
			why += fmt.Sprintf(": in warp 0 the lanes' words are %d apart, which puts 32 lanes in %d bank(s); pad each row of the tile by one word", words, banks)
		}
		return why
	case metric == metrics.LdRequests || metric == metrics.StRequests:
		return fmt.Sprintf("%s: %s requests; a float4 view (simt.As[[4]float32]) on 16-byte aligned elements moves 16 B a lane, a quarter of the requests", at, units.Count.Format(float64(s.Instructions)))
	}
	need := float64(span(0, int64(lanes*float64(s.Size)+0.5)))
	why := fmt.Sprintf("%s: %s sectors a request, where its %s lanes' bytes fill %s", at, units.Ratio.Format(s.PerRequest()), units.Ratio.Format(lanes), units.Count.Format(need))
	d, ok := laneStride(s, r)
	switch {
	case !ok:
		if n, ok := firstSectors(s, r); ok {
			why += fmt.Sprintf(": in warp 0 the lanes' addresses follow no stride and touch %d sectors (scattered: sort or bucket them so a warp's lie together)", n)
		}
	case abs(d) >= sectors.SectorBytes:
		why += fmt.Sprintf(": in warp 0 the lanes are %d B apart, so each lane's %d B sits in a 32-byte sector of its own", d, s.Size)
	case abs(d) > sectors.SectorBytes/2:
		why += fmt.Sprintf(": in warp 0 the lanes are %d B apart, so nearly every lane's %d B needs a 32-byte sector of its own", d, s.Size)
	case abs(d) > s.Size:
		why += fmt.Sprintf(": in warp 0 the lanes are %d B apart, so a 32-byte sector holds %d lanes' bytes where it could hold %d", d, sectors.SectorBytes/abs(d), sectors.SectorBytes/s.Size)
	}
	return why
}

// laneStride returns the distance in bytes between neighbouring active
// lanes of the site's first traced instruction, when it is one distance.
func laneStride(s simt.Site, r *simt.Result) (int, bool) {
	in, ok := traced(s, r)
	if !ok || bits.OnesCount32(in.Warp.Active) < 2 {
		return 0, false
	}
	d, prev, first := 0, uint64(0), true
	for m := in.Warp.Active; m != 0; m &= m - 1 {
		l := bits.TrailingZeros32(m)
		a := in.Warp.Addr[l]
		if !first {
			if dd := int(int64(a) - int64(prev)); d == 0 {
				d = dd
			} else if dd != d {
				return 0, false
			}
		}
		prev, first = a, false
	}
	return d, true
}

// firstSectors returns the sectors of the site's first traced instruction.
func firstSectors(s simt.Site, r *simt.Result) (int, bool) {
	in, ok := traced(s, r)
	if !ok {
		return 0, false
	}
	seen := map[uint64]bool{}
	for m := in.Warp.Active; m != 0; m &= m - 1 {
		seen[in.Warp.Addr[bits.TrailingZeros32(m)]/sectors.SectorBytes] = true
	}
	return len(seen), true
}

// traced returns the site's first instruction in the trace.
func traced(s simt.Site, r *simt.Result) (sectors.Instruction, bool) {
	for _, t := range r.Trace {
		in := t.Instruction
		if in.Access == s.Where && in.Store == s.Store && in.Shared == s.Shared {
			return in, true
		}
	}
	return sectors.Instruction{}, false
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
