// Package figures defines, once, every figure the course derives from a
// launch: sectors per request, efficiency, DRAM bytes per useful byte,
// useful bandwidth, the fraction of cudaMemcpy it reaches, and the counts
// of Nsight Compute themselves. Each Figure has a name (what an exercise
// or `coalesce compare -json` calls it), a label (a table's header), a
// unit (how its values are written) and one way to compute it from
// Values, which the model's launch and a GPU's measurement both give:
//
//	v, err := figures.Efficiency.Of(figures.Model(p))       // the model's
//	v, err := figures.Efficiency.Of(figures.Measured(l, p)) // the GPU's
//
// so that a table, a chart, an exercise and the command line cannot
// disagree on what a figure means. A figure that the values cannot give
// (a time of an untimed launch, sectors per load request of a kernel that
// loads nothing) is an error wrapping ErrNoData that says what is missing.
package figures

import (
	"errors"
	"fmt"
	"slices"

	"github.com/coalescing-course/coalesce/lessons/devices"
	"github.com/coalescing-course/coalesce/lessons/measure"
	"github.com/coalescing-course/coalesce/lessons/metrics"
	"github.com/coalescing-course/coalesce/lessons/sectors"
	"github.com/coalescing-course/coalesce/lessons/spec"
	"github.com/coalescing-course/coalesce/units"
)

// Values is what a figure is computed from: one launch, and what is known
// of it.
type Values struct {
	Spec spec.Spec
	// Metrics are the launch's counts under ncu's names; nil when it was
	// not profiled.
	Metrics metrics.Set
	// Seconds is one launch's time; 0 when it was not timed.
	Seconds float64
	// CopyBandwidth is what a device-to-device cudaMemcpy moves a second,
	// bytes read plus written; 0 when not known.
	CopyBandwidth float64
	// L1UsefulBytes sums, over every memory instruction, the distinct
	// bytes its lanes access. The addresses fix it, so it comes from the
	// model even for a measured launch: no counter gives it. Negative
	// when not known.
	L1UsefulBytes int64
	// Counters says where a measured launch's Metrics come from when
	// Nsight Compute did not read them (measure.Launch.Counters): "model",
	// or a recording's label; "" for ncu's own, and for the model's values.
	Counters string
}

// Model returns the values the sector model predicts for a launch; the
// copy bandwidth is the device profile's.
func Model(p sectors.Launch) Values {
	v := Values{Spec: p.Spec, Metrics: p.Metrics, Seconds: p.TimeSeconds, L1UsefulBytes: p.L1UsefulBytes}
	if d, err := devices.Lookup(p.Spec.Device); err == nil {
		v.CopyBandwidth = d.Time.CopyBandwidth
	}
	return v
}

// Measured returns the values a GPU measured of a launch, with what the
// addresses fix taken from the model's launch p of the same spec; p
// may be nil, and the figures that need it (Efficiency,
// UsefulBytesPerRequest) then say so.
func Measured(l measure.Launch, p *sectors.Launch) Values {
	v := Values{Spec: l.Spec, Metrics: l.Metrics, Seconds: l.Seconds(), CopyBandwidth: l.MemcpyBandwidth(), L1UsefulBytes: -1, Counters: l.Counters}
	if p != nil {
		v.L1UsefulBytes = p.L1UsefulBytes
	}
	return v
}

// Level is what decides a figure: the addresses alone, what reaches DRAM,
// or the time.
type Level int

// The levels of a figure.
const (
	// L1 figures are fixed by the addresses: the model's are exact.
	L1 Level = iota + 1
	// DRAM figures depend on what the L2 keeps: the model estimates them.
	DRAM
	// Time figures depend on the clock: the model estimates them.
	Time
	// Shared figures are shared memory's requests and wavefronts: the
	// addresses fix them by the bank rule, which is the model's; how
	// closely ncu's counters follow it is measured, so the model's are
	// not held exact.
	Shared
)

// Figure is one figure of a launch.
type Figure struct {
	// Name is how exercises, `coalesce compare -json` and the JSON of the
	// grader call it: an ncu metric name, or a name such as
	// "ld_sectors_per_request".
	Name string
	// Label is a table's header for it: "ld sectors/request". A figure
	// of a prefixed unit (a time, a bandwidth) is headed with its column's
	// prefix too (units.Scaler.Header): "time (µs)".
	Label string
	// Unit is how its values are written (units).
	Unit units.Unit
	// Level says what decides it; Exact whether the model's value is
	// exact (L1 figures are).
	Level Level
	Exact bool
	// of computes it; it returns an error wrapping ErrNoData when the
	// values lack what it needs.
	of func(v Values) (float64, error)
}

// ErrNoData is values that lack what a figure needs; a *DataError wraps it.
var ErrNoData = errors.New("not known")

// DataError says which figure of which launch the values cannot give, and
// what they lack.
type DataError struct {
	Figure string
	Launch string // spec.Brief of the launch
	Lacks  string // "no time: the launch was not timed"
}

func (e *DataError) Error() string {
	return fmt.Sprintf("figures: %s of %s: %s", e.Figure, e.Launch, e.Lacks)
}

// Unwrap returns ErrNoData.
func (e *DataError) Unwrap() error { return ErrNoData }

// lacks is what a figure's computation returns when the values lack what
// it needs; Of names the figure and the launch.
type lacks string

func (l lacks) Error() string { return string(l) }

// Of computes the figure from v. Values that lack what it needs give a
// *DataError.
func (f Figure) Of(v Values) (float64, error) {
	x, err := f.of(v)
	if err != nil {
		return 0, &DataError{Figure: f.Name, Launch: v.Spec.Brief(), Lacks: err.Error()}
	}
	return x, nil
}

// Borrowed returns where f's value of v takes its counters from when they
// are not Nsight Compute's reading of the launch (v.Counters: "model", or
// a recording's label), so that wherever the value is shown it can say
// so; "" when they are ncu's, or when f needs no counter (a time).
func (f Figure) Borrowed(v Values) string {
	if v.Counters == "" {
		return ""
	}
	bare := v
	bare.Metrics = nil
	if _, err := f.of(bare); err == nil {
		return ""
	}
	return v.Counters
}

// Format writes a value of the figure in its unit: Format(0.125) of
// Efficiency is "12.5%", Format(197e-6) of TimeSeconds "197 µs".
func (f Figure) Format(v float64) string { return f.Unit.Format(v) }

func metric(v Values, name string) (float64, error) {
	x, ok := v.Metrics[name]
	if !ok {
		if v.Metrics == nil {
			return 0, lacks("no ncu counters: the launch was not profiled")
		}
		return 0, lacks("no " + name + " among the counters")
	}
	return x, nil
}

func sum(v Values, names ...string) (float64, error) {
	total := 0.0
	for _, n := range names {
		x, err := metric(v, n)
		if err != nil {
			return 0, err
		}
		total += x
	}
	return total, nil
}

func seconds(v Values) (float64, error) {
	if !(v.Seconds > 0) {
		return 0, lacks("no time: the launch was not timed")
	}
	return v.Seconds, nil
}

func l1Useful(v Values) (float64, error) {
	if v.L1UsefulBytes < 0 {
		return 0, lacks("no count of the bytes the lanes use: only the model gives it")
	}
	return float64(v.L1UsefulBytes), nil
}

func useful(v Values) (float64, error) {
	u := v.Spec.UsefulBytes()
	if u <= 0 {
		return 0, lacks("no useful bytes: " + string(v.Spec.Kernel) + " is not a kernel of the course")
	}
	return float64(u), nil
}

// perRequest is sectors over requests of one kind of access.
func perRequest(sectorsName, requestsName, what string) func(Values) (float64, error) {
	return func(v Values) (float64, error) {
		s, err := metric(v, sectorsName)
		if err != nil {
			return 0, err
		}
		r, err := metric(v, requestsName)
		if err != nil {
			return 0, err
		}
		if r == 0 {
			return 0, lacks(fmt.Sprintf("0/0: %s issues no %s", v.Spec.Kernel, what))
		}
		return s / r, nil
	}
}

// perUseful is the named metrics' sum over the useful bytes.
func perUseful(names ...string) func(Values) (float64, error) {
	return func(v Values) (float64, error) {
		x, err := sum(v, names...)
		if err != nil {
			return 0, err
		}
		u, err := useful(v)
		if err != nil {
			return 0, err
		}
		return x / u, nil
	}
}

// The figures of the course.
var (
	LdSectorsPerRequest = Figure{Name: "ld_sectors_per_request", Label: "ld sectors/request", Unit: units.Ratio, Level: L1, Exact: true,
		of: perRequest(metrics.LdSectors, metrics.LdRequests, "loads")}
	StSectorsPerRequest = Figure{Name: "st_sectors_per_request", Label: "st sectors/request", Unit: units.Ratio, Level: L1, Exact: true,
		of: perRequest(metrics.StSectors, metrics.StRequests, "stores")}
	// UsefulBytesPerRequest is the bytes one warp instruction uses, on
	// average over loads and stores: 128 for 32 lanes of 4 bytes.
	UsefulBytesPerRequest = Figure{Name: "useful_bytes_per_request", Label: "useful bytes/request", Unit: units.Ratio, Level: L1, Exact: true,
		of: func(v Values) (float64, error) {
			r, err := sum(v, metrics.LdRequests, metrics.StRequests)
			if err != nil {
				return 0, err
			}
			if r == 0 {
				return 0, lacks("0/0: no request")
			}
			u, err := l1Useful(v)
			return u / r, err
		}}
	// Efficiency is the bytes the lanes use over the bytes of the sectors
	// they touch, loads and stores together: the seed's efficiency.
	Efficiency = Figure{Name: "efficiency", Label: "efficiency (useful ÷ fetched)", Unit: units.Percent, Level: L1, Exact: true,
		of: func(v Values) (float64, error) {
			s, err := sum(v, metrics.LdSectors, metrics.StSectors)
			if err != nil {
				return 0, err
			}
			if s == 0 {
				return 0, lacks("0/0: no sector was touched")
			}
			u, err := l1Useful(v)
			return u / (sectors.SectorBytes * s), err
		}}
	// SectorBytesPerUsefulByte is the L1's traffic per useful byte: 32
	// bytes for every sector a request touches, over spec.UsefulBytes.
	SectorBytesPerUsefulByte = Figure{Name: "sector_bytes_per_useful_byte", Label: "L1 sector bytes per useful byte", Unit: units.Ratio, Level: L1, Exact: true,
		of: func(v Values) (float64, error) {
			x, err := perUseful(metrics.LdSectors, metrics.StSectors)(v)
			return sectors.SectorBytes * x, err
		}}
	// DRAMBytesPerUsefulByte is (DRAM read + write) / spec.UsefulBytes: the
	// hardware's answer to the seed's efficiency.
	DRAMBytesPerUsefulByte = Figure{Name: "dram_bytes_per_useful_byte", Label: "DRAM bytes per useful byte", Unit: units.Ratio, Level: DRAM,
		of: perUseful(metrics.DRAMRead, metrics.DRAMWrite)}
	DRAMReadPerUsefulByte = Figure{Name: "dram_read_bytes_per_useful_byte", Label: "DRAM read bytes per useful byte", Unit: units.Ratio, Level: DRAM,
		of: perUseful(metrics.DRAMRead)}
	DRAMWritePerUsefulByte = Figure{Name: "dram_write_bytes_per_useful_byte", Label: "DRAM write bytes per useful byte", Unit: units.Ratio, Level: DRAM,
		of: perUseful(metrics.DRAMWrite)}
	// ShLdWavefrontsPerRequest is the wavefronts of a shared load over its
	// requests: 1 without bank conflicts, 32 when every lane hits one bank.
	ShLdWavefrontsPerRequest = Figure{Name: "shared_ld_wavefronts_per_request", Label: "shared ld wavefronts/request", Unit: units.Ratio, Level: Shared,
		of: perRequest(metrics.ShLdWavefronts, metrics.ShLdRequests, "shared loads")}
	ShStWavefrontsPerRequest = Figure{Name: "shared_st_wavefronts_per_request", Label: "shared st wavefronts/request", Unit: units.Ratio, Level: Shared,
		of: perRequest(metrics.ShStWavefronts, metrics.ShStRequests, "shared stores")}
	// ShLdConflictsPerRequest is ncu's bank conflicts of shared loads over
	// their requests: by the model's rule, wavefronts per request less 1.
	ShLdConflictsPerRequest = Figure{Name: "shared_ld_bank_conflicts_per_request", Label: "shared ld bank conflicts/request", Unit: units.Ratio, Level: Shared,
		of: perRequest(metrics.ShLdBankConflicts, metrics.ShLdRequests, "shared loads")}
	ShStConflictsPerRequest = Figure{Name: "shared_st_bank_conflicts_per_request", Label: "shared st bank conflicts/request", Unit: units.Ratio, Level: Shared,
		of: perRequest(metrics.ShStBankConflicts, metrics.ShStRequests, "shared stores")}
	// TimeSeconds is one launch's time (measured: the median).
	TimeSeconds = Figure{Name: "time_seconds", Label: "time", Unit: units.Seconds, Level: Time, of: seconds}
	// UsefulBandwidth is spec.UsefulBytes per second of TimeSeconds.
	UsefulBandwidth = Figure{Name: "useful_bandwidth", Label: "useful bandwidth", Unit: units.Bandwidth, Level: Time,
		of: func(v Values) (float64, error) {
			t, err := seconds(v)
			if err != nil {
				return 0, err
			}
			u, err := useful(v)
			return u / t, err
		}}
	// FractionOfMemcpy is UsefulBandwidth over the copy bandwidth: a
	// cudaMemcpy in the same run, measured; the device profile's, modelled.
	FractionOfMemcpy = Figure{Name: "fraction_of_memcpy", Label: "of cudaMemcpy", Unit: units.Percent, Level: Time,
		of: func(v Values) (float64, error) {
			bw, err := UsefulBandwidth.of(v)
			if err != nil {
				return 0, err
			}
			if !(v.CopyBandwidth > 0) {
				return 0, lacks("no cudaMemcpy bandwidth")
			}
			return bw / v.CopyBandwidth, nil
		}}
	// TimePerUsefulMB is the time to move a million useful bytes, in
	// seconds: how launches of different sizes compare.
	TimePerUsefulMB = Figure{Name: "time_per_useful_mb", Label: "time per useful MB", Unit: units.Seconds, Level: Time,
		of: func(v Values) (float64, error) {
			bw, err := UsefulBandwidth.of(v)
			return 1e6 / bw, err
		}}
	// DRAMBandwidth is the bytes DRAM read and wrote per second.
	DRAMBandwidth = Figure{Name: "dram_bandwidth", Label: "DRAM bandwidth", Unit: units.Bandwidth, Level: Time,
		of: func(v Values) (float64, error) {
			x, err := sum(v, metrics.DRAMRead, metrics.DRAMWrite)
			if err != nil {
				return 0, err
			}
			t, err := seconds(v)
			return x / t, err
		}}
)

// metricLabels are the table headers of the metrics of lessons/metrics:
// short, in the course's words, so that a table of several counters fits
// a notebook (ncu's names run to 57 characters). Lesson 7 sets each beside
// ncu's name.
var metricLabels = map[string]string{
	metrics.LdRequests:        "ld requests",
	metrics.LdSectors:         "ld sectors",
	metrics.StRequests:        "st requests",
	metrics.StSectors:         "st sectors",
	metrics.DRAMRead:          "DRAM bytes read",
	metrics.DRAMWrite:         "DRAM bytes written",
	metrics.ShLdRequests:      "shared ld instructions",
	metrics.ShStRequests:      "shared st instructions",
	metrics.ShLdWavefronts:    "shared ld wavefronts",
	metrics.ShStWavefronts:    "shared st wavefronts",
	metrics.ShLdBankConflicts: "shared ld bank conflicts",
	metrics.ShStBankConflicts: "shared st bank conflicts",
	metrics.L2ReadSectors:     "L2 sectors read for loads",
	metrics.L2WriteSectors:    "L2 sectors written by stores",
}

// Metric returns the figure of one ncu metric: its count, exact when the
// metric is an L1 count, of level Shared when it counts shared memory.
// Its Name is ncu's; its Label is the course's short one (MetricLabel).
func Metric(name string) Figure {
	level := DRAM
	switch {
	case metrics.Exact(name):
		level = L1
	case metrics.IsShared(name):
		level = Shared
	}
	return Figure{Name: name, Label: MetricLabel(name), Unit: units.Count, Level: level, Exact: metrics.Exact(name),
		of: func(v Values) (float64, error) { return metric(v, name) }}
}

// MetricLabel returns the short table header of an ncu metric of
// lessons/metrics ("ld sectors" for
// l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum), and any other metric's
// own name.
func MetricLabel(name string) string {
	if l, ok := metricLabels[name]; ok {
		return l
	}
	return name
}

// derived lists the figures that are not plain metrics, in the order the
// course meets them.
var derived = []Figure{
	LdSectorsPerRequest, StSectorsPerRequest, UsefulBytesPerRequest, Efficiency,
	SectorBytesPerUsefulByte, DRAMBytesPerUsefulByte, DRAMReadPerUsefulByte, DRAMWritePerUsefulByte,
	TimeSeconds, UsefulBandwidth, FractionOfMemcpy, TimePerUsefulMB, DRAMBandwidth,
	ShLdWavefrontsPerRequest, ShStWavefrontsPerRequest, ShLdConflictsPerRequest, ShStConflictsPerRequest,
}

// All returns every figure: the metrics of lessons/metrics (Profiled),
// then the derived figures.
func All() []Figure {
	var out []Figure
	for _, m := range metrics.Profiled {
		out = append(out, Metric(m))
	}
	return append(out, derived...)
}

// Lookup returns the figure called name.
func Lookup(name string) (Figure, bool) {
	i := slices.IndexFunc(All(), func(f Figure) bool { return f.Name == name })
	if i < 0 {
		return Figure{}, false
	}
	return All()[i], true
}

// Names returns the names of every figure, in All's order.
func Names() []string {
	var out []string
	for _, f := range All() {
		out = append(out, f.Name)
	}
	return out
}

// Applies reports, with the reason when it does not, whether f can be
// computed for the launch s at all: sectors per load request of a kernel
// that loads nothing cannot, nor wavefronts per shared request of a
// kernel without shared memory. It looks at the first warp's
// instructions.
func (f Figure) Applies(s spec.Spec) error {
	var store, shared bool
	switch f.Name {
	case LdSectorsPerRequest.Name:
	case StSectorsPerRequest.Name:
		store = true
	case ShLdWavefrontsPerRequest.Name, ShLdConflictsPerRequest.Name:
		shared = true
	case ShStWavefrontsPerRequest.Name, ShStConflictsPerRequest.Name:
		store, shared = true, true
	default:
		return nil
	}
	// Whether a kernel loads or stores does not depend on where a gather's
	// indices point: index 0, valid for every n, stands in for them, and
	// spares generating (for a random pattern, shuffling) all n.
	var idx []int32
	if s.Kernel == spec.GatherCopy {
		idx = make([]int32, min(int64(sectors.WarpSize), s.N))
	}
	ins, err := sectors.WarpInstructions(s, idx, 0)
	if err != nil {
		return err
	}
	for _, in := range ins {
		if in.Store == store && in.Shared == shared {
			return nil
		}
	}
	what := "loads"
	if store {
		what = "stores"
	}
	if shared {
		what = "shared " + what
	}
	return fmt.Errorf("figures: %s issues no %s: %s would be 0/0", s.Kernel, what, f.Name)
}
