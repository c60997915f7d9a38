package lab

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coalescing-course/coalesce/lessons/measure"
	"github.com/coalescing-course/coalesce/lessons/spec"
)

func TestSpecLog(t *testing.T) {
	a := Spec(`{"kernel":"strided_copy","n":4096,"stride":2}`)
	b := Spec(`{"kernel":"coalesced_copy","n":4096}`)
	for _, tc := range []struct {
		name  string
		calls [][]spec.Spec
		want  []spec.Spec // the log's lines, in order: each spec once, when first asked
	}{
		{"one call", [][]spec.Spec{{a, b}}, []spec.Spec{a, b}},
		{"repeats written once", [][]spec.Spec{{a}, {b, a}, {a, a}}, []spec.Spec{a, b}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "specs.jsonl")
			src := logSpecs(measure.FromSet(&measure.Set{}), path)
			for _, specs := range tc.calls {
				_, _ = src.Measure(context.Background(), specs, measure.Times) // the empty set holds none: only the log matters
			}
			data, err := os.ReadFile(path)
			require.NoError(t, err)
			var want []string
			for _, s := range tc.want {
				want = append(want, s.String())
			}
			assert.Equal(t, want, strings.Split(strings.TrimSuffix(string(data), "\n"), "\n"))
		})
	}

	t.Run("no log without the variable", func(t *testing.T) {
		inner := measure.FromSet(&measure.Set{})
		assert.Equal(t, inner, logSpecs(inner, ""))
	})
	t.Run("an unwritable log fails the measurement", func(t *testing.T) {
		src := logSpecs(measure.FromSet(&measure.Set{}), filepath.Join(t.TempDir(), "no", "dir", "specs.jsonl"))
		_, err := src.Measure(context.Background(), []spec.Spec{a}, measure.Times)
		require.Error(t, err)
		assert.Contains(t, err.Error(), SpecLogEnv)
	})
}

// TestNotebookSpecsParse checks the committed list of the notebooks'
// specs: each line a valid spec in its canonical form, none twice.
func TestNotebookSpecsParse(t *testing.T) {
	specs := notebookSpecs(t)
	require.NotEmpty(t, specs)
}

// notebookSpecs reads testdata/notebook-specs.jsonl, which
// scripts/run_notebooks.py --update-specs writes from COALESCE_SPEC_LOG.
func notebookSpecs(t *testing.T) []spec.Spec {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "notebook-specs.jsonl"))
	require.NoError(t, err)
	seen := map[string]bool{}
	var specs []spec.Spec
	for i, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		s, err := spec.Parse([]byte(line))
		require.NoError(t, err, "line %d", i+1)
		assert.Equal(t, line, s.String(), "line %d is not canonical", i+1)
		assert.False(t, seen[line], "line %d repeats %s", i+1, line)
		seen[line] = true
		specs = append(specs, s)
	}
	return specs
}
