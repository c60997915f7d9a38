package grader

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coalescing-course/coalesce/lessons/devices"
	"github.com/coalescing-course/coalesce/lessons/spec"
)

// TestModelOfFollowsTheProfile: the model's account is kept once a
// process for a spec and its profile, so a calibration registered again
// under its name is modelled again, not served from the first: a copy
// twice as fast takes half the bandwidth part of the time.
func TestModelOfFollowsTheProfile(t *testing.T) {
	h200, err := devices.Lookup("h200")
	require.NoError(t, err)
	p := h200
	p.Name, p.Match = "grader-test-calibrated", nil
	require.NoError(t, devices.Register(p))
	s, err := spec.Parse([]byte(`{"kernel":"coalesced_copy","n":1048576,"device":"grader-test-calibrated"}`))
	require.NoError(t, err)

	first := modelOf(s, nil)
	require.NoError(t, first.err)
	assert.Equal(t, first, modelOf(s, nil), "the same spec and profile: kept")

	p.Time.CopyBandwidth *= 2
	require.NoError(t, devices.Register(p))
	again := modelOf(s, nil)
	require.NoError(t, again.err)
	assert.Equal(t, first.p.Metrics, again.p.Metrics, "the counts do not read the bandwidth")
	assert.InDelta(t, first.p.Time.Bandwidth/2, again.p.Time.Bandwidth, 1e-15, "the new profile's time")
}
