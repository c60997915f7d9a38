package exercises

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"strings"
	"unicode/utf8"
)

// Observation is what a kernel did on a learner's variant, as the process
// that ran it saw it, before any judgement: the bytes of its outputs, the
// model's counts and the explanation of each target's metric. A grader
// that runs learner code in a child process (grader/sandbox) has the
// child Observe and Judge the observation itself, with a reference and
// targets it worked out on its own: the child decides no points.
type Observation struct {
	ID      string `json:"id"`
	Learner string `json:"learner"`
	// Error is why the kernel was not run at all (an unknown id, a kernel
	// of the wrong type); Fault why its launch stopped. Both "" when it
	// ran to its end. Either holds at most MaxText bytes.
	Error string `json:"error"`
	Fault string `json:"fault"`
	// Outputs are the output buffers after the launch, by name, as a GPU
	// holds them (little-endian elements).
	Outputs map[string][]byte `json:"outputs"`
	// Metrics are the model's counts of the launch (simt's
	// Result.Modelled.Metrics); Why says, for each target's metric, which
	// sites cost more than their bytes need (at most MaxText bytes each).
	Metrics map[string]float64 `json:"metrics"`
	Why     map[string]string  `json:"why"`
}

// MaxText bounds each text an Observation carries: what the learner's
// code can put in it (a panic's value, a line of its source) is theirs,
// and a grader writes it where others read it.
const MaxText = 2 << 10

// Observe runs kernel on learner's variant of exercise id and returns
// what it did; order, when not nil, is a gather's host step, and kernel
// its kernel (the two halves of a Gather, each of any type: a wrong one
// is the Observation's Error, never a panic). Observe never panics.
func Observe(id, learner string, kernel, order any) (obs Observation) {
	obs = Observation{ID: id, Learner: learner}
	defer func() {
		if v := recover(); v != nil {
			obs = Observation{ID: id, Learner: learner, Error: bound(fmt.Sprintf("exercises: %s: observing the kernel panicked: %v", id, v))}
		}
	}()
	e, err := Lookup(id)
	if err != nil {
		obs.Error = err.Error()
		return obs
	}
	if order != nil {
		if kernel, err = e.gather(order, kernel); err != nil {
			obs.Error = bound(err.Error())
			return obs
		}
	}
	k, err := e.kernel(kernel)
	if err != nil {
		obs.Error = bound(err.Error())
		return obs
	}
	in := e.impl.prepare(e.Variant(learner))
	run, err := in.bind(k)
	if err != nil {
		obs.Fault = bound(err.Error())
		return obs
	}
	l := in.launch
	l.Trace = 1
	r, err := l.Run(run)
	if err != nil {
		obs.Fault = bound(err.Error())
		return obs
	}
	// A right output the launch's own accesses did not make is a fault
	// here, where the buffers are; the parent holds the counts to the
	// fewest the output needs (Judge), which no child can fake down.
	if in.check(in.outputs) == nil {
		if err := in.counted(r); err != nil {
			obs.Fault = bound(err.Error())
			return obs
		}
	}
	obs.Outputs = map[string][]byte{}
	for name, o := range in.outputs {
		switch o := o.(type) {
		case []float32:
			obs.Outputs[name] = floatBytes(o)
		case []int32:
			obs.Outputs[name] = intBytes(o)
		default:
			panic(fmt.Sprintf("output %s is a %T", name, o))
		}
	}
	obs.Metrics = maps.Clone(r.Modelled.Metrics)
	obs.Why = map[string]string{}
	for _, t := range in.targets {
		obs.Why[t.metric] = bound(explain(t.metric, r))
	}
	return obs
}

// ParseObservation reads an Observation written as JSON (the child's
// report): one object of its fields and no others. What it holds is not
// checked here: Judge holds it to the exercise.
func ParseObservation(data []byte) (Observation, error) {
	var obs Observation
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&obs); err != nil {
		return Observation{}, fmt.Errorf("exercises: the observation does not read: %w", err)
	}
	if dec.More() {
		return Observation{}, errors.New("exercises: the observation does not read: more after its object")
	}
	return obs, nil
}

// gather makes a Gather of an order and a kernel given apart, each of any
// type convertible to its field's.
func (e *Exercise) gather(order, kernel any) (any, error) {
	if _, ok := e.impl.(gatherImpl); !ok {
		return nil, fmt.Errorf("exercises: %s: an order is a gather's host step; %s takes a kernel alone, %s", e.ID, e.ID, e.Signature)
	}
	var g Gather
	for _, f := range []struct {
		name string
		v    any
		into reflect.Value
	}{{"Order", order, reflect.ValueOf(&g.Order).Elem()}, {"Kernel", kernel, reflect.ValueOf(&g.Kernel).Elem()}} {
		v := reflect.ValueOf(f.v)
		if f.v == nil || v.Kind() != reflect.Func || !v.Type().ConvertibleTo(f.into.Type()) {
			return nil, fmt.Errorf("exercises: %s: the %s is %s, want %s", e.ID, strings.ToLower(f.name), typeName(f.v), f.into.Type())
		}
		f.into.Set(v.Convert(f.into.Type()))
	}
	return g, nil
}

func typeName(v any) string {
	if v == nil {
		return "nil"
	}
	return reflect.TypeOf(v).String()
}

// Judge grades an observation of learner's kernel on exercise id against
// the variant's reference and targets, worked out here: the output's
// bytes compared, each count held to its target and to the fewest
// accesses the output needs (ErrUncounted), the points given. An
// observation of another exercise or learner is an Error. Judge never
// panics.
func Judge(id, learner string, obs Observation) (rep Report) {
	rep = Report{ID: id, Learner: learner, Params: map[string]int{}, Targets: []Target{}}
	defer func() {
		if v := recover(); v != nil {
			rep = Report{ID: id, Learner: learner, Params: rep.Params, Targets: []Target{}, MaxPoints: rep.MaxPoints,
				Error: fmt.Sprintf("exercises: %s: judging panicked: %v", id, v)}
		}
	}()
	e, err := Lookup(id)
	if err != nil {
		rep.Error = err.Error()
		return rep
	}
	v := e.Variant(learner)
	rep.Params = v.Params
	rep.MaxPoints = 1 + len(e.Metrics)
	in := e.impl.prepare(v)
	out := &Outcome{ID: e.ID, Variant: v}
	switch {
	case obs.ID != id || obs.Learner != learner:
		rep.Error = fmt.Sprintf("exercises: %s: the observation is of %q for learner %q, not of %q for %q", id, obs.ID, obs.Learner, id, learner)
		rep.Targets = unmet(in, "the kernel did not run")
		return rep
	case obs.Error != "":
		rep.Error = bound(obs.Error)
		rep.Targets = unmet(in, "the kernel did not run")
		return rep
	case obs.Fault != "":
		rep.Error = bound(obs.Fault)
		rep.Targets = unmet(in, "the launch did not finish")
		return rep
	}
	outputs := map[string]any{}
	for name, b := range obs.Outputs {
		outputs[name] = b
	}
	score(out, in, outputs, obs.Metrics, func(metric string) string { return bound(obs.Why[metric]) })
	if out.Fault != nil {
		rep.Error = out.Fault.Error()
	}
	rep.Correct, rep.Mismatch, rep.Pass = out.Correct, out.Mismatch, out.Pass
	rep.Targets = append(rep.Targets, out.Targets...)
	rep.Points = points(out)
	return rep
}

// score sets out's verdict from a launch that ran to its end: outputs
// (Go slices, or a GPU's bytes) against the reference, counts against the
// targets, and, for a right output, counts against the fewest accesses it
// needs (ErrUncounted). why explains a missed target's metric.
func score(out *Outcome, in *instance, outputs map[string]any, counts map[string]float64, why func(metric string) string) {
	out.Mismatch = in.check(outputs)
	out.Correct = out.Mismatch == nil
	out.Pass = out.Correct
	var short []string
	for _, t := range in.targets {
		got := counts[t.metric] // an absent shared metric is 0: no shared instruction
		tr := Target{Metric: t.metric, Want: t.want, Got: got, Pass: got <= t.want}
		if got < t.least {
			tr.Pass = false
			tr.Why = fmt.Sprintf("%g is fewer than the %g a right output needs: accesses the graded launch did not count", got, t.least)
			short = append(short, fmt.Sprintf("%s %g, fewer than the %g its output needs", t.metric, got, t.least))
		} else if !tr.Pass {
			tr.Why = why(t.metric)
		}
		out.Pass = out.Pass && tr.Pass
		out.Targets = append(out.Targets, tr)
	}
	if out.Correct && len(short) > 0 {
		out.Correct, out.Pass = false, false
		out.Fault = fmt.Errorf("%w: the launch counted %s: a launch started inside the kernel, or an access simt did not see, is not the kernel's work",
			ErrUncounted, strings.Join(short, "; "))
	}
}

// points are an outcome's points: 1 for a right output and 1 for each
// target it met; 0 when the output is wrong.
func points(out *Outcome) int {
	if !out.Correct {
		return 0
	}
	p := 1
	for _, t := range out.Targets {
		if t.Pass {
			p++
		}
	}
	return p
}

// unmet are in's targets, none met, each saying why.
func unmet(in *instance, why string) []Target {
	out := []Target{}
	for _, t := range in.targets {
		out = append(out, Target{Metric: t.metric, Want: t.want, Why: why})
	}
	return out
}

// bound cuts s to at most MaxText bytes, on a rune boundary, saying how
// much it cut.
func bound(s string) string {
	if len(s) <= MaxText {
		return s
	}
	cut := MaxText - 40
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s… (%d bytes more)", s[:cut], len(s)-cut)
}

// sectorsOf is the least a right output's loads or stores of n 4-byte
// elements from byte offset a count: the sectors they fill.
func sectorsOf(a, n int64) float64 { return float64(span(4*a, 4*(a+n))) }
