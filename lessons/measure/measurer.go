package measure

import (
	"context"
	"errors"

	"github.com/coalescing-course/coalesce/lessons/spec"
)

// Want says what a measurement is for.
type Want int

// What a Measurer can measure. Times|Counters takes what the measurer can
// give and says in Set.Note what it could not; Counters alone is an error
// wrapping ErrNoCounters where no counters can be read.
const (
	// Times times each launch, and a cudaMemcpy of its data beside it.
	Times Want = 1 << iota
	// Counters reads Nsight Compute's counters of each launch.
	Counters
)

// Errors a caller may branch on with errors.Is.
var (
	// ErrNotMeasured is a launch a measurer could not measure or does not hold.
	ErrNotMeasured = errors.New("not measured")
	// ErrNoCounters is a measurer asked for counters it cannot read (a GPU
	// machine without ncu).
	ErrNoCounters = errors.New("no counters")
)

// Measurer gives measurements: a GPU runs the launches, a recording looks
// them up.
type Measurer interface {
	// Origin says where the measurements come from.
	Origin() Origin
	// Measure returns a Set with one Launch per spec, in order; a spec
	// the measurer cannot measure has its Launch's Error set (Set.Err lists
	// them). The error is for a failure of the whole.
	Measure(ctx context.Context, specs []spec.Spec, want Want) (*Set, error)
}

// FromSet returns a Measurer that looks launches up in s instead of running
// them: a recording or a run file.
func FromSet(s *Set) Measurer { return recording{s} }

type recording struct{ s *Set }

var _ Measurer = recording{}

func (r recording) Origin() Origin { return r.s.Origin }

func (r recording) Measure(ctx context.Context, specs []spec.Spec, want Want) (*Set, error) {
	out := &Set{Origin: r.s.Origin, Provenance: r.s.Provenance, holds: r.s}
	for _, sp := range specs {
		l, ok := r.s.Lookup(sp)
		if !ok {
			// A recorded fault is the recording's answer for sp: the GPU
			// would fault again.
			l, ok = r.s.Fault(sp)
		}
		switch {
		case l.CUDAError != "":
		case !ok:
			l = Launch{Spec: sp, Error: "not among the recorded launches (a GPU measures it: coalesce run)"}
		case want&Times != 0 && want&Counters == 0 && !l.Timed():
			l = Launch{Spec: sp, Error: "recorded without a time"}
		case want&Counters != 0 && want&Times == 0 && !l.Profiled():
			l = Launch{Spec: sp, Error: "recorded without ncu's counters"}
		}
		out.Launches = append(out.Launches, l)
	}
	return out, nil
}
