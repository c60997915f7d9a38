package lab

import (
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coalescing-course/coalesce/grader"
	"github.com/coalescing-course/coalesce/internal/attempt"
)

// attemptsIn sends the attempts to a fresh folder, as COALESCE_ATTEMPTS
// does in a notebook, with a clock that ticks a minute a call, and
// returns the store.
func attemptsIn(t *testing.T) attempt.Store {
	t.Helper()
	dir := t.TempDir()
	t.Setenv(attempt.DirEnv, dir)
	t.Setenv(attempt.SessionEnv, "/course/notebooks/01-sectors.ipynb")
	tick := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	old := now
	now = func() time.Time { tick = tick.Add(time.Minute); return tick }
	t.Cleanup(func() { now = old })
	return attempt.Store{Path: filepath.Join(dir, "01-sectors.json")}
}

func TestYourPredictionIsNoNumber(t *testing.T) {
	assert.True(t, math.IsNaN(YourPrediction), "0 must stay a prediction a learner can make")
}

func TestCheckPlaceholder(t *testing.T) {
	recorded(t)
	store := attemptsIn(t)
	out := capture(t)
	v := Check("01-sectors/sectors-float", YourPrediction)
	assert.True(t, v.Unanswered)
	assert.Contains(t, out.String(), grader.WritePredictionFirst)
	assert.NotContains(t, out.String(), "RIGHT")
	assert.NotContains(t, out.String(), "WRONG")
	_, err := os.Stat(store.Path)
	assert.ErrorIs(t, err, os.ErrNotExist, "a placeholder records nothing")
}

// Three Checks, 0 then 0 then 4: the record keeps 0 as the first, counts
// 3 and ends at 4; the third verdict says so.
func TestCheckRecordsAttempts(t *testing.T) {
	recorded(t)
	store := attemptsIn(t)
	out := capture(t)
	for _, p := range []float64{0, 0, 4} {
		out.Reset()
		require.NoError(t, Check("01-sectors/sectors-float", p).Err)
	}
	assert.Contains(t, out.String(), "Attempt 3 at this exercise; your first prediction was 0.")
	r, ok, err := store.Get("01-sectors/sectors-float")
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, 3, r.Attempts)
	assert.Equal(t, 0.0, r.First.Value)
	assert.Equal(t, 4.0, r.Last.Value)
	assert.Equal(t, time.Date(2026, 12, 1, 10, 1, 0, 0, time.UTC), r.First.Time.UTC(), "the first call's tick")

	// An unknown exercise is no attempt.
	Check("01-sectors/no-such-exercise", 1)
	_, ok, err = store.Get("01-sectors/no-such-exercise")
	require.NoError(t, err)
	assert.False(t, ok)
}

func TestCheckOutsideANotebookRecordsNothing(t *testing.T) {
	recorded(t)
	t.Setenv(attempt.DirEnv, "")
	t.Chdir(t.TempDir())
	capture(t)
	require.NoError(t, Check("01-sectors/sectors-float", 4).Err)
	entries, err := os.ReadDir(".")
	require.NoError(t, err)
	assert.Empty(t, entries)
}

// Planted waits for the learner's own prediction: before it, a sentence
// and a clean end of the cell; after it, the two verdicts.
func TestPlantedWaitsForAPrediction(t *testing.T) {
	recorded(t)
	attemptsIn(t)
	code, stderr := exited(t)
	out := capture(t)
	const id = "01-sectors/sectors-float"
	Check(id, YourPrediction)
	out.Reset()
	Planted(id, 128)
	assert.Equal(t, "Checking the checker runs after your own prediction for "+id+" (above).\n", out.String())
	assert.Equal(t, -1, *code, "the cell ends cleanly")
	assert.Empty(t, stderr.String())

	Check(id, 0)
	out.Reset()
	Planted(id, 128)
	assert.Contains(t, out.String(), "planted right answer 4: "+id+": RIGHT")
	assert.Contains(t, out.String(), "planted wrong answer 128: "+id+": WRONG")
	assert.Equal(t, -1, *code)
}

// A wrong answer that matches a known wrong model gets the hint and the
// warp diagram of the instruction asked about; a plain wrong answer, and
// a right one, get no picture.
func TestCheckDrawsTheMisconception(t *testing.T) {
	recorded(t)
	attemptsIn(t)
	for _, tt := range []struct {
		name       string
		prediction float64
		picture    bool
	}{
		{name: "bytes for sectors", prediction: 1024, picture: true},
		{name: "requested bytes over 32", prediction: 4, picture: true},
		{name: "wrong, no known model", prediction: 7, picture: false},
		{name: "right", prediction: 32, picture: false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out := capture(t)
			v := Check("03-strided/sectors-stride-32", tt.prediction)
			require.NoError(t, v.Err)
			assert.Equal(t, tt.picture, len(v.Hints) > 0, "%v", v.Hints)
			if tt.picture {
				assert.Contains(t, out.String(), "(not in a notebook: no picture")
			} else {
				assert.NotContains(t, out.String(), "no picture")
			}
		})
	}
}

// A prediction with its unit, in quotes, is read by the grader's one
// reader and the verdict says what it was read as; a text that is not the
// question's unit is an error that says what is allowed, and records
// nothing.
func TestCheckText(t *testing.T) {
	recorded(t)
	store := attemptsIn(t)
	out := capture(t)
	v := Check("01-sectors/sectors-float", "4 sectors")
	require.NoError(t, v.Err)
	assert.True(t, v.Right)
	assert.Equal(t, 4.0, v.Prediction)
	assert.Contains(t, out.String(), `your "4 sectors", read as 4 sectors per request;`)
	r, ok, err := store.Get("01-sectors/sectors-float")
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, 4.0, r.First.Value, "the number is recorded")

	out.Reset()
	v = Check("02-coalescing/efficiency-coalesced", "100%")
	require.NoError(t, v.Err)
	assert.Equal(t, 1.0, v.Prediction)

	out.Reset()
	v = Check("01-sectors/sectors-double", "8 bytes")
	require.ErrorIs(t, v.Err, grader.ErrPredictionText)
	assert.Contains(t, out.String(), `"8 bytes" is not a prediction: "bytes" is not this question's unit (sectors per request); write a number (32), or one with the question's unit, in quotes: "32 sectors"`)
	_, ok, err = store.Get("01-sectors/sectors-double")
	require.NoError(t, err)
	assert.False(t, ok, "an unreadable prediction is no attempt")

	v = Check("01-sectors/sectors-double", true)
	assert.ErrorContains(t, v.Err, "the prediction is a bool; want a number")
	assert.True(t, math.IsNaN(YourPrediction))
	assert.True(t, Check("01-sectors/sectors-double", YourPrediction).Unanswered)
}
