package cuda

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coalescing-course/coalesce/lessons/metrics"
	"github.com/coalescing-course/coalesce/lessons/spec"
)

func testReference(t *testing.T) *Reference {
	t.Helper()
	specs := mustParse(t, threeSpecs...)
	ref := &Reference{Provenance: Provenance{
		Device:  DeviceInfo{GPU: "NVIDIA H200", SMs: 132},
		Driver:  "580.159.04",
		CUDA:    "13.0",
		Nvcc:    "Cuda compilation tools, release 13.0, V13.0.88",
		Date:    "2026-11-29T21:30:00Z",
		Command: "coalesce run -ncu -record h200.json sweep.jsonl",
	}}
	for i, s := range specs {
		ref.Records = append(ref.Records, Result{Spec: s, TimeMs: float64(i + 1), Verified: true,
			Metrics: metrics.Set{metrics.LdSectors: float64(100 * (i + 1))}})
	}
	return ref
}

func TestReferenceRoundTrip(t *testing.T) {
	ref := testReference(t)
	var b bytes.Buffer
	_, err := ref.WriteTo(&b)
	require.NoError(t, err)
	assert.Equal(t, 3, strings.Count(b.String(), "\n    {\"spec\":"), "one record per line")
	got, err := ReadReference(&b)
	require.NoError(t, err)
	assert.Equal(t, ref.Provenance, got.Provenance)
	require.Len(t, got.Records, 3)
	for i := range ref.Records {
		assert.Equal(t, ref.Records[i].Spec.String(), got.Records[i].Spec.String())
		assert.Equal(t, ref.Records[i].Metrics, got.Records[i].Metrics)
	}
}

func TestReferenceLookup(t *testing.T) {
	ref := testReference(t)
	// Written differently (defaults spelled out, other order), the same spec.
	same := mustParse(t, `{"n":64,"kernel":"gather_copy","block":256,"seed":1,"index_pattern":"reverse","l2_fetch_granularity":64}`)[0]
	r, ok := ref.Lookup(same)
	require.True(t, ok)
	assert.Equal(t, 2.0, r.TimeMs)
	other := mustParse(t, `{"kernel":"gather_copy","n":64,"index_pattern":"reverse","seed":2}`)[0]
	_, ok = ref.Lookup(other)
	assert.False(t, ok, "another seed is another spec")
	assert.Equal(t, "recorded on NVIDIA H200, 2026-11-29", ref.Label())
}

func TestReadReferenceErrors(t *testing.T) {
	tests := []struct{ name, data, want string }{
		{"not JSON", "[", "reading the reference"},
		{"no provenance", `{"records":[]}`, "without provenance"},
		{"bad spec", `{"provenance":{"device":{"gpu":"g"},"date":"d","command":"c"},"records":[{"spec":{"kernel":"nope","n":1}}]}`, "unknown kernel"},
		{"unknown field", `{"provenance":{"device":{"gpu":"g"},"date":"d","command":"c"},"extra":1}`, "unknown field"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ReadReference(strings.NewReader(tt.data))
			assert.ErrorContains(t, err, tt.want)
		})
	}
}

// The recorded reference holds a verified record with every metric for
// every spec of the sweep, and its provenance.
func TestRecordedCoversTheSweep(t *testing.T) {
	ref, err := Recorded()
	if errors.Is(err, ErrNoReference) {
		t.Skip("this build has no recorded reference yet")
	}
	require.NoError(t, err)
	p := ref.Provenance
	assert.NotEmpty(t, p.Device.GPU)
	assert.NotEmpty(t, p.Driver)
	assert.NotEmpty(t, p.CUDA)
	assert.NotEmpty(t, p.Nvcc)
	assert.NotEmpty(t, p.Ncu)
	assert.Contains(t, p.Command, "coalesce run -ncu -record")
	f, err := os.Open("reference/sweep.jsonl")
	require.NoError(t, err)
	defer f.Close()
	lines, err := spec.ReadAll(f)
	require.NoError(t, err)
	require.NotEmpty(t, lines)
	for _, l := range lines {
		require.NoError(t, l.Err)
		r, ok := ref.Lookup(l.Spec)
		if !assert.True(t, ok, "line %d not recorded: %s", l.Num, l.Spec) {
			continue
		}
		assert.True(t, r.Verified)
		assert.Greater(t, r.TimeMs, 0.0)
		assert.Greater(t, r.MemcpyGBps, 0.0)
		for _, m := range metrics.All {
			_, ok := r.Metrics[m]
			assert.True(t, ok, "line %d: no %s", l.Num, m)
		}
	}
}
