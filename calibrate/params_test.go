package calibrate

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"

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
