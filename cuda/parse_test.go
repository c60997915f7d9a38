package cuda

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coalescing-course/coalesce/cuda/toolkit"
)

const okTimed = `{"line":1,"time_ms":0.2,"time_ms_min":0.19,"time_ms_max":0.25,"timed_launches":20,"memcpy_ms":0.1,"memcpy_bytes":4,"threads":2,"grid_blocks":1,"block":256,"l2_fetch_granularity":64,"launched":true,"verified":true}`
const okProfile = `{"line":1,"threads":2,"grid_blocks":1,"block":256,"l2_fetch_granularity":64,"launched":true,"verified":true}`

func TestParseHarnessOutput(t *testing.T) {
	tests := []struct {
		name  string
		data  string
		n     int
		timed bool
		want  string // error substring; "" for success
	}{
		{"timed", okTimed + "\n", 1, true, ""},
		{"profile", okProfile + "\n", 1, false, ""},
		{"error line", `{"line":1,"error":"spec: stride = 0","launched":false}` + "\n", 1, true, ""},
		{"no final newline", okProfile, 1, false, ""},
		{"profile line where times are due", okProfile + "\n", 1, true, "without time_ms"},
		{"not verified", strings.Replace(okTimed, `"verified":true`, `"verified":false`, 1), 1, true, `"verified": true`},
		{"not launched", strings.Replace(okTimed, `"launched":true`, `"launched":false`, 1), 1, true, `"launched": true`},
		{"too few launches", strings.Replace(okTimed, `"timed_launches":20`, `"timed_launches":5`, 1), 1, true, "at least 9"},
		{"median outside range", strings.Replace(okTimed, `"time_ms":0.2,`, `"time_ms":0.3,`, 1), 1, true, "does not hold"},
		{"zero time", strings.Replace(okTimed, `"memcpy_ms":0.1`, `"memcpy_ms":0`, 1), 1, true, "memcpy_ms = 0"},
		{"no memcpy size", strings.Replace(okTimed, `"memcpy_bytes":4`, `"memcpy_bytes":0`, 1), 1, true, "memcpy_bytes = 0"},
		{"a field of the first build", strings.Replace(okProfile, `"threads":2`, `"useful_bytes":8,"threads":2`, 1), 1, false, `unknown field "useful_bytes"`},
		{"no threads", strings.Replace(okProfile, `"threads":2`, `"threads":0`, 1), 1, false, "positive"},
		{"wrong line number", strings.Replace(okProfile, `"line":1`, `"line":2`, 1), 1, false, "out of order"},
		{"two objects on a line", okProfile + okProfile, 1, false, "trailing data"},
		{"not JSON", "Segmentation fault\n", 1, false, "not the harness's JSON"},
		{"string where a number goes", strings.Replace(okProfile, `"threads":2`, `"threads":"2"`, 1), 1, false, "not the harness's JSON"},
		{"count short", okProfile + "\n", 2, false, "1 answers to 2 specs"},
		{"blank line", okProfile + "\n\n", 1, false, "empty line"},
		{"nothing", "", 1, false, "0 answers to 1 specs"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseHarnessOutput([]byte(tt.data), tt.n, tt.timed)
			if tt.want == "" {
				require.NoError(t, err)
				assert.Len(t, got, tt.n)
				return
			}
			var oe *toolkit.OutputError
			require.ErrorAs(t, err, &oe)
			assert.Equal(t, "harness", oe.Tool)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

// The harness's answers to the small launches of every kernel, as it gave
// them on the H200 under compute-sanitizer (runs/check.sh), parse
// as they are.
func TestParseHarnessOutputRecorded(t *testing.T) {
	data, err := os.ReadFile("testdata/sanitize.txt")
	require.NoError(t, err)
	var lines []string
	for _, l := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(l, "{") {
			lines = append(lines, l)
		}
	}
	got, err := parseHarnessOutput([]byte(strings.Join(lines, "\n")), 39, false)
	require.NoError(t, err)
	for _, a := range got {
		assert.True(t, a.Verified)
	}
}

func FuzzParseHarnessOutput(f *testing.F) {
	f.Add([]byte(okTimed+"\n"), 1, true)
	f.Add([]byte(okProfile+"\n"), 1, false)
	f.Add([]byte(`{"line":1,"error":"x"}`+"\n"+okProfile), 2, false)
	f.Add([]byte("Segmentation fault"), 1, true)
	f.Add([]byte(okProfile+"\n"+`{"line":2,"error":"misaligned address","launched":true,"cuda_error":"cudaErrorMisalignedAddress","context_failed":true}`+"\n"), 3, false)
	f.Fuzz(func(t *testing.T, data []byte, n int, timed bool) {
		got, err := parseHarnessOutput(data, n, timed)
		if err != nil {
			var oe *toolkit.OutputError
			if !assert.ErrorAs(t, err, &oe) {
				t.FailNow()
			}
			return
		}
		// Fewer answers than specs only after a fault: a profiler may
		// end the harness there.
		if len(got) > n || len(got) < n && faultAt(got) < 0 {
			t.Fatalf("%d answers accepted for %d specs", len(got), n)
		}
		for i, a := range got {
			if a.Line != i+1 {
				t.Fatalf("answer %d says line %d", i, a.Line)
			}
			if a.Error == "" && (!a.Verified || (timed && (a.TimeMs == nil || *a.TimeMs <= 0))) {
				t.Fatalf("an unverified or untimed result accepted: %+v", a)
			}
		}
	})
}
