package grader

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coalescing-course/coalesce/cuda"
	"github.com/coalescing-course/coalesce/cuda/toolkit"
)

// TestLiveGPU grades two questions against this machine's GPU through the
// cuda package: a count read with ncu and a time ratio. It skips, saying
// why, where there is no GPU (or no nvcc); on the device machine:
//
//	go test -c -o build/grader-dev/grader.test ./grader          # here
//	cd grader && ../build/grader-dev/grader.test -test.run LiveGPU -test.v   # there
func TestLiveGPU(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: no GPU measurements")
	}
	ctx, cancel := context.WithTimeout(context.Background(), MeasureTimeout)
	defer cancel()
	gpu, err := cuda.OpenGPU(ctx, cuda.Builder{})
	var missing *toolkit.MissingError
	if errors.As(err, &missing) {
		t.Skipf("no GPU to measure on: %v", err)
	}
	require.NoError(t, err)
	t.Logf("source: %s", gpu.Origin())
	g := newGrader(t, gpu)

	v := g.Grade("03-strided/sectors-stride-32", 32)
	require.NoError(t, v.Err)
	t.Log("\n" + v.String())
	if gpu.Ncu != nil {
		require.NotNil(t, v.Measurement, "ncu is here: the count is measured")
		assert.InDelta(t, 32, v.Measurement.Value, 0.5, "ncu's sectors per request of a stride-32 warp")
	}

	v = g.Grade("03-strided/slowdown-stride-32", 8)
	require.NoError(t, v.Err)
	t.Log("\n" + v.String())
	require.NotNil(t, v.Measurement, v.NoMeasurement)
	assert.Greater(t, v.Measurement.Value, 2.0, "stride 32 is slower per useful byte than stride 1")
}
