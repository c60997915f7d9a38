package plots

import (
	"bufio"
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"

	"github.com/coalescing-course/coalesce/lessons/measure"
	"github.com/coalescing-course/coalesce/lessons/sectors"
	"github.com/coalescing-course/coalesce/lessons/spec"
)

type vgLength = vg.Length

// readSnapshot reads testdata/model_snapshot.jsonl (coalesce model's
// output for the recorded launches) by kernel.
func readSnapshot(t *testing.T) map[spec.Kernel][]sectors.Launch {
	t.Helper()
	f, err := os.Open("testdata/model_snapshot.jsonl")
	require.NoError(t, err)
	defer f.Close()
	out := map[spec.Kernel][]sectors.Launch{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var p sectors.Launch
		require.NoError(t, json.Unmarshal(sc.Bytes(), &p))
		out[p.Spec.Kernel] = append(out[p.Spec.Kernel], p)
	}
	require.NoError(t, sc.Err())
	return out
}

// readRecorded reads testdata/h200_recorded.jsonl, a part of the
// recording cuda/reference/h200.jsonl.
func readRecorded(t *testing.T) *measure.Set {
	t.Helper()
	f, err := os.Open("testdata/h200_recorded.jsonl")
	require.NoError(t, err)
	defer f.Close()
	when := time.Date(2026, 11, 29, 21, 30, 0, 0, time.UTC)
	m, err := measure.ReadSet(f, "h200_recorded.jsonl", measure.Origin{Kind: measure.Recorded, GPU: "NVIDIA H200", When: when})
	require.NoError(t, err)
	require.NoError(t, m.Err())
	return m
}

// plotOf draws a chart whole, for the tests that look at its pixels.
func plotOf(c *Chart, err error) (*plot.Plot, error) {
	if err != nil {
		return nil, err
	}
	return c.Plot()
}
