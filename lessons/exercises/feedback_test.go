package exercises

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coalescing-course/coalesce/lessons/exercises/exercisestest"
	"github.com/coalescing-course/coalesce/lessons/metrics"
)

// Every shared metric's explanation speaks of banks and wavefronts, of
// the shared site of its side (load or store), never of sectors: for the
// unpadded tile the column read, whose lanes are 32 words apart (all in
// bank 0); for the column write the store. A shared instruction count is
// no site's cost: the accesses are to be counted.
func TestExplainShared(t *testing.T) {
	e := e0(t, "10-kernels/transpose")
	for _, tt := range []struct {
		name   string
		kernel TransposeKernel
		side   string // the site blamed, "tile.Load" or "tile.Store"
		file   string // where its kernel makes the access, file:line
	}{
		{"unpadded read", exercisestest.TransposeUnpadded, "tile.Load", "exercisestest.go:44"},
		{"column write", exercisestest.TransposeColumnStore, "tile.Store", "exercisestest.go:57"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out, err := e.Run(e.Variant(""), tt.kernel)
			require.NoError(t, err)
			require.NoError(t, out.Fault)
			require.True(t, out.Correct, "%v", out.Mismatch)
			for _, m := range metrics.Shared {
				why := explain(m, out.Result)
				assert.NotContains(t, why, "sector", m)
				blamed := (tt.side == "tile.Store") == metrics.IsStore(m)
				switch {
				case m == metrics.ShLdRequests || m == metrics.ShStRequests:
					assert.Contains(t, why, "count the accesses", m)
				case blamed:
					assert.Contains(t, why, tt.side+" at "+tt.file+" ", m)
					// Fewer than 32 on average: the variant's edge tiles are partial.
					assert.Regexp(t, `\(4 B a lane\): [0-9.]+ wavefronts an instruction, where 1 serves 32 lanes in 32 banks`, why, m)
					assert.Contains(t, why, "words are 32 apart, which puts 32 lanes in 1 bank(s)", m)
				default:
					assert.NotContains(t, why, "tile.", "%s: the other side's accesses cost 1 wavefront", m)
				}
			}
		})
	}
}
