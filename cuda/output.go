package cuda

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math"

	"github.com/coalescing-course/coalesce/cuda/toolkit"
)

// harnessLine is one line the harness writes: a result or an error. The
// JSON schema is the harness's (src/harness.cu, result_line).
type harnessLine struct {
	Line      int    `json:"line"`
	Error     string `json:"error"`
	CUDAError string `json:"cuda_error"`
	// ContextFailed marks a fault inside the kernel: the harness's CUDA
	// context is lost, and it answers every later line "not run".
	ContextFailed bool     `json:"context_failed"`
	Launched      bool     `json:"launched"`
	Verified      bool     `json:"verified"`
	TimeMs        *float64 `json:"time_ms"`
	TimeMsMin     *float64 `json:"time_ms_min"`
	TimeMsMax     *float64 `json:"time_ms_max"`
	TimedLaunches int      `json:"timed_launches"`
	MemcpyMs      *float64 `json:"memcpy_ms"`
	MemcpyBytes   int64    `json:"memcpy_bytes"`
	Threads       int64    `json:"threads"`
	GridBlocks    int64    `json:"grid_blocks"`
	Block         int      `json:"block"`
	L2Fetch       int      `json:"l2_fetch_granularity"`
}

// Minimums the harness promises for a timed result.
const (
	minWarmups       = 3
	MinTimedLaunches = 9
)

// parseHarnessOutput reads the harness's answers to n lines of input. Every
// line must be one JSON object, answer i must say "line": i, there must be
// exactly n of them, and a result (a line without "error") must carry what
// its mode promises: verified true, and when timed, the times. After a
// fault ("context_failed") fewer may come, since a profiler may end the
// harness there; the answers after it say only "not run".
func parseHarnessOutput(data []byte, n int, timed bool) ([]harnessLine, error) {
	var out []harnessLine
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	num := 0
	for sc.Scan() {
		num++
		text := bytes.TrimSpace(sc.Bytes())
		if len(text) == 0 {
			return nil, &toolkit.OutputError{Tool: "harness", Line: num, Msg: "empty line, want one JSON object per spec"}
		}
		var hl harnessLine
		dec := json.NewDecoder(bytes.NewReader(text))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&hl); err != nil {
			return nil, &toolkit.OutputError{Tool: "harness", Line: num, Msg: fmt.Sprintf("not the harness's JSON: %v: %.200q", err, text)}
		}
		if dec.More() {
			return nil, &toolkit.OutputError{Tool: "harness", Line: num, Msg: "trailing data after the JSON object"}
		}
		if hl.Line != num {
			return nil, &toolkit.OutputError{Tool: "harness", Line: num, Msg: fmt.Sprintf(`"line" is %d, want %d: answers out of order`, hl.Line, num)}
		}
		if hl.Error == "" {
			if err := hl.check(timed); err != nil {
				return nil, &toolkit.OutputError{Tool: "harness", Line: num, Msg: err.Error()}
			}
		}
		out = append(out, hl)
	}
	if err := sc.Err(); err != nil {
		return nil, &toolkit.OutputError{Tool: "harness", Line: num + 1, Msg: err.Error()}
	}
	if len(out) > n || len(out) < n && faultAt(out) < 0 {
		return nil, &toolkit.OutputError{Tool: "harness", Msg: fmt.Sprintf("%d answers to %d specs", len(out), n)}
	}
	return out, nil
}

// faultAt returns the index of the first answer whose kernel faulted, or -1.
func faultAt(answers []harnessLine) int {
	for i, a := range answers {
		if a.ContextFailed {
			return i
		}
	}
	return -1
}

func (hl *harnessLine) check(timed bool) error {
	switch {
	case !hl.Verified:
		return fmt.Errorf("a result without \"verified\": true")
	case !hl.Launched:
		return fmt.Errorf("a result without \"launched\": true")
	case hl.Threads <= 0 || hl.GridBlocks <= 0 || hl.Block <= 0:
		return fmt.Errorf("a result without positive threads, grid_blocks and block")
	}
	if !timed {
		return nil
	}
	for _, f := range []struct {
		name string
		v    *float64
	}{
		{"time_ms", hl.TimeMs}, {"time_ms_min", hl.TimeMsMin}, {"time_ms_max", hl.TimeMsMax},
		{"memcpy_ms", hl.MemcpyMs},
	} {
		name, v := f.name, f.v
		if v == nil {
			return fmt.Errorf("a timed result without %s", name)
		}
		if math.IsNaN(*v) || math.IsInf(*v, 0) || *v <= 0 {
			return fmt.Errorf("%s = %v, want a positive number", name, *v)
		}
	}
	if *hl.TimeMsMin > *hl.TimeMs || *hl.TimeMs > *hl.TimeMsMax {
		return fmt.Errorf("time_ms_min %v <= time_ms %v <= time_ms_max %v does not hold", *hl.TimeMsMin, *hl.TimeMs, *hl.TimeMsMax)
	}
	if hl.MemcpyBytes <= 0 {
		return fmt.Errorf("memcpy_bytes = %d, want a positive size", hl.MemcpyBytes)
	}
	if hl.TimedLaunches < MinTimedLaunches {
		return fmt.Errorf("timed_launches = %d, want at least %d", hl.TimedLaunches, MinTimedLaunches)
	}
	return nil
}
