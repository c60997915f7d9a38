package calibrate

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/coalescing-course/coalesce/lessons/devices"
	"github.com/coalescing-course/coalesce/lessons/measure"
	"github.com/coalescing-course/coalesce/lessons/metrics"
	"github.com/coalescing-course/coalesce/lessons/spec"
	"github.com/coalescing-course/coalesce/units"
)

// The DRAM fit runs the model once per launch (sectors.Trace), then only
// its L2 once per launch per candidate. It fits to launches of the
// kernels calibration profiles (dramKernels: a refit from a recording
// sees what a calibration sees) whose footprint is from half to four
// times the L2, where its capacities decide the traffic (far above, every
// byte goes to DRAM whatever they are; far below, none does), at most
// maxDRAMLaunches of them spread over the footprints. Beside them go at
// most maxResidueLaunches reads (strided_read) of more than four L2s:
// what such a launch writes is the dirty data the L2 held before it began
// (dram.profiled_dirty_bytes), written back whole once its reads pass the
// L2's size. They are capped apart, so that a recording with many of
// them does not crowd out the launches near the L2's size.
const (
	minDRAMLaunches    = 3
	maxDRAMLaunches    = 12
	maxResidueLaunches = 2
	// maxDRAMThreads leaves out launches the model takes long over.
	maxDRAMThreads = 1 << 24
)

// dramKernels are the kernels of specs.jsonl's profiled launches.
var dramKernels = []spec.Kernel{spec.CoalescedCopy, spec.StridedRead, spec.StridedWrite, spec.UpdateXSoA}

// dramLaunches picks the launches the DRAM level is fitted to.
func dramLaunches(launches []measure.Launch, l2 int64) []measure.Launch {
	var near, residue []measure.Launch
	for _, l := range distinct(launches) {
		f := footprint(l.Spec)
		if !l.Profiled() || !slices.Contains(dramKernels, l.Spec.Kernel) || f < l2/2 || l.Spec.Threads() > maxDRAMThreads ||
			l.Metrics[metrics.DRAMRead]+l.Metrics[metrics.DRAMWrite] <= 0 {
			continue
		}
		switch {
		case f <= 4*l2:
			near = append(near, l)
		case l.Spec.Kernel == spec.StridedRead:
			residue = append(residue, l)
		}
	}
	bySize := func(a, b measure.Launch) int { return cmp.Compare(footprint(a.Spec), footprint(b.Spec)) }
	slices.SortStableFunc(near, bySize)
	slices.SortStableFunc(residue, bySize)
	residue = spread(residue, maxResidueLaunches)
	return append(spread(near, maxDRAMLaunches-len(residue)), residue...)
}

// FitDRAM fits base's DRAM level (dram.reuse_l2_bytes, dirty_l2_bytes,
// sparse_dirty_l2_bytes, dirty_watermark_bytes, fill_l2_bytes,
// profiled_dirty_bytes, spread: dramParams) to the launches' ncu counts of DRAM
// bytes read and written: a coarse-then-fine search (search) minimising
// the worst plus the median relative error (dramError) over the launches
// near the L2's size. It fails with ErrNoData when fewer than three such
// launches have counters.
func FitDRAM(base devices.Profile, launches []measure.Launch) (devices.DRAM, error) {
	set := dramLaunches(launches, base.L2Bytes)
	if len(set) < minDRAMLaunches {
		return devices.DRAM{}, fmt.Errorf("%w: %d launches with DRAM counters and a footprint within 4x of the L2's %s (above it for strided_read), want %d", ErrNoData, len(set), units.BinaryBytes.Format(float64(base.L2Bytes)), minDRAMLaunches)
	}
	d, _, err := fitDRAM(base, set, measure.DeviceInfo{L2Bytes: base.L2Bytes})
	return d, err
}

func fitDRAM(base devices.Profile, set []measure.Launch, info measure.DeviceInfo) (devices.DRAM, float64, error) {
	// The launch at rest: busy_dirty_l2_bytes is fitted after the rest
	// (fitBusy), to the copies it is about; here it would let a stream of
	// writes (strided_write, stride 1) trade it against dirty_l2_bytes.
	base.DRAM.BusyDirtyL2Bytes = 0
	traces, err := traceAll(base, specsOf(set))
	if err != nil {
		return devices.DRAM{}, 0, fmt.Errorf("calibrate: fitting the DRAM level: %w", err)
	}
	seen := map[devices.DRAM]float64{}
	cost := func(c devices.Profile) float64 {
		if v, ok := seen[c.DRAM]; ok {
			return v
		}
		var errs []float64
		for i, p := range replayAll(traces, c) {
			for _, m := range []string{metrics.DRAMRead, metrics.DRAMWrite} {
				errs = append(errs, dramError(p.Metrics[m], set[i].Metrics[m]))
			}
		}
		v := slices.Max(errs) + median(errs)
		seen[c.DRAM] = v
		return v
	}
	best, v := search(base, dramParams, info, 2, 5, cost)
	return best.DRAM, v, nil
}

// busyKernels are the kernels whose launches FitBusy fits to: copies that
// run at the copy bandwidth.
var busyKernels = []spec.Kernel{spec.VectorizedCopy}

// busyLaunches picks the launches FitBusy fits to: profiled busyKernels
// launches whose footprint is from half to four times the L2, as for
// dramLaunches, at most maxDRAMLaunches of them spread over the footprints.
func busyLaunches(launches []measure.Launch, l2 int64) []measure.Launch {
	var near []measure.Launch
	for _, l := range distinct(launches) {
		f := footprint(l.Spec)
		if l.Profiled() && slices.Contains(busyKernels, l.Spec.Kernel) && f >= l2/2 && f <= 4*l2 &&
			l.Spec.Threads() <= maxDRAMThreads && l.Metrics[metrics.DRAMWrite] > 0 {
			near = append(near, l)
		}
	}
	slices.SortStableFunc(near, func(a, b measure.Launch) int { return cmp.Compare(footprint(a.Spec), footprint(b.Spec)) })
	return spread(near, maxDRAMLaunches)
}

// FitBusy fits dram.busy_dirty_l2_bytes of base, its other DRAM
// parameters held, to ncu's dram__bytes_write.sum of the busy copies among
// launches (busyLaunches): a search of its range minimising the worst plus
// the median relative error. It fails with ErrNoData when there is no
// such launch.
func FitBusy(base devices.Profile, launches []measure.Launch) (int64, error) {
	set := busyLaunches(launches, base.L2Bytes)
	if len(set) == 0 {
		return 0, fmt.Errorf("%w: no %v launch with DRAM counters and a footprint within 4x of the L2's %s", ErrNoData, busyKernels, units.BinaryBytes.Format(float64(base.L2Bytes)))
	}
	b, _, err := fitBusy(base, set, measure.DeviceInfo{L2Bytes: base.L2Bytes})
	return b, err
}

// fitBusy runs each launch once to its end (sectors.RunToEnd) and tries
// each candidate on the ends alone: the candidates differ only in
// busy_dirty_l2_bytes, which only the end reads.
func fitBusy(base devices.Profile, set []measure.Launch, info measure.DeviceInfo) (int64, float64, error) {
	ends, err := runAllToEnd(base, specsOf(set))
	if err != nil {
		return 0, 0, fmt.Errorf("calibrate: fitting %s: %w", busyParam.path, err)
	}
	var failed error
	cost := func(c devices.Profile) float64 {
		var errs []float64
		for i, e := range ends {
			p, err := e.ModelBusy(c.DRAM.BusyDirtyL2Bytes)
			if err != nil {
				failed = err
				return math.Inf(1)
			}
			errs = append(errs, dramError(p.Metrics[metrics.DRAMWrite], set[i].Metrics[metrics.DRAMWrite]))
		}
		return slices.Max(errs) + median(errs)
	}
	best, v := search(base, []param{busyParam}, info, 3, 7, cost)
	if failed != nil {
		return 0, 0, fmt.Errorf("calibrate: fitting %s: %w", busyParam.path, failed)
	}
	return best.DRAM.BusyDirtyL2Bytes, v, nil
}
