package calibrate

import (
	"maps"
	"math"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coalescing-course/coalesce/lessons/devices"
	"github.com/coalescing-course/coalesce/lessons/measure"
	"github.com/coalescing-course/coalesce/lessons/sectors"
	"github.com/coalescing-course/coalesce/lessons/spec"
)

// The H200's timed launches, all measured on NVIDIA H200, driver
// 580.159.04, CUDA 13.0 (provenance in each file): the recorded sweep and
// the L2-edge sweep are what the h200 time parameters are fitted to, but
// for the L2-edge sizes its spec file holds out (5, 7 and 10 × 2^20); those
// and cuda/testdata/holdout_metrics.jsonl test the fit.
var (
	fitFiles  = []string{"cuda/reference/h200.jsonl", "cuda/reference/l2edge.jsonl", "cuda/reference/time.jsonl"}
	heldFiles = []string{"cuda/testdata/holdout_metrics.jsonl", "cuda/testdata/dramcheck_metrics.jsonl"}
)

// heldOutN reports whether an L2-edge launch of n elements is held out
// (runs/l2edge-specs.jsonl says which).
func heldOutN(n int64) bool { return n == 5<<20 || n == 7<<20 || n == 10<<20 }

// fileLaunch is a timed launch, the file it is in and its index among
// the file's measured launches (the first form of run file numbers no
// lines).
type fileLaunch struct {
	file  string
	index int
	l     measure.Launch
}

// data reads the timed launches of the files, split into those fitted to
// and those held out.
func data(t *testing.T) (fit, held []fileLaunch) {
	t.Helper()
	for _, f := range slices.Concat(fitFiles, heldFiles) {
		set, err := measure.ReadFile(filepath.Join("..", f))
		require.NoError(t, err)
		for i, l := range set.Measured() {
			if !l.Timed() {
				continue
			}
			if slices.Contains(heldFiles, f) || f == "cuda/reference/l2edge.jsonl" && heldOutN(l.Spec.N) {
				held = append(held, fileLaunch{f, i, l})
			} else {
				fit = append(fit, fileLaunch{f, i, l})
			}
		}
	}
	return fit, held
}

// loadPoints returns the fitted and held-out launches as the time fit sees
// them (predictions served from predictionsFile): with ncu's DRAM bytes
// where they were measured, or with ownDRAM the model's own.
func loadPoints(t *testing.T, ownDRAM bool) (fit, held []TimePoint) {
	t.Helper()
	fl, hl := data(t)
	pair := func(xs []fileLaunch) []TimePoint {
		specs := make([]spec.Spec, len(xs))
		for i, x := range xs {
			specs[i] = x.l.Spec
		}
		preds, err := modelAll(specs...)
		require.NoError(t, err)
		out := make([]TimePoint, len(xs))
		for i, x := range xs {
			out[i] = timePoint(x.l, preds[i])
			if ownDRAM {
				out[i].Modelled = preds[i]
			}
		}
		return out
	}
	return pair(fl), pair(hl)
}

// h200Fit fits the time parameters to the fitted launches as FitTime
// does, from the profile's values, without predicting them again.
func h200Fit(t *testing.T, fit []TimePoint) devices.Time {
	t.Helper()
	base, err := devices.Lookup("h200")
	require.NoError(t, err)
	fl, _ := data(t)
	launches := make([]measure.Launch, len(fl))
	for i, x := range fl {
		launches[i] = x.l
	}
	start := base.Time
	start.CopyBandwidth = memcpyRate(launches)
	return FitTimePoints(base, start, fit)
}

// TestH200TimeFromData refits the h200 time parameters from the committed
// measurements and requires profiles.json to hold what the fit gives.
// profiles.json keeps three significant digits, so each parameter must
// agree within 0.5 % (rounding) plus 0.5 % (the search's last step,
// e^0.001 - 1 = 0.1 %, moves the loss's minimum a little as the data
// change), 1 % in all.
func TestH200TimeFromData(t *testing.T) {
	t.Parallel() // reads the recordings and the model only
	fit, _ := loadPoints(t, false)
	got := h200Fit(t, fit)
	h200, err := devices.Lookup("h200")
	require.NoError(t, err)
	want := h200.Time
	t.Logf("fitted: %+v", got)
	fitted := h200
	fitted.Time = got
	for _, q := range timeParams {
		assert.InEpsilon(t, q.get(&h200), q.get(&fitted), 0.01, "%s: profiles.json has %+v; the fit gives %+v", q.path, want, got)
	}
	assert.InEpsilon(t, want.CopyBandwidth, got.CopyBandwidth, 0.01)
}

// ratios returns measured / model time of each point under d.
func ratios(d devices.Profile, ps []TimePoint) []float64 {
	out := make([]float64, len(ps))
	for i, p := range ps {
		out[i] = p.Seconds / sectors.EstimateTime(d, p.Modelled).Total()
	}
	return out
}

// worst returns the largest |log| of the ratios, as a factor (1.25 is a
// launch 25 % off either way), and the launch it belongs to.
func worst(rs []float64, ps []TimePoint) (float64, string) {
	w, at := 1.0, ""
	for i, r := range rs {
		if f := math.Exp(math.Abs(math.Log(r))); f > w {
			w, at = f, ps[i].Modelled.Spec.Brief()
		}
	}
	return w, at
}

// TestTimeAccuracy holds the h200 time model to the measured median times,
// on the launches it was fitted to and on those held out, with ncu's DRAM
// bytes in the model's place (the time model's own error) and with the
// model's own (what a learner sees). The goal is every launch within 25 %
// of its measured time; run it with -v for the table per kernel. The
// bounds are what the model reaches, not the goal, where it falls short:
//
//   - small vectorized copies (2^21 to 7 M floats) are up to 1.36x slower:
//     the launch's ramp, which a fixed launch cost and one latency per
//     wave leave out;
//   - transpose_coalesced_read and copy_columns are up to 1.26x slower
//     than the rate of L2 store packets fitted to the rest, and small
//     stride-8 writes (2^20 to 2^23 floats), which that rate bounds, up to
//     1.35x faster;
//   - a random gather at L2 fetch 128 B and n = 2^23 is 1.32x slower, and
//     strided_read at stride 24 and L2 fetch 32 B 1.33x faster, than the
//     model's DRAM access cost, one curve for every fetch size;
//   - gathers whose warps read a line or two (sorted_random,
//     warp_shuffle) are up to 1.32x faster than their latency.
func TestTimeAccuracy(t *testing.T) {
	t.Parallel() // reads the recordings and the model only
	fit, held := loadPoints(t, false)
	fitOwn, heldOwn := loadPoints(t, true)
	h200, err := devices.Lookup("h200")
	require.NoError(t, err)
	for _, c := range []struct {
		name   string
		ps     []TimePoint
		within int     // launches within 25 % of the measured time, at least
		bound  float64 // the worst launch's measured / model, either way
	}{
		{"fitted, ncu's DRAM bytes", fit, 311, 1.40},
		{"held out, ncu's DRAM bytes", held, 119, 1.40},
		{"fitted, the model's DRAM bytes", fitOwn, 311, 1.40},
		// One float4 copy fewer than with ncu's bytes: since
		// dram.busy_dirty_l2_bytes made its writes right, nothing hides the
		// ramp of a small launch (vectorized_copy at n = 5 x 2^20, 1.34x).
		{"held out, the model's DRAM bytes", heldOwn, 118, 1.40},
	} {
		t.Run(c.name, func(t *testing.T) {
			rs := ratios(h200, c.ps)
			byKernel := map[spec.Kernel][]float64{}
			for i, r := range rs {
				k := c.ps[i].Modelled.Spec.Kernel
				byKernel[k] = append(byKernel[k], r)
			}
			in := 0
			for _, k := range slices.Sorted(maps.Keys(byKernel)) {
				r := byKernel[k]
				n := 0
				for _, x := range r {
					// The goal's 25 %, as the published figures count
					// it: |model - measured| <= 25 % of measured.
					if math.Abs(1/x-1) <= 0.25 {
						n++
					}
				}
				in += n
				t.Logf("%-26s %3d launches, %3d within 25 %%, measured/model %.2f to %.2f", k, len(r), n, slices.Min(r), slices.Max(r))
			}
			w, at := worst(rs, c.ps)
			t.Logf("%d of %d within 25 %%; the worst, %s, %.2fx off", in, len(rs), at, w)
			assert.GreaterOrEqual(t, in, c.within)
			assert.LessOrEqual(t, w, c.bound, "worst launch %s", at)
		})
	}
}

// TestFitTimeTooFew: a fit needs MinTimedLaunches timed launches, and says
// how many it had; untimed and failed ones do not count.
func TestFitTimeTooFew(t *testing.T) {
	h200, err := devices.Lookup("h200")
	require.NoError(t, err)
	s, err := spec.Parse([]byte(`{"kernel":"coalesced_copy","n":1024}`))
	require.NoError(t, err)
	launches := []measure.Launch{
		{Spec: s, TimeMs: 0.004, TimedLaunches: 20},
		{Spec: s},                               // not timed
		{Spec: s, Error: "verification failed"}, // failed
	}
	_, err = FitTime(h200, launches)
	require.ErrorIs(t, err, ErrTooFew)
	assert.Contains(t, err.Error(), "1 timed, want at least 20")
}

// TestFitTimeRecovers fits launches whose times the model itself gave
// under the h200 parameters, from a start every parameter of which is off
// by 1.2x. The search is local (coordinate descent): it ends within 0.3 %
// of every launch's time, not at the exact parameters, as the limits that
// no launch's time reaches leave it valleys to stop in; 1 % is the bound.
// (With 50 sweeps a step it stopped in the slanted valley of the latency
// and its growth per byte, 15 % off the one-byte copies.)
func TestFitTimeRecovers(t *testing.T) {
	t.Parallel() // reads the recordings and the model only
	fit, _ := loadPoints(t, false)
	h200, err := devices.Lookup("h200")
	require.NoError(t, err)
	synthetic := make([]TimePoint, len(fit))
	for i, p := range fit {
		synthetic[i] = TimePoint{Modelled: p.Modelled, Seconds: sectors.EstimateTime(h200, p.Modelled).Total()}
	}
	off := h200
	for _, q := range timeParams {
		q.set(&off, 1.2*q.get(&h200))
	}
	d := h200
	d.Time = FitTimePoints(h200, off.Time, synthetic)
	for _, p := range synthetic {
		assert.InEpsilon(t, p.Seconds, sectors.EstimateTime(d, p.Modelled).Total(), 0.01, p.Modelled.Spec.Brief())
	}
}
