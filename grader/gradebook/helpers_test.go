package gradebook

import (
	"flag"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coalescing-course/coalesce/grader"
	"github.com/coalescing-course/coalesce/lessons/measure"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden from the code's output; review the diff")

// fixtureFile is the grader's invented measurements (../testdata, written
// by grader's TestWriteReferenceFixture): every case a gradebook meets.
const fixtureFile = "../testdata/reference.jsonl"

// fixtureGrader is a grader of the course's bank against the invented
// measurements, made once, so that each answer key is computed once.
var fixtureGrader = sync.OnceValues(func() (*grader.Grader, error) {
	f, err := os.Open(fixtureFile)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	set, err := measure.ReadSet(f, "reference.jsonl", measure.Origin{Kind: measure.Recorded})
	if err != nil {
		return nil, err
	}
	return grader.New(grader.Options{Measurer: measure.FromSet(set)})
})

func testGrader(t testing.TB) *grader.Grader {
	t.Helper()
	g, err := fixtureGrader()
	require.NoError(t, err)
	return g
}

// golden compares got with the file at path, or rewrites it under -update.
func golden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, string(want), got, "differs from %s (go test ./grader/gradebook -update rewrites it; review the diff)", path)
}

// fixedModTime stands in for the files' modification times, which a
// checkout sets: 2026-12-01 10:00 UTC for every file.
func fixedModTime(string) (time.Time, bool) {
	return time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC), true
}
