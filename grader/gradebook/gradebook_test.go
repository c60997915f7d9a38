package gradebook

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coalescing-course/coalesce/grader/gradebook/intake"
)

// testLimit is the size limit the sample submissions are graded under:
// judy's notebook (70 KB) is over it.
const testLimit = 64 << 10

func gradeSamples(t testing.TB) (*Gradebook, []string) {
	t.Helper()
	g := testGrader(t)
	inputs, skipped, err := intake.Collect([]string{"testdata/submissions"})
	require.NoError(t, err)
	subs := intake.Reader{Bank: g.Bank(), Limit: testLimit}.ReadAll(inputs, nil)
	gb, err := Grade(g, subs, Options{ModTime: fixedModTime})
	require.NoError(t, err)
	return gb, skipped
}

// TestGradebookRows checks, case by case, the rows the broken and odd
// submissions must produce; the golden file above holds all of them.
func TestGradebookRows(t *testing.T) {
	gb, _ := gradeSamples(t)
	find := func(learner, exercise string, status Status) *Row {
		for i := range gb.Rows {
			r := &gb.Rows[i]
			if r.Learner == learner && r.ID == exercise && (status == "" || r.Status == status) {
				return r
			}
		}
		return nil
	}
	tests := []struct {
		name              string
		learner, exercise string
		status            Status
		points, max       float64
		note              string
	}{
		{"right, by the model", "ada", "03-strided/sectors-stride-32", Right, 1, 1, "cell 3, line 2"},
		{"right, by the measurement", "ada", "03-strided/slowdown-stride-32", Right, 2, 2, ""},
		{"another lesson's exercise is missing", "ada", "05-aos-soa/sectors-aos-16", Missing, 0, 1, "no lab.Check call"},
		{"wrong", "grace", "03-strided/sectors-stride-32", Wrong, 0, 1, ""},
		{"a percentage for a fraction", "alan", "02-coalescing/efficiency-coalesced", Wrong, 0, 1, "looks like a percentage"},
		{"a constant expression", "alan", "02-coalescing/sectors-offset-1", Right, 1, 1, "the constant expression 10/2 read as 5"},
		{"integer division", "alan", "02-coalescing/efficiency-offset-1", Wrong, 0, 1, "8/9 read as 0"},
		{"a duplicate: the first counts", "alan", "02-coalescing/sectors-reverse", Right, 1, 1, "1 other call for this exercise not graded (cell 8, line 2)"},
		{"a variable", "brian", "04-scattered/sectors-random-perm", Unreadable, 0, 1, "x is a name"},
		{"a comment only", "brian", "04-scattered/sectors-warp-shuffle", Missing, 0, 1, "one appears in a comment (cell 5, line 2)"},
		{"a ratio upside down", "brian", "04-scattered/sorted-speedup", Wrong, 0, 2, "upside down"},
		{"an unknown id", "brian", "04-scattered/nope", UnknownQuestion, 0, 0, "04-scattered has"},
		{"an id that is not a literal", "brian", "", Unreadable, 0, 0, "not a string literal"},
		{"an alias import in a later cell", "carol", "05-aos-soa/sectors-aos-16", Right, 1, 1, "cell 1, line 2"},
		{"a call split across cells", "carol", "05-aos-soa/efficiency-aos-24", Unreadable, 0, 1, "does not compile"},
		{"an answer in markdown", "carol", "05-aos-soa/soa-speedup", Missing, 0, 2, "a markdown cell (cell 5, line 1)"},
		{"a dot import, statements outside main: never ran (issue 12)", "dan", "06-vectorized/sectors-float4", Unreadable, 0, 1, "never ran: a call outside %%"},
		{"a %%writefile cell", "dan", "06-vectorized/sum-fields-sector-ratio", Missing, 0, 1, "a cell GoNB does not run as Go (%%writefile)"},
		{"bytes for sectors", "eve", "07-ncu-metric/st-sectors-per-request-write-4", Wrong, 0, 1, "counts bytes"},
		{"a malformed notebook of a learner with a good one", "eve", "", BadNotebook, 0, 0, "malformed JSON"},
		{"missing because the notebook is malformed", "eve", "08-h200/fetch-granularity-ratio", Missing, 0, 2, ""},
		{"a python notebook of the learner's own: ignored (issue 26)", "frank", "", Ignored, 0, 0, "kernel is python3 (python)"},
		{"a scratch notebook: ignored (issue 26)", "gina", "", Ignored, 0, 0, "not a notebook of this course"},
		{"nbformat 3", "hal", "", BadNotebook, 0, 0, "nbformat 3"},
		{"not a notebook", "ivan", "", BadNotebook, 0, 0, "found a list"},
		{"too large", "judy", "", BadNotebook, 0, 0, "over the 64.0 KiB limit"},
		{"measured, in tolerance", "kim", "08-h200/one-float-copy-of-memcpy", Right, 2, 2, ""},
		{"measured, out of tolerance", "kim", "08-h200/block-32-slowdown", Wrong, 0, 2, ""},
		{"the source's prediction counts, the first attempt is noted", "lin", "01-sectors/sectors-float", Right, 1, 1, "the first attempt was 0 (3 attempts; -first-attempt grades it)"},
		{"the placeholder is missing, not unreadable", "lin", "01-sectors/sectors-double", Missing, 0, 1, "cell 4, line 2: still the placeholder lab.YourPrediction"},
		{"a record that does not parse is noted", "lin", "01-sectors/sectors-byte", Right, 1, 1, "an attempt record in the saved outputs does not parse (cell 5 of testdata/submissions/lin/01-sectors.ipynb: 01-sectors/sectors-byte: attempts is 0, want 1 or more)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := find(tt.learner, tt.exercise, tt.status)
			require.NotNil(t, r, "no %s row for %s / %q", tt.status, tt.learner, tt.exercise)
			assert.Equal(t, tt.points, r.Points)
			assert.Equal(t, tt.max, r.MaxPoints)
			assert.Contains(t, r.Note, tt.note)
		})
	}
	t.Run("the folder is the learner, whatever the metadata says", func(t *testing.T) {
		// eve's malformed notebook has no metadata; her good one says
		// "Eve": both are the folder's, eve.
		for _, tot := range gb.Totals {
			assert.NotEqual(t, "Eve", tot.Learner)
			if tot.Learner == "eve" {
				assert.Equal(t, intake.FromFolder, tot.IdentityFrom)
			}
		}
	})
	t.Run("every learner has a row for every exercise of the lessons graded", func(t *testing.T) {
		assert.Equal(t, testGrader(t).Bank().LessonIDs(), gb.Lessons, "no -lessons: the whole bank")
		perLearner := map[string]int{}
		for _, r := range gb.Rows {
			if r.ID != "" && r.Status != UnknownQuestion {
				perLearner[r.Learner]++
			}
		}
		for _, tot := range gb.Totals {
			assert.Equal(t, len(gb.Questions), perLearner[tot.Learner], tot.Learner)
		}
	})
	t.Run("no notebook lost: every file is a learner's", func(t *testing.T) {
		assert.Equal(t, 16, gb.Notebooks)
		assert.Len(t, gb.Totals, 14)
		assert.Equal(t, 4, gb.BadNotebooks, "not frank's and gina's own notebooks: ignored")
	})
}
