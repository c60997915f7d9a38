package grader

import (
	"bufio"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coalescing-course/coalesce/lessons/spec"
)

func TestExercisesLoad(t *testing.T) {
	b, err := Questions()
	require.NoError(t, err)
	assert.Equal(t, "coalesce", b.Course)
	// Issue 6's lessons and issue 11's 09-matrix, in order; every one has at least two questions.
	assert.Equal(t, []string{"01-sectors", "02-coalescing", "03-strided", "04-scattered", "05-aos-soa", "06-vectorized", "07-ncu-metric", "08-h200", "09-matrix"}, b.LessonIDs())
	for _, l := range b.Lessons {
		assert.GreaterOrEqual(t, len(b.OfLesson(l.ID)), 2, "lesson %s", l.ID)
	}
	// The three questions issue 5 names.
	for _, id := range []string{"03-strided/sectors-stride-32", "05-aos-soa/efficiency-aos-24", "03-strided/slowdown-stride-32"} {
		_, err := b.Question(id)
		assert.NoError(t, err, id)
	}
}

// TestPublishedIDsStable holds the bank to its promise: an id once
// published (listed in testdata/published_ids.txt) is never renamed or
// removed. Add new ids to the list when they are published.
func TestPublishedIDsStable(t *testing.T) {
	b, err := Questions()
	require.NoError(t, err)
	f, err := os.Open("testdata/published_ids.txt")
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		id := strings.TrimSpace(sc.Text())
		if id == "" || strings.HasPrefix(id, "#") {
			continue
		}
		n++
		_, err := b.Question(id)
		assert.NoError(t, err, "published id %s is gone", id)
	}
	assert.Equal(t, len(b.Questions), n, "every question of the bank is in testdata/published_ids.txt")
}

// TestMeasuredSpecsInSweep: every spec a measured question needs is in the
// sweep the recorded reference is made from, so the built-in reference can
// answer it.
func TestMeasuredSpecsInSweep(t *testing.T) {
	b, err := Questions()
	require.NoError(t, err)
	f, err := os.Open("../cuda/reference/sweep.jsonl")
	if errors.Is(err, os.ErrNotExist) {
		t.Skip("no cuda/reference/sweep.jsonl in this checkout")
	}
	require.NoError(t, err)
	defer f.Close()
	lines, err := spec.ReadAll(f)
	require.NoError(t, err)
	inSweep := map[string]bool{}
	for _, l := range lines {
		if l.Err == nil {
			inSweep[l.Spec.String()] = true
		}
	}
	for _, e := range b.Questions {
		for _, s := range e.Specs {
			assert.True(t, inSweep[s.String()], "%s: %s is not in the sweep, so the recorded reference cannot measure it", e.ID, s)
		}
	}
}

func TestParseBankErrors(t *testing.T) {
	good := map[string]any{
		"id": "03-strided/x", "lesson": "03-strided", "text": "Q?", "unit": "sectors per request",
		"specs":    []any{map[string]any{"kernel": "strided_copy", "n": 1024, "stride": 32}},
		"quantity": "ld_sectors_per_request", "graded_by": "model",
		"tolerance": map[string]any{"model": 0, "measured": 0.05}, "points": 1,
	}
	with := func(changes map[string]any) map[string]any {
		e := map[string]any{}
		for k, v := range good {
			e[k] = v
		}
		for k, v := range changes {
			if v == nil {
				delete(e, k)
			} else {
				e[k] = v
			}
		}
		return e
	}
	bank := func(questions ...map[string]any) []byte {
		b, err := json.Marshal(map[string]any{
			"course":    "coalesce",
			"lessons":   []any{map[string]any{"id": "03-strided", "title": "Strided"}},
			"questions": questions,
		})
		require.NoError(t, err)
		return b
	}
	tests := []struct {
		name  string
		data  []byte
		field string
		text  string
	}{
		{"unknown metric", bank(with(map[string]any{"quantity": "l1tex__t_sectors.sum"})), "quantity", `"l1tex__t_sectors.sum": want a figure of lessons/figures: l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum`},
		{"bad spec", bank(with(map[string]any{"specs": []any{map[string]any{"kernel": "strided_copy", "n": 1024, "stride": 0}}})), "specs[0]", `field "stride"`},
		{"unknown kernel", bank(with(map[string]any{"specs": []any{map[string]any{"kernel": "memcpy", "n": 1}}})), "specs[0]", "unknown kernel"},
		{"no spec", bank(with(map[string]any{"specs": []any{}})), "specs", "0 specs"},
		{"a ratio of one spec", bank(with(map[string]any{"combine": "ratio"})), "specs", "a ratio wants two"},
		{"two specs, no ratio", bank(with(map[string]any{"specs": []any{
			map[string]any{"kernel": "strided_copy", "n": 1024}, map[string]any{"kernel": "strided_copy", "n": 1024}}})), "specs", "2 specs"},
		{"unknown combine", bank(with(map[string]any{"combine": "sum"})), "combine", `"sum"`},
		{"duplicate id", bank(good, good), "id", "appears twice"},
		{"id without its lesson", bank(with(map[string]any{"id": "02-coalescing/x"})), "id", "start with its lesson"},
		{"id in capitals", bank(with(map[string]any{"id": "03-strided/X"})), "id", "lower case"},
		{"unknown lesson", bank(with(map[string]any{"lesson": "09-tensor", "id": "09-tensor/x"})), "lesson", "not among"},
		{"empty text", bank(with(map[string]any{"text": " "})), "text", "empty"},
		{"no unit", bank(with(map[string]any{"unit": nil})), "unit", "empty"},
		{"exact tolerance on an estimate", bank(with(map[string]any{"quantity": "dram_bytes_per_useful_byte"})), "tolerance.model", "only estimates"},
		{"exact measured tolerance", bank(with(map[string]any{"tolerance": map[string]any{"model": 0, "measured": 0}})), "tolerance.measured", "never exact"},
		{"negative tolerance", bank(with(map[string]any{"tolerance": map[string]any{"model": -0.1, "measured": 0.1}})), "tolerance", "from 0"},
		{"unknown graded_by", bank(with(map[string]any{"graded_by": "teacher"})), "graded_by", `"teacher"`},
		{"no points", bank(with(map[string]any{"points": 0})), "points", "more than 0"},
		{"loads per request of a kernel without loads", bank(with(map[string]any{"specs": []any{map[string]any{"kernel": "strided_write", "n": 1024}}})), "specs[0]", "issues no loads"},
		{"an index file", bank(with(map[string]any{"specs": []any{map[string]any{"kernel": "gather_copy", "n": 1024, "index_file": "x.bin"}}})), "specs[0]", "index_file"},
		{"a typo in a field", bank(with(map[string]any{"tolerence": 1})), "question", "unknown field"},
		{"not JSON", []byte(`{"course":`), "bank", ""},
		{"no course", []byte(`{"lessons":[{"id":"01-a"}],"questions":[]}`), "course", ""},
		{"a bad lesson id", []byte(`{"course":"c","lessons":[{"id":"sectors"}],"questions":[]}`), "lessons[0].id", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseBank(tt.data)
			require.Error(t, err)
			assert.ErrorIs(t, err, ErrBank)
			var be *BankError
			require.True(t, errors.As(err, &be), "want a *BankError, got %T", err)
			assert.Equal(t, tt.field, be.Field, "%v", err)
			assert.Contains(t, err.Error(), tt.text)
		})
	}
	t.Run("the good question loads", func(t *testing.T) {
		b, err := ParseBank(bank(good))
		require.NoError(t, err)
		require.Len(t, b.Questions, 1)
		assert.Equal(t, int64(32), b.Questions[0].Specs[0].Stride)
	})
}

func TestBankExerciseUnknown(t *testing.T) {
	b, err := Questions()
	require.NoError(t, err)
	_, err = b.Question("03-strided/sectors-stride-33")
	assert.ErrorIs(t, err, ErrUnknownQuestion)
	assert.Contains(t, err.Error(), "03-strided/sectors-stride-32", "lists the lesson's ids")
	_, err = b.Question("99-nope/x")
	assert.Contains(t, err.Error(), "lessons are 01-sectors")
}

// BenchmarkParseBank is what every notebook's first lab.Questions or
// lab.Check pays to read the bank. Validating a gather's figure must not
// generate its indices: with 2^25 of them to shuffle, that cost 1.8 s.
func BenchmarkParseBank(b *testing.B) {
	for b.Loop() {
		if _, err := ParseBank(bankJSON); err != nil {
			b.Fatal(err)
		}
	}
}
