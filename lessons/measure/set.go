package measure

import (
	"fmt"
	"slices"
	"strings"

	"github.com/coalescing-course/coalesce/internal/words"
	"github.com/coalescing-course/coalesce/lessons/spec"
)

// Set is launches measured together, and where they come from.
type Set struct {
	Origin Origin
	// Provenance is the run's, when it is known.
	Provenance *Provenance
	// Launches are in the order they were asked for or recorded.
	Launches []Launch
	// Note says what the launches lack, when something was asked for that
	// the source could not give: "no ncu on this machine: times only".
	Note string
	// CountersErr says why some launches' counters are not Nsight
	// Compute's reading of them (Launch.Counters says whose they are): a
	// GPU that denies ncu its counters, with what to do about it. It is
	// nil when every counter is ncu's.
	CountersErr error

	index map[string]int
	// holds is the larger set these launches were looked up in, whose
	// launches Err suggests in place of one it lacks.
	holds *Set
}

// Label names where the launches come from (Origin.String).
func (s *Set) Label() string { return s.Origin.String() }

// Profiling is the ncu command line the counters come from, the harness's
// path shortened to "harness"; "" when not known.
func (s *Set) Profiling() string {
	if s.Provenance == nil {
		return ""
	}
	return s.Provenance.Profiling
}

// Lookup returns the launch of sp that was measured (not one that
// failed), the last one when the set holds several.
// A launch the GPU failed with a CUDA error (a fault) is a result of sp
// too, which Fault finds.
func (s *Set) Lookup(sp spec.Spec) (Launch, bool) {
	if s.index == nil {
		s.index = make(map[string]int, len(s.Launches))
		for i, l := range s.Launches {
			if !l.Failed() {
				s.index[l.Spec.String()] = i
			}
		}
	}
	i, ok := s.index[sp.String()]
	if !ok {
		return Launch{}, false
	}
	return s.Launches[i], true
}

// Fault returns the launch of sp that the GPU failed with a CUDA error,
// the last one when the set holds several.
func (s *Set) Fault(sp spec.Spec) (Launch, bool) {
	want := sp.String()
	for i := len(s.Launches) - 1; i >= 0; i-- {
		if l := s.Launches[i]; l.CUDAError != "" && l.Spec.String() == want {
			return l, true
		}
	}
	return Launch{}, false
}

// Measured returns the launches that were measured, failed ones left out.
func (s *Set) Measured() []Launch {
	var out []Launch
	for _, l := range s.Launches {
		if !l.Failed() {
			out = append(out, l)
		}
	}
	return out
}

// Err returns nil when every launch was measured, else a
// *NotMeasuredError listing those that were not.
func (s *Set) Err() error {
	e := &NotMeasuredError{Origin: s.Origin}
	for _, l := range s.Launches {
		if l.Failed() {
			e.Failed = append(e.Failed, l)
		}
	}
	if len(e.Failed) == 0 {
		return nil
	}
	if s.holds != nil {
		e.Near = map[spec.Kernel][]spec.Spec{}
		for _, l := range e.Failed {
			k := l.Spec.Kernel
			// A recorded fault is a measurement: its launch is held, so
			// there is nothing nearer to suggest.
			if _, done := e.Near[k]; done || l.CUDAError != "" {
				continue
			}
			e.Near[k] = []spec.Spec{}
			for _, h := range s.holds.Measured() {
				if h.Spec.Kernel == k {
					e.Near[k] = append(e.Near[k], h.Spec)
				}
			}
		}
	}
	return e
}

// NotMeasuredError lists the launches a Set lacks, with why, and, for a
// recording, the launches of the same kernels it does hold.
type NotMeasuredError struct {
	Origin Origin
	Failed []Launch
	// Near lists, per kernel of the failed launches, the launches the
	// recording holds, to pick from instead; nil for live measurements.
	Near map[spec.Kernel][]spec.Spec
}

func (e *NotMeasuredError) Error() string {
	var b strings.Builder
	faults := 0
	for _, l := range e.Failed {
		if l.CUDAError != "" {
			faults++
		}
	}
	if faults == len(e.Failed) {
		fmt.Fprintf(&b, "measure: the GPU stopped %s with a fault (%s)", words.Plural(faults, "launch"), e.Origin.Caption())
	} else {
		fmt.Fprintf(&b, "measure: %s not measured (%s)", words.Plural(len(e.Failed), "launch"), e.Origin.Caption())
	}
	b.WriteString(":")
	for _, l := range e.Failed {
		fmt.Fprintf(&b, "\n  %s: %s", l.Spec, l.Error)
	}
	kernels := make([]spec.Kernel, 0, len(e.Near))
	for k := range e.Near {
		kernels = append(kernels, k)
	}
	slices.Sort(kernels)
	for _, k := range kernels {
		near := e.Near[k]
		fmt.Fprintf(&b, "\nThe recording holds %s of %s", words.Plural(len(near), "launch"), k)
		if len(near) > 0 {
			b.WriteString(", for example:")
		}
		for _, s := range near[:min(len(near), 4)] {
			fmt.Fprintf(&b, "\n  %s", s)
		}
	}
	if len(e.Near) > 0 {
		b.WriteString("\nPick launches the recording holds (cuda/reference/sweep.jsonl lists the course's), or measure on a machine with an NVIDIA GPU and the CUDA toolkit.")
	}
	return b.String()
}

// Unwrap returns ErrNotMeasured and, for every failed launch the GPU
// reported a CUDA error for, its *GPUError, so that
// errors.As(err, new(*GPUError)) finds a fault whether it happened live or
// was recorded.
func (e *NotMeasuredError) Unwrap() []error {
	errs := []error{ErrNotMeasured}
	for _, l := range e.Failed {
		if l.CUDAError != "" {
			errs = append(errs, l.Err(e.Origin))
		}
	}
	return errs
}
