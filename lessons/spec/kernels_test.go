package spec

import (
	"slices"
	"testing"

	"github.com/coalescing-course/coalesce/lessons/devices"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func mustParse(t *testing.T, text string) Spec {
	t.Helper()
	s, err := Parse([]byte(text))
	require.NoError(t, err)
	return s
}

func TestBuffers(t *testing.T) {
	tests := []struct {
		in   string
		want []Buffer
		from string
		to   string
	}{
		// n elements of elem_bytes each, in and out.
		{`{"kernel":"coalesced_copy","n":1000,"elem_bytes":8}`, []Buffer{{"in", 8000}, {"out", 8000}}, "in", "out"},
		// the whole array, though only every 32nd element is touched.
		{`{"kernel":"strided_read","n":1024,"stride":32}`, []Buffer{{"in", 4096}, {"out", 4096}}, "in", "out"},
		// a store-only kernel has nothing to read: its ceiling copies out elsewhere.
		{`{"kernel":"strided_write","n":1024,"stride":2,"elem_bytes":2}`, []Buffer{{"out", 2048}}, "out", ""},
		{`{"kernel":"vectorized_copy","n":1024,"width":2}`, []Buffer{{"in", 4096}, {"out", 4096}}, "in", "out"},
		// idx, in and out: 4 bytes per thread each.
		{`{"kernel":"gather_copy","n":10}`, []Buffer{{"in", 40}, {"out", 40}, {"idx", 40}}, "in", "out"},
		// n structs, updated in place.
		{`{"kernel":"update_x_aos","n":10,"struct_bytes":24}`, []Buffer{{"p", 240}}, "p", ""},
		{`{"kernel":"update_x_soa","n":10}`, []Buffer{{"x", 40}}, "x", ""},
		// the structs read, one float written per struct.
		{`{"kernel":"sum_fields_aos","n":10,"struct_bytes":32}`, []Buffer{{"p", 320}, {"out", 40}}, "p", ""},
		// 10 elements of 8 fields: 320 bytes field-major, 40 bytes of sums.
		{`{"kernel":"sum_fields_soa","n":10,"struct_bytes":32}`, []Buffer{{"p", 320}, {"out", 40}}, "p", ""},
		// 3x5 floats each side: 60 bytes.
		{`{"kernel":"transpose_tiled","rows":3,"cols":5}`, []Buffer{{"in", 60}, {"out", 60}}, "in", "out"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			s := mustParse(t, tt.in)
			assert.Equal(t, tt.want, s.Buffers())
			from, to := s.Memcpy()
			assert.Equal(t, tt.from, from)
			assert.Equal(t, tt.to, to)
		})
	}
}

// TestKernelTableIsComplete holds every entry of the kernel table to what
// the rest of the course reads from it.
func TestKernelTableIsComplete(t *testing.T) {
	for _, kd := range table {
		t.Run(string(kd.name), func(t *testing.T) {
			assert.NotEmpty(t, kd.doc, "doc")
			assert.NotEmpty(t, kd.usefulDoc, "usefulDoc")
			assert.NotNil(t, kd.buffers, "buffers")
			assert.NotNil(t, kd.useful, "useful")
			assert.True(t, kd.threads != nil || kd.grid2D != nil || slices.Contains(kd.fields, FieldGrid), "a kernel without threads must take a grid")
			assert.False(t, kd.threads != nil && kd.grid2D != nil, "a 2D kernel derives its threads from its grid")
			for _, f := range kd.fields {
				assert.NotNil(t, fieldNamed(f), "field %s is not in the field table", f)
			}
			size := `"n":1024`
			if kd.grid2D != nil {
				size = `"rows":32,"cols":32`
			}
			s := mustParse(t, `{"kernel":"`+string(kd.name)+`",`+size+`}`)
			names := map[string]bool{}
			for _, b := range s.Buffers() {
				assert.Positive(t, b.Bytes, b.Name)
				assert.False(t, names[b.Name], "buffer %s twice", b.Name)
				names[b.Name] = true
			}
			from, to := s.Memcpy()
			assert.True(t, names[from], "memcpy from %q: not a buffer", from)
			assert.True(t, to == "" || names[to], "memcpy to %q: not a buffer", to)
			assert.Positive(t, s.UsefulBytes())
		})
	}
}

func TestShapeOn(t *testing.T) {
	gs := mustParse(t, `{"kernel":"grid_stride_copy","n":1024,"block":512}`)
	// one wave of an A100-like device: 108 SMs × (2048/512) blocks.
	assert.Equal(t, Shape{Threads: 108 * 4 * 512, Blocks: 108 * 4, BlockX: 512, BlockY: 1, GridX: 108 * 4, GridY: 1}, gs.ShapeOn(108, 2048))
	// a block larger than an SM holds still runs one per SM.
	assert.Equal(t, Shape{Threads: 10 * 512, Blocks: 10, BlockX: 512, BlockY: 1, GridX: 10, GridY: 1}, gs.ShapeOn(10, 256))
	gs.Grid = 3
	assert.Equal(t, Shape{Threads: 3 * 512, Blocks: 3, BlockX: 512, BlockY: 1, GridX: 3, GridY: 1}, gs.ShapeOn(108, 2048), "a set grid does not depend on the device")
	// other kernels derive their grid from their work, on any device.
	cc := mustParse(t, `{"kernel":"coalesced_copy","n":1000}`)
	assert.Equal(t, Shape{Threads: 1000, Blocks: 4, BlockX: 256, BlockY: 1, GridX: 4, GridY: 1}, cc.ShapeOn(1, 32))
}

func TestShape2D(t *testing.T) {
	tests := []struct {
		in   string
		want Shape
	}{
		// x across ceil(100/32) = 4 tiles of columns, y down ceil(70/32) = 3
		// of rows; 12 blocks of 32*8 = 256 threads.
		{`{"kernel":"copy_rows","rows":70,"cols":100}`, Shape{Threads: 12 * 256, Blocks: 12, BlockX: 32, BlockY: 8, GridX: 4, GridY: 3}},
		{`{"kernel":"transpose_coalesced_read","rows":70,"cols":100}`, Shape{Threads: 12 * 256, Blocks: 12, BlockX: 32, BlockY: 8, GridX: 4, GridY: 3}},
		{`{"kernel":"transpose_tiled","rows":70,"cols":100,"pad":1}`, Shape{Threads: 12 * 256, Blocks: 12, BlockX: 32, BlockY: 8, GridX: 4, GridY: 3}},
		// threadIdx.x walks a column: x across the rows, y across the columns.
		{`{"kernel":"copy_columns","rows":70,"cols":100}`, Shape{Threads: 12 * 256, Blocks: 12, BlockX: 32, BlockY: 8, GridX: 3, GridY: 4}},
		// tile 16: ceil(70/16) = 5 by ceil(100/16) = 7; blocks of 16*2 = 32.
		{`{"kernel":"transpose_coalesced_write","rows":70,"cols":100,"tile":16,"block_rows":2}`, Shape{Threads: 35 * 32, Blocks: 35, BlockX: 16, BlockY: 2, GridX: 5, GridY: 7}},
		// tile 8, block_rows 1: one partial warp of 8 threads a block, 1x1 grid.
		{`{"kernel":"copy_rows","rows":1,"cols":1,"tile":8,"block_rows":1}`, Shape{Threads: 8, Blocks: 1, BlockX: 8, BlockY: 1, GridX: 1, GridY: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			s := mustParse(t, tt.in)
			assert.Equal(t, tt.want, s.ShapeOn(132, 2048))
			assert.Equal(t, tt.want.Blocks, s.GridBlocks())
			assert.Equal(t, tt.want.Threads, s.Threads())
		})
	}
}

func TestVectorizedOffset(t *testing.T) {
	s := mustParse(t, `{"kernel":"vectorized_copy","n":64,"width":4,"offset":3}`)
	// floor((64-3)/4) = 15 whole vectors, one thread each, 16 bytes read and written.
	assert.Equal(t, int64(15), s.Threads())
	assert.Equal(t, int64(15*16*2), s.UsefulBytes())
	assert.Equal(t, "vectorized_copy, width 4, offset 3, n 2^6", s.Brief())
	assert.Equal(t, "vectorized_copy, width 4, n 2^6", mustParse(t, `{"kernel":"vectorized_copy","n":64}`).Brief(), "offset 0 goes unsaid")
}

func TestDefaultL2FetchIsTheDevices(t *testing.T) {
	s := mustParse(t, `{"kernel":"coalesced_copy","n":4}`)
	// profiles.json: the H200's cudaLimitMaxL2FetchGranularity is 64 before a program sets it.
	assert.Equal(t, 64, s.L2Fetch)
}

// TestDefaultDeviceIsCurrent shows the device a spec leaves unsaid
// following devices.Current, and Brief leaving unsaid what the spec did.
func TestDefaultDeviceIsCurrent(t *testing.T) {
	t.Cleanup(func() { require.NoError(t, devices.Use(devices.Course, devices.CourseWhy)) })
	in := `{"kernel":"coalesced_copy","n":4}`
	assert.Equal(t, "h200", mustParse(t, in).Device)

	require.NoError(t, devices.Use("t4", "a test"))
	s := mustParse(t, in)
	assert.Equal(t, "t4", s.Device)
	assert.Equal(t, "coalesced_copy, n 2^2", s.Brief(), "the current device goes unsaid")
	// profiles.json: the T4's L2 fetch granularity is estimated at 64 bytes.
	assert.Equal(t, 64, s.L2Fetch)
	assert.Equal(t, "coalesced_copy, device h200, n 2^2", mustParse(t, `{"kernel":"coalesced_copy","n":4,"device":"h200"}`).Brief(),
		"a device other than the current one is said")
}

func TestBrief(t *testing.T) {
	tests := []struct {
		in   string
		omit []string
		want string
	}{
		{`{"kernel":"strided_copy","n":67108864,"stride":32}`, nil, "strided_copy, stride 32, n 2^26"},
		{`{"kernel":"coalesced_copy","n":1000,"elem_bytes":8,"block":128}`, nil, "coalesced_copy, elem 8 B, block 128, n 1000"},
		{`{"kernel":"gather_copy","n":33554432,"index_pattern":"random_perm"}`, nil, "gather_copy, random_perm, n 2^25"},
		{`{"kernel":"gather_copy","n":64,"index_pattern":"random","seed":7}`, nil, "gather_copy, random, seed 7, n 2^6"},
		{`{"kernel":"update_x_aos","n":1024,"struct_bytes":24,"field_offset":8}`, nil, "update_x_aos, struct 24 B, x at 8, n 2^10"},
		{`{"kernel":"sum_fields_aos","n":1024,"struct_bytes":32,"vector":true}`, nil, "sum_fields_aos, struct 32 B, float4 loads, n 2^10"},
		{`{"kernel":"grid_stride_copy","n":1024,"grid":264}`, nil, "grid_stride_copy, width 4, unroll 4, grid 264, n 2^10"},
		{`{"kernel":"strided_copy","n":1024,"l2_fetch_granularity":32}`, nil, "strided_copy, stride 1, L2 fetch 32 B, n 2^10"},
		{`{"kernel":"transpose_tiled","rows":4096,"cols":4096,"tile":16,"pad":1}`, nil, "transpose_tiled, tile 16, pad 1, 4096x4096"},
		{`{"kernel":"copy_columns","rows":100,"cols":7,"block_rows":4}`, nil, "copy_columns, block_rows 4, 100x7"},
		{`{"kernel":"sum_fields_soa","n":1024,"struct_bytes":32}`, nil, "sum_fields_soa, struct 32 B, n 2^10"},
		// a chart sweeping the stride leaves it out of its title.
		{`{"kernel":"strided_copy","n":1024,"stride":8}`, []string{FieldStride}, "strided_copy, n 2^10"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			assert.Equal(t, tt.want, mustParse(t, tt.in).Brief(tt.omit...))
		})
	}
}

func TestDifferences(t *testing.T) {
	a := mustParse(t, `{"kernel":"strided_copy","n":1024,"stride":1}`)
	b := mustParse(t, `{"kernel":"strided_copy","n":1024,"stride":32}`)
	c := mustParse(t, `{"kernel":"strided_copy","n":1024,"stride":32,"block":32}`)
	d := mustParse(t, `{"kernel":"update_x_soa","n":1024}`)
	assert.Equal(t, []string{"stride 1"}, a.Differences([]Spec{a, b}))
	assert.Equal(t, []string{"stride 32"}, b.Differences([]Spec{a, b}))
	// block 256 is the default, which Brief leaves unsaid; Differences names it.
	assert.Equal(t, []string{"block 256"}, b.Differences([]Spec{b, c}))
	assert.Equal(t, []string{"block 32"}, c.Differences([]Spec{b, c}))
	assert.Empty(t, a.Differences([]Spec{a, d}), "another kernel differs by its kernel, not its fields")
}

// A grid has at most 65535 blocks in y on every CUDA GPU, and a matrix
// kernel's y covers the rows (or, for the kernels whose threadIdx.x walks
// a column, the columns) one tile at a time: 65535 tiles of 32 = 2097120.
func TestMatrixGridY(t *testing.T) {
	tests := []struct {
		in    string
		field string // "" when valid
	}{
		{`{"kernel":"copy_rows","rows":2097120,"cols":1}`, ""},                        // 65535 tiles of 32
		{`{"kernel":"copy_rows","rows":2097121,"cols":1}`, FieldRows},                 // 65536
		{`{"kernel":"copy_rows","rows":1048576,"cols":2,"tile":8}`, FieldRows},        // 131072 tiles of 8
		{`{"kernel":"copy_columns","rows":2097121,"cols":1}`, ""},                     // its y runs across the 1 column
		{`{"kernel":"copy_columns","rows":1,"cols":2097121}`, FieldCols},              // 65536 tiles across the columns
		{`{"kernel":"transpose_coalesced_write","rows":1,"cols":2097121}`, FieldCols}, // the same grid
		{`{"kernel":"transpose_tiled","rows":2097121,"cols":1}`, FieldRows},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			_, err := Parse([]byte(tt.in))
			if tt.field == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.field)
			assert.Contains(t, err.Error(), "65535")
		})
	}
}

// IndicesInto reuses the caller's storage when it holds n indices, and
// draws exactly what Indices draws whatever was there before: an answer
// key refills one array for a sorted and an unsorted gather.
func TestIndicesInto(t *testing.T) {
	for _, pattern := range IndexPatterns {
		t.Run(pattern, func(t *testing.T) {
			s := mustParse(t, `{"kernel":"gather_copy","n":3000,"index_pattern":"`+pattern+`","seed":5}`)
			want, err := s.Indices()
			require.NoError(t, err)
			dirty := make([]int32, 4000)
			for i := range dirty {
				dirty[i] = -7
			}
			got, err := s.IndicesInto(dirty)
			require.NoError(t, err)
			assert.Equal(t, want, got)
			assert.Same(t, &dirty[0], &got[0], "a buffer of 4000 holds 3000 indices")
			small, err := s.IndicesInto(make([]int32, 10))
			require.NoError(t, err)
			assert.Equal(t, want, small, "a buffer too small is replaced")
		})
	}
	_, err := mustParse(t, `{"kernel":"coalesced_copy","n":64}`).IndicesInto(nil)
	assert.ErrorIs(t, err, ErrIndices)
}
