package cuda

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The plans of the 2D kernels, sum_fields_soa and an offset
// vectorized_copy carry every key the harness reads, computed here by hand.
func TestPlanNewKernels(t *testing.T) {
	tests := []struct {
		name, spec, want string
	}{
		{
			// Blocks of 16 x 4 threads over 16 x 16 squares; threadIdx.x
			// walks a row: grid x = ceil(70/16) = 5 along the columns,
			// y = ceil(100/16) = 7 along the rows: 35 blocks, 35 x 64 =
			// 2240 threads. Shared: 16 rows of 16+1 floats, 4 x 16 x 17 =
			// 1088 bytes. n = 100 x 70 = 7000 floats, 28000 bytes a buffer.
			name: "transpose_tiled",
			spec: `{"kernel":"transpose_tiled","rows":100,"cols":70,"tile":16,"block_rows":4,"pad":1}`,
			want: `{"kernel":"transpose_tiled","rows":100,"cols":70,"tile":16,"block_rows":4,"pad":1,"l2_fetch_granularity":64,
				"n":7000,"block":64,"blocks":35,"threads":2240,"block_x":16,"block_y":4,"grid_x":5,"grid_y":7,"shared_bytes":1088,
				"bytes_in":28000,"bytes_out":28000,"memcpy_from":"in","memcpy_to":"out"}`,
		},
		{
			// threadIdx.x walks a column: grid x = ceil(100/32) = 4 along
			// the rows, y = ceil(70/32) = 3; blocks of 32 x 8 = 256; pad 0
			// and no shared memory for a kernel without a tile in shared.
			name: "copy_columns",
			spec: `{"kernel":"copy_columns","rows":100,"cols":70}`,
			want: `{"kernel":"copy_columns","rows":100,"cols":70,"tile":32,"block_rows":8,"l2_fetch_granularity":64,
				"n":7000,"block":256,"pad":0,"blocks":12,"threads":3072,"block_x":32,"block_y":8,"grid_x":4,"grid_y":3,"shared_bytes":0,
				"bytes_in":28000,"bytes_out":28000,"memcpy_from":"in","memcpy_to":"out"}`,
		},
		{
			// (1024 - 3) / 4 = 255 float4s from in[3] on: 255 threads in
			// one block of 256, every load misaligned by 12 bytes.
			name: "vectorized_copy with an offset",
			spec: `{"kernel":"vectorized_copy","n":1024,"width":4,"offset":3}`,
			want: `{"kernel":"vectorized_copy","n":1024,"block":256,"width":4,"offset":3,"l2_fetch_granularity":64,
				"blocks":1,"threads":255,"block_x":256,"block_y":1,"grid_x":1,"grid_y":1,"shared_bytes":0,
				"bytes_in":4096,"bytes_out":4096,"memcpy_from":"in","memcpy_to":"out"}`,
		},
		{
			// 1000 elements of 3 fields: p holds 12000 bytes, out 4000;
			// ceil(1000/256) = 4 blocks.
			name: "sum_fields_soa",
			spec: `{"kernel":"sum_fields_soa","n":1000,"struct_bytes":12}`,
			want: `{"kernel":"sum_fields_soa","n":1000,"block":256,"struct_bytes":12,"l2_fetch_granularity":64,
				"blocks":4,"threads":1000,"block_x":256,"block_y":1,"grid_x":4,"grid_y":1,"shared_bytes":0,
				"bytes_p":12000,"bytes_out":4000,"memcpy_from":"p","memcpy_to":""}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := mustParse(t, tt.spec)[0]
			line, err := plan(s, nil, "")
			require.NoError(t, err)
			assert.JSONEq(t, tt.want, string(line))
		})
	}
}
