package main

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coalescing-course/coalesce/lessons/measure"
	"github.com/coalescing-course/coalesce/lessons/metrics"
	"github.com/coalescing-course/coalesce/lessons/spec"
)

// A fault is what the GPU did with a launch, so a recording keeps it (the
// notebooks show it without a GPU); a launch that failed for any other
// reason (a refused spec, a wrong result) is left out.
func TestWriteRunFileKeepsFaults(t *testing.T) {
	parse := func(text string) spec.Spec {
		s, err := spec.Parse([]byte(text))
		require.NoError(t, err)
		return s
	}
	good := parse(`{"kernel":"coalesced_copy","n":1024}`)
	fault := parse(`{"kernel":"vectorized_copy","n":1024,"width":4,"offset":3}`)
	wrong := parse(`{"kernel":"strided_copy","n":1024,"stride":2}`)
	set := &measure.Set{
		Provenance: &measure.Provenance{Device: measure.DeviceInfo{GPU: "NVIDIA H200"}, Date: "2026-12-01T05:11:21Z", Command: "coalesce run -ncu -record run.jsonl sweep.jsonl"},
		Launches: []measure.Launch{
			{Line: 1, Spec: good, TimeMs: 1, TimedLaunches: 20, MemcpyMs: 1, MemcpyBytes: 4096, Threads: 1024, GridBlocks: 4, L2Fetch: 64, Verified: true},
			{Line: 2, Spec: fault, Error: "cudaDeviceSynchronize(): misaligned address (cudaErrorMisalignedAddress)", CUDAError: "cudaErrorMisalignedAddress"},
			{Line: 3, Spec: wrong, Error: "verification failed: 3 output elements wrong"},
		},
	}
	assert.Equal(t, 2, recorded(set))
	path := filepath.Join(t.TempDir(), "run.jsonl")
	require.NoError(t, writeRunFile(path, set))
	back, err := measure.ReadFile(path)
	require.NoError(t, err)
	require.Len(t, back.Launches, 2)
	assert.Equal(t, good, back.Launches[0].Spec)
	assert.Equal(t, fault, back.Launches[1].Spec)
	assert.Equal(t, "cudaErrorMisalignedAddress", back.Launches[1].CUDAError)
	assert.Zero(t, back.Launches[1].Line, "a recording carries no input line numbers")
}

// A recording holds what the GPU measured: where ncu was refused the
// counters, the launch's live times are kept and the model's counters left
// out, so that no later run borrows them as the recording's.
func TestWriteRunFileLeavesBorrowedCountersOut(t *testing.T) {
	s, err := spec.Parse([]byte(`{"kernel":"coalesced_copy","n":1024}`))
	require.NoError(t, err)
	set := &measure.Set{
		Provenance: &measure.Provenance{Device: measure.DeviceInfo{GPU: "NVIDIA GeForce RTX 4090"}, Date: "2026-12-01T05:11:21Z", Command: "coalesce run -ncu -record run.jsonl sweep.jsonl"},
		Launches: []measure.Launch{{Line: 1, Spec: s, TimeMs: 1, Verified: true,
			Metrics: metrics.Set{metrics.LdSectors: 128}, Counters: measure.CountersModel}},
	}
	path := filepath.Join(t.TempDir(), "run.jsonl")
	require.NoError(t, writeRunFile(path, set))
	back, err := measure.ReadFile(path)
	require.NoError(t, err)
	require.Len(t, back.Launches, 1)
	assert.Equal(t, 1.0, back.Launches[0].TimeMs)
	assert.Nil(t, back.Launches[0].Metrics)
	assert.Empty(t, back.Launches[0].Counters)
}
