package calibrate

import (
	"context"
	"fmt"
	"io"
	"maps"
	"math"
	"time"

	"github.com/coalescing-course/coalesce/cuda"
	"github.com/coalescing-course/coalesce/lessons/measure"
	"github.com/coalescing-course/coalesce/lessons/spec"
	"github.com/coalescing-course/coalesce/units"
)

// Command is the command line a calibration's provenance names.
const Command = "coalesce calibrate"

// Calibrator measures this machine's GPU and fits its profile.
type Calibrator struct {
	GPU *cuda.GPU
	// Progress receives a line as each step starts: "calibrate: 3/8
	// bandwidth (12 s)"; nil: nowhere.
	Progress io.Writer
	// Now is the clock of the progress lines; nil: time.Now.
	Now func() time.Time
}

// Run measures what Specs lists (times; counters too, where ncu can read
// them, of the launches that decide a DRAM parameter) and the harness's
// pointer chases, then fits. Counters that cannot be read (no ncu, or
// ERR_NVGPUCTRPERM) leave the DRAM level estimated, and the report says
// why; a launch that cannot be measured is left out and noted.
func (c Calibrator) Run(ctx context.Context) (Calibration, Report, error) {
	g := c.GPU
	now := c.Now
	if now == nil {
		now = time.Now
	}
	start := now()
	step := func(name, detail string) {
		if c.Progress == nil {
			return
		}
		num := 0
		for i, s := range Steps {
			if s == name {
				num = i + 1
			}
		}
		fmt.Fprintf(c.Progress, "calibrate: %d/%d %s (%s)%s\n", num, len(Steps), name, units.Seconds.Scale(1).Format(math.Round(now().Sub(start).Seconds())), detail)
	}
	info := g.Info
	step(StepDevice, fmt.Sprintf(": %s, %d SMs, L2 %s, compute capability %s", info.GPU, info.SMs, units.BinaryBytes.Format(float64(info.L2Bytes)), info.ComputeCapability))
	planned, err := Specs(info)
	if err != nil {
		return Calibration{}, Report{}, err
	}
	step(StepLatency, ": pointer chases through DRAM and the L2")
	lat, err := g.Harness.Latencies(ctx)
	if err != nil {
		return Calibration{}, Report{}, fmt.Errorf("calibrate: the latency chase: %w", err)
	}
	prov := g.Provenance(ctx, Command)
	set := &measure.Set{Origin: g.Origin(), Provenance: &prov}
	var notes []string
	var profile []spec.Spec
	for _, name := range Steps[2:6] {
		var specs []spec.Spec
		for _, p := range planned {
			if p.Step == name {
				specs = append(specs, p.Spec)
				if p.Counters {
					profile = append(profile, p.Spec)
				}
			}
		}
		step(name, fmt.Sprintf(": %d launches", len(specs)))
		got, err := g.Measure(ctx, specs, measure.Times)
		if err != nil {
			return Calibration{}, Report{}, fmt.Errorf("calibrate: %s: %w", name, err)
		}
		if err := got.Err(); err != nil {
			notes = append(notes, err.Error())
		}
		set.Launches = append(set.Launches, got.Measured()...)
	}
	switch {
	case g.Ncu == nil:
		step(StepCounters, ": skipped, "+g.NoNcu)
		notes = append(notes, "no counters: "+g.NoNcu)
	default:
		step(StepCounters, fmt.Sprintf(": %d launches under ncu", len(profile)))
		got, err := g.Measure(ctx, profile, measure.Counters)
		if err != nil {
			notes = append(notes, "no counters: "+err.Error())
			break
		}
		counted := map[string]measure.Launch{}
		for _, l := range got.Measured() {
			counted[l.Spec.String()] = l
		}
		for i, l := range set.Launches {
			if p, ok := counted[l.Spec.String()]; ok {
				set.Launches[i].Metrics = maps.Clone(p.Metrics)
			}
		}
	}
	step(StepFit, "")
	p, rep, err := Fit(info, set, &lat)
	rep.Notes = append(notes, rep.Notes...)
	if err != nil {
		return Calibration{}, rep, err
	}
	return Calibration{Profile: p, Calibrated: g.Opened.UTC().Format(time.DateOnly)}, rep, nil
}
