package grader

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coalescing-course/coalesce/lessons/metrics"
	"github.com/coalescing-course/coalesce/lessons/sectors"
	"github.com/coalescing-course/coalesce/lessons/spec"
)

// TestWarpInstrsMatchModel holds the explanation's warps to the model: the
// instructions warpInstrs draws, summed over every warp of a small launch,
// give the very L1 counts sectors.Model does.
func TestWarpInstrsMatchModel(t *testing.T) {
	specs := []string{
		`{"kernel":"coalesced_copy","n":1000}`,
		`{"kernel":"coalesced_copy","n":1000,"elem_bytes":16,"block":33}`,
		`{"kernel":"coalesced_copy","n":777,"elem_bytes":1,"block":100}`,
		`{"kernel":"strided_copy","n":4096,"stride":32}`,
		`{"kernel":"strided_copy","n":5000,"stride":3,"elem_bytes":8}`,
		`{"kernel":"strided_read","n":4096,"stride":7}`,
		`{"kernel":"strided_write","n":4096,"stride":2,"elem_bytes":2}`,
		`{"kernel":"offset_copy","n":3000,"offset":1}`,
		`{"kernel":"offset_copy","n":3000,"offset":5,"elem_bytes":2}`,
		`{"kernel":"vectorized_copy","n":4096,"width":4}`,
		`{"kernel":"vectorized_copy","n":1000,"width":2,"block":96}`,
		`{"kernel":"grid_stride_copy","n":4096,"width":4,"unroll":2,"grid":4}`,
		`{"kernel":"grid_stride_copy","n":1000,"width":1,"unroll":1,"grid":8}`,
		`{"kernel":"gather_copy","n":2048,"index_pattern":"random"}`,
		`{"kernel":"gather_copy","n":2000,"index_pattern":"broadcast_warp"}`,
		`{"kernel":"update_x_aos","n":1000,"struct_bytes":24}`,
		`{"kernel":"update_x_aos","n":1000,"struct_bytes":16,"field_offset":12}`,
		`{"kernel":"update_x_soa","n":1000}`,
		`{"kernel":"sum_fields_aos","n":1000,"struct_bytes":12}`,
		`{"kernel":"sum_fields_aos","n":1000,"struct_bytes":32,"vector":true}`,
	}
	for _, text := range specs {
		t.Run(text, func(t *testing.T) {
			s, err := spec.Parse([]byte(text))
			require.NoError(t, err)
			if s.Kernel == spec.GridStrideCopy {
				// warpInstrs draws one trip of the loop: keep the launch to one.
				require.LessOrEqual(t, s.N/int64(s.Width), s.GridBlocks()*int64(s.Block)*int64(s.Unroll))
			}
			p, err := sectors.Model(s)
			require.NoError(t, err)
			var idx []int32
			if s.Kernel == spec.GatherCopy {
				idx, err = s.Indices()
				require.NoError(t, err)
			}
			got := metrics.Set{metrics.LdRequests: 0, metrics.LdSectors: 0, metrics.StRequests: 0, metrics.StSectors: 0}
			warps := (int64(s.Block) + sectors.WarpSize - 1) / sectors.WarpSize
			for b := range s.GridBlocks() {
				for w := range warps {
					for _, in := range warpInstrs(s, idx, b, w) {
						a, err := sectors.Coalesce(in.Warp)
						require.NoError(t, err)
						if in.Store {
							got[metrics.StRequests] += float64(a.Requests)
							got[metrics.StSectors] += float64(len(a.Sectors))
						} else {
							got[metrics.LdRequests] += float64(a.Requests)
							got[metrics.LdSectors] += float64(len(a.Sectors))
						}
					}
				}
			}
			for m, v := range got {
				assert.Equal(t, p.Metrics[m], v, m)
			}
		})
	}
}
