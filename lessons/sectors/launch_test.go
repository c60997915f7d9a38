package sectors

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coalescing-course/coalesce/lessons/devices"
	"github.com/coalescing-course/coalesce/lessons/metrics"
	"github.com/coalescing-course/coalesce/lessons/spec"
)

func predict(t *testing.T, js string) Launch {
	t.Helper()
	s, err := spec.Parse([]byte(js))
	require.NoError(t, err)
	p, err := Model(s)
	require.NoError(t, err)
	return p
}

// l1 holds the four exact L1 counts of a launch.
type l1 struct{ ldReq, ldSec, stReq, stSec float64 }

func l1Of(p Launch) l1 {
	return l1{p.Metrics[metrics.LdRequests], p.Metrics[metrics.LdSectors], p.Metrics[metrics.StRequests], p.Metrics[metrics.StSectors]}
}

// Every expectation below is worked out by hand in its comment: warps is
// the number of warp instructions that have an active lane, and each
// warp's sectors follow from the addresses its lanes touch.
func TestPredictL1(t *testing.T) {
	tests := []struct {
		name string
		spec string
		want l1
	}{
		// 1024 threads = 32 full warps, 4 sectors each way.
		{"coalesced floats", `{"kernel":"coalesced_copy","n":1024}`, l1{32, 128, 32, 128}},
		// 1 byte per lane: 32 bytes = 1 sector per warp.
		{"coalesced bytes", `{"kernel":"coalesced_copy","n":1024,"elem_bytes":1}`, l1{32, 32, 32, 32}},
		// 2 bytes per lane: 64 bytes = 2 sectors.
		{"coalesced shorts", `{"kernel":"coalesced_copy","n":1024,"elem_bytes":2}`, l1{32, 64, 32, 64}},
		// 8 bytes per lane: 256 bytes = 8 sectors.
		{"coalesced doubles", `{"kernel":"coalesced_copy","n":1024,"elem_bytes":8}`, l1{32, 256, 32, 256}},
		// 16 bytes per lane: 512 bytes = 16 sectors, still one request per warp.
		{"coalesced 16-byte", `{"kernel":"coalesced_copy","n":1024,"elem_bytes":16}`, l1{32, 512, 32, 512}},
		// n = 1000: 31 full warps, and one of 8 lanes = 32 bytes = 1 sector.
		{"tail warp", `{"kernel":"coalesced_copy","n":1000}`, l1{32, 31*4 + 1, 32, 31*4 + 1}},
		// block 100: each block has 3 full warps and one of 4 lanes; n = 1000
		// is 10 blocks. Block b's threads start at 100b floats = 400b bytes:
		// warps at 400b, 400b+128, 400b+256 each span 128 bytes from an
		// address that is 16 mod 32 for odd b (5 sectors) and 0 for even b
		// (4 sectors); the 4-lane warp covers 16 bytes at 400b+384: 1 sector.
		{"block of 100", `{"kernel":"coalesced_copy","n":1000,"block":100}`, l1{40, 5*(3*4+1) + 5*(3*5+1), 40, 5*(3*4+1) + 5*(3*5+1)}},
		// stride 2: 512 threads = 16 warps, each spans 256 bytes = 8 sectors.
		{"stride 2", `{"kernel":"strided_copy","n":1024,"stride":2}`, l1{16, 128, 16, 128}},
		// stride 32: 32 threads = 1 warp, 32 sectors.
		{"stride 32", `{"kernel":"strided_copy","n":1024,"stride":32}`, l1{1, 32, 1, 32}},
		// stride 3 floats = 12 bytes: lanes at 0, 12, ..., 372 span 384 bytes =
		// 12 sectors, and no sector is skipped since 12 < 32; ceil(96/3) = 32
		// threads: one warp.
		{"stride 3", `{"kernel":"strided_copy","n":96,"stride":3}`, l1{1, 12, 1, 12}},
		{"strided read", `{"kernel":"strided_read","n":1024,"stride":32}`, l1{1, 32, 0, 0}},
		{"strided write", `{"kernel":"strided_write","n":1024,"stride":32}`, l1{0, 0, 1, 32}},
		// offset 1: 1023 active threads. Loads start 4 bytes into a sector:
		// each full warp touches 5 sectors; the last warp has 31 lanes from
		// byte 3972 to 4095: 4 sectors. Stores are aligned: 31*4 + 4 (the
		// last warp's 124 bytes still touch 4 sectors).
		{"offset 1", `{"kernel":"offset_copy","n":1024,"offset":1}`, l1{32, 31*5 + 4, 32, 31*4 + 4}},
		// offset 8 floats = 32 bytes: aligned to a sector, not a line, so a
		// full warp still touches 4 sectors. 1048 active threads: 32 full
		// warps and one of 24 lanes = 96 bytes = 3 sectors.
		{"offset 8", `{"kernel":"offset_copy","n":1056,"offset":8}`, l1{33, 32*4 + 3, 33, 32*4 + 3}},
		// width 4: 256 threads = 8 warps, 512 bytes each = 16 sectors.
		{"float4", `{"kernel":"vectorized_copy","n":1024,"width":4}`, l1{8, 128, 8, 128}},
		// width 2: 512 threads = 16 warps, 256 bytes each = 8 sectors.
		{"float2", `{"kernel":"vectorized_copy","n":1024,"width":2}`, l1{16, 128, 16, 128}},
		// 1024 float4 vectors over 2 blocks of 64 threads, unroll 2: T = 128,
		// each thread does 1024/(128*2) = 4 trips of 2 loads and 2 stores;
		// 4 warps * 4 trips * 2 = 32 instructions each way, 16 sectors each.
		{"grid stride", `{"kernel":"grid_stride_copy","n":4096,"width":4,"unroll":2,"grid":2,"block":64}`, l1{32, 512, 32, 512}},
		// idx and in both coalesced with identity: 2 loads per warp.
		{"gather identity", `{"kernel":"gather_copy","n":1024}`, l1{64, 256, 32, 128}},
		// broadcast: every lane of a warp reads one float: 1 sector.
		{"gather broadcast", `{"kernel":"gather_copy","n":1024,"index_pattern":"broadcast_warp"}`, l1{64, 128 + 32, 32, 128}},
		// warp_shuffle permutes within the warp: the same 4 sectors.
		{"gather warp shuffle", `{"kernel":"gather_copy","n":1024,"index_pattern":"warp_shuffle"}`, l1{64, 256, 32, 128}},
		// reverse: a warp reads 32 consecutive floats backwards: 4 sectors.
		{"gather reverse", `{"kernel":"gather_copy","n":1024,"index_pattern":"reverse"}`, l1{64, 256, 32, 128}},
		// 16-byte structs: 16 sectors per warp for the load and the store.
		{"AoS 16", `{"kernel":"update_x_aos","n":1024}`, l1{32, 512, 32, 512}},
		// 8-byte structs: 256 bytes = 8 sectors.
		{"AoS 8", `{"kernel":"update_x_aos","n":1024,"struct_bytes":8}`, l1{32, 256, 32, 256}},
		// 128-byte structs: every lane its own sector.
		{"AoS 128", `{"kernel":"update_x_aos","n":1024,"struct_bytes":128}`, l1{32, 1024, 32, 1024}},
		// 24-byte structs, x at 0: lanes 24 apart span 768 bytes; a sector
		// holds lanes whose x falls in it: 4 lanes every 96 bytes = 3
		// sectors, of which lanes hit sectors 0, 0(24), 1(48), 2(72) → 3 of 3.
		// So all 24 sectors of 768 bytes are touched.
		{"AoS 24", `{"kernel":"update_x_aos","n":1024,"struct_bytes":24}`, l1{32, 32 * 24, 32, 32 * 24}},
		// x at offset 4 of a 16-byte struct: still 16 sectors.
		{"AoS 16 field 4", `{"kernel":"update_x_aos","n":1024,"field_offset":4}`, l1{32, 512, 32, 512}},
		{"SoA", `{"kernel":"update_x_soa","n":1024}`, l1{32, 128, 32, 128}},
		// 4 scalar loads per warp, 16 sectors each; one coalesced store.
		{"sum fields scalar", `{"kernel":"sum_fields_aos","n":1024}`, l1{128, 2048, 32, 128}},
		// one 16-byte load per warp, 16 sectors.
		{"sum fields vector", `{"kernel":"sum_fields_aos","n":1024,"vector":true}`, l1{32, 512, 32, 128}},
		// 32-byte structs, two 16-byte loads: lane l at 32l and 32l+16 → 32 sectors each.
		{"sum fields 32 vector", `{"kernel":"sum_fields_aos","n":1024,"struct_bytes":32,"vector":true}`, l1{64, 2048, 32, 128}},
		// 12-byte structs, 3 loads: lanes 12 bytes apart span 384 bytes = 12 sectors each.
		{"sum fields 12", `{"kernel":"sum_fields_aos","n":1024,"struct_bytes":12}`, l1{96, 96 * 12, 32, 128}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, l1Of(predict(t, tt.spec)))
		})
	}
}

func TestPredictRandomGatherL1(t *testing.T) {
	// With n = 2^22 random indices, two lanes of a warp share a sector
	// with probability about 1/2^19, so almost every warp touches 32
	// sectors: the seed's worst case.
	p := predict(t, `{"kernel":"gather_copy","n":4194304,"index_pattern":"random_perm"}`)
	warps := 4194304.0 / 32
	assert.InDelta(t, warps*(4+32), p.Metrics[metrics.LdSectors], warps*0.01)
	assert.Equal(t, 2*warps, p.Metrics[metrics.LdRequests])

	// Sorted random indices: each warp's 32 indices fall in a narrow range;
	// with n indices over n elements they average one element apart, so a
	// warp spans about 128 bytes.
	sorted := predict(t, `{"kernel":"gather_copy","n":4194304,"index_pattern":"sorted_random"}`)
	perWarp := (sorted.Metrics[metrics.LdSectors] - 4*warps) / warps
	assert.InDelta(t, 4.5, perWarp, 1, "sectors per warp of the sorted gather")
}

func TestModelIndexFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "idx.bin")
	// Lanes read elements 0, 32, 64, ...: one sector each.
	idx := make([]int32, 1024)
	for i := range idx {
		idx[i] = int32(i%32*32 + i/32)
	}
	require.NoError(t, spec.WriteIndexFile(path, idx))
	p := predict(t, `{"kernel":"gather_copy","n":1024,"index_file":"`+path+`"}`)
	assert.Equal(t, l1{64, 32*4 + 32*32, 32, 128}, l1Of(p))

	s, err := spec.Parse([]byte(`{"kernel":"gather_copy","n":2048,"index_file":"` + path + `"}`))
	require.NoError(t, err)
	_, err = Model(s)
	assert.ErrorIs(t, err, spec.ErrIndices, "a short index file is an error, not a prediction")
}

// ModelIndices with the indices a spec draws is Model, and it refuses
// indices of the wrong length, or any for a kernel that reads none.
func TestModelIndices(t *testing.T) {
	s, err := spec.Parse([]byte(`{"kernel":"gather_copy","n":4096,"index_pattern":"random_perm","seed":9}`))
	require.NoError(t, err)
	idx, err := s.Indices()
	require.NoError(t, err)
	want, err := Model(s)
	require.NoError(t, err)
	got, err := ModelIndices(s, idx)
	require.NoError(t, err)
	assert.Equal(t, want, got)

	_, err = ModelIndices(s, idx[:4095])
	assert.ErrorIs(t, err, spec.ErrIndices, "one index short")
	c, err := spec.Parse([]byte(`{"kernel":"coalesced_copy","n":4096}`))
	require.NoError(t, err)
	_, err = ModelIndices(c, idx)
	assert.ErrorContains(t, err, "reads no indices")
	_, err = ModelIndices(c, nil)
	assert.NoError(t, err)
}

func TestModelCounts(t *testing.T) {
	p := predict(t, `{"kernel":"update_x_aos","n":1024}`)
	assert.Equal(t, int64(32), p.Warps)
	// 32 warps, a load and a store each, of 32 lanes × 4 bytes.
	assert.Equal(t, int64(32*2*128), p.L1UsefulBytes)

	r := predict(t, `{"kernel":"strided_read","n":1024,"stride":32}`)
	// ceil(1024/32) = 32 threads: one warp's load of 32 lanes × 4 bytes.
	assert.Equal(t, int64(128), r.L1UsefulBytes)
	assert.Equal(t, 0.0, r.Metrics[metrics.StRequests], "no stores")
}

func TestModelRejectsInvalidSpecs(t *testing.T) {
	_, err := Model(spec.Spec{Kernel: spec.StridedCopy, N: 10, Block: 256, ElemBytes: 4, Stride: 0, L2Fetch: 64, Device: "h200"})
	assert.ErrorIs(t, err, spec.ErrValue)
	_, err = Model(spec.Spec{})
	assert.ErrorIs(t, err, spec.ErrUnknownKernel)
}

// TestEveryKernelHasAddresses holds the model to the kernel table: every
// kernel a spec may name has an address function, whose buffers are the
// ones spec.Buffers lists, and each buffer it names is touched.
func TestEveryKernelHasAddresses(t *testing.T) {
	for _, k := range spec.Kernels {
		t.Run(string(k), func(t *testing.T) {
			size := `"n":4096`
			if spec.Is2D(k) {
				size = `"rows":64,"cols":64`
			}
			s, err := spec.Parse([]byte(`{"kernel":"` + string(k) + `",` + size + `}`))
			require.NoError(t, err)
			_, ok := addresses[k]
			require.True(t, ok, "no address function for %s in addresses.go", k)
			touched := map[string]bool{}
			for w := range Warps(s) {
				ins, err := Instructions(s, w)
				require.NoError(t, err)
				for _, in := range ins {
					touched[in.Buffer] = true
				}
			}
			for _, b := range s.Buffers() {
				if k == spec.StridedRead && b.Name == "out" {
					assert.False(t, touched[b.Name], "strided_read stores nothing")
					continue
				}
				assert.True(t, touched[b.Name], "buffer %s of spec.Buffers is never accessed", b.Name)
			}
		})
	}
}

// ModelOn models on the profile it is given, not the one the spec
// names: the same profile gives Model's answer, and a profile without
// room for dirty lines makes a copy that fits in the L2 write back all it
// wrote.
func TestModelOn(t *testing.T) {
	s, err := spec.Parse([]byte(`{"kernel":"coalesced_copy","n":262144}`))
	require.NoError(t, err)
	h200, err := devices.Lookup("h200")
	require.NoError(t, err)
	want, err := Model(s)
	require.NoError(t, err)
	got, err := ModelOn(s, h200)
	require.NoError(t, err)
	assert.Equal(t, want, got)

	// 2^18 floats = 1 MiB written: far under the H200's 41 MB, so the L2
	// keeps it all; with no dirty capacity every byte goes to DRAM (and no
	// dirty data from before the launch, which would go too).
	assert.Zero(t, got.Metrics[metrics.DRAMWrite])
	noDirty := h200
	noDirty.DRAM.DirtyL2Bytes = 0
	noDirty.DRAM.ProfiledDirtyBytes = 0
	got, err = ModelOn(s, noDirty)
	require.NoError(t, err)
	assert.InDelta(t, 1<<20, got.Metrics[metrics.DRAMWrite], 0)

	bad := h200
	bad.SMs = 0
	_, err = ModelOn(s, bad)
	assert.ErrorContains(t, err, "want sms >= 1")
}

// Retime gives the time Model gives on the same profile, and limits
// that follow the profile's parameters.
func TestRetime(t *testing.T) {
	// 2^26 floats in and out: 512 MiB through DRAM.
	p := predict(t, `{"kernel":"coalesced_copy","n":67108864}`)
	h200, err := devices.Lookup("h200")
	require.NoError(t, err)
	assert.Equal(t, p, Retime(p, h200))
	half := h200
	half.Time.CopyBandwidth /= 2
	got := Retime(p, half)
	assert.InDelta(t, 2*p.Time.Bandwidth, got.Time.Bandwidth, 1e-12)
	assert.Equal(t, p.Metrics, got.Metrics, "the counts stay")
}

// A trace replayed on a profile predicts what ModelOn predicts on it,
// for launches small enough to be tracked whole and large enough to be
// sampled, on the profile it was traced on and on others.
func TestTrace(t *testing.T) {
	h200, err := devices.Lookup("h200")
	require.NoError(t, err)
	small := h200
	small.DRAM.ReuseL2Bytes /= 4
	small.DRAM.DirtyL2Bytes /= 4
	small.DRAM.Spread = 0.05
	small.Time.CopyBandwidth /= 2
	for _, js := range []string{
		`{"kernel":"coalesced_copy","n":262144}`,
		`{"kernel":"coalesced_copy","n":8388608}`,
		`{"kernel":"strided_write","n":4194304,"stride":32}`,
		`{"kernel":"update_x_aos","n":1048576,"struct_bytes":128}`,
		`{"kernel":"gather_copy","n":1048576,"index_pattern":"random_perm"}`,
	} {
		t.Run(js, func(t *testing.T) {
			s, err := spec.Parse([]byte(js))
			require.NoError(t, err)
			tr, err := NewTrace(s, h200)
			require.NoError(t, err)
			for _, d := range []devices.Profile{h200, small} {
				want, err := ModelOn(s, d)
				require.NoError(t, err)
				assert.Equal(t, want, tr.ModelOn(d))
			}
		})
	}
}
