package calibrate

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coalescing-course/coalesce/cuda"
	"github.com/coalescing-course/coalesce/lessons/devices"
)

// Every number calibration fits is a number of devices.Paths, by the path
// its citation and its estimate go by, once: get and set reach the field
// the path names (a value set reads back, an integer as its integer part).
func TestParamsArePaths(t *testing.T) {
	all := append(append(slices.Clone(dramParams), busyParam), timeParams...)
	seen := map[string]bool{}
	for _, q := range all {
		t.Run(q.path, func(t *testing.T) {
			assert.Contains(t, devices.Paths(), q.path)
			assert.False(t, seen[q.path], "fitted twice")
			seen[q.path] = true
			var p devices.Profile
			_, err := p.Number(q.path)
			if !assert.NoError(t, err) {
				return
			}
			q.set(&p, 12.75)
			got := q.get(&p)
			assert.Contains(t, []float64{12, 12.75}, got, "the value set, or its integer part")
			var zero devices.Profile
			q.set(&zero, 0)
			assert.Equal(t, zero, devices.Profile{}, "setting 0 changes nothing else")
		})
	}
	assert.Len(t, seen, 19, "7 DRAM capacities, the busy one, 11 time parameters")
}

// AdoptGPU is the one choice of the model's profile for where measurements
// come from: a live GPU's by its device (Adopt), then nothing live (nil)
// back to the course's H200 with the course's reason.
func TestAdoptGPU(t *testing.T) {
	testCache(t)
	t.Cleanup(func() { require.NoError(t, devices.Use(devices.Course, devices.CourseWhy)) })

	p, why, err := AdoptGPU(&cuda.GPU{Info: t4Info})
	require.NoError(t, err)
	assert.Equal(t, "t4", p.Name)
	cur, curWhy := devices.Current()
	assert.Equal(t, "t4", cur.Name)
	assert.Equal(t, "this machine's Tesla T4, by its name", why)
	assert.Equal(t, why, curWhy)

	p, why, err = AdoptGPU(nil)
	require.NoError(t, err)
	assert.Equal(t, devices.Course, p.Name)
	assert.Equal(t, devices.CourseWhy, why)
	cur, curWhy = devices.Current()
	assert.Equal(t, devices.Course, cur.Name)
	assert.Equal(t, devices.CourseWhy, curWhy)
}
