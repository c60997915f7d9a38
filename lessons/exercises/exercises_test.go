package exercises

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coalescing-course/coalesce/lessons/simt"
)

// learners are the variants every exercise is held to: the default and
// three seeded ones.
var learners = []string{"", "ada", "grace", "edsger"}

// Every exercise, on every variant: the starter is right and misses a
// target (the aligned copy's faults instead), the solution is right and
// meets every target, the wrong kernel's output is wrong.
func TestStarterSolutionWrong(t *testing.T) {
	for _, id := range IDs() {
		e, err := Lookup(id)
		require.NoError(t, err)
		for _, learner := range learners {
			v := e.Variant(learner)
			t.Run(id+"/"+v.String(), func(t *testing.T) {
				start, err := e.Run(v, e.Starter)
				require.NoError(t, err)
				if id == "10-kernels/aligned-vector" {
					assert.ErrorIs(t, start.Fault, simt.ErrAccess)
					assert.ErrorContains(t, start.Fault, "cudaErrorMisalignedAddress")
					assert.False(t, start.Pass)
				} else {
					require.NoError(t, start.Fault)
					assert.True(t, start.Correct, "starter: %v", start.Mismatch)
					assert.False(t, start.Pass, "the starter meets every target: %+v", start.Targets)
				}
				t.Logf("starter %+v", start.Targets)
				sol, err := e.Run(v, answers[id].solution)
				require.NoError(t, err)
				require.NoError(t, sol.Fault)
				assert.True(t, sol.Correct, "solution: %v", sol.Mismatch)
				assert.True(t, sol.Pass, "solution: %+v", sol.Targets)
				t.Logf("solution %+v", sol.Targets)
				wrong, err := e.Run(v, answers[id].wrong)
				require.NoError(t, err)
				require.NoError(t, wrong.Fault)
				assert.False(t, wrong.Correct)
				assert.False(t, wrong.Pass)
				if assert.NotNil(t, wrong.Mismatch) {
					t.Logf("wrong: %v", wrong.Mismatch)
				}
			})
		}
	}
}
