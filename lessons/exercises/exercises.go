package exercises

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"

	"github.com/coalescing-course/coalesce/lessons/simt"
)

// Exercise is one "fix this kernel" exercise: what the learner is asked,
// the Go signature the kernel must have, and the starter the learner
// fixes. Its parameters are seeded per learner (Variant).
type Exercise struct {
	// ID is what the notebook, the grader and Lookup call it:
	// "10-kernels/strided-copy".
	ID string
	// Title is a heading; Goal says what to do, in the Go terms of the
	// signature.
	Title, Goal string
	// Signature is the Go type a kernel must have, as source text; for
	// 10-kernels/gather it is the Gather struct.
	Signature string
	// Metrics are the counter targets' metrics (Nsight Compute's names),
	// in the order Outcome.Targets lists them.
	Metrics []string
	// Params are the variant's parameters, in the order the course prints
	// them.
	Params []Param
	// Starter is the kernel the learner starts from, runnable (a value of
	// the Signature's type): correct, but it misses the targets (or, for
	// 10-kernels/aligned-vector, faults). StarterGo is its source.
	Starter   any
	StarterGo string

	impl impl
}

// Param is one seeded parameter of an exercise: its name (a key of
// Variant.Params), what it is, the range it is drawn from (Min to Max,
// both included, in multiples of Step when Step is above 1) and its value
// for the empty learner. The range is written here only: an exercise's
// draw takes it from its Params (params.draw).
type Param struct {
	Name     string
	Doc      string
	Min, Max int
	Step     int
	Default  int
}

// params is an exercise's parameters, as its draw reads their ranges.
type params []Param

// draw returns parameter name drawn from r, uniform over its range (Min to
// Max, in Steps). A name the exercise has no Param for is a mistake in
// the exercise's table, which every variant would show: it panics, and
// the package's tests, which draw every exercise, fail.
func (ps params) draw(r *rand.Rand, name string) int {
	for _, p := range ps {
		if p.Name == name {
			step := max(p.Step, 1)
			return step * between(r, p.Min/step, p.Max/step)
		}
	}
	panic("exercises: no parameter " + name)
}

// Variant is one learner's copy of an exercise: its parameters and the
// seed of its data.
type Variant struct {
	ID      string `json:"id"`
	Learner string `json:"learner"`
	// Seed is the first 8 bytes of sha256(ID + "\x00" + Learner), big
	// endian: the parameters (for a learner other than "") and the data
	// are drawn from it.
	Seed   uint64         `json:"seed"`
	Params map[string]int `json:"params"`
}

// String writes the parameters in the exercise's order: "n=65536 k=8".
func (v Variant) String() string {
	var parts []string
	e, err := Lookup(v.ID)
	if err != nil {
		return fmt.Sprint(v.Params)
	}
	for _, p := range e.Params {
		parts = append(parts, fmt.Sprintf("%s=%d", p.Name, v.Params[p.Name]))
	}
	return strings.Join(parts, " ")
}

// impl is what each exercise supplies.
type impl interface {
	// typ is the kernel's Go type.
	typ() reflect.Type
	// draw fills in the parameters from r, each within its range in ps
	// (ps.draw) and the constraints between them; valid says why params
	// are not a variant.
	draw(r *rand.Rand, ps params) map[string]int
	valid(params map[string]int) error
	// prepare builds the variant's data, its launch and its key.
	prepare(v Variant) *instance
}

// instance is one variant made ready to run: its buffers, its launch, the
// reference the output is compared with, and the targets.
type instance struct {
	launch simt.Launch
	// bind makes the kernel (already of the exercise's type) a simt
	// kernel over the instance's buffers; it may fail before the launch
	// (a gather's Order).
	bind func(kernel reflect.Value) (func(*simt.Thread), error)
	// outputs are the Go slices the kernel writes, by buffer name; check
	// compares them (or the same buffers decoded from a GPU's bytes) with
	// the reference.
	outputs map[string]any
	// inputs are the Go slices the kernel reads, for the test that holds
	// the CUDA arguments to them.
	inputs map[string]any
	check  func(outputs map[string]any) *Mismatch
	// needs returns the first word of input a right output depends on
	// that no thread loaded (by buffer and 4-byte element), ok when the
	// launch loaded them all: see counted.
	needs   func(loaded func(buf string, i int) bool) (buf string, i int, ok bool)
	targets []target
	cuda    Problem
}

// target is a counter target: the metric's count at most want. least is
// the fewest the metric can count for a right output, 0 for no bound:
// the distinct sectors of the bytes a right output has to read (values
// drawn at random, which no kernel can know without loading them) or
// write. A count below it is an output made by accesses the graded launch
// did not see (a launch inside the launch: see Outcome.Fault).
type target struct {
	metric string
	want   float64
	least  float64
}

var all = []*Exercise{stridedCopy(), aosSoA(), transpose(), gather(), alignedVector()}

// IDs returns the exercises' ids in the course's order.
func IDs() []string {
	var ids []string
	for _, e := range all {
		ids = append(ids, e.ID)
	}
	return ids
}

// ErrUnknown is an id that names no exercise.
var ErrUnknown = errors.New("exercises: unknown exercise")

// Lookup returns the exercise id names, or an error (ErrUnknown) listing
// the ids there are.
func Lookup(id string) (*Exercise, error) {
	for _, e := range all {
		if e.ID == id {
			return e, nil
		}
	}
	return nil, fmt.Errorf("%w %q: the exercises are %s", ErrUnknown, id, strings.Join(IDs(), ", "))
}

// seed returns the first 8 bytes of sha256(id + "\x00" + learner), and
// the next 16 for a random stream.
func seed(id, learner string) (uint64, uint64, uint64) {
	h := sha256.Sum256([]byte(id + "\x00" + learner))
	return binary.BigEndian.Uint64(h[:8]), binary.BigEndian.Uint64(h[8:16]), binary.BigEndian.Uint64(h[16:24])
}

// Variant returns learner's variant: the parameters drawn from the seed
// of e.ID and learner, each within its Param range. The empty learner
// gets every Param's Default, so that a notebook run by no one has a
// fixed exercise; its data is still drawn from its seed.
func (e *Exercise) Variant(learner string) Variant {
	s, a, b := seed(e.ID, learner)
	v := Variant{ID: e.ID, Learner: learner, Seed: s}
	if learner == "" {
		v.Params = map[string]int{}
		for _, p := range e.Params {
			v.Params[p.Name] = p.Default
		}
		return v
	}
	v.Params = e.impl.draw(rand.New(rand.NewPCG(a, b)), e.Params)
	return v
}

// check says why v is not a variant of e: another exercise's, or a
// parameter missing or out of its range.
func (e *Exercise) check(v Variant) error {
	if v.ID != e.ID {
		return fmt.Errorf("exercises: %s: the variant is of %q", e.ID, v.ID)
	}
	for _, p := range e.Params {
		x, ok := v.Params[p.Name]
		if !ok {
			return fmt.Errorf("exercises: %s: the variant has no %s", e.ID, p.Name)
		}
		if x < p.Min || x > p.Max {
			return fmt.Errorf("exercises: %s: %s=%d: want %d to %d", e.ID, p.Name, x, p.Min, p.Max)
		}
		if p.Step > 1 && x%p.Step != 0 {
			return fmt.Errorf("exercises: %s: %s=%d: want a multiple of %d", e.ID, p.Name, x, p.Step)
		}
	}
	if len(v.Params) != len(e.Params) {
		return fmt.Errorf("exercises: %s: the variant has %d parameters (%v), want %d", e.ID, len(v.Params), v.Params, len(e.Params))
	}
	if err := e.impl.valid(v.Params); err != nil {
		return fmt.Errorf("exercises: %s: %w", e.ID, err)
	}
	return nil
}

// rng returns the random stream of v's data: the seed's bytes past the
// parameters', so that data and parameters do not repeat each other.
func (v Variant) rng() *rand.Rand {
	_, a, b := seed(v.ID, v.Learner)
	return rand.New(rand.NewPCG(b^0x9e3779b97f4a7c15, a^v.Seed))
}

// Outcome is what a kernel did on a variant: whether its output is
// right, and how its counts compare with the targets.
type Outcome struct {
	ID      string
	Variant Variant
	// Fault is why the launch stopped: a simt error (errors.Is
	// simt.ErrAccess, simt.ErrPanic, simt.ErrEscape, ...), or a gather's
	// Order that did not return a reordering of its keys or used simt; or,
	// for a launch that ran to its end with a right output, ErrUncounted:
	// the launch's own accesses did not make it (a word no thread stored or
	// loaded, or fewer accesses than the output needs). Nil when the
	// kernel ran to its end and made its output.
	Fault error
	// Correct says the output equals the reference; Mismatch is the first
	// difference when it does not (nil when Correct, or on a Fault).
	Correct  bool
	Mismatch *Mismatch
	// Targets are the counter targets, each with the model's count for
	// the kernel (0, and not met, on a Fault).
	Targets []Target
	// Pass is Correct with every target met.
	Pass bool
	// Result is simt's account of the launch, its first warp traced: the
	// sites and the warp diagram. Nil when the launch did not finish.
	Result *simt.Result
}

// Mismatch is the first place the output differs from the reference.
type Mismatch struct {
	// Buffer names the output, Index the element.
	Buffer string `json:"buffer"`
	Index  int    `json:"index"`
	// Got and Want are the element's values, as Go prints them.
	Got  string `json:"got"`
	Want string `json:"want"`
	// Why says more, where the comparison is not element by element (the
	// gather's pairs in any order).
	Why string `json:"why,omitempty"`
}

func (m *Mismatch) String() string {
	s := fmt.Sprintf("%s[%d] is %s, want %s", m.Buffer, m.Index, m.Got, m.Want)
	if m.Why != "" {
		s += ": " + m.Why
	}
	return s
}

// Target is one counter target and how the kernel fared: the model's
// count of Metric (an Nsight Compute name, package metrics) must be at
// most Want.
type Target struct {
	Metric string  `json:"metric"`
	Want   float64 `json:"want"`
	Got    float64 `json:"got"`
	Pass   bool    `json:"pass"`
	// Why explains a miss from the sites that cost too much: which
	// access, how far apart its lanes are, what it would cost coalesced.
	Why string `json:"why,omitempty"`
}

// Run runs kernel on v: builds the variant's buffers, launches the kernel
// through simt (its first warp traced), compares the output with the
// reference and the model's counts with the targets. kernel must have the
// exercise's Signature (a func type whose underlying type is the same is
// taken too). The error is for what cannot be run at all: a kernel of
// another type, or a variant not of this exercise; what the kernel does
// wrong is in the Outcome.
func (e *Exercise) Run(v Variant, kernel any) (*Outcome, error) {
	k, err := e.kernel(kernel)
	if err != nil {
		return nil, err
	}
	if err := e.check(v); err != nil {
		return nil, err
	}
	in := e.impl.prepare(v)
	out := &Outcome{ID: e.ID, Variant: v}
	run, err := in.bind(k)
	if err != nil {
		out.Fault, out.Targets = err, unmet(in, "the kernel did not run")
		return out, nil
	}
	l := in.launch
	l.Trace = 1
	r, err := l.Run(run)
	if err != nil {
		out.Fault, out.Targets = err, unmet(in, "the launch did not finish")
		return out, nil
	}
	out.Result = r
	if in.check(in.outputs) == nil {
		if err := in.counted(r); err != nil {
			out.Fault = err
			out.Targets = unmet(in, "the launch did not make the output")
			return out, nil
		}
	}
	score(out, in, in.outputs, r.Modelled.Metrics, func(metric string) string { return explain(metric, r) })
	return out, nil
}

// kernel returns kernel as a value of the exercise's type, or an error
// naming the type it has and the one wanted.
func (e *Exercise) kernel(kernel any) (reflect.Value, error) {
	want := e.impl.typ()
	if kernel == nil {
		return reflect.Value{}, fmt.Errorf("exercises: %s: the kernel is nil, want %s", e.ID, e.Signature)
	}
	v := reflect.ValueOf(kernel)
	if v.Kind() == reflect.Pointer && v.Type().Elem() == want {
		if v.IsNil() {
			return reflect.Value{}, fmt.Errorf("exercises: %s: the kernel is a nil %s, want %s", e.ID, v.Type(), e.Signature)
		}
		v = v.Elem()
	}
	if v.Type() != want {
		if !v.Type().ConvertibleTo(want) || v.Kind() != want.Kind() {
			return reflect.Value{}, fmt.Errorf("exercises: %s: kernel is %s, want %s", e.ID, v.Type(), e.Signature)
		}
		v = v.Convert(want)
	}
	if v.Kind() == reflect.Func && v.IsNil() {
		return reflect.Value{}, fmt.Errorf("exercises: %s: the kernel is a nil func, want %s", e.ID, e.Signature)
	}
	return v, nil
}

// CUDA returns the CUDA side of v: the kernel's fixed signature, the
// bodies, the arguments with their data, the launch, and the check of the
// outputs against the same reference as Run's. A variant not of e is an
// error.
func (e *Exercise) CUDA(v Variant) (Problem, error) {
	if err := e.check(v); err != nil {
		return Problem{}, err
	}
	return e.impl.prepare(v).cuda, nil
}
