package calibrate

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/coalescing-course/coalesce/lessons/devices"
	"github.com/coalescing-course/coalesce/lessons/measure"
	"github.com/coalescing-course/coalesce/lessons/metrics"
	"github.com/coalescing-course/coalesce/lessons/sectors"
	"github.com/coalescing-course/coalesce/lessons/spec"
)

// MinTimedLaunches is the fewest timed launches FitTime fits to: fewer
// leave some of the eleven parameters without a launch that sets them.
const MinTimedLaunches = 20

// ErrTooFew is FitTime's error for fewer than MinTimedLaunches timed
// launches.
var ErrTooFew = errors.New("calibrate: too few timed launches")

// TimePoint is one timed launch as the time fit sees it: the model's
// prediction, with ncu's DRAM bytes in place of the model's where the
// launch was profiled, and the median time measured.
type TimePoint struct {
	Modelled sectors.Launch
	Seconds  float64
}

// modelAll predicts the launches whose times the time fit reads:
// sectors.ModelAll. The package's tests serve it from the predictions the
// model's current source wrote (lessons/sectors/sectorstest), as one
// minute of every test run went to predicting the same recordings.
var modelAll = sectors.ModelAll

// TimePoints predicts the timed launches among launches, once: the time
// fit varies only the time formula, never the counts it reads. Where a
// launch has ncu's DRAM bytes they replace the model's, so that the fit
// sees the time model's error and not the DRAM model's.
func TimePoints(launches []measure.Launch) ([]TimePoint, error) {
	var timed []measure.Launch
	for _, l := range launches {
		if l.Timed() && !l.Failed() {
			timed = append(timed, l)
		}
	}
	specs := make([]spec.Spec, len(timed))
	for i, l := range timed {
		specs[i] = l.Spec
	}
	preds, err := modelAll(specs...)
	if err != nil {
		return nil, fmt.Errorf("calibrate: %w", err)
	}
	points := make([]TimePoint, len(timed))
	for i, l := range timed {
		points[i] = timePoint(l, preds[i])
	}
	return points, nil
}

// timePoint pairs the timed launch l with its prediction p, ncu's DRAM
// bytes in place of the model's where l has them.
func timePoint(l measure.Launch, p sectors.Launch) TimePoint {
	if l.Profiled() {
		m := make(metrics.Set, len(p.Metrics))
		for k, v := range p.Metrics {
			m[k] = v
		}
		for _, k := range []string{metrics.DRAMRead, metrics.DRAMWrite} {
			if v, ok := l.Metrics[k]; ok {
				m[k] = v
			}
		}
		p.Metrics = m
	}
	return TimePoint{Modelled: p, Seconds: l.Seconds()}
}

// FitTime fits every parameter of the time model (devices.Time) to the
// median CUDA-event times of launches, measured on the GPU base describes:
// CopyBandwidth is the median rate of the launches' largest cudaMemcpy
// copies; the rest minimise the squared log of measured / model over the
// launches, with launches more than 20 % off weighed ten times more, so
// that the fit trades a little on the many for the few it would leave far
// off. The search is coordinate descent in the logarithm of each
// parameter from base's values (or a generic start where base has none),
// halving its steps: deterministic, and fast because the launches are
// predicted once (TimePoints).
func FitTime(base devices.Profile, launches []measure.Launch) (devices.Time, error) {
	points, err := TimePoints(launches)
	if err != nil {
		return devices.Time{}, err
	}
	if len(points) < MinTimedLaunches {
		return devices.Time{}, fmt.Errorf("%w: %d timed, want at least %d", ErrTooFew, len(points), MinTimedLaunches)
	}
	t := base.Time
	if r := memcpyRate(launches); r > 0 {
		t.CopyBandwidth = r
	}
	if t.CopyBandwidth <= 0 {
		return devices.Time{}, fmt.Errorf("calibrate: no launch timed a cudaMemcpy and %s has no copy_bandwidth", base.Name)
	}
	return FitTimePoints(base, t, points), nil
}

// memcpyRate returns the median rate of the cudaMemcpy the launches
// timed beside them, over those that copied at least half the most any
// copied: a small copy's rate is mostly its launch overhead. It is 0 where
// no launch timed one.
func memcpyRate(launches []measure.Launch) float64 {
	var most int64
	for _, l := range launches {
		if l.MemcpyBandwidth() > 0 && !l.Failed() {
			most = max(most, l.MemcpyBytes)
		}
	}
	var rates []float64
	for _, l := range launches {
		if r := l.MemcpyBandwidth(); r > 0 && !l.Failed() && 2*l.MemcpyBytes >= most {
			rates = append(rates, r)
		}
	}
	if len(rates) == 0 {
		return 0
	}
	slices.Sort(rates)
	return rates[len(rates)/2]
}

// maxSweeps bounds the sweeps over the parameters at one step size: the
// latency and its growth per byte lie along a slanted valley, which 50
// left the search stopped in (TestFitTimeRecovers).
const maxSweeps = 200

// FitTimePoints is FitTime's search, from t (whose CopyBandwidth it
// keeps) over points already predicted.
func FitTimePoints(base devices.Profile, t devices.Time, points []TimePoint) devices.Time {
	d := base
	d.Time = t
	x := make([]float64, len(timeParams))
	for i, q := range timeParams {
		v := q.get(&d)
		if v <= 0 {
			v = q.start
		}
		x[i] = math.Log(v)
	}
	at := func(x []float64) devices.Profile {
		c := d
		for i, q := range timeParams {
			q.set(&c, math.Exp(x[i]))
		}
		return c
	}
	loss := func(x []float64) float64 { return timeLoss(at(x), points) }
	best := loss(x)
	for step := math.Log(4); step > 1e-3; step /= 2 {
		// A valley the axes cross at a slant takes many sweeps; past
		// maxSweeps a halved step does better.
		for sweep, improved := 0, true; improved && sweep < maxSweeps; sweep++ {
			improved = false
			for i := range x {
				for _, dir := range []float64{step, -step} {
					x[i] += dir
					if l := loss(x); l < best {
						best, improved = l, true
						break
					}
					x[i] -= dir
				}
			}
		}
	}
	return at(x).Time
}

// timeLoss is what FitTime minimises: the sum over points of the squared
// log of measured / model, plus ten times the square of what exceeds
// log 1.2.
func timeLoss(d devices.Profile, points []TimePoint) float64 {
	sum := 0.0
	for _, p := range points {
		r := math.Abs(math.Log(p.Seconds / sectors.EstimateTime(d, p.Modelled).Total()))
		sum += r * r
		if over := r - math.Log(1.2); over > 0 {
			sum += 10 * over * over
		}
	}
	return sum
}
