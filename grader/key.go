package grader

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/coalescing-course/coalesce/lessons/devices"
	"github.com/coalescing-course/coalesce/lessons/figures"
	"github.com/coalescing-course/coalesce/lessons/measure"
	"github.com/coalescing-course/coalesce/lessons/sectors"
	"github.com/coalescing-course/coalesce/lessons/spec"
	"github.com/coalescing-course/coalesce/units"
)

// Key is the answer key of one question, computed at grading time: the
// model's answer, the measured one when a measurement is at hand, and the
// explanation every verdict on the question shows.
type Key struct {
	Question *Question
	// Model is the sector model's answer.
	Model float64
	// Measured is the answer from the measurement; valid when HasMeasured.
	Measured    float64
	HasMeasured bool
	// Origin labels the measurement source ("recorded on NVIDIA H200,
	// 2026-11-29"); "" when there is none.
	Origin string
	// NoMeasurement says why there is no measured answer, when there is none.
	NoMeasurement string
	// Parts are the quantity of each spec, before a ratio combines them.
	Parts []Part
	// Explanation is the case's explanation: one warp's addresses and
	// sectors, the arithmetic, and why model and measurement differ.
	Explanation []Section
	// Reason is the one sentence a verdict gives for the answer: "warp 0's
	// load touches 32 sectors for its 128 bytes".
	Reason string
	// numbers are the explanation's numbers, written one way each: an
	// answer a verdict states is written as its explanation writes it.
	numbers *units.System
}

// Part is the quantity of one spec of a question.
type Part struct {
	Spec        spec.Spec
	Modelled    sectors.Launch
	Model       float64
	Measured    float64
	HasMeasured bool
	// Launch is the spec's measurement, when HasMeasured.
	Launch measure.Launch

	idx    []int32 // a gather's first indices, for the explanation
	idxErr error
}

// Graded reports whether the key can grade a prediction: always for an
// question graded by the model; for one graded by the measurement, only
// when there is a measured answer. An ungraded verdict still shows the
// model's answer, for information, and earns no points of none.
func (k *Key) Graded() bool {
	return k.Question.GradedBy == Model || k.HasMeasured
}

// Answer returns the answer the points are judged against, with its
// relative tolerance; ok is false when the key cannot grade (see Graded).
func (k *Key) Answer() (value, tol float64, ok bool) {
	if k.Question.GradedBy == Measurement {
		return k.Measured, k.Question.Tolerance.Measured, k.HasMeasured
	}
	return k.Model, k.Question.Tolerance.Model, true
}

// MeasureTimeout bounds the measurement of one question's launches on a
// live GPU, profiling included.
const MeasureTimeout = 5 * time.Minute

// modelled is the model's account of one of a question's specs, with a
// gather's first indices for the explanation.
type modelled struct {
	p      sectors.Launch
	err    error
	idx    []int32
	idxErr error
}

// models holds the model's account of every spec a key of this process
// has asked for (func() modelled, run once), by the spec and the profile
// it ran on: the model is a pure function of the two, and a class graded
// by two graders (the notebook's and the gradebook's, the recording's and
// the GPU's) asks for each question's launches again. The profile is part
// of the key because a calibration registered again under its name
// (devices.Register) changes what the spec's device means. The bank
// bounds it. A Launch in it is shared by every key of its spec and is not
// to be changed.
var models sync.Map

// modelKey is models' key: the spec, and the profile its device names, as
// JSON.
type modelKey struct {
	spec    spec.Spec
	profile string
}

// modelOf returns the model's account of s, modelled once a process for
// each profile its device names. A gather draws its indices into *all,
// which it may grow, so that a batch of gathers shares one array.
func modelOf(s spec.Spec, all *[]int32) modelled {
	d, err := devices.Lookup(s.Device)
	if err != nil {
		return modelled{err: fmt.Errorf("sectors: %w", err)}
	}
	profile, err := json.Marshal(d)
	if err != nil {
		return modelled{err: fmt.Errorf("grader: the profile %s: %w", d.Name, err)}
	}
	f, _ := models.LoadOrStore(modelKey{s, string(profile)}, sync.OnceValue(func() modelled {
		if s.Kernel != spec.GatherCopy {
			p, err := sectors.ModelOn(s, d)
			return modelled{p: p, err: err}
		}
		var buf []int32
		if all != nil {
			buf = *all
		}
		idx, err := s.IndicesInto(buf)
		if all != nil {
			*all = idx
		}
		if err != nil {
			return modelled{err: fmt.Errorf("sectors: %w", err), idxErr: err}
		}
		p, err := sectors.ModelIndices(s, idx)
		return modelled{p: p, err: err, idx: slices.Clone(idx[:min(sectors.WarpSize, len(idx))])}
	}))
	return f.(func() modelled)()
}

// computeKey works out e's answers with the model and, when src is not
// nil, the measurement.
func computeKey(e *Question, src measure.Measurer, noMeas string) (*Key, error) {
	fig := e.figure()
	k := &Key{Question: e, NoMeasurement: noMeas}
	if src != nil {
		k.Origin = src.Origin().String()
	}
	// The specs' predictions run at once, but a gather's one at a time,
	// drawing its indices once for the model and the explanation's warp 0:
	// it holds all n of them while it runs (128 MiB at n = 2^25), and a
	// batch of keys must stay within a few hundred megabytes (gradebook's
	// BenchmarkGradeMemory85).
	preds := make([]sectors.Launch, len(e.Specs))
	errs := make([]error, len(e.Specs))
	idx := make([][]int32, len(e.Specs))
	idxErrs := make([]error, len(e.Specs))
	var wg sync.WaitGroup
	for i, s := range e.Specs {
		if s.Kernel == spec.GatherCopy {
			continue
		}
		wg.Go(func() { m := modelOf(s, nil); preds[i], errs[i] = m.p, m.err })
	}
	var all []int32 // one array for all of them, refilled
	for i, s := range e.Specs {
		if s.Kernel == spec.GatherCopy {
			m := modelOf(s, &all)
			preds[i], errs[i], idx[i], idxErrs[i] = m.p, m.err, m.idx, m.idxErr
		}
	}
	wg.Wait()
	var launches []measure.Launch
	var countersErr error
	if src != nil {
		ctx, cancel := context.WithTimeout(context.Background(), MeasureTimeout)
		set, err := src.Measure(ctx, e.Specs, measure.Times|measure.Counters)
		cancel()
		if err != nil {
			k.NoMeasurement = fmt.Sprintf("measuring on %s: %v", k.Origin, err)
		} else {
			launches, countersErr = set.Launches, set.CountersErr
		}
	}
	allMeasured := launches != nil
	// borrowed are the sources of counters ncu did not read, for the label.
	var borrowed []string
	for i, s := range e.Specs {
		p, err := preds[i], errs[i]
		if err != nil {
			return nil, fmt.Errorf("grader: %s: the model: %w", e.ID, err)
		}
		part := Part{Spec: s, Modelled: p, idx: idx[i], idxErr: idxErrs[i]}
		if part.Model, err = fig.Of(figures.Model(p)); err != nil {
			return nil, fmt.Errorf("grader: %s: the model: %w", e.ID, err)
		}
		if allMeasured {
			l := launches[i]
			if l.Failed() {
				err = fmt.Errorf("%s was not measured (%s): %s", s.Brief(), k.Origin, l.Error)
			} else if part.Measured, err = fig.Of(figures.Measured(l, &part.Modelled)); err != nil {
				var de *figures.DataError
				if errors.As(err, &de) {
					err = fmt.Errorf("the measurement of %s (%s) gives no %s: %s", s.Brief(), k.Origin, e.Quantity, de.Lacks)
				}
			} else if from := fig.Borrowed(figures.Measured(l, &part.Modelled)); from == measure.CountersModel {
				// A measured answer must be a measurement: counters the
				// model filled in (the GPU refused ncu them) would grade
				// the learner against the model under the measurement's
				// name. The part stays unmeasured, so a question graded
				// by the measurement goes ungraded, saying why and what
				// lets ncu count.
				err = modelCounters(e, s, k.Origin, countersErr)
			} else if from != "" && !slices.Contains(borrowed, from) {
				// The recording's counters of the same launch on a GPU of
				// the same name are ncu's counts of it, the ones a machine
				// without a GPU is graded against: they grade, and the
				// label says whose they are.
				borrowed = append(borrowed, from)
			}
			if err != nil {
				allMeasured = false
				k.NoMeasurement = err.Error()
			} else {
				part.Launch, part.HasMeasured = l, true
			}
		}
		k.Parts = append(k.Parts, part)
	}
	if allMeasured && len(borrowed) > 0 {
		k.Origin += "; counters " + strings.Join(borrowed, ", ")
	}
	var err error
	if k.Model, err = combine(e, k.Parts, func(p Part) float64 { return p.Model }); err != nil {
		return nil, fmt.Errorf("grader: %s: the model's answer: %w", e.ID, err)
	}
	if allMeasured {
		if k.Measured, err = combine(e, k.Parts, func(p Part) float64 { return p.Measured }); err != nil {
			k.NoMeasurement = "the measured answer: " + err.Error()
		} else {
			k.HasMeasured = true
		}
	}
	if !k.HasMeasured && k.NoMeasurement == "" {
		k.NoMeasurement = "no measurement source"
	}
	k.numbers = new(units.System)
	k.Explanation = explain(k, k.numbers)
	k.Reason = reason(k)
	return k, nil
}

// modelCounters is why the part s of e has no measured answer when its
// counters in the source labelled src are the sector model's; why, when
// known, is why ncu did not read them, with what to do about it.
func modelCounters(e *Question, s spec.Spec, src string, why error) error {
	msg := fmt.Sprintf("the counters of %s (%s) are the sector model's, not a measurement, so they give no measured %s", s.Brief(), src, e.Quantity)
	if why == nil {
		return errors.New(msg)
	}
	return fmt.Errorf("%s: %w", msg, why)
}

func combine(e *Question, parts []Part, val func(Part) float64) (float64, error) {
	if e.Combine != Ratio {
		v := val(parts[0])
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return 0, fmt.Errorf("%s is %v", e.Quantity, v)
		}
		return v, nil
	}
	num, den := val(parts[0]), val(parts[1])
	if den == 0 {
		return 0, errors.New("the ratio's denominator is 0")
	}
	return num / den, nil
}

// Within reports whether got is within the relative tolerance tol of want;
// tol 0 is exact up to floating-point rounding (a part in a billion). NaN
// and infinities are never within.
func Within(got, want, tol float64) bool {
	if math.IsNaN(got) || math.IsInf(got, 0) || math.IsNaN(want) || math.IsInf(want, 0) {
		return false
	}
	if tol == 0 {
		return math.Abs(got-want) <= 1e-9*math.Max(1, math.Abs(want))
	}
	if want == 0 {
		return math.Abs(got) <= tol
	}
	return math.Abs(got-want) <= tol*math.Abs(want)
}
