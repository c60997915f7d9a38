package calibrate

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/coalescing-course/coalesce/lessons/devices"
	"github.com/coalescing-course/coalesce/lessons/sectors"
	"github.com/coalescing-course/coalesce/lessons/spec"
	"github.com/coalescing-course/coalesce/measure"
)

// copyFamily are the kernels the time model is built for (go doc
// lessons/sectors): copies that stream every byte they touch.
var copyFamily = []spec.Kernel{spec.CoalescedCopy, spec.OffsetCopy, spec.VectorizedCopy, spec.GridStrideCopy}

const (
	minTimeLaunches = 4
	maxTimeLaunches = 24
	// maxTimeThreads leaves out launches the model takes long over; the
	// counts of each are predicted once, however many candidates.
	maxTimeThreads = 1 << 24
)

// timeLaunches picks the launches the time model is fitted to: timed
// copies, smallest first, at most maxTimeLaunches spread over the sizes.
func timeLaunches(launches []measure.Launch) []measure.Launch {
	var out []measure.Launch
	for _, l := range distinct(launches) {
		if l.Timed() && slices.Contains(copyFamily, l.Spec.Kernel) && l.Spec.Threads() <= maxTimeThreads {
			out = append(out, l)
		}
	}
	slices.SortStableFunc(out, func(a, b measure.Launch) int { return cmp.Compare(a.Spec.Threads(), b.Spec.Threads()) })
	return spread(out, maxTimeLaunches)
}

// FitTime fits base's time parameters besides copy_bandwidth
// (launch_seconds, latency_seconds, latency_per_byte, block_rate) to the
// median times of the launches' copies: the counts of each launch are
// predicted once on base, then a coarse-then-fine search (search) retimes
// them (sectors.Retime) to minimise the mean squared log ratio of model to
// measured time. It fails with ErrNoData when fewer than four copies are
// timed.
func FitTime(base devices.Profile, launches []measure.Launch) (devices.Time, error) {
	t, _, _, err := fitTime(base, launches, measure.DeviceInfo{L2Bytes: base.L2Bytes})
	return t, err
}

func fitTime(base devices.Profile, launches []measure.Launch, info measure.DeviceInfo) (devices.Time, float64, int, error) {
	set := timeLaunches(launches)
	if len(set) < minTimeLaunches {
		return devices.Time{}, 0, 0, fmt.Errorf("%w: %d timed copy launches (%v), want %d", ErrNoData, len(set), copyFamily, minTimeLaunches)
	}
	preds, err := predictAll(base, specsOf(set))
	if err != nil {
		return devices.Time{}, 0, 0, fmt.Errorf("calibrate: fitting the time model: %w", err)
	}
	cost := func(c devices.Profile) float64 {
		var sum float64
		for i, l := range set {
			r := math.Log(sectors.Retime(preds[i], c).TimeSeconds / l.Seconds())
			sum += r * r
		}
		return sum / float64(len(set))
	}
	best, v := search(base, timeParams, info, 4, 9, cost)
	return best.Time, v, len(set), nil
}
