package calibrate

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coalescing-course/coalesce/cuda/reference"
	"github.com/coalescing-course/coalesce/lessons/devices"
	"github.com/coalescing-course/coalesce/lessons/measure"
	"github.com/coalescing-course/coalesce/lessons/sectors"
	"github.com/coalescing-course/coalesce/lessons/spec"
)

// CalibratedEnv names a profile coalesce calibrate wrote (-out) on the
// H200, for TestCalibratedOnRecording (runs/calibrate.sh sets it).
const CalibratedEnv = "COALESCE_CALIBRATED"

// TestCalibratedOnRecording puts a profile calibrated on an H200 beside
// the shipped one on every launch of the course's recording, one row per
// kernel: the share of DRAM counts within 15 % and of times within 25 %,
// and the median time error. The calibrated profile must do as well as
// the shipped one, give or take 5 % of either share.
func TestCalibratedOnRecording(t *testing.T) {
	path := os.Getenv(CalibratedEnv)
	if path == "" {
		t.Skipf("%s is not set: it names a profile calibrated on an H200 (runs/calibrate.sh)", CalibratedEnv)
	}
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var cal Calibration
	require.NoError(t, json.Unmarshal(data, &cal))
	require.NoError(t, cal.Validate())
	shipped, err := devices.Lookup("h200")
	require.NoError(t, err)
	rec, err := reference.Recorded()
	require.NoError(t, err)
	launches := distinct(rec.Measured())
	traces, err := traceAll(shipped, specsOf(launches))
	require.NoError(t, err)
	ps, pc := replayAll(traces, shipped), replayAll(traces, cal.Profile)

	type row struct {
		idx          []int
		sShip, sCal  Score
		medShip, med float64
	}
	rows := map[spec.Kernel]*row{}
	for i, l := range launches {
		r, ok := rows[l.Spec.Kernel]
		if !ok {
			r = &row{}
			rows[l.Spec.Kernel] = r
		}
		r.idx = append(r.idx, i)
	}
	// pick scores the launches at ix and takes the median time error.
	pick := func(ix []int, preds []sectors.Launch) (Score, float64) {
		sub, subP := make([]measure.Launch, len(ix)), make([]sectors.Launch, len(ix))
		var errs []float64
		for j, i := range ix {
			sub[j], subP[j] = launches[i], preds[i]
			if launches[i].Timed() {
				errs = append(errs, math.Abs(preds[i].TimeSeconds/launches[i].Seconds()-1))
			}
		}
		return score(sub, subP), median(errs)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%-26s %4s  %-18s %-18s %s\n", "kernel", "n", "DRAM ±15% ship/cal", "time ±25% ship/cal", "median |dt| ship/cal")
	keys := make([]spec.Kernel, 0, len(rows))
	for k := range rows {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		r := rows[k]
		r.sShip, r.medShip = pick(r.idx, ps)
		r.sCal, r.med = pick(r.idx, pc)
		fmt.Fprintf(&b, "%-26s %4d  %3d/%3d of %3d     %3d/%3d of %3d     %5.1f%% / %5.1f%%\n", k, len(r.idx),
			r.sShip.DRAMWithin, r.sCal.DRAMWithin, r.sShip.DRAMOf, r.sShip.TimeWithin, r.sCal.TimeWithin, r.sShip.TimeOf, 100*r.medShip, 100*r.med)
	}
	all, allCal := score(launches, ps), score(launches, pc)
	fmt.Fprintf(&b, "%-26s %4d  %3d/%3d of %3d     %3d/%3d of %3d\n", "all", len(launches),
		all.DRAMWithin, allCal.DRAMWithin, all.DRAMOf, all.TimeWithin, allCal.TimeWithin, all.TimeOf)
	t.Logf("shipped h200 against %s (%s):\n%s", cal.GPU, cal.Calibrated, b.String())
	assert.GreaterOrEqual(t, allCal.DRAMShare(), all.DRAMShare()-0.05)
	assert.GreaterOrEqual(t, allCal.TimeShare(), all.TimeShare()-0.05)
}
