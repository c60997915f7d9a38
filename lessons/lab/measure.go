package lab

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/coalescing-course/coalesce/cuda"
	"github.com/coalescing-course/coalesce/grader"
	"github.com/coalescing-course/coalesce/internal/words"
	"github.com/coalescing-course/coalesce/lessons/metrics"
	"github.com/coalescing-course/coalesce/lessons/plots"
	"github.com/coalescing-course/coalesce/lessons/spec"
)

// Source is where a notebook's measurements come from: this machine's GPU,
// or the reference recorded on the course's H200.
type Source struct {
	// Label names the source wherever a measured figure is shown:
	// "live: NVIDIA H200, 2026-12-01 14:03 UTC" or "recorded on NVIDIA
	// H200, 2026-11-29".
	Label string
	// Live is true when the kernels run on this machine's GPU.
	Live bool
	// Why says why the source is the recorded reference: what this
	// machine lacks, or that COALESCE_MEASURE asked for it. Empty when Live.
	Why string
	// GPU is this machine's GPU when Live; Ref the recorded reference
	// (always loaded, so that a live source can say what the H200 did).
	GPU *cuda.GPU
	Ref *cuda.Reference
}

// ErrNoSource is a notebook that can measure nothing: COALESCE_MEASURE
// is "none", or it is "live" on a machine without a GPU, or the recorded
// reference is missing from the build.
var ErrNoSource = errors.New("lab: no measurement source")

// ErrNotRecorded is a launch that this machine cannot measure and the
// recorded reference does not hold; a *NotRecordedError wraps it.
var ErrNotRecorded = errors.New("not in the recorded reference")

// NotRecordedError lists the launches a recorded source has no
// measurement of, and says why nothing measures them live.
type NotRecordedError struct {
	Specs []spec.Spec // the launches missing, in the order asked
	Label string      // the reference's label
	Why   string      // why this machine does not measure them
	// Near lists, per kernel of the missing launches, launches the
	// reference does hold, to pick from instead.
	Near map[spec.Kernel][]spec.Spec
}

func (e *NotRecordedError) Error() string {
	var b strings.Builder
	verb := "is"
	if len(e.Specs) > 1 {
		verb = "are"
	}
	fmt.Fprintf(&b, "lab: %s %s %s (%s)", words.Plural(len(e.Specs), "launch"), verb, ErrNotRecorded, e.Label)
	if e.Why != "" {
		fmt.Fprintf(&b, ", and this machine does not measure live (%s)", e.Why)
	}
	b.WriteString(":")
	for _, s := range e.Specs {
		fmt.Fprintf(&b, "\n  %s", s)
	}
	kernels := make([]spec.Kernel, 0, len(e.Near))
	for k := range e.Near {
		kernels = append(kernels, k)
	}
	slices.Sort(kernels)
	for _, k := range kernels {
		near := e.Near[k]
		fmt.Fprintf(&b, "\nThe reference holds %s of %s, for example:", words.Plural(len(near), "launch"), k)
		for _, s := range near[:min(len(near), 4)] {
			fmt.Fprintf(&b, "\n  %s", s)
		}
	}
	b.WriteString("\nPick launches the reference holds (cuda/reference/sweep.jsonl lists them), or run this cell on a machine with an NVIDIA GPU and the CUDA toolkit.")
	return b.String()
}

// Unwrap returns ErrNotRecorded.
func (e *NotRecordedError) Unwrap() error { return ErrNotRecorded }

// MeasureEnv is the environment variable that picks the source; it is the
// grader's, so that a notebook's tables and its verdicts agree.
const MeasureEnv = grader.MeasureEnv

// Timeout bounds one live measurement: building the harness the first
// time, timing the launches and profiling them.
var Timeout = 10 * time.Minute

// These are replaced by tests.
var (
	openGPU     = func(ctx context.Context) (*cuda.GPU, error) { return cuda.Open(ctx, cuda.Builder{}) }
	findNcu     = cuda.FindNcu
	recordedRef = cuda.Recorded
	now         = time.Now
)

var (
	sourceOnce sync.Once
	theSource  *Source
	sourceErr  error
)

// source returns the notebook's source, opened once per program.
func source() (*Source, error) {
	sourceOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), Timeout)
		defer cancel()
		theSource, sourceErr = OpenSource(ctx, os.Getenv(MeasureEnv))
	})
	return theSource, sourceErr
}

// useSource makes src (or err) the notebook's source, as if opened; tests use it.
func useSource(src *Source, err error) {
	sourceOnce.Do(func() {})
	theSource, sourceErr = src, err
}

// OpenSource opens the source mode names: "live" (this machine's GPU, or
// an error), "recorded" (the reference), "none" (an error wrapping
// ErrNoSource), or "" / "auto": live when this machine can measure, else
// recorded, with Why saying what it lacks.
func OpenSource(ctx context.Context, mode string) (*Source, error) {
	ref, refErr := recordedRef()
	recorded := func(why string) (*Source, error) {
		if refErr != nil {
			return nil, fmt.Errorf("%w: %s, and %v", ErrNoSource, why, refErr)
		}
		return &Source{Label: ref.Label(), Why: why, Ref: ref}, nil
	}
	switch m := strings.ToLower(strings.TrimSpace(mode)); m {
	case "recorded":
		return recorded(MeasureEnv + "=recorded")
	case "none":
		return nil, fmt.Errorf("%w: %s=none", ErrNoSource, MeasureEnv)
	case "live", "", "auto":
		gpu, err := openGPU(ctx)
		if err == nil {
			return &Source{
				Label: fmt.Sprintf("live: %s, %s", gpu.Info.GPU, now().UTC().Format("2006-01-02 15:04 UTC")),
				Live:  true, GPU: gpu, Ref: ref,
			}, nil
		}
		if m == "live" {
			return nil, fmt.Errorf("%w: %s=live, but %v", ErrNoSource, MeasureEnv, err)
		}
		var missing *cuda.MissingError
		if errors.As(err, &missing) {
			return recorded("no GPU here: " + missing.Detail)
		}
		return recorded(fmt.Sprintf("the GPU could not be used: %v", err))
	default:
		return nil, fmt.Errorf("%w: %s=%q: want live, recorded, auto or none", ErrNoSource, MeasureEnv, mode)
	}
}

// Measurements are launches measured live or looked up in the reference.
type Measurements struct {
	// Source labels where they come from (Source.Label); Live and Why
	// are the source's.
	Source string
	Live   bool
	Why    string
	// Results holds one result per launch asked for, in that order.
	Results []cuda.Result
	// Command is the command that made the ncu counters, when a profile
	// made them: the ncu command line, the harness's path shortened.
	Command string
	// Note says what the measurements lack, for example the counters of
	// a live run on a machine without ncu.
	Note string
}

// Measure times the launches on this machine's GPU, profiling them with
// ncu when it is installed; without a GPU it returns their records from
// the reference recorded on the course's H200. A launch that fails, or
// that is in neither place, is an error.
func Measure(specs ...spec.Spec) (*Measurements, error) {
	src, err := source()
	if err != nil {
		return nil, err
	}
	return src.measure(specs, false)
}

// Profile reads the launches' ncu counters (lessons/metrics): live under
// ncu on this machine's GPU, else from the recorded reference, whose
// counters ncu read on the H200. A GPU machine without ncu falls back on
// the reference too, and Why says so. The results carry Metrics and no
// times when live.
func Profile(specs ...spec.Spec) (*Measurements, error) {
	src, err := source()
	if err != nil {
		return nil, err
	}
	return src.measure(specs, true)
}

// Measure is the package's Measure on this source.
func (src *Source) Measure(specs ...spec.Spec) (*Measurements, error) {
	return src.measure(specs, false)
}

// Profile is the package's Profile on this source.
func (src *Source) Profile(specs ...spec.Spec) (*Measurements, error) {
	return src.measure(specs, true)
}

func (src *Source) measure(specs []spec.Spec, profile bool) (*Measurements, error) {
	if len(specs) == 0 {
		return nil, errors.New("lab: no launch to measure")
	}
	for i, s := range specs {
		if err := s.Validate(); err != nil {
			return nil, fmt.Errorf("lab: launch %d: %w", i+1, err)
		}
	}
	if src.Live {
		ncu, ncuErr := findNcu()
		if profile && ncuErr != nil {
			if src.Ref == nil {
				return nil, fmt.Errorf("%w: no ncu on this machine (%v) and no recorded reference", ErrNoSource, ncuErr)
			}
			rec := &Source{Label: src.Ref.Label(), Why: "no ncu on this machine, so its counters come from the reference", Ref: src.Ref}
			return rec.recorded(specs, true)
		}
		return src.live(specs, profile, ncu, ncuErr)
	}
	return src.recorded(specs, profile)
}

func (src *Source) live(specs []spec.Spec, profile bool, ncu cuda.Ncu, ncuErr error) (*Measurements, error) {
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	m := &Measurements{Source: src.Label, Live: true}
	var (
		res []cuda.Result
		err error
	)
	opt := &cuda.ProfileOptions{Ncu: ncu}
	if ncuErr == nil {
		m.Command = "ncu " + strings.Join(cuda.ProfileArgs("harness", []string{"--profile"}), " ")
	}
	switch {
	case profile:
		res, err = src.GPU.Profile(ctx, specs, *opt)
	case ncuErr == nil:
		res, err = src.GPU.Measure(ctx, specs, opt)
	default:
		m.Note = "no ncu on this machine: times only, no counters (" + ncuErr.Error() + ")"
		res, err = src.GPU.Run(ctx, specs)
	}
	if err != nil {
		return nil, fmt.Errorf("lab: measuring on %s: %w", src.GPU.Info.GPU, err)
	}
	var bad []string
	for _, r := range res {
		if r.Failed() {
			bad = append(bad, fmt.Sprintf("\n  %s: %s", r.Spec, r.Error))
		}
	}
	if len(bad) > 0 {
		return nil, fmt.Errorf("lab: %s failed on %s:%s", words.Plural(len(bad), "launch"), src.GPU.Info.GPU, strings.Join(bad, ""))
	}
	m.Results = res
	return m, nil
}

func (src *Source) recorded(specs []spec.Spec, profile bool) (*Measurements, error) {
	ref := src.Ref
	if ref == nil {
		return nil, fmt.Errorf("%w: no recorded reference", ErrNoSource)
	}
	m := &Measurements{Source: ref.Label(), Why: src.Why, Command: ref.Provenance.Profiling}
	var missing []spec.Spec
	for _, s := range specs {
		r, ok := ref.Lookup(s)
		if !ok || r.Failed() {
			missing = append(missing, s)
			continue
		}
		if profile && r.Metrics == nil {
			missing = append(missing, s)
			continue
		}
		m.Results = append(m.Results, r)
	}
	if len(missing) > 0 {
		return nil, &NotRecordedError{Specs: missing, Label: ref.Label(), Why: src.Why, Near: near(ref, missing)}
	}
	return m, nil
}

// near returns, per kernel of missing, the reference's launches of it.
func near(ref *cuda.Reference, missing []spec.Spec) map[spec.Kernel][]spec.Spec {
	out := map[spec.Kernel][]spec.Spec{}
	for _, s := range missing {
		if _, done := out[s.Kernel]; done {
			continue
		}
		out[s.Kernel] = nil
		for _, r := range ref.Records {
			if r.Spec.Kernel == s.Kernel && !r.Failed() {
				out[s.Kernel] = append(out[s.Kernel], r.Spec)
			}
		}
	}
	return out
}

// Result returns the measurement of s.
func (m *Measurements) Result(s spec.Spec) (cuda.Result, bool) {
	key := cuda.SpecKey(s)
	for _, r := range m.Results {
		if cuda.SpecKey(r.Spec) == key {
			return r, true
		}
	}
	return cuda.Result{}, false
}

// Plots returns the measurements as the plots package draws them, with
// their label as the charts' source.
func (m *Measurements) Plots() (plots.Measurements, error) {
	pts := make([]plots.Measured, len(m.Results))
	for i, r := range m.Results {
		pts[i] = plots.Measured{Spec: r.Spec, Seconds: r.TimeMs / 1e3, Metrics: r.Metrics}
	}
	pm, err := plots.NewMeasurements(m.Source, pts)
	if err != nil {
		return plots.Measurements{}, fmt.Errorf("lab: %w", err)
	}
	return pm, nil
}

// Caption says where the measurements come from, for a table or a chart.
func (m *Measurements) Caption() string {
	var b bytes.Buffer
	fmt.Fprintf(&b, "Measured: %s", m.Source)
	if m.Why != "" {
		fmt.Fprintf(&b, " (%s)", m.Why)
	}
	b.WriteString(".")
	if m.Note != "" {
		fmt.Fprintf(&b, " %s.", m.Note)
	}
	return b.String()
}

// Table returns the measurements as a table: per launch, its time, its
// useful bandwidth and its share of cudaMemcpy's when timed, and the ncu
// counters' sectors per request and DRAM bytes per useful byte when
// profiled.
func (m *Measurements) Table() *Table {
	t := NewTable("launch", "time (µs)", "useful GB/s", "of cudaMemcpy", "ld sectors/request", "st sectors/request", "DRAM bytes per useful byte")
	t.Caption = m.Caption()
	for _, r := range m.Results {
		row := []string{r.Spec.Brief()}
		if r.TimeMs > 0 {
			row = append(row, fixed(r.TimeMs*1e3, 1), fixed(r.UsefulGBps, 0), Percent(r.OfMemcpy))
		} else {
			row = append(row, Missing, Missing, Missing)
		}
		for _, c := range []Column{LdSectorsPerRequest, StSectorsPerRequest, DRAMPerUseful} {
			if v, ok := c.Measured(r); ok {
				row = append(row, c.Format(v))
			} else {
				row = append(row, Missing)
			}
		}
		t.addRow(row)
	}
	if m.Command != "" && anyProfiled(m.Results) {
		t.Notes = append(t.Notes, "Counters: "+m.Command)
	}
	return t
}

func anyProfiled(rs []cuda.Result) bool {
	for _, r := range rs {
		if r.Metrics != nil {
			return true
		}
	}
	return false
}

// Show displays Table.
func (m *Measurements) Show() { m.Table().Show() }

// Counters returns the ncu counters of the measurements, one row per
// launch and one column per metric of lessons/metrics, as ncu reports them.
func (m *Measurements) Counters() *Table {
	header := append([]string{"launch"}, metrics.All...)
	t := NewTable(header...)
	t.Caption = m.Caption()
	for _, r := range m.Results {
		row := []string{r.Spec.Brief()}
		for _, name := range metrics.All {
			if v, ok := r.Metrics[name]; ok {
				row = append(row, Count(v))
			} else {
				row = append(row, Missing)
			}
		}
		t.addRow(row)
	}
	if m.Command != "" {
		t.Notes = append(t.Notes, "Counters: "+m.Command)
	}
	return t
}
