package sectors

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coalescing-course/coalesce/lessons/devices"
	"github.com/coalescing-course/coalesce/lessons/spec"
)

// A Stream fed every warp's instructions, warp after warp, is the launch
// Model runs: the same counts to the byte, DRAM included, since the L2
// sees the same sectors in the same order. The 4 MiB copy is sampled by the
// L2 (over sampleLines lines a buffer), the others are tracked whole.
func TestStreamMatchesModel(t *testing.T) {
	for _, js := range []string{
		`{"kernel":"coalesced_copy","n":1000,"block":100}`,
		`{"kernel":"coalesced_copy","n":1048576}`,
		`{"kernel":"strided_copy","n":3000,"stride":3,"elem_bytes":8,"block":96}`,
		`{"kernel":"strided_write","n":65536,"stride":8}`,
		`{"kernel":"offset_copy","n":1000,"offset":5,"elem_bytes":16}`,
		`{"kernel":"grid_stride_copy","n":4096,"width":4,"unroll":3,"grid":3,"block":64}`,
		`{"kernel":"gather_copy","n":777,"index_pattern":"random"}`,
		`{"kernel":"update_x_aos","n":500,"struct_bytes":24,"field_offset":8}`,
		`{"kernel":"sum_fields_aos","n":500,"struct_bytes":12}`,
		`{"kernel":"transpose_tiled","rows":100,"cols":37,"pad":0}`,
		`{"kernel":"transpose_tiled","rows":37,"cols":100,"tile":16,"block_rows":2,"pad":3}`,
	} {
		t.Run(js, func(t *testing.T) {
			s, err := spec.Parse([]byte(js))
			require.NoError(t, err)
			var idx []int32
			if s.Kernel == spec.GatherCopy {
				idx, err = s.Indices()
				require.NoError(t, err)
			}
			want, err := ModelIndices(s, idx)
			require.NoError(t, err)

			d, err := devices.Lookup(s.Device)
			require.NoError(t, err)
			st, err := NewStream(d, s.L2Fetch)
			require.NoError(t, err)
			for _, b := range s.Buffers() {
				_, err := st.Buffer(b.Name, b.Bytes)
				require.NoError(t, err)
			}
			for w := range Warps(s) {
				ins, err := WarpInstructions(s, idx, w)
				require.NoError(t, err)
				for i := range ins {
					_, err := st.Issue(&ins[i])
					require.NoError(t, err)
				}
			}
			got, err := st.Finish()
			require.NoError(t, err)
			assert.Equal(t, want.Metrics, got.Metrics)
			assert.Equal(t, want.L1UsefulBytes, got.L1UsefulBytes)
			assert.Equal(t, want.Traffic, got.Traffic)
		})
	}
}

// Each instruction's own cost comes back: the sectors of a global one
// (32 lanes 128 bytes apart: 32 sectors), the wavefronts of a shared one
// (32 lanes one word apart: 1; 32 apart, all in bank 0: 32).
func TestStreamCosts(t *testing.T) {
	d, err := devices.Lookup("h200")
	require.NoError(t, err)
	st, err := NewStream(d, 0)
	require.NoError(t, err)
	buf, err := st.Buffer("in", 4096)
	require.NoError(t, err)
	apart := func(step uint64) *Warp {
		w := &Warp{Size: 4, Active: AllLanes}
		for l := range WarpSize {
			w.Addr[l] = uint64(l) * step
		}
		return w
	}
	tests := []struct {
		name   string
		issue  func() (int, error)
		sector int
	}{
		{"global, 128 bytes apart", func() (int, error) { return st.Global(buf, false, apart(128)) }, 32},
		{"global, contiguous", func() (int, error) { return st.Global(buf, true, apart(4)) }, 4},
		{"shared, contiguous", func() (int, error) { return st.Shared(false, apart(4), false) }, 1},
		{"shared, one bank", func() (int, error) { return st.Shared(true, apart(128), false) }, 32},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, err := tt.issue()
			require.NoError(t, err)
			assert.Equal(t, tt.sector, n)
		})
	}
}

func TestStreamRefuses(t *testing.T) {
	d, err := devices.Lookup("h200")
	require.NoError(t, err)
	st, err := NewStream(d, 0)
	require.NoError(t, err)
	in, err := st.Buffer("in", 256)
	require.NoError(t, err)
	past := &Warp{Size: 4, Active: 1 << 3}
	past.Addr[3] = 256 // bytes 256..259 of a 256-byte buffer
	tests := []struct {
		name string
		do   func() error
		msg  string
	}{
		{"fetch", func() error { _, err := NewStream(d, 48); return err }, "l2 fetch granularity 48, want 32, 64 or 128 bytes"},
		{"same name", func() error { _, err := st.Buffer("in", 64); return err }, "two buffers named in"},
		{"shared's name", func() error { _, err := st.Buffer(SharedBuffer, 64); return err }, `buffer name "s" is shared memory's`},
		{"empty", func() error { _, err := st.Buffer("out", 0); return err }, "buffer out of 0 bytes"},
		{"no such buffer", func() error { _, err := st.Global(1, false, &Warp{Size: 4}); return err }, "buffer 1 of 1"},
		{"no such name", func() error { _, err := st.Issue(&Instruction{Buffer: "x", Warp: Warp{Size: 4}}); return err }, "no buffer x (have [in])"},
		{"size", func() error { _, err := st.Global(in, false, &Warp{Size: 3}); return err }, "got 3"},
		{"past the end", func() error { _, err := st.Global(in, false, past); return err }, "lane 3 accesses bytes 256 to 259 of in, which has 256"},
		{"shared size", func() error { _, err := st.Shared(false, &Warp{Size: 8}, false); return err }, "4-byte shared accesses, got 8 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.do()
			assert.ErrorIs(t, err, ErrStream)
			assert.ErrorContains(t, err, tt.msg)
		})
	}
	_, err = st.Finish()
	require.NoError(t, err)
	_, err = st.Finish()
	assert.ErrorContains(t, err, "Finish called twice")
	_, err = st.Global(in, false, &Warp{Size: 4})
	assert.ErrorContains(t, err, "instruction after Finish")
}
