package lab

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coalescing-course/coalesce/cuda"
)

// fakeGPU is a GPU whose harness is a shell script that writes answer to
// the file named by its --output flag: the live path, without a GPU.
func fakeGPU(t *testing.T, answer string) *cuda.GPU {
	t.Helper()
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh to run a fake harness with")
	}
	dir := t.TempDir()
	results := filepath.Join(dir, "results.jsonl")
	require.NoError(t, os.WriteFile(results, []byte(answer+"\n"), 0o644))
	script := filepath.Join(dir, "harness")
	body := "#!/bin/sh\nwhile [ $# -gt 0 ]; do\n  if [ \"$1\" = --output ]; then cp " + results + " \"$2\"; fi\n  shift\ndone\n"
	require.NoError(t, os.WriteFile(script, []byte(body), 0o755))
	return &cuda.GPU{Harness: &cuda.Harness{Path: script}, Info: cuda.DeviceInfo{GPU: "Fake GPU"}}
}

func withoutNcu(t *testing.T) {
	t.Helper()
	old := findNcu
	findNcu = func() (cuda.Ncu, error) { return cuda.Ncu{}, errors.New("ncu not found on PATH") }
	t.Cleanup(func() { findNcu = old })
}

func TestMeasureLive(t *testing.T) {
	withoutNcu(t)
	// coalesced_copy of 1024 floats: 1024 threads in 4 blocks, 8192 useful bytes.
	gpu := fakeGPU(t, `{"line":1,"time_ms":0.004,"time_ms_min":0.0039,"time_ms_max":0.0041,"timed_launches":20,`+
		`"useful_bytes":8192,"useful_gbps":2.048,"memcpy_ms":0.003,"memcpy_gbps":2.7,"memcpy_bytes":4096,`+
		`"threads":1024,"grid_blocks":4,"block":256,"l2_fetch_granularity":64,"launched":true,"verified":true}`)
	src := &Source{Label: "live: Fake GPU, 2026-12-01 10:00 UTC", Live: true, GPU: gpu}
	s := Spec(`{"kernel":"coalesced_copy","n":1024}`)
	m, err := src.Measure(s)
	require.NoError(t, err)
	assert.True(t, m.Live)
	assert.Equal(t, "live: Fake GPU, 2026-12-01 10:00 UTC", m.Source)
	assert.Contains(t, m.Note, "no ncu on this machine: times only")
	r, ok := m.Result(s)
	require.True(t, ok)
	assert.Equal(t, 0.004, r.TimeMs)
	assert.Nil(t, r.Metrics)
	text := m.Table().String()
	assert.Contains(t, text, "Measured: live: Fake GPU, 2026-12-01 10:00 UTC. no ncu on this machine")
	assert.Regexp(t, `(?m)^coalesced_copy, n 2\^10 +4\.0 +2 +75\.9% +— +— +—$`, text)

	// Compare fills the measured columns from the live run.
	tb, err := src.Compare([]Case{{"copy", s}}, UsefulGBps, LdSectorsPerRequest)
	require.NoError(t, err)
	assert.Equal(t, []string{"copy", tb.Rows[0][1], "2", "4", Missing}, tb.Rows[0])
}

func TestMeasureLiveFailure(t *testing.T) {
	withoutNcu(t)
	gpu := fakeGPU(t, `{"line":1,"error":"needs 4096 GiB, 139 GiB free"}`)
	src := &Source{Label: "live: Fake GPU", Live: true, GPU: gpu}
	_, err := src.Measure(Spec(`{"kernel":"coalesced_copy","n":1024}`))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "lab: 1 launch failed on Fake GPU:")
	assert.Contains(t, err.Error(), "needs 4096 GiB, 139 GiB free")
}
