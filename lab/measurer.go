package lab

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/coalescing-course/coalesce/calibrate"
	"github.com/coalescing-course/coalesce/cuda"
	"github.com/coalescing-course/coalesce/cuda/reference"
	"github.com/coalescing-course/coalesce/grader"
	"github.com/coalescing-course/coalesce/lessons/devices"
	"github.com/coalescing-course/coalesce/lessons/figures"
	"github.com/coalescing-course/coalesce/lessons/measure"
	"github.com/coalescing-course/coalesce/lessons/metrics"
	"github.com/coalescing-course/coalesce/lessons/spec"
)

// Timeout bounds one live measurement: building the harness the first
// time, timing the launches and profiling them.
var Timeout = 10 * time.Minute

// onDemand is a value made by open on first use, once per program, which
// tests can replace (set) or send back to open (reset).
type onDemand[T any] struct {
	mu   sync.Mutex
	open func() (T, error)
	get  func() (T, error)
}

func newOnDemand[T any](open func() (T, error)) *onDemand[T] {
	return &onDemand[T]{open: open, get: sync.OnceValues(open)}
}

func (o *onDemand[T]) value() (T, error) {
	o.mu.Lock()
	get := o.get
	o.mu.Unlock()
	return get()
}

func (o *onDemand[T]) set(v T, err error) {
	o.mu.Lock()
	o.get = func() (T, error) { return v, err }
	o.mu.Unlock()
}

func (o *onDemand[T]) reset() {
	o.mu.Lock()
	o.get = sync.OnceValues(o.open)
	o.mu.Unlock()
}

// theMeasurer is the notebook's measurement source, opened from
// COALESCE_MEASURE, writing down what it is asked under SpecLogEnv; the
// profile the model uses is chosen for it as it opens (chooseDevice).
var theMeasurer = newOnDemand(func() (measure.Measurer, error) {
	src, err := openMeasurer()
	chooseDevice(src)
	return src, err
})

func openMeasurer() (measure.Measurer, error) {
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	// The first build of the harness takes nvcc some ten seconds.
	line := statusLine()
	defer line.Close()
	src, err := cuda.OpenMeasurer(ctx, os.Getenv(cuda.ModeEnv), cuda.Builder{Log: line})
	if err != nil {
		return nil, fmt.Errorf("lab: %w", err)
	}
	return logSpecs(src, os.Getenv(SpecLogEnv)), nil
}

// measurer returns the notebook's measurement measurer.
func measurer() (measure.Measurer, error) { return theMeasurer.value() }

// useMeasurer makes src (or err) the notebook's source, and chooses the
// model's profile for it; tests use it. It resets the notebook's grader,
// whose measured answers come from it.
func useMeasurer(src measure.Measurer, err error) {
	theMeasurer.set(src, err)
	chooseDevice(src)
	theGrader.reset()
}

// resetMeasurer makes the notebook open its source, and its grader, again
// on first use, and the model describe the course's H200 until then.
func resetMeasurer() {
	theMeasurer.reset()
	theGrader.reset()
	useCourse(devices.CourseWhy)
}

// chooseDevice makes the model describe the GPU that measures
// (calibrate.AdoptGPU): for a live GPU, this GPU's calibration from
// coalesce calibrate's cache, else the shipped profile its driver's name
// matches, else the H200's, with why, so that a spec without "device"
// predicts what this GPU measures; for the recording, or nothing, the
// course's H200, the GPU the recording was measured on. Status prints the
// choice.
func chooseDevice(src measure.Measurer) {
	if _, _, err := calibrate.AdoptGPU(gpuOf(src)); err != nil {
		useCourse(fmt.Sprintf("the course's H200: %v", err))
	}
}

// gpuOf returns the live GPU that src measures on, nil for another source.
func gpuOf(src measure.Measurer) *cuda.GPU {
	if l, ok := src.(*specLog); ok {
		src = l.Measurer
	}
	g, _ := src.(*cuda.GPU)
	return g
}

// isStrict reports whether src is a strict live GPU (cuda.StrictMode),
// seen through the spec log.
func isStrict(src measure.Measurer) bool {
	g := gpuOf(src)
	return g != nil && g.Strict
}

// useCourse makes the course's H200 the model's profile, for why.
func useCourse(why string) {
	if err := devices.Use(devices.Course, why); err != nil {
		// Only a broken profiles.json gets here; Status reports it.
		fmt.Fprintf(stderr(), "lab: %v\n", err)
	}
}

// Measurements are launches measured live or looked up in the recording,
// with where they come from: a measure.Set, which the charts of
// lessons/plots draw (plots.BandwidthVsStride(preds, m.Set)).
type Measurements struct {
	*measure.Set
}

// Measure times the launches on this machine's GPU, profiling them with
// ncu when it is installed; without a GPU it returns their records from
// the recording made on the course's H200. A launch that fails, or that
// is in neither place, is an error that lists it.
func Measure(specs ...spec.Spec) (*Measurements, error) {
	src, err := measurer()
	if err != nil {
		return nil, err
	}
	return measureOn(src, specs, measure.Times|measure.Counters)
}

// Profile reads the launches' ncu counters (lessons/metrics): live under
// ncu on this machine's GPU, else from the recording, whose counters ncu
// read on the H200. A GPU machine without ncu falls back on the recording
// too, and the caption says so; under COALESCE_MEASURE=strict it fails.
func Profile(specs ...spec.Spec) (*Measurements, error) {
	src, err := measurer()
	if err != nil {
		return nil, err
	}
	m, err := measureOn(src, specs, measure.Counters)
	if errors.Is(err, measure.ErrNoCounters) && !errors.Is(err, cuda.ErrStandIn) {
		rec, recErr := reference.Measurer("no ncu on this machine, so its counters come from the recording")
		if recErr != nil {
			return nil, fmt.Errorf("%w, and %v", err, recErr)
		}
		return measureOn(rec, specs, measure.Counters)
	}
	return m, err
}

// counterProber is a source that can tell before measuring whether Nsight
// Compute may read its counters: a live cuda.GPU (ProbeCounters).
type counterProber interface {
	ProbeCounters(ctx context.Context) error
}

// deniedNotice says, once per program, that the GPU refuses ncu its
// counters and what lets it count: Status says it at the top of a lesson,
// the first cell whose measurement borrows counters says it once more,
// and no later cell repeats it.
var deniedNotice struct {
	mu   sync.Mutex
	said bool
}

// noticeDenied prints why, the *toolkit.CountersDeniedError, for a cell, the
// first time a cell meets it.
func noticeDenied(why error) {
	deniedNotice.mu.Lock()
	defer deniedNotice.mu.Unlock()
	if deniedNotice.said {
		return
	}
	deniedNotice.said = true
	printf("Counters: %v\nUntil then the times are live, and counters marked (recorded) are the course's recording of the same launch on this GPU, those marked (model) the sector model's, which no exercise grades as a measurement.\n", why)
}

func measureOn(src measure.Measurer, specs []spec.Spec, want measure.Want) (*Measurements, error) {
	if len(specs) == 0 {
		return nil, errors.New("lab: no launch to measure")
	}
	for i, s := range specs {
		if err := s.Validate(); err != nil {
			return nil, fmt.Errorf("lab: launch %d: %w", i+1, err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	if g := gpuOf(src); g != nil {
		// A sweep with ncu takes a while: say how far it got.
		line := statusLine()
		g.Progress = line
		defer func() {
			g.Progress = nil
			line.Close()
		}()
	}
	set, err := src.Measure(ctx, specs, want)
	if err != nil {
		return nil, fmt.Errorf("lab: measuring on %s: %w", src.Origin(), err)
	}
	if err := set.Err(); err != nil {
		return nil, fmt.Errorf("lab: %w", err)
	}
	if set.CountersErr != nil {
		noticeDenied(set.CountersErr)
	}
	return &Measurements{Set: set}, nil
}

// Caption says where the measurements come from, for a table or a chart:
// "Measured: recorded on NVIDIA H200, 2026-11-29 (no GPU here: ...)."
func (m *Measurements) Caption() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Measured: %s.", m.Origin.Caption())
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
	cols := []Column{TimeMicroseconds, UsefulGBps, OfMemcpy, LdSectorsPerRequest, StSectorsPerRequest, DRAMPerUseful}
	header := []string{"launch"}
	columns := make([][]Value, len(cols))
	for j, c := range cols {
		cells := make([]cell, len(m.Launches))
		for i, l := range m.Launches {
			cells[i] = c.measuredCell(l)
		}
		s, ok := c.scaler(cells)
		header = append(header, c.header(s, ok))
		columns[j] = write(s, ok, cells)
	}
	t := NewTable(header...)
	t.Caption = m.Caption()
	for i, l := range m.Launches {
		var row []Value
		for j := range cols {
			row = append(row, columns[j][i])
		}
		t.addRow(l.Spec.Brief(), row)
	}
	if cmd := m.Profiling(); cmd != "" && anyProfiled(m.Launches) {
		t.Notes = append(t.Notes, "Counters: "+cmd)
	}
	return t
}

func anyProfiled(ls []measure.Launch) bool {
	for _, l := range ls {
		if l.Profiled() {
			return true
		}
	}
	return false
}

// Show displays Table.
func (m *Measurements) Show() { m.Table().Show() }

// Counters returns the ncu counters of the measurements, one row per
// launch and one column per metric of lessons/metrics, as ncu reports
// them; the headers are the metrics' short labels (figures.MetricLabel).
func (m *Measurements) Counters() *Table {
	header := []string{"launch"}
	for _, name := range metrics.All {
		header = append(header, figures.MetricLabel(name))
	}
	t := NewTable(header...)
	t.Caption = m.Caption()
	for _, l := range m.Launches {
		var row []Value
		lv := figures.Measured(l, nil)
		for _, name := range metrics.All {
			if v, ok := l.Metrics[name]; ok {
				row = append(row, Value{Text: Count(v) + borrowedMark(l.Counters, nil), Tells: figureTells(figures.Metric(name), lv, grader.Measurement, v, nil)})
			} else {
				row = append(row, Value{Text: Missing})
			}
		}
		t.addRow(l.Spec.Brief(), row)
	}
	if cmd := m.Profiling(); cmd != "" {
		t.Notes = append(t.Notes, "Counters: "+cmd)
	}
	return t
}
