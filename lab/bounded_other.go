//go:build !linux

package lab

import (
	"github.com/coalescing-course/coalesce/lessons/exercises"
)

// runChild runs the kernel here: a child under limits is Linux's (its
// death with the parent, its address-space limit), and elsewhere Try's
// kernel runs unbounded, as the package documentation says.
func runChild(_ int64, _ TryLimits, e *exercises.Exercise, v exercises.Variant, kernel any) (*exercises.Outcome, error) {
	return e.Run(v, kernel)
}

// serve is never reached here: no child is started.
func (c *childSpec) serve(e *exercises.Exercise, v exercises.Variant, kernel any) {
	panic("lab: no bounded child outside Linux")
}
