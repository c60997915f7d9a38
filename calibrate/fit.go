package calibrate

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/coalescing-course/coalesce/cuda"
	"github.com/coalescing-course/coalesce/lessons/devices"
	"github.com/coalescing-course/coalesce/lessons/measure"
	"github.com/coalescing-course/coalesce/lessons/metrics"
	"github.com/coalescing-course/coalesce/lessons/sectors"
	"github.com/coalescing-course/coalesce/lessons/spec"
)

// Param is one number of a fitted profile and where it comes from.
type Param struct {
	// Path is its JSON path in a profile: "time.copy_bandwidth".
	Path  string  `json:"path"`
	Value float64 `json:"value"`
	// Citation says how it was obtained: read from the device, measured,
	// fitted to a named figure, or estimated.
	Citation string `json:"source"`
	// Estimated is true when no measurement of this GPU gave it.
	Estimated bool `json:"estimated,omitempty"`
}

// Report is what a fit did: every parameter with its source, and notes on
// what could not be measured and what stood in for it.
type Report struct {
	GPU    string  `json:"gpu"`
	Params []Param `json:"params"`
	// Latencies are the harness's pointer chases, when it ran them.
	Latencies *cuda.Latencies `json:"latencies,omitempty"`
	// DRAMLaunches and TimeLaunches count the launches each level was
	// fitted to; DRAMCost and TimeCost are the fits' final costs (worst
	// plus median relative error; mean squared log ratio).
	DRAMLaunches int      `json:"dram_launches"`
	DRAMCost     float64  `json:"dram_cost,omitempty"`
	TimeLaunches int      `json:"time_launches"`
	TimeCost     float64  `json:"time_cost,omitempty"`
	Notes        []string `json:"notes,omitempty"`
}

// Citations returns each parameter's source by its path, estimates marked
// "estimated: ...".
func (r Report) Citations() map[string]string {
	m := make(map[string]string, len(r.Params))
	for _, p := range r.Params {
		m[p.Path] = p.Citation
	}
	return m
}

// estimated returns the paths of the parameters no measurement gave, in
// the report's order: a profile's Estimated.
func (r Report) estimated() []string {
	var out []string
	for _, p := range r.Params {
		if p.Estimated {
			out = append(out, p.Path)
		}
	}
	return out
}

func (r *Report) add(path string, v float64, source string, estimated bool) {
	if estimated {
		source = "estimated: " + source
	}
	r.Params = append(r.Params, Param{Path: path, Value: v, Citation: source, Estimated: estimated})
}

// ErrNoData is a set without the launches a level needs.
var ErrNoData = errors.New("calibrate: not enough measured launches")

// courseProfile is the profile whose DRAM shares of the L2 stand in for a GPU
// without counters, and which starts every fit: the course's H200.
const courseProfile = devices.Course

// Fit fits a profile of the GPU info describes to the launches of set, as
// coalesce calibrate measured them or a recording holds them. lat, the
// harness's pointer chases (nil for a recording), goes into the report and
// the provenance beside the fitted latency, not into the fit: the model's
// latency_seconds is what a load waits among many in flight, which one
// load alone does not show. It runs one level at a time, each on what
// the levels before it settled:
//
//   - geometry from the device: SMs, L2, threads and blocks per SM, the
//     default L2 fetch granularity;
//   - time.copy_bandwidth: the median cudaMemcpy rate of the launches
//     larger than the L2;
//   - dram.*: FitDRAM, where set has ncu's counters; else the reference
//     profile's shares of its L2, marked estimated; then
//     dram.busy_dirty_l2_bytes alone (FitBusy), likewise;
//   - time.*: FitTime, on the copy kernels' times.
func Fit(info measure.DeviceInfo, set *measure.Set, lat *cuda.Latencies) (devices.Profile, Report, error) {
	ref, err := devices.Lookup(courseProfile)
	if err != nil {
		return devices.Profile{}, Report{}, fmt.Errorf("calibrate: %w", err)
	}
	rep := Report{GPU: info.GPU, Latencies: lat}
	by := measuredBy(info, set)
	p, err := geometry(info, ref, &rep)
	if err != nil {
		return devices.Profile{}, rep, err
	}
	launches := set.Measured()

	bw, n := copyBandwidth(launches, info.L2Bytes)
	if n == 0 {
		return devices.Profile{}, rep, fmt.Errorf("%w: no timed launch with a cudaMemcpy of more than the L2's %d B, for time.copy_bandwidth", ErrNoData, info.L2Bytes)
	}
	p.Time.CopyBandwidth = bw
	rep.add("time.copy_bandwidth", bw, fmt.Sprintf("%s: median device-to-device cudaMemcpy rate (read plus write) of %d launches larger than the L2", by, n), false)

	if dramSet := dramLaunches(launches, info.L2Bytes); len(dramSet) >= minDRAMLaunches {
		d, cost, err := fitDRAM(p, dramSet, info)
		if err != nil {
			return devices.Profile{}, rep, err
		}
		p.DRAM = d
		rep.DRAMLaunches, rep.DRAMCost = len(dramSet), cost
		for _, q := range dramParams {
			rep.add(q.path, q.get(&p), fmt.Sprintf("%s: fitted to %s of %d launches", by, q.from, len(dramSet)), false)
		}
	} else {
		scale := float64(info.L2Bytes) / float64(ref.L2Bytes)
		for _, q := range dramParams {
			if !q.ofL2 {
				rep.add(q.path, q.get(&p), fmt.Sprintf("the %s profile's, no counters to fit it to", courseProfile), true)
				continue
			}
			q.set(&p, q.get(&ref)*scale)
			rep.add(q.path, q.get(&p), fmt.Sprintf("the %s profile's share of its L2 (%.3f), on this L2: no counters to fit it to", courseProfile, q.get(&ref)/float64(ref.L2Bytes)), true)
		}
		rep.Notes = append(rep.Notes, fmt.Sprintf("no ncu counters among the launches (%d profiled, %d needed): the DRAM level is the %s's, scaled to this L2", len(dramSet), minDRAMLaunches, courseProfile))
	}
	if busySet := busyLaunches(launches, info.L2Bytes); len(busySet) > 0 {
		b, _, err := fitBusy(p, busySet, info)
		if err != nil {
			return devices.Profile{}, rep, err
		}
		p.DRAM.BusyDirtyL2Bytes = b
		rep.add(busyParam.path, float64(b), fmt.Sprintf("%s: fitted to %s, %d launches, after the rest of the DRAM level", by, busyParam.from, len(busySet)), false)
	} else {
		share := float64(ref.DRAM.BusyDirtyL2Bytes) / float64(ref.L2Bytes)
		p.DRAM.BusyDirtyL2Bytes = int64(share * float64(info.L2Bytes))
		rep.add(busyParam.path, float64(p.DRAM.BusyDirtyL2Bytes), fmt.Sprintf("the %s profile's share of its L2 (%.3f), on this L2: no profiled %v launch to fit it to", courseProfile, share, busyKernels), true)
	}
	rep.add("dram.partial_write_fill", b2f(p.DRAM.PartialWriteFill), fmt.Sprintf("the %s profile's: no calibration launch tells", courseProfile), true)

	timed := timeLaunches(launches)
	tm, err := FitTime(p, timed)
	if err != nil {
		return devices.Profile{}, rep, err
	}
	bw = p.Time.CopyBandwidth
	p.Time = tm
	p.Time.CopyBandwidth = bw // the memcpy rate above, over launches larger than the L2
	rep.TimeLaunches = len(timed)
	for _, q := range timeParams {
		rep.add(q.path, q.get(&p), fmt.Sprintf("%s: fitted to %s (%d timed launches)", by, q.from, len(timed)), false)
	}
	p.Provenance = provenance(info, set, lat, rep)
	p.Citations, p.Estimated = rep.Citations(), rep.estimated()
	// Fixed by the architecture on every GPU the model describes, as the
	// reference profile's sources say.
	for _, path := range []string{"warp_size", "sector_bytes", "line_bytes"} {
		p.Citations[path] = ref.Citations[path]
	}
	if err := p.Validate(); err != nil {
		return devices.Profile{}, rep, fmt.Errorf("calibrate: the fitted profile: %w", err)
	}
	return p, rep, nil
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// measuredBy says who measured set: "measured on NVIDIA H200 by coalesce
// calibrate, 2026-12-01".
func measuredBy(info measure.DeviceInfo, set *measure.Set) string {
	cmd, date := "an unnamed command", "an unknown date"
	if pv := set.Provenance; pv != nil {
		if pv.Command != "" {
			cmd = pv.Command
		}
		if t, err := time.Parse(time.RFC3339, pv.Date); err == nil {
			date = t.UTC().Format(time.DateOnly)
		}
	}
	return fmt.Sprintf("measured on %s by %s, %s", info.GPU, cmd, date)
}

// provenance writes the profile's provenance: the GPU, its software, the
// date, and each parameter's source.
func provenance(info measure.DeviceInfo, set *measure.Set, lat *cuda.Latencies, rep Report) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Calibrated on %s (%d SMs, L2 %d B, compute capability %s)", info.GPU, info.SMs, info.L2Bytes, info.ComputeCapability)
	if pv := set.Provenance; pv != nil {
		fmt.Fprintf(&b, ", driver %s, CUDA %s, %s, by %s", orUnknown(pv.Driver), orUnknown(pv.CUDA), orUnknown(pv.Date), orUnknown(pv.Command))
	}
	b.WriteString(".")
	if lat != nil {
		fmt.Fprintf(&b, " Pointer chase (harness --calibrate): DRAM %.0f ns, L2 %.0f ns.", lat.DRAMLatencyNs, lat.L2LatencyNs)
	}
	for _, p := range rep.Params {
		fmt.Fprintf(&b, " %s: %s.", p.Path, p.Citation)
	}
	return b.String()
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// maxBlocksPerSM is the most resident blocks per SM by compute
// capability, from the CUDA C++ Programming Guide's table of technical
// specifications per compute capability.
var maxBlocksPerSM = map[string]int{"7.0": 32, "7.2": 32, "7.5": 16, "8.0": 32, "8.6": 16, "8.7": 16, "8.9": 24, "9.0": 32}

// geometry starts the profile: what the device says of itself, with the
// reference's DRAM and time parameters to be fitted over.
func geometry(info measure.DeviceInfo, ref devices.Profile, rep *Report) (devices.Profile, error) {
	if info.GPU == "" || info.SMs < 1 || info.L2Bytes <= 0 || info.MaxThreadsPerSM < 32 {
		return devices.Profile{}, fmt.Errorf("calibrate: device %q: %d SMs, L2 %d B, %d threads per SM: want a named GPU with all three positive", info.GPU, info.SMs, info.L2Bytes, info.MaxThreadsPerSM)
	}
	p := ref
	// A name of its own and no driver name claimed: Choose finds a
	// calibration by the GPU's name in the cache, and the shipped profile
	// of the same GPU keeps its match (Register refuses a second claim).
	p.Name, p.GPU, p.Match = CalibratedName(info.GPU), info.GPU, nil
	p.SMs, p.MaxThreadsPerSM, p.L2Bytes = info.SMs, info.MaxThreadsPerSM, info.L2Bytes
	p.ComputeCapability = info.ComputeCapability
	dev := fmt.Sprintf("cudaGetDeviceProperties on %s (harness --info)", info.GPU)
	// Validate, at the end of Fit, refuses one that is not major.minor.
	cc, _ := strconv.ParseFloat(info.ComputeCapability, 64)
	rep.add("compute_capability", cc, dev+": major.minor "+info.ComputeCapability, false)
	rep.add("sms", float64(p.SMs), dev, false)
	rep.add("max_threads_per_sm", float64(p.MaxThreadsPerSM), dev, false)
	rep.add("l2_bytes", float64(p.L2Bytes), dev, false)
	if b, ok := maxBlocksPerSM[info.ComputeCapability]; ok {
		p.MaxBlocksPerSM = b
		rep.add("max_blocks_per_sm", float64(b), "CUDA C++ Programming Guide, compute capability "+info.ComputeCapability, false)
	} else {
		// The fewest of any listed capability: the model then errs
		// towards fewer warps in flight, not more.
		p.MaxBlocksPerSM = 16
		rep.add("max_blocks_per_sm", 16, fmt.Sprintf("compute capability %q is not in the table (calibrate.maxBlocksPerSM); the fewest of those listed", info.ComputeCapability), true)
	}
	if devices.ValidL2Fetch(info.DefaultL2Fetch) {
		p.DefaultL2Fetch = info.DefaultL2Fetch
		rep.add("default_l2_fetch_granularity", float64(p.DefaultL2Fetch), fmt.Sprintf("cudaDeviceGetLimit(cudaLimitMaxL2FetchGranularity) on %s (harness --info)", info.GPU), false)
	} else {
		rep.add("default_l2_fetch_granularity", float64(p.DefaultL2Fetch), fmt.Sprintf("the driver reported %d B; the %s's %d B", info.DefaultL2Fetch, courseProfile, p.DefaultL2Fetch), true)
	}
	return p, nil
}

// copyBandwidth returns the median cudaMemcpy rate of the timed launches
// whose copy is larger than the L2 (a smaller one partly stays in it),
// and how many there were.
func copyBandwidth(launches []measure.Launch, l2 int64) (float64, int) {
	var rates []float64
	for _, l := range launches {
		if l.Timed() && l.MemcpyBytes > l2 {
			rates = append(rates, l.MemcpyBandwidth())
		}
	}
	return median(rates), len(rates)
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	v = slices.Clone(v)
	slices.Sort(v)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

// distinct returns the launches with one of each spec, the last: a set
// that merges runs may measure a launch twice.
func distinct(ls []measure.Launch) []measure.Launch {
	at := map[string]int{}
	var out []measure.Launch
	for _, l := range ls {
		k := l.Spec.String()
		if i, ok := at[k]; ok {
			out[i] = l
			continue
		}
		at[k] = len(out)
		out = append(out, l)
	}
	return out
}

// footprint is the bytes of a launch's buffers together.
func footprint(s spec.Spec) int64 {
	var n int64
	for _, b := range s.Buffers() {
		n += b.Bytes
	}
	return n
}

// spread returns at most k of ls, evenly spaced in their order, so that a
// cap on the launches a fit runs keeps every part of the range.
func spread(ls []measure.Launch, k int) []measure.Launch {
	if len(ls) <= k {
		return ls
	}
	out := make([]measure.Launch, k)
	for i := range k {
		out[i] = ls[i*(len(ls)-1)/(k-1)]
	}
	return out
}

// predictAll predicts every spec on d, several at a time.
func predictAll(d devices.Profile, specs []spec.Spec) ([]sectors.Launch, error) {
	out := make([]sectors.Launch, len(specs))
	errs := make([]error, len(specs))
	parallel(len(specs), func(i int) { out[i], errs[i] = sectors.ModelOn(specs[i], d) })
	return out, errors.Join(errs...)
}

// traceAll traces every spec on d, several at a time.
func traceAll(d devices.Profile, specs []spec.Spec) ([]*sectors.Trace, error) {
	out := make([]*sectors.Trace, len(specs))
	errs := make([]error, len(specs))
	parallel(len(specs), func(i int) { out[i], errs[i] = sectors.NewTrace(specs[i], d) })
	return out, errors.Join(errs...)
}

// replayAll predicts every traced launch on d.
func replayAll(traces []*sectors.Trace, d devices.Profile) []sectors.Launch {
	out := make([]sectors.Launch, len(traces))
	parallel(len(traces), func(i int) { out[i] = traces[i].ModelOn(d) })
	return out
}

// parallel calls f(i) for every i below n, several at a time.
func parallel(n int, f func(i int)) {
	var wg sync.WaitGroup
	next := make(chan int)
	for range min(n, runtime.GOMAXPROCS(0)) {
		wg.Go(func() {
			for i := range next {
				f(i)
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
}

func specsOf(ls []measure.Launch) []spec.Spec {
	out := make([]spec.Spec, len(ls))
	for i, l := range ls {
		out[i] = l.Spec
	}
	return out
}

// dramFloor is the DRAM count under which an error counts in bytes, not
// as a share: 1 MB is 15 % of it, so "within 15 % or 1 MB", the model's
// goal, is one relative error.
const dramFloor = 1e6 / 0.15

// dramError is the model's relative error on one DRAM count.
func dramError(model, measured float64) float64 {
	return math.Abs(model-measured) / math.Max(measured, dramFloor)
}

// Score is how well a profile predicts measured launches: how many DRAM
// counts (read and write, each over 4 MB) are within 15 %, and how many
// times within 25 %, the course's accuracy figures.
type Score struct {
	DRAMWithin, DRAMOf int
	TimeWithin, TimeOf int
}

// String writes the score as a sentence.
func (s Score) String() string {
	return fmt.Sprintf("DRAM within 15%%: %d of %d; time within 25%%: %d of %d", s.DRAMWithin, s.DRAMOf, s.TimeWithin, s.TimeOf)
}

// DRAMShare is the share of DRAM counts within 15 %; 1 when there are none.
func (s Score) DRAMShare() float64 { return share(s.DRAMWithin, s.DRAMOf) }

// TimeShare is the share of times within 25 %; 1 when there are none.
func (s Score) TimeShare() float64 { return share(s.TimeWithin, s.TimeOf) }

func share(k, n int) float64 {
	if n == 0 {
		return 1
	}
	return float64(k) / float64(n)
}

// Accuracy predicts the launches on d and scores the predictions.
func Accuracy(d devices.Profile, launches []measure.Launch) (Score, error) {
	preds, err := predictAll(d, specsOf(launches))
	if err != nil {
		return Score{}, err
	}
	return score(launches, preds), nil
}

// score holds each prediction to its launch.
func score(launches []measure.Launch, preds []sectors.Launch) Score {
	var s Score
	for i, l := range launches {
		p := preds[i]
		for _, m := range []string{metrics.DRAMRead, metrics.DRAMWrite} {
			if v := l.Metrics[m]; v > 4e6 {
				s.DRAMOf++
				if math.Abs(p.Metrics[m]-v) <= 0.15*v {
					s.DRAMWithin++
				}
			}
		}
		if l.Timed() {
			s.TimeOf++
			if math.Abs(p.TimeSeconds-l.Seconds()) <= 0.25*l.Seconds() {
				s.TimeWithin++
			}
		}
	}
	return s
}

// accuracySample picks the launches a profile's accuracy is measured on
// in tests: every launch the model predicts quickly.
func accuracySample(ls []measure.Launch) []measure.Launch {
	var out []measure.Launch
	for _, l := range distinct(ls) {
		if l.Spec.Threads() <= 1<<23 {
			out = append(out, l)
		}
	}
	return out
}
