package reference

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coalescing-course/coalesce/lessons/metrics"
	"github.com/coalescing-course/coalesce/lessons/spec"
)

// The recording holds a verified launch with every metric its ncu was
// asked for for every spec of the sweep (a fault, for a spec the GPU
// refuses), and its provenance. Sweep lines of kernels the recording has
// no launch of at all are newer than it: the test lists them and skips,
// until the sweep is recorded again (runs/matrix.sh).
func TestRecordedCoversTheSweep(t *testing.T) {
	set, err := Recorded()
	require.NoError(t, err)
	p := set.Provenance
	require.NotNil(t, p)
	assert.NotEmpty(t, p.Device.GPU)
	assert.NotEmpty(t, p.Driver)
	assert.NotEmpty(t, p.CUDA)
	assert.NotEmpty(t, p.Nvcc)
	assert.NotEmpty(t, p.Ncu)
	assert.Contains(t, p.Command, "coalesce run -ncu -record")
	assert.Equal(t, "recorded on NVIDIA H200, 2026-12-01", set.Label())
	lines := readSpecFile(t, "sweep.jsonl")
	require.NotEmpty(t, lines)
	recorded := map[spec.Kernel]bool{}
	for _, l := range set.Launches {
		recorded[l.Spec.Kernel] = true
	}
	// The metrics the recording's ncu was asked for: its command line.
	var asked []string
	for _, m := range metrics.Profiled {
		if strings.Contains(p.Profiling, m) {
			asked = append(asked, m)
		}
	}
	assert.Subset(t, asked, metrics.L1, "the recording's ncu read at least the exact metrics")
	var newer []string
	for _, l := range lines {
		if !recorded[l.Spec.Kernel] {
			newer = append(newer, fmt.Sprintf("line %d: %s", l.Num, l.Spec.Brief()))
			continue
		}
		// A vectorized_copy whose offset is not a multiple of its width
		// faults; the offset is newer than the recording too.
		if l.Spec.Kernel == spec.VectorizedCopy && l.Spec.Offset%int64(l.Spec.Width) != 0 {
			if f, ok := set.Fault(l.Spec); ok {
				assert.Equal(t, "cudaErrorMisalignedAddress", f.CUDAError, "line %d", l.Num)
			} else {
				newer = append(newer, fmt.Sprintf("line %d: %s (a fault)", l.Num, l.Spec.Brief()))
			}
			continue
		}
		r, ok := set.Lookup(l.Spec)
		if !assert.True(t, ok, "line %d not recorded: %s", l.Num, l.Spec) {
			continue
		}
		assert.True(t, r.Verified)
		assert.Greater(t, r.TimeMs, 0.0)
		assert.Greater(t, r.MemcpyBandwidth(), 0.0)
		for _, m := range asked {
			_, ok := r.Metrics[m]
			assert.True(t, ok, "line %d: no %s", l.Num, m)
		}
	}
	if len(newer) > 0 {
		t.Skipf("%d sweep lines of kernels newer than the recording; record the sweep again:\n%s", len(newer), strings.Join(newer, "\n"))
	}
}

// Measurer gives the recording under its origin, with why as the reason it
// is not live, and what it does not hold as a launch error.
func TestMeasurer(t *testing.T) {
	m, err := Measurer("no GPU here: nvcc not found on PATH")
	require.NoError(t, err)
	assert.Equal(t, "recorded on NVIDIA H200, 2026-12-01 (no GPU here: nvcc not found on PATH)", m.Origin().Caption())
	set, err := Recorded()
	require.NoError(t, err)
	assert.Empty(t, set.Origin.Why, "the recording itself is not changed")
}

// readSpecFile reads a file of specs, one a line, every one valid.
func readSpecFile(t *testing.T, path string) []spec.Line {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	lines, err := spec.ReadAll(f)
	require.NoError(t, err)
	for _, l := range lines {
		require.NoError(t, l.Err, "%s:%d", path, l.Num)
	}
	return lines
}
