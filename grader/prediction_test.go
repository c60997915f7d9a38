package grader

import (
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func question(t testing.TB, id string) *Question {
	t.Helper()
	b, err := Questions()
	require.NoError(t, err)
	q, err := b.Question(id)
	require.NoError(t, err)
	return q
}

func TestReadPrediction(t *testing.T) {
	tests := []struct {
		id, text string
		want     float64
		as       string
		err      string
	}{
		{"03-strided/sectors-stride-32", "32", 32, "32 sectors per request", ""},
		{"03-strided/sectors-stride-32", " 32 sectors ", 32, "32 sectors per request", ""},
		{"03-strided/sectors-stride-32", "32 Sectors per request", 32, "32 sectors per request", ""},
		{"03-strided/sectors-stride-32", "32 sectors/request", 32, "32 sectors per request", ""},
		{"01-sectors/sectors-byte", "1 sector", 1, "1 sector per request", ""},
		{"07-ncu-metric/ld-requests-coalesced", "2,097,152 requests", 2097152, "2,097,152 requests", ""},
		{"07-ncu-metric/ld-requests-coalesced", "2.097152e6", 2097152, "2,097,152 requests", ""},
		{"03-strided/efficiency-stride-2", "50%", 0.5, "0.5 (50%)", ""},
		{"03-strided/efficiency-stride-2", "50 %", 0.5, "0.5 (50%)", ""},
		{"03-strided/efficiency-stride-2", "0.5", 0.5, "0.5 (50%)", ""},
		{"03-strided/slowdown-stride-32", "3.1x", 3.1, "3.1 times slower", ""},
		{"03-strided/slowdown-stride-32", "3.1 ×", 3.1, "3.1 times slower", ""},
		{"03-strided/slowdown-stride-32", "3.1 times slower", 3.1, "3.1 times slower", ""},
		{"03-strided/slowdown-stride-32", "-.5", -0.5, "-0.5 times slower", ""},
		// What is refused, and said so.
		{"03-strided/sectors-stride-32", "32 bytes", 0, "", `"32 bytes" is not a prediction: "bytes" is not this question's unit (sectors per request); write a number (32), or one with the question's unit, in quotes: "32 sectors"`},
		{"03-strided/sectors-stride-32", "50%", 0, "", "a percentage, and this question does not ask for a share"},
		{"03-strided/sectors-stride-32", "3x", 0, "", "a ratio, and this question asks for sectors per request"},
		{"03-strided/slowdown-stride-32", "3 times faster", 0, "", `"times faster", and the question asks for times slower`},
		{"03-strided/sectors-stride-32", "thirty-two", 0, "", "no number at its start"},
		{"03-strided/sectors-stride-32", "", 0, "", "no number at its start"},
		{"03-strided/sectors-stride-32", "1e999", 0, "", `"1e999" is not a finite number`},
		{"03-strided/sectors-stride-32", "32 sectors sectors per request extra", 0, "", "is not this question's unit"},
		{"03-strided/efficiency-stride-2", "0.5; rm -rf", 0, "", "is not this question's unit"},
		{"03-strided/sectors-stride-32", strings.Repeat("9", 200), 0, "", "more than a number and its unit"},
	}
	for _, tt := range tests {
		t.Run(tt.id+" "+tt.text, func(t *testing.T) {
			r, err := ReadPrediction(question(t, tt.id), tt.text)
			if tt.err != "" {
				require.ErrorIs(t, err, ErrPredictionText)
				assert.Contains(t, err.Error(), tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, r.Value)
			assert.Equal(t, tt.as, r.As)
		})
	}
}

// FuzzReadPrediction: no text panics the reader; what it reads is a
// finite number, and writing that number back reads the same.
func FuzzReadPrediction(f *testing.F) {
	for _, s := range []string{"32", "32 sectors", "50%", "3.1x", "1,048,576 requests", "-0.5", "1e3", "", "x", "%", "32 bytes", "1,2345"} {
		f.Add("03-strided/sectors-stride-32", s)
		f.Add("03-strided/efficiency-stride-2", s)
		f.Add("03-strided/slowdown-stride-32", s)
	}
	b, err := Questions()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, id, text string) {
		q, err := b.Question(id)
		if err != nil {
			return
		}
		r, err := ReadPrediction(q, text)
		if err != nil {
			var pe *PredictionError
			if !assert.ErrorAs(t, err, &pe) {
				return
			}
			assert.Equal(t, q.ID, pe.ID)
			return
		}
		require.False(t, math.IsNaN(r.Value) || math.IsInf(r.Value, 0), "%q read as %v", text, r.Value)
		back, err := ReadPrediction(q, strconv.FormatFloat(r.Value, 'g', -1, 64))
		require.NoError(t, err)
		assert.Equal(t, r.Value, back.Value)
	})
}
