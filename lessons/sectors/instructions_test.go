package sectors

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coalescing-course/coalesce/lessons/metrics"
	"github.com/coalescing-course/coalesce/lessons/spec"
)

// Coalescing every recorded instruction of every warp must give Model's
// L1 counts: the instructions are what the model counts.
func TestInstructionsMatchModel(t *testing.T) {
	for _, js := range []string{
		`{"kernel":"coalesced_copy","n":1000,"block":100}`,
		`{"kernel":"strided_copy","n":3000,"stride":3,"elem_bytes":8,"block":96}`,
		`{"kernel":"strided_read","n":4096,"stride":32}`,
		`{"kernel":"strided_write","n":4096,"stride":7,"elem_bytes":2}`,
		`{"kernel":"offset_copy","n":1000,"offset":5,"elem_bytes":16}`,
		`{"kernel":"vectorized_copy","n":1024,"width":2,"block":33}`,
		`{"kernel":"grid_stride_copy","n":4096,"width":4,"unroll":3,"grid":3,"block":64}`,
		`{"kernel":"gather_copy","n":777,"index_pattern":"random"}`,
		`{"kernel":"update_x_aos","n":500,"struct_bytes":24,"field_offset":8}`,
		`{"kernel":"update_x_soa","n":500}`,
		`{"kernel":"sum_fields_aos","n":500,"struct_bytes":48,"vector":true}`,
		`{"kernel":"sum_fields_aos","n":500,"struct_bytes":12}`,
		`{"kernel":"sum_fields_soa","n":500,"struct_bytes":20}`,
		`{"kernel":"vectorized_copy","n":1000,"width":2,"offset":6}`,
		`{"kernel":"copy_rows","rows":70,"cols":45,"tile":16,"block_rows":4}`,
		`{"kernel":"copy_columns","rows":45,"cols":70}`,
		`{"kernel":"transpose_coalesced_read","rows":33,"cols":100,"tile":8,"block_rows":1}`,
		`{"kernel":"transpose_coalesced_write","rows":100,"cols":33,"block_rows":32}`,
		`{"kernel":"transpose_tiled","rows":100,"cols":37,"pad":0}`,
		`{"kernel":"transpose_tiled","rows":37,"cols":100,"tile":16,"block_rows":2,"pad":3}`,
	} {
		t.Run(js, func(t *testing.T) {
			s, err := spec.Parse([]byte(js))
			require.NoError(t, err)
			p, err := Model(s)
			require.NoError(t, err)
			var got l1
			var shared [4]float64 // ld requests, ld wavefronts, st requests, st wavefronts
			for w := range Warps(s) {
				ins, err := Instructions(s, w)
				require.NoError(t, err)
				for _, in := range ins {
					if in.Shared {
						n, err := Wavefronts(in.Warp)
						require.NoError(t, err)
						i := 0
						if in.Store {
							i = 2
						}
						if n > 0 || in.Predicated {
							shared[i]++
						}
						shared[i+1] += float64(n)
						continue
					}
					a, err := Coalesce(in.Warp)
					require.NoError(t, err)
					if in.Store {
						got.stReq += float64(a.Requests)
						got.stSec += float64(len(a.Sectors))
					} else {
						got.ldReq += float64(a.Requests)
						got.ldSec += float64(len(a.Sectors))
					}
				}
			}
			assert.Equal(t, l1Of(p), got)
			assert.Equal(t, [4]float64{p.Metrics[metrics.ShLdRequests], p.Metrics[metrics.ShLdWavefronts], p.Metrics[metrics.ShStRequests], p.Metrics[metrics.ShStWavefronts]}, shared)
			assert.Equal(t, p.Warps, Warps(s))
		})
	}
}

func TestInstructionsDescribeTheSource(t *testing.T) {
	s, err := spec.Parse([]byte(`{"kernel":"gather_copy","n":64,"index_pattern":"reverse"}`))
	require.NoError(t, err)
	ins, err := Instructions(s, 1)
	require.NoError(t, err)
	require.Len(t, ins, 3)
	assert.Equal(t, []string{"idx[t]", "in[idx[t]]", "out[t]"}, []string{ins[0].Access, ins[1].Access, ins[2].Access})
	assert.Equal(t, []string{"idx", "in", "out"}, []string{ins[0].Buffer, ins[1].Buffer, ins[2].Buffer})
	assert.True(t, ins[2].Store)
	// Warp 1 is threads 32..63; reverse reads element 63-t: lane 0 at byte 31*4.
	assert.Equal(t, uint64(31*4), ins[1].Warp.Addr[0])
	assert.Equal(t, uint64(0), ins[1].Warp.Addr[31])

	_, err = Instructions(s, 8) // one block of 256 threads: warps 0 to 7
	assert.ErrorIs(t, err, ErrWarp)
	_, err = WarpInstructions(s, []int32{1, 2}, 1)
	assert.ErrorIs(t, err, spec.ErrIndices, "a short index prefix is refused")
}
