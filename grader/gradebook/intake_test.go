package gradebook

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coalescing-course/coalesce/grader/gradebook/intake"
)

// nbWith is a course notebook with metadata md (a JSON object) whose one
// code cell holds calls.
func nbWith(md, calls string) string {
	src, _ := jsonString("import \"github.com/coalescing-course/coalesce/lab\"\n%%\n" + calls)
	return `{"nbformat":4,"nbformat_minor":5,"metadata":{"kernelspec":{"name":"gonb","language":"go"},"coalesce":` + md +
		`},"cells":[{"cell_type":"code","source":` + src + `,"outputs":[]}]}`
}

func jsonString(s string) (string, error) {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"', '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case '\n':
			b.WriteString(`\n`)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String(), nil
}

func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, data := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(data), 0o644))
	}
	return dir
}

func gradeTree(t *testing.T, dir string) (*Gradebook, []intake.Submission) {
	t.Helper()
	g := testGrader(t)
	inputs, _, err := intake.Collect([]string{dir})
	require.NoError(t, err)
	subs := intake.Reader{Bank: g.Bank(), Timeout: time.Minute}.ReadAll(inputs, nil)
	gb, err := Grade(g, subs, Options{Lessons: []string{"01-sectors"}})
	require.NoError(t, err)
	return gb, subs
}

func rowOf(gb *Gradebook, learner, exercise string) *Row {
	for i := range gb.Rows {
		if gb.Rows[i].Learner == learner && gb.Rows[i].ID == exercise {
			return &gb.Rows[i]
		}
	}
	return nil
}

// TestReadAllTimeout: a batch past its deadline returns, every input a
// row; those not read say why.
func TestReadAllTimeout(t *testing.T) {
	g := testGrader(t)
	dir := writeTree(t, map[string]string{"a.ipynb": nbWith(`{}`, "")})
	inputs := slices.Repeat([]intake.Input{{Path: filepath.Join(dir, "a.ipynb")}}, 50)
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // already past: nothing need be read
	subs := intake.Reader{Bank: g.Bank(), Timeout: time.Hour}.ReadAllContext(ctx, inputs, nil)
	require.Len(t, subs, 50)
	for _, s := range subs {
		if s.Problem != "" {
			assert.Contains(t, s.Flags, intake.FlagTimeout)
		}
	}
	subs = intake.Reader{Bank: g.Bank(), Timeout: time.Nanosecond}.ReadAll(inputs, nil)
	require.Len(t, subs, 50)
	for _, s := range subs {
		assert.Equal(t, "a", s.Learner)
	}
}

// TestIdentityFromFolder: metadata never decides whose a notebook is.
// sectors-float's answer is 4 (32 lanes × 4 bytes / 32-byte sectors).
func TestIdentityFromFolder(t *testing.T) {
	dir := writeTree(t, map[string]string{
		"ada/01-sectors.ipynb": nbWith(`{"learner":"Ada Lovelace"}`, `lab.Check("01-sectors/sectors-float", 4)`),
		// bob forges ada's name: graded as bob's, flagged.
		"bob/01-sectors.ipynb": nbWith(`{"learner":"ada"}`, `lab.Check("01-sectors/sectors-float", 5)`),
		// carol copied ada's notebook: its authors still name Ada.
		"carol/01-sectors.ipynb": strings.Replace(nbWith(`{}`, `lab.Check("01-sectors/sectors-float", 4)`), `"metadata":{`, `"metadata":{"authors":[{"name":"Ada Lovelace"}],`, 1),
		// dan's own full name matches his folder: no flag.
		"dan/01-sectors.ipynb": nbWith(`{"learner":"Dan Brown"}`, `lab.Check("01-sectors/sectors-float", 4)`),
		// a flat file is its file name's.
		"eve.ipynb": nbWith(`{"learner":"ada"}`, `lab.Check("01-sectors/sectors-float", 4)`),
	})
	gb, _ := gradeTree(t, dir)
	var learners []string
	for _, tot := range gb.Totals {
		learners = append(learners, tot.Learner)
	}
	assert.Equal(t, []string{"ada", "bob", "carol", "dan", "eve"}, learners, "every learner of the tree, no one taken over")
	tests := []struct {
		learner string
		status  Status
		flagged string
	}{
		{"ada", Right, ""},
		{"bob", Wrong, "possible copy: metadata names ada"},
		{"carol", Right, "possible copy: metadata names Ada Lovelace"},
		{"dan", Right, ""},
		{"eve", Right, "possible copy: metadata names ada"},
	}
	for _, tt := range tests {
		t.Run(tt.learner, func(t *testing.T) {
			r := rowOf(gb, tt.learner, "01-sectors/sectors-float")
			require.NotNil(t, r)
			assert.Equal(t, tt.status, r.Status)
			if tt.flagged == "" {
				assert.NotContains(t, r.Note, "possible copy")
			} else {
				assert.Contains(t, r.Note, tt.flagged)
			}
		})
	}
}

// TestDuplicates: the lesson's own notebook is graded, whatever sorts
// first; a copy is listed and flagged, and counts only where the lesson's
// notebook has no prediction. sectors-float is 4 sectors (above);
// sectors-byte is 32 lanes × 1 byte = 32 bytes, 1 sector.
func TestDuplicates(t *testing.T) {
	dir := writeTree(t, map[string]string{
		"ada/01-sectors-Copy1.ipynb": nbWith(`{"lesson":"01-sectors"}`, `lab.Check("01-sectors/sectors-float", 0)`+"\n"+`lab.Check("01-sectors/sectors-byte", 1)`),
		"ada/01-sectors.ipynb":       nbWith(`{}`, `lab.Check("01-sectors/sectors-float", 4)`+"\n"+`lab.Check("01-sectors/sectors-byte", lab.YourPrediction)`),
		// Untitled, no lesson in its metadata: its calls say 01-sectors.
		"ada/Untitled.ipynb": nbWith(`{}`, `lab.Check("01-sectors/sectors-float", 9)`),
	})
	gb, _ := gradeTree(t, dir)
	float := rowOf(gb, "ada", "01-sectors/sectors-float")
	require.NotNil(t, float)
	assert.Equal(t, Right, float.Status, "01-sectors.ipynb's 4, not the Copy1's 0 that sorts first")
	assert.Equal(t, "01-sectors.ipynb", filepath.Base(float.Notebook))
	assert.Contains(t, float.Note, "also submitted")
	assert.Contains(t, float.Note, "01-sectors-Copy1.ipynb")
	assert.Contains(t, float.Note, "Untitled.ipynb")
	byte1 := rowOf(gb, "ada", "01-sectors/sectors-byte")
	require.NotNil(t, byte1)
	assert.Equal(t, Right, byte1.Status, "the placeholder in the lesson's notebook: the copy's prediction counts")
	assert.Contains(t, byte1.Note, "another notebook of lesson 01-sectors")
}
