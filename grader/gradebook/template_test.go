package gradebook

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coalescing-course/coalesce/grader/gradebook/answers"
	"github.com/coalescing-course/coalesce/grader/gradebook/intake"
)

// TestTemplateRows: in the gradebook an untouched first-build 0 is
// missing with its reason, a 0 in a cell the learner changed is graded
// (wrong: a slowdown is at least 1), and a call outside %% is unreadable
// as never run.
func TestTemplateRows(t *testing.T) {
	sub := func(learner, src string) intake.Submission {
		return intake.Submission{Path: learner + ".ipynb", Learner: learner, Lesson: "03-strided", Found: answers.FindCalls(cellsNotebook(src))}
	}
	subs := []intake.Submission{
		sub("untouched", "%%\nlab.Check(\"03-strided/slowdown-stride-32\", 0)"),
		sub("typed", "%%\nlab.Check(\"03-strided/slowdown-stride-32\", 0) // my guess"),
		sub("nomain", "lab.Check(\"03-strided/slowdown-stride-32\", 4)"),
	}
	gb, err := Grade(testGrader(t), subs, Options{})
	require.NoError(t, err)
	want := map[string]struct {
		status Status
		note   string
	}{
		"untouched": {Missing, "missing (untouched template)"},
		"typed":     {Wrong, "cell 1, line 2"},
		"nomain":    {Unreadable, "never ran: a call outside %%"},
	}
	seen := 0
	for _, r := range gb.Rows {
		if r.ID != "03-strided/slowdown-stride-32" {
			continue
		}
		w, ok := want[r.Learner]
		require.True(t, ok, r.Learner)
		seen++
		assert.Equal(t, w.status, r.Status, r.Learner)
		assert.Contains(t, r.Note, w.note, r.Learner)
	}
	assert.Equal(t, len(want), seen)
}
