package grader

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/coalescing-course/coalesce/cuda"
	"github.com/coalescing-course/coalesce/lessons/metrics"
	"github.com/coalescing-course/coalesce/lessons/spec"
)

// Measured is one spec as a GPU ran it.
type Measured struct {
	// TimeSeconds is the launch's time (the median of timed launches);
	// 0 when it was not timed.
	TimeSeconds float64
	// MemcpyBandwidth is cudaMemcpy's device-to-device bandwidth in the same
	// run, bytes read plus written per second; 0 when not measured.
	MemcpyBandwidth float64
	// Metrics are Nsight Compute's counts; nil when it was not profiled.
	Metrics metrics.Set
}

// Measurements is where measured answers come from: a live GPU or a
// recorded reference.
type Measurements interface {
	// Lookup returns the measurement of s, or an error wrapping
	// ErrNotMeasured when there is none.
	Lookup(s spec.Spec) (Measured, error)
	// Label names the source for a verdict: "live GPU: NVIDIA H200" or
	// "recorded on NVIDIA H200, 2026-11-29".
	Label() string
}

// ErrNotMeasured is a spec the source has no measurement of.
var ErrNotMeasured = errors.New("not measured")

// Reference adapts a recorded reference of the cuda package.
func Reference(r *cuda.Reference) Measurements { return reference{r} }

type reference struct{ r *cuda.Reference }

var _ Measurements = reference{}

func (r reference) Label() string { return r.r.Label() }

func (r reference) Lookup(s spec.Spec) (Measured, error) {
	res, ok := r.r.Lookup(s)
	if !ok {
		return Measured{}, fmt.Errorf("%w: the reference (%s) has no record of %s", ErrNotMeasured, r.r.Label(), s)
	}
	return fromResult(res)
}

func fromResult(res cuda.Result) (Measured, error) {
	if res.Failed() {
		return Measured{}, fmt.Errorf("%w: the measurement of %s failed: %s", ErrNotMeasured, res.Spec, res.Error)
	}
	return Measured{
		TimeSeconds:     res.TimeMs / 1e3,
		MemcpyBandwidth: res.MemcpyGBps * 1e9,
		Metrics:         res.Metrics,
	}, nil
}

// Recorded returns the reference recorded on the course's H200 that is
// built into this binary (cuda.Recorded).
func Recorded() (Measurements, error) {
	ref, err := cuda.Recorded()
	if err != nil {
		return nil, err
	}
	return Reference(ref), nil
}

// ReadReference reads a reference file in the cuda package's format, for
// grading against a recording other than the built-in one.
func ReadReference(path string) (Measurements, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("grader: %w", err)
	}
	defer f.Close()
	return readReference(f)
}

func readReference(r io.Reader) (Measurements, error) {
	ref, err := cuda.ReadReference(r)
	if err != nil {
		return nil, err
	}
	return Reference(ref), nil
}

// LiveTimeout bounds the measurement of one spec on a live GPU, profiling
// included.
const LiveTimeout = 5 * time.Minute

// Live opens this machine's GPU through the cuda package (building its
// harness, or finding it in the cache) and measures specs as they are
// looked up: timed, and profiled with ncu when ncu is on the PATH. Each
// spec is measured once. Without nvcc, a driver or a GPU it returns the
// cuda package's *cuda.MissingError.
func Live(ctx context.Context) (Measurements, error) {
	g, err := cuda.Open(ctx, cuda.Builder{})
	if err != nil {
		return nil, err
	}
	l := &live{gpu: g, cache: map[string]liveResult{}}
	if ncu, err := cuda.FindNcu(); err == nil {
		l.ncu = &cuda.ProfileOptions{Ncu: ncu}
	}
	return l, nil
}

type live struct {
	gpu   *cuda.GPU
	ncu   *cuda.ProfileOptions
	mu    sync.Mutex
	cache map[string]liveResult
}

type liveResult struct {
	m   Measured
	err error
}

func (l *live) Label() string { return "live GPU: " + l.gpu.Info.GPU }

func (l *live) Lookup(s spec.Spec) (Measured, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	key := cuda.SpecKey(s)
	if r, ok := l.cache[key]; ok {
		return r.m, r.err
	}
	ctx, cancel := context.WithTimeout(context.Background(), LiveTimeout)
	defer cancel()
	var r liveResult
	res, err := l.gpu.Measure(ctx, []spec.Spec{s}, l.ncu)
	switch {
	case err != nil:
		r.err = fmt.Errorf("%w: measuring %s on %s: %v", ErrNotMeasured, s, l.gpu.Info.GPU, err)
	case len(res) != 1:
		r.err = fmt.Errorf("%w: measuring %s: %d results for one spec", ErrNotMeasured, s, len(res))
	default:
		r.m, r.err = fromResult(res[0])
	}
	l.cache[key] = r
	return r.m, r.err
}

// Fixed is a Measurements held in memory: measurements keyed by spec, under
// a label. Tests and examples use it; so can a notebook that wants to show
// what a different GPU would say.
type Fixed struct {
	Name string
	By   map[string]Measured // keyed by Spec.String()
}

var _ Measurements = (*Fixed)(nil)

// Add records the measurement of s.
func (f *Fixed) Add(s spec.Spec, m Measured) {
	if f.By == nil {
		f.By = map[string]Measured{}
	}
	f.By[s.String()] = m
}

// Label returns f.Name.
func (f *Fixed) Label() string { return f.Name }

// Lookup returns the measurement of s added with Add.
func (f *Fixed) Lookup(s spec.Spec) (Measured, error) {
	m, ok := f.By[s.String()]
	if !ok {
		return Measured{}, fmt.Errorf("%w: %s has no measurement of %s", ErrNotMeasured, f.Name, s)
	}
	return m, nil
}
