package spec

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseDefaults(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want Spec
	}{
		{"coalesced copy takes elem_bytes 4", `{"kernel":"coalesced_copy","n":1024}`,
			Spec{Kernel: CoalescedCopy, N: 1024, Block: 256, ElemBytes: 4, L2Fetch: 64, Device: "h200"}},
		{"strided copy adds stride 1", `{"kernel":"strided_copy","n":10}`,
			Spec{Kernel: StridedCopy, N: 10, Block: 256, ElemBytes: 4, Stride: 1, L2Fetch: 64, Device: "h200"}},
		{"offset copy adds offset 0", `{"kernel":"offset_copy","n":10}`,
			Spec{Kernel: OffsetCopy, N: 10, Block: 256, ElemBytes: 4, L2Fetch: 64, Device: "h200"}},
		{"vectorized copy takes width 4", `{"kernel":"vectorized_copy","n":16}`,
			Spec{Kernel: VectorizedCopy, N: 16, Block: 256, Width: 4, L2Fetch: 64, Device: "h200"}},
		{"grid stride copy takes width 4 and unroll 4", `{"kernel":"grid_stride_copy","n":16}`,
			Spec{Kernel: GridStrideCopy, N: 16, Block: 256, Width: 4, Unroll: 4, L2Fetch: 64, Device: "h200"}},
		{"gather takes the identity pattern, seed 1", `{"kernel":"gather_copy","n":5}`,
			Spec{Kernel: GatherCopy, N: 5, Block: 256, IndexPattern: "identity", Seed: 1, L2Fetch: 64, Device: "h200"}},
		{"gather with a file takes no pattern", `{"kernel":"gather_copy","n":5,"index_file":"x.bin"}`,
			Spec{Kernel: GatherCopy, N: 5, Block: 256, IndexFile: "x.bin", L2Fetch: 64, Device: "h200"}},
		{"AoS update takes a 16-byte struct, x first", `{"kernel":"update_x_aos","n":3}`,
			Spec{Kernel: UpdateXAoS, N: 3, Block: 256, StructBytes: 16, L2Fetch: 64, Device: "h200"}},
		{"SoA update takes nothing more", `{"kernel":"update_x_soa","n":3}`,
			Spec{Kernel: UpdateXSoA, N: 3, Block: 256, L2Fetch: 64, Device: "h200"}},
		{"sum fields takes scalar loads", `{"kernel":"sum_fields_aos","n":3}`,
			Spec{Kernel: SumFieldsAoS, N: 3, Block: 256, StructBytes: 16, L2Fetch: 64, Device: "h200"}},
		{"SoA sum takes a 16-byte struct", `{"kernel":"sum_fields_soa","n":3}`,
			Spec{Kernel: SumFieldsSoA, N: 3, Block: 256, StructBytes: 16, L2Fetch: 64, Device: "h200"}},
		// n = 100*60 = 6000; block = 32*8 = 256 threads.
		{"a 2D kernel derives n and block", `{"kernel":"copy_rows","rows":100,"cols":60}`,
			Spec{Kernel: CopyRows, N: 6000, Block: 256, Rows: 100, Cols: 60, Tile: 32, BlockRows: 8, L2Fetch: 64, Device: "h200"}},
		// block = 16*4 = 64 threads.
		{"the tiled transpose takes pad 0", `{"kernel":"transpose_tiled","rows":5,"cols":7,"tile":16,"block_rows":4}`,
			Spec{Kernel: TransposeTiled, N: 35, Block: 64, Rows: 5, Cols: 7, Tile: 16, BlockRows: 4, L2Fetch: 64, Device: "h200"}},
		{"every field set", `{"kernel":"strided_write","n":100,"block":96,"elem_bytes":16,"stride":3,"l2_fetch_granularity":128,"device":"h200"}`,
			Spec{Kernel: StridedWrite, N: 100, Block: 96, ElemBytes: 16, Stride: 3, L2Fetch: 128, Device: "h200"}},
		{"integers written as floats", `{"kernel":"coalesced_copy","n":1e6,"block":128.0}`,
			Spec{Kernel: CoalescedCopy, N: 1000000, Block: 128, ElemBytes: 4, L2Fetch: 64, Device: "h200"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse([]byte(tt.in))
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		err     error
		field   string
		message string // a piece of the message that tells what is allowed
	}{
		{"not JSON", `{"kernel":`, ErrSyntax, "", "want one JSON object"},
		{"an array", `[1,2]`, ErrSyntax, "", "want one JSON object"},
		{"two objects", `{"kernel":"coalesced_copy","n":1} {}`, ErrSyntax, "", "trailing data"},
		{"no kernel", `{"n":1}`, ErrMissing, "kernel", "coalesced_copy"},
		{"unknown kernel", `{"kernel":"transpose","n":1}`, ErrUnknownKernel, "kernel", "strided_copy"},
		{"kernel not a string", `{"kernel":3,"n":1}`, ErrValue, "kernel", "want a string"},
		{"no n", `{"kernel":"coalesced_copy"}`, ErrMissing, "n", "1 to 2147483647"},
		{"n zero", `{"kernel":"coalesced_copy","n":0}`, ErrValue, "n", "from 1 to"},
		{"n negative", `{"kernel":"coalesced_copy","n":-5}`, ErrValue, "n", "from 1 to"},
		{"n too large", `{"kernel":"coalesced_copy","n":4294967296}`, ErrValue, "n", "2147483647"},
		{"n fractional", `{"kernel":"coalesced_copy","n":1.5}`, ErrValue, "n", "want an integer"},
		{"n a string", `{"kernel":"coalesced_copy","n":"1024"}`, ErrValue, "n", "want an integer"},
		{"unknown field", `{"kernel":"coalesced_copy","n":1,"strde":2}`, ErrUnknownField, "strde", "coalesced_copy takes kernel, n, block, elem_bytes"},
		{"field of another kernel", `{"kernel":"coalesced_copy","n":1,"stride":2}`, ErrNotApplicable, "stride", "coalesced_copy takes"},
		{"block zero", `{"kernel":"coalesced_copy","n":1,"block":0}`, ErrValue, "block", "1 to 1024"},
		{"block 1025", `{"kernel":"coalesced_copy","n":1,"block":1025}`, ErrValue, "block", "1 to 1024"},
		{"elem_bytes 3", `{"kernel":"coalesced_copy","n":1,"elem_bytes":3}`, ErrValue, "elem_bytes", "1, 2, 4, 8 or 16"},
		{"stride 0", `{"kernel":"strided_copy","n":8,"stride":0}`, ErrValue, "stride", "from 1"},
		{"offset n", `{"kernel":"offset_copy","n":8,"offset":8}`, ErrValue, "offset", "0 <= offset < n = 8"},
		{"offset negative", `{"kernel":"offset_copy","n":8,"offset":-1}`, ErrValue, "offset", "0 <= offset"},
		{"width 3", `{"kernel":"vectorized_copy","n":12,"width":3}`, ErrValue, "width", "2 or 4"},
		{"width 1 for vectorized", `{"kernel":"vectorized_copy","n":12,"width":1}`, ErrValue, "width", "2 or 4"},
		{"n not a multiple of width", `{"kernel":"vectorized_copy","n":10}`, ErrValue, "n", "multiple of width = 4"},
		{"vectorized offset leaves no vector", `{"kernel":"vectorized_copy","n":8,"offset":5}`, ErrValue, "offset", "n-width = 4"},
		{"2D without rows", `{"kernel":"copy_rows","cols":4}`, ErrMissing, "rows", "problem size"},
		{"2D without cols", `{"kernel":"transpose_tiled","rows":4}`, ErrMissing, "cols", "problem size"},
		{"2D with n", `{"kernel":"copy_rows","rows":4,"cols":4,"n":16}`, ErrNotApplicable, "n", "derives n = rows*cols"},
		{"2D with block", `{"kernel":"copy_columns","rows":4,"cols":4,"block":256}`, ErrNotApplicable, "block", "block = tile*block_rows"},
		{"rows 0", `{"kernel":"copy_rows","rows":0,"cols":4}`, ErrValue, "rows", "from 1 to"},
		// 65536*65536 = 2^32 elements, past MaxN = 2^31-1.
		{"matrix too large", `{"kernel":"copy_rows","rows":65536,"cols":65536}`, ErrValue, "cols", "rows*cols at most 2147483647"},
		{"tile 64", `{"kernel":"copy_rows","rows":4,"cols":4,"tile":64}`, ErrValue, "tile", "8, 16 or 32"},
		{"block_rows not a divisor", `{"kernel":"copy_rows","rows":4,"cols":4,"block_rows":3}`, ErrValue, "block_rows", "divisor of tile = 32"},
		{"block_rows past the tile", `{"kernel":"copy_rows","rows":4,"cols":4,"tile":8,"block_rows":16}`, ErrValue, "block_rows", "divisor of tile = 8"},
		{"pad past the tile", `{"kernel":"transpose_tiled","rows":4,"cols":4,"tile":8,"pad":9}`, ErrValue, "pad", "0 to tile = 8"},
		{"pad negative", `{"kernel":"transpose_tiled","rows":4,"cols":4,"pad":-1}`, ErrValue, "pad", "0 to tile"},
		{"pad on a copy", `{"kernel":"copy_rows","rows":4,"cols":4,"pad":1}`, ErrNotApplicable, "pad", "copy_rows takes kernel, rows, cols, tile, block_rows"},
		{"unroll 0", `{"kernel":"grid_stride_copy","n":16,"unroll":0}`, ErrValue, "unroll", "1 to 16"},
		{"grid negative", `{"kernel":"grid_stride_copy","n":16,"grid":-1}`, ErrValue, "grid", "0 (one full wave"},
		{"struct of 6 bytes", `{"kernel":"update_x_aos","n":4,"struct_bytes":6}`, ErrValue, "struct_bytes", "multiple of 4"},
		{"struct of 0 bytes", `{"kernel":"update_x_aos","n":4,"struct_bytes":0}`, ErrValue, "struct_bytes", "from 4"},
		{"field past the struct", `{"kernel":"update_x_aos","n":4,"struct_bytes":16,"field_offset":16}`, ErrValue, "field_offset", "0 to struct_bytes-4 = 12"},
		{"field misaligned", `{"kernel":"update_x_aos","n":4,"field_offset":2}`, ErrValue, "field_offset", "multiple of 4"},
		{"vector read of a 24-byte struct", `{"kernel":"sum_fields_aos","n":4,"struct_bytes":24,"vector":true}`, ErrValue, "struct_bytes", "multiple of 16"},
		{"vector not a bool", `{"kernel":"sum_fields_aos","n":4,"vector":1}`, ErrValue, "vector", "true or false"},
		{"unknown pattern", `{"kernel":"gather_copy","n":4,"index_pattern":"zigzag"}`, ErrValue, "index_pattern", "random_perm"},
		{"pattern and file", `{"kernel":"gather_copy","n":4,"index_pattern":"reverse","index_file":"i.bin"}`, ErrValue, "index_pattern", "not both"},
		{"seed negative", `{"kernel":"gather_copy","n":4,"seed":-1}`, ErrValue, "seed", "0 or more"},
		{"granularity 16", `{"kernel":"coalesced_copy","n":4,"l2_fetch_granularity":16}`, ErrValue, "l2_fetch_granularity", "32, 64 or 128"},
		{"unknown device", `{"kernel":"coalesced_copy","n":4,"device":"a100"}`, ErrValue, "device", "h200"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.in))
			require.Error(t, err)
			assert.ErrorIs(t, err, tt.err)
			assert.Contains(t, err.Error(), tt.message)
			assert.True(t, strings.HasPrefix(err.Error(), "spec: "), "error %q lacks the package prefix", err)
			if tt.field != "" {
				var fe *FieldError
				require.ErrorAs(t, err, &fe)
				assert.Equal(t, tt.field, fe.Field)
			}
		})
	}
}

func TestMarshalRoundTrip(t *testing.T) {
	for _, in := range []string{
		`{"kernel":"strided_copy","n":1048576,"stride":32}`,
		`{"kernel":"offset_copy","n":100,"offset":0}`,
		`{"kernel":"gather_copy","n":64,"index_pattern":"random_perm","seed":7}`,
		`{"kernel":"gather_copy","n":64,"index_file":"idx.bin"}`,
		`{"kernel":"sum_fields_aos","n":64,"struct_bytes":32,"vector":true}`,
		`{"kernel":"grid_stride_copy","n":64,"width":1,"unroll":8,"grid":0}`,
		`{"kernel":"vectorized_copy","n":64,"width":4,"offset":3}`,
		`{"kernel":"sum_fields_soa","n":64,"struct_bytes":32}`,
		`{"kernel":"transpose_tiled","rows":100,"cols":37,"tile":16,"block_rows":2,"pad":1}`,
		`{"kernel":"copy_columns","rows":1,"cols":1,"tile":8,"block_rows":8}`,
	} {
		t.Run(in, func(t *testing.T) {
			s, err := Parse([]byte(in))
			require.NoError(t, err)
			out, err := json.Marshal(s)
			require.NoError(t, err)
			again, err := Parse(out)
			require.NoError(t, err)
			assert.Equal(t, s, again)
		})
	}
}

func TestMarshalWritesEveryFieldOfTheKernelInOrder(t *testing.T) {
	s, err := Parse([]byte(`{"device":"h200","offset":0,"n":100,"kernel":"offset_copy"}`))
	require.NoError(t, err)
	assert.Equal(t, `{"kernel":"offset_copy","n":100,"block":256,"elem_bytes":4,"offset":0,"l2_fetch_granularity":64,"device":"h200"}`, s.String())
}

func TestThreadsAndUsefulBytes(t *testing.T) {
	tests := []struct {
		in      string
		threads int64
		blocks  int64
		useful  int64
	}{
		// ceil(1000/256) = 4 blocks; 1000 reads + 1000 writes of 4 bytes.
		{`{"kernel":"coalesced_copy","n":1000}`, 1000, 4, 8000},
		// ceil(1000/32) = 32 threads, each reads and writes 8 bytes.
		{`{"kernel":"strided_copy","n":1000,"stride":32,"elem_bytes":8}`, 32, 1, 32 * 16},
		{`{"kernel":"strided_read","n":1000,"stride":32}`, 32, 1, 32 * 4},
		{`{"kernel":"strided_write","n":1000,"stride":3,"block":5}`, 334, 67, 334 * 4},
		// the last 10 threads have no element to read.
		{`{"kernel":"offset_copy","n":100,"offset":10}`, 100, 1, 90 * 8},
		{`{"kernel":"vectorized_copy","n":1024,"width":2}`, 512, 2, 1024 * 8},
		// grid 0 = one wave: 132 SMs * (2048/256) blocks.
		{`{"kernel":"grid_stride_copy","n":1024}`, 132 * 8 * 256, 132 * 8, 1024 * 8},
		{`{"kernel":"grid_stride_copy","n":1024,"grid":3,"block":64}`, 192, 3, 1024 * 8},
		// idx, in and out: 4 bytes each per thread.
		{`{"kernel":"gather_copy","n":10}`, 10, 1, 120},
		{`{"kernel":"update_x_aos","n":10,"struct_bytes":64}`, 10, 1, 80},
		{`{"kernel":"update_x_soa","n":10}`, 10, 1, 80},
		// every struct read whole, one float written.
		{`{"kernel":"sum_fields_aos","n":10,"struct_bytes":24}`, 10, 1, 10*24 + 40},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			s, err := Parse([]byte(tt.in))
			require.NoError(t, err)
			assert.Equal(t, tt.threads, s.Threads(), "threads")
			assert.Equal(t, tt.blocks, s.GridBlocks(), "blocks")
			assert.Equal(t, tt.useful, s.UsefulBytes(), "useful bytes")
		})
	}
}

func TestIndices(t *testing.T) {
	gather := func(pattern string, n int64) []int32 {
		t.Helper()
		s, err := Parse([]byte(`{"kernel":"gather_copy","n":` + itoa(n) + `,"index_pattern":"` + pattern + `"}`))
		require.NoError(t, err)
		idx, err := s.Indices()
		require.NoError(t, err)
		require.Len(t, idx, int(n))
		for i, v := range idx {
			require.True(t, v >= 0 && int64(v) < n, "idx[%d] = %d out of range", i, v)
		}
		return idx
	}
	assert.Equal(t, []int32{0, 1, 2, 3, 4}, gather("identity", 5))
	assert.Equal(t, []int32{4, 3, 2, 1, 0}, gather("reverse", 5))
	assert.Equal(t, []int32{0, 0, 32, 32, 32, 32}, gather("broadcast_warp", 64)[30:36])

	perm := gather("random_perm", 1000)
	assert.ElementsMatch(t, gather("identity", 1000), perm, "a permutation holds every index once")
	assert.NotEqual(t, gather("identity", 1000), perm)
	assert.Equal(t, perm, gather("random_perm", 1000), "the same spec gives the same indices")

	sorted := gather("sorted_random", 1000)
	assert.IsNonDecreasing(t, sorted)
	assert.ElementsMatch(t, gather("random", 1000), sorted, "sorted_random is random, sorted")

	ws := gather("warp_shuffle", 70)
	for w := 0; w < 70; w += 32 {
		for l := w; l < min(w+32, 70); l++ {
			assert.True(t, int(ws[l]) >= w && int(ws[l]) < min(w+32, 70), "warp_shuffle moved idx[%d] = %d out of its warp", l, ws[l])
		}
	}
	bs := gather("block_shuffle", 100)
	for c := 0; c < 96; c += 32 {
		assert.Equal(t, int32(0), bs[c]%32, "chunk %d starts a 32-element chunk", c)
		for l := 1; l < 32; l++ {
			assert.Equal(t, bs[c]+int32(l), bs[c+l])
		}
	}
	assert.Equal(t, []int32{96, 97, 98, 99}, bs[96:], "the partial last chunk stays in place")
}

func TestIndexFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "idx.bin")
	require.NoError(t, WriteIndexFile(path, []int32{3, 0, 2, 1}))
	s := Spec{Kernel: GatherCopy, N: 4, Block: 256, IndexFile: path, L2Fetch: 64, Device: "h200"}
	require.NoError(t, s.Validate())
	idx, err := s.Indices()
	require.NoError(t, err)
	assert.Equal(t, []int32{3, 0, 2, 1}, idx)

	tests := []struct {
		name string
		data []int32
		n    int64
		msg  string
	}{
		{"short", []int32{0, 1, 2}, 4, "has 12 bytes, want exactly 16"},
		{"long", []int32{0, 1, 2, 3, 0}, 4, "has 20 bytes, want exactly 16"},
		{"index n", []int32{0, 1, 4, 3}, 4, "idx[2] = 4 is out of range, want 0 <= idx < n = 4"},
		{"negative index", []int32{0, -1, 2, 3}, 4, "idx[1] = -1 is out of range"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(dir, tt.name+".bin")
			require.NoError(t, WriteIndexFile(p, tt.data))
			s := Spec{Kernel: GatherCopy, N: tt.n, Block: 256, IndexFile: p, L2Fetch: 64, Device: "h200"}
			_, err := s.Indices()
			assert.ErrorIs(t, err, ErrIndices)
			assert.ErrorContains(t, err, tt.msg)
		})
	}
	t.Run("missing file", func(t *testing.T) {
		s := Spec{Kernel: GatherCopy, N: 4, Block: 256, IndexFile: filepath.Join(dir, "nope.bin"), L2Fetch: 64, Device: "h200"}
		_, err := s.Indices()
		assert.ErrorIs(t, err, ErrIndices)
		assert.ErrorIs(t, err, os.ErrNotExist)
	})
	t.Run("not a gather", func(t *testing.T) {
		_, err := Spec{Kernel: CoalescedCopy}.Indices()
		assert.ErrorIs(t, err, ErrIndices)
	})
}

func TestFieldsCoverEveryKernel(t *testing.T) {
	for _, k := range Kernels {
		fs := Fields(k)
		require.NotNil(t, fs, "kernel %s", k)
		// a 2D kernel's size is its rows and cols; n and block are derived.
		want := []string{FieldKernel, FieldN, FieldBlock}
		if Is2D(k) {
			want = []string{FieldKernel, FieldRows, FieldCols}
		}
		assert.Equal(t, want, fs[:3])
		assert.Equal(t, []string{FieldL2Fetch, FieldDevice}, fs[len(fs)-2:])
	}
	assert.Nil(t, Fields("nope"))
}

func TestValidateRejectsTheZeroSpec(t *testing.T) {
	err := Spec{}.Validate()
	assert.True(t, errors.Is(err, ErrUnknownKernel), "got %v", err)
}

func itoa(n int64) string { b, _ := json.Marshal(n); return string(b) }

func TestValidateDerivedFields(t *testing.T) {
	s := mustParse(t, `{"kernel":"transpose_coalesced_read","rows":64,"cols":32}`)
	assert.Equal(t, `{"kernel":"transpose_coalesced_read","rows":64,"cols":32,"tile":32,"block_rows":8,"l2_fetch_granularity":64,"device":"h200"}`, s.String(),
		"a 2D spec writes its rows and cols, not the n and block they give")
	bad := s
	bad.N = 1000
	assert.ErrorContains(t, bad.Validate(), "derives n = rows*cols")
	bad = s
	bad.Block = 256 // 32*8 is 256: a literal that forgets block_rows gives another block
	bad.BlockRows = 4
	assert.ErrorContains(t, bad.Validate(), "block = tile*block_rows")
}
