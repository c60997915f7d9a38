package lab

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/coalescing-course/coalesce/cuda"
	"github.com/coalescing-course/coalesce/cuda/toolkit"
	"github.com/coalescing-course/coalesce/grader"
	"github.com/coalescing-course/coalesce/internal/words"
	"github.com/coalescing-course/coalesce/lessons/devices"
	"github.com/coalescing-course/coalesce/lessons/figures"
	"github.com/coalescing-course/coalesce/lessons/measure"
	"github.com/coalescing-course/coalesce/lessons/metrics"
	"github.com/coalescing-course/coalesce/lessons/sectors"
	"github.com/coalescing-course/coalesce/lessons/spec"
	"github.com/coalescing-course/coalesce/units"
)

// Output is where the package prints text; nil is the standard output
// as it is at the time, a cell's.
var Output io.Writer

// Stderr is where Must prints the error that ends a cell; nil is the
// standard error as it is at the time.
var Stderr io.Writer

func stderr() io.Writer {
	if Stderr != nil {
		return Stderr
	}
	return os.Stderr
}

// exit ends the program; tests replace it.
var exit = os.Exit

// Must returns v when err is nil. Otherwise it prints err to Stderr and
// ends the program with status 1: in a notebook, the cell stops there and
// shows the error in red. Use it around the calls of a cell:
//
//	m := lab.Must(lab.Measure(specs...))
func Must[T any](v T, err error) T {
	if err != nil {
		fmt.Fprintf(stderr(), "error: %v\n", err)
		exit(1)
	}
	return v
}

// ParseSpec parses an experiment spec (see lessons/spec), written as a
// JSON object. With args, the object is first formatted with fmt.Sprintf,
// so that a cell can build a spec from its variables:
//
//	lab.ParseSpec(`{"kernel":"strided_copy","n":1048576,"stride":%d}`, stride)
func ParseSpec(format string, args ...any) (spec.Spec, error) {
	js := format
	if len(args) > 0 {
		js = fmt.Sprintf(format, args...)
	}
	s, err := spec.Parse([]byte(js))
	if err != nil {
		return spec.Spec{}, fmt.Errorf("lab: %s: %w", strings.TrimSpace(js), err)
	}
	return s, nil
}

// Spec is ParseSpec for a notebook cell: a spec that does not parse ends
// the cell with the error (see Must).
func Spec(format string, args ...any) spec.Spec {
	return Must(ParseSpec(format, args...))
}

// Describe writes a launch in a few words, as tables name it
// (spec.Spec.Brief): "strided_copy, stride 32, n 2^26".
func Describe(s spec.Spec) string { return s.Brief() }

// Count writes a whole number with thousands separators: 8,388,608.
// Count, Percent and Ratio are units' rules, for a cell that
// prints a number; a cell that prints another unit, or arithmetic
// (units.Product), uses units itself.
func Count(v float64) string { return units.Count.Format(v) }

// Percent writes a fraction as a percentage: 0.125 is "12.5%", 1/32 "3.13%".
func Percent(f float64) string { return units.Percent.Format(f) }

// Ratio writes a number with three significant digits: 4.42, 0.125, 32.
func Ratio(v float64) string { return units.Ratio.Format(v) }

// Lanes returns a full warp in which lane l accesses size bytes at
// address base + l*step: the shape of every access of the course's
// kernels but the gather.
func Lanes(base, step uint64, size int) sectors.Warp {
	w := sectors.Warp{Size: size, Active: sectors.AllLanes}
	for l := range sectors.WarpSize {
		w.Addr[l] = base + uint64(l)*step
	}
	return w
}

// Explain coalesces one warp (sectors.Coalesce) and prints, for every
// sector it touches, the sector's bytes, the lanes in it and how many of
// its 32 bytes they use, then the totals:
//
//	4 sectors in 1 line: 128 bytes fetched for 128 bytes used, efficiency 100%
//
// It returns the access, for the cell to use further. A warp that is the
// warp of a question the learner has not answered yet (lab.Lanes(0, 4, 4)
// is coalesced_copy's) is not printed until they have.
func Explain(w sectors.Warp) (sectors.Access, error) {
	a, err := sectors.Coalesce(w)
	if err != nil {
		return a, fmt.Errorf("lab: %w", err)
	}
	d := newDisplay()
	if !d.showAll(warpTells(w, a)) {
		d.emit(output{text: "The sectors of this warp wait for your prediction."})
		return a, nil
	}
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "sector (bytes)\tline\tlanes\tbytes used")
	const maxRows = 12
	rows := a.Sectors
	if len(rows) > maxRows {
		rows = rows[:maxRows-1]
	}
	for _, s := range rows {
		fmt.Fprintf(tw, "%d-%d\t%d\t%s\t%d of %d\n", s.Addr, s.Addr+sectors.SectorBytes-1,
			s.Line()/sectors.LineBytes, laneList(s.Lanes), s.UsedBytes(), sectors.SectorBytes)
	}
	if err := tw.Flush(); err != nil {
		return a, err
	}
	if more := len(a.Sectors) - len(rows); more > 0 {
		fmt.Fprintf(&b, "... and %s more\n", words.Plural(more, "sector"))
	}
	fmt.Fprintf(&b, "%s in %s: %s fetched for %s used, efficiency %s\n",
		words.Plural(len(a.Sectors), "sector"), words.Plural(a.Lines, "line"), words.Plural(a.FetchedBytes(), "byte"), words.Plural(a.UsefulBytes, "byte"), Percent(a.Efficiency()))
	d.emit(output{text: b.String()})
	return a, nil
}

// LoadTotals works out, for the launch s, the load totals Nsight Compute
// reports, as lesson 7 builds them: warps × loads per warp = requests,
// requests × sectors per request = sectors, and the minimum a request of
// that many bytes could cost. Each line waits, like any value, for the
// answer of a question it would give away.
func LoadTotals(s spec.Spec) error {
	done := working("model: replaying every warp of " + s.Brief())
	p, err := sectors.Model(s)
	done()
	if err != nil {
		return fmt.Errorf("lab: %w", err)
	}
	v := figures.Model(p)
	tell := func(f figures.Figure) grader.Tell {
		x, _ := f.Of(v)
		return grader.Tell{Spec: s, Figure: f.Name, Judge: grader.Model, Value: x, Counts: grader.CountsOf(v)}
	}
	requests, sectorsTotal := tell(figures.Metric(metrics.LdRequests)), tell(figures.Metric(metrics.LdSectors))
	perReq := tell(figures.LdSectorsPerRequest)
	warps, req, secs := float64(p.Warps), p.Metrics[metrics.LdRequests], p.Metrics[metrics.LdSectors]
	// The fewest sectors: each request's bytes side by side, in whole
	// sectors (a warp's active lanes times the element size, rounded up
	// to 32 bytes).
	least := 0.0
	for w := int64(0); w < p.Warps; w++ {
		t0, lanes := sectors.FirstThread(s, w)
		if active := min(int64(lanes), s.Threads()-t0); active > 0 {
			least += math.Ceil(float64(active*int64(s.ElemBytes)) / sectors.SectorBytes)
		}
	}
	d := newDisplay()
	var b strings.Builder
	b.WriteString(Describe(s) + "\n")
	line := func(text string, tells ...grader.Tell) {
		if !d.showAll(tells) {
			text = Hidden
		}
		b.WriteString("  " + text + "\n")
	}
	// Each equation is written true as printed: units gives a factor
	// that rounds the digits its product needs.
	count := func(v float64, noun string) units.Term { return units.Term{V: v, Unit: units.Count, Noun: noun} }
	line(units.Product(count(req, "requests"), count(warps, "warps"), units.Term{V: req / warps, Unit: units.Ratio, Noun: "loads per warp"}).String(), requests)
	line(units.Product(count(secs, "sectors"), count(req, "requests"), units.Term{V: perReq.Value, Unit: units.Ratio, Noun: "sectors per request"}).String(), requests, perReq, sectorsTotal)
	line(fmt.Sprintf("minimum: %s, each request's bytes side by side; so %s", units.With(Count(least), "sectors"),
		units.Quotient(units.Term{V: secs / least, Unit: units.Multiple, Noun: "the minimum"}, count(secs, "sectors"), count(least, "sectors"))), sectorsTotal, perReq)
	d.emit(output{text: b.String()})
	return nil
}

// warpTells are what a picture or a list of one warp's sectors shows:
// its sectors per request, as a load or a store (a warp built by hand may
// stand for either), and its efficiency.
func warpTells(w sectors.Warp, a sectors.Access) []grader.Tell {
	sh := grader.Shape{Sectors: len(a.Sectors), Useful: a.UsefulBytes, Lanes: bits.OnesCount32(w.Active)}
	n := float64(len(a.Sectors))
	return []grader.Tell{
		{Figure: figures.LdSectorsPerRequest.Name, Judge: grader.Model, Value: n, Warp: &sh},
		{Figure: figures.StSectorsPerRequest.Name, Judge: grader.Model, Value: n, Warp: &sh},
		{Figure: figures.Efficiency.Name, Judge: grader.Model, Value: a.Efficiency(), Warp: &sh},
	}
}

// laneList writes a lane mask as ranges: "0-7", "0, 2, 4".
func laneList(mask uint32) string {
	var parts []string
	for l := 0; l < sectors.WarpSize; l++ {
		if mask&(1<<l) == 0 {
			continue
		}
		end := l
		for end+1 < sectors.WarpSize && mask&(1<<(end+1)) != 0 {
			end++
		}
		if end == l {
			parts = append(parts, fmt.Sprint(l))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d", l, end))
		}
		l = end
	}
	return strings.Join(parts, ", ")
}

// Status prints, for the top of a lesson, what the sector model describes
// and why (devices.Current: the course's H200, or the profile chosen for
// this machine's GPU, and whether its numbers are measured or a
// datasheet's estimate), and where this notebook's measurements come
// from: the label every measured figure of the notebook carries. The L2's
// fetch granularity, which tells lesson 8's answers, waits for them.
func Status() {
	// The source first: opening a live GPU chooses the profile.
	src, srcErr := measurer()
	dev, why := devices.Current()
	disp := newDisplay()
	var b strings.Builder
	if err := dev.Validate(); err != nil {
		fmt.Fprintf(&b, "Model: no device profile: %v\n", err)
	} else {
		fetch := fmt.Sprintf("L2 fetch granularity %d bytes", dev.DefaultL2Fetch)
		if !disp.show(grader.Tell{Fact: grader.FactL2Fetch, Value: float64(dev.DefaultL2Fetch)}) {
			fetch = "L2 fetch granularity " + Hidden
		}
		fmt.Fprintf(&b, "Model: the sector model of the %s (device %q): %d SMs, %s of L2, %d-byte sectors in %d-byte lines, %s.\n",
			dev.GPU, dev.Name, dev.SMs, units.BinaryBytes.Format(float64(dev.L2Bytes)), dev.SectorBytes, dev.LineBytes, fetch)
		fmt.Fprintf(&b, "Profile: %s%s.\n", why, estimateNote(dev))
	}
	switch {
	case srcErr != nil:
		fmt.Fprintf(&b, "Measurements: none: %v\n", srcErr)
	default:
		o := src.Origin()
		if o.Why == "" {
			fmt.Fprintf(&b, "Measurements: %s: this machine's GPU runs the kernels.\n", o)
		} else {
			fmt.Fprintf(&b, "Measurements: %s (the course's recording; %s).\n", o, o.Why)
		}
		b.WriteString(statusCounters(src))
	}
	disp.emit(output{text: b.String()})
	flush()
}

// statusCounters says, for a live GPU, whether Nsight Compute may read
// its counters, finding out with one profiled launch: a lesson's counters
// and measured grades depend on it, and the learner can fix it only on
// the host, so the fix is said before the first cell needs it. A strict
// GPU (COALESCE_MEASURE=strict) that cannot count says so on stderr,
// which fails the cell in a headless run (make test-gpu) even where the
// lesson measures nothing.
func statusCounters(src measure.Measurer) string {
	p, ok := src.(counterProber)
	if !ok {
		return ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	err := p.ProbeCounters(ctx)
	if err != nil && isStrict(src) {
		fmt.Fprintf(stderr(), "Counters: %s=%s, but Nsight Compute cannot read this GPU's counters: %v\n", cuda.ModeEnv, cuda.StrictMode, err)
		return ""
	}
	switch {
	case errors.Is(err, toolkit.ErrCountersDenied):
		return fmt.Sprintf("Counters: %v\n", err)
	// Without ncu there is nothing to check: the captions say so.
	case err != nil && !errors.Is(err, measure.ErrNoCounters):
		return fmt.Sprintf("Counters: could not check whether Nsight Compute may read them: %v\n", err)
	}
	return ""
}

// estimateNote says, after a profile's reason, how much of it is an
// estimate rather than a measurement of the GPU (a datasheet profile's
// DRAM and time levels, a calibration's DRAM level where ncu could not
// read counters); "" when nothing is.
func estimateNote(d devices.Profile) string {
	if len(d.Estimated) == 0 {
		return ""
	}
	return fmt.Sprintf("; %s estimated, not measured on this GPU (coalesce calibrate measures what it can)", words.Plural(len(d.Estimated), "field"))
}
