package simt_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coalescing-course/coalesce/lessons/metrics"
	"github.com/coalescing-course/coalesce/lessons/sectors"
	"github.com/coalescing-course/coalesce/lessons/simt"
	"github.com/coalescing-course/coalesce/lessons/spec"
)

// The course's kernels (cuda/src/kernels.cuh), written in Go statement by
// statement, bounds checks and loops included. Run through simt, each must
// give sectors.Model's counts for its spec: the same warp instructions,
// in the same order, priced by the same model.

// launchOf is the launch the harness makes for s.
func launchOf(s spec.Spec) simt.Launch {
	sh := s.Shape()
	return simt.Launch{Grid: simt.Dim{X: int(sh.GridX), Y: int(sh.GridY)}, Block: simt.Dim{X: int(sh.BlockX), Y: int(sh.BlockY)}, Device: s.Device, L2Fetch: s.L2Fetch}
}

// thread is thread_index(): blockIdx.x*blockDim.x + threadIdx.x.
func thread(t *simt.Thread) int { return t.BlockIdx.X*t.BlockDim.X + t.ThreadIdx.X }

// count fills a buffer with 1, 2, 3, ...: a copy that moves the wrong
// element shows.
func count[T ~float32 | ~float64 | ~int32 | ~uint8 | ~uint16](n int) []T {
	out := make([]T, n)
	for i := range out {
		out[i] = T(i%250 + 1)
	}
	return out
}

// k_coalesced_copy
func coalescedCopy[T any](in, out *simt.Global[T], n int) func(*simt.Thread) {
	return func(t *simt.Thread) {
		if i := thread(t); i < n {
			out.Store(t, i, in.Load(t, i))
		}
	}
}

// k_strided_copy
func stridedCopy[T any](in, out *simt.Global[T], n, stride int) func(*simt.Thread) {
	return func(t *simt.Thread) {
		if i := thread(t) * stride; i < n {
			out.Store(t, i, in.Load(t, i))
		}
	}
}

// k_offset_copy
func offsetCopy[T any](in, out *simt.Global[T], n, offset int) func(*simt.Thread) {
	return func(t *simt.Thread) {
		if i := thread(t); i+offset < n {
			out.Store(t, i, in.Load(t, i+offset))
		}
	}
}

// k_gather_copy
func gatherCopy(in, out *simt.Global[float32], idx *simt.Global[int32], n int) func(*simt.Thread) {
	return func(t *simt.Thread) {
		if i := thread(t); i < n {
			out.Store(t, i, in.Load(t, int(idx.Load(t, i))))
		}
	}
}

// k_update_x_aos: x is the field view of the structs.
func updateX(x *simt.Global[float32], n int) func(*simt.Thread) {
	return func(t *simt.Thread) {
		if i := thread(t); i < n {
			x.Store(t, i, x.Load(t, i)+1)
		}
	}
}

// k_vectorized_copy with V = [4]float32 (float4): nvec = (n-offset)/4
// threads, src = (const float4*)(in + offset).
func vectorizedCopy(in *simt.Global[float32], out *simt.Global[[4]float32], offset int) func(*simt.Thread) {
	src := simt.As[[4]float32](in, offset)
	nvec := src.Len()
	return func(t *simt.Thread) {
		if i := thread(t); i < nvec {
			out.Store(t, i, src.Load(t, i))
		}
	}
}

// k_sum_fields_aos<false>: the structs as floats, struct_bytes/4 a struct.
func sumFieldsAoS(p, out *simt.Global[float32], n, structBytes int) func(*simt.Thread) {
	fields := structBytes / 4
	return func(t *simt.Thread) {
		if i := thread(t); i < n {
			var sum float32
			for f := range fields {
				sum += p.Load(t, i*fields+f)
			}
			out.Store(t, i, sum)
		}
	}
}

// k_sum_fields_aos<true>: the structs as float4s, struct_bytes/16 a struct.
func sumFieldsAoSVector(p *simt.Global[[4]float32], out *simt.Global[float32], n, structBytes int) func(*simt.Thread) {
	vectors := structBytes / 16
	return func(t *simt.Thread) {
		if i := thread(t); i < n {
			var sum float32
			for f := range vectors {
				q := p.Load(t, i*vectors+f)
				sum += q[0]
				sum += q[1]
				sum += q[2]
				sum += q[3]
			}
			out.Store(t, i, sum)
		}
	}
}

// k_strided_write<float>: the store alone, of a value made from the index.
func stridedWrite(out *simt.Global[float32], n, stride int) func(*simt.Thread) {
	return func(t *simt.Thread) {
		if i := thread(t) * stride; i < n {
			out.Store(t, i, float32(i))
		}
	}
}

// k_copy_columns: x walks down a column.
func copyColumns(in, out *simt.Global[float32], rows, cols, tile, blockRows int) func(*simt.Thread) {
	return func(t *simt.Thread) {
		r := t.BlockIdx.X*tile + t.ThreadIdx.X
		for j := 0; j < tile; j += blockRows {
			if c := t.BlockIdx.Y*tile + t.ThreadIdx.Y + j; r < rows && c < cols {
				out.Store(t, r*cols+c, in.Load(t, r*cols+c))
			}
		}
	}
}

// k_transpose_coalesced_read
func transposeCoalescedRead(in, out *simt.Global[float32], rows, cols, tile, blockRows int) func(*simt.Thread) {
	return func(t *simt.Thread) {
		c := t.BlockIdx.X*tile + t.ThreadIdx.X
		for j := 0; j < tile; j += blockRows {
			if r := t.BlockIdx.Y*tile + t.ThreadIdx.Y + j; r < rows && c < cols {
				out.Store(t, c*rows+r, in.Load(t, r*cols+c))
			}
		}
	}
}

// k_transpose_tiled
func transposeTiled(in, out *simt.Global[float32], s *simt.Shared[float32], rows, cols, tile, blockRows, pad int) func(*simt.Thread) {
	pitch := tile + pad
	return func(t *simt.Thread) {
		tx, ty := t.ThreadIdx.X, t.ThreadIdx.Y
		c := t.BlockIdx.X*tile + tx
		for j := 0; j < tile; j += blockRows {
			if r := t.BlockIdx.Y*tile + ty + j; r < rows && c < cols {
				s.Store(t, (ty+j)*pitch+tx, in.Load(t, r*cols+c))
			}
		}
		t.Sync()
		r := t.BlockIdx.Y*tile + tx
		for j := 0; j < tile; j += blockRows {
			if oc := t.BlockIdx.X*tile + ty + j; r < rows && oc < cols {
				out.Store(t, oc*rows+r, s.Load(t, tx*pitch+ty+j))
			}
		}
	}
}

// Structs of update_x_aos: 16 bytes with x first (the spec's default), and
// 24 bytes with x at byte 8.
type (
	particle16 struct{ X, Y, Z, W float32 }
	particle24 struct{ A, B, X, C, D, E float32 }
)

// specKernel builds the Go kernel of a spec, its buffers and a check of
// what it computed.
type specKernel struct {
	spec   string
	kernel func(s spec.Spec) (func(*simt.Thread), func(t *testing.T))
}

func copyCase[T ~float32 | ~float64 | ~int32 | ~uint8 | ~uint16](js string, kernel func(in, out *simt.Global[T], s spec.Spec) func(*simt.Thread), want func(in []T, s spec.Spec) []T) specKernel {
	return specKernel{js, func(s spec.Spec) (func(*simt.Thread), func(t *testing.T)) {
		in, out := count[T](int(s.N)), make([]T, s.N)
		k := kernel(simt.NewGlobal("in", in), simt.NewGlobal("out", out), s)
		return k, func(t *testing.T) { assert.Equal(t, want(in, s), out) }
	}}
}

// every returns in where every stride-th element is kept and the rest 0.
func every[T ~float32 | ~float64 | ~int32 | ~uint8 | ~uint16](in []T, stride int) []T {
	out := make([]T, len(in))
	for i := 0; i < len(in); i += stride {
		out[i] = in[i]
	}
	return out
}

func specKernels() []specKernel {
	same := func(in []float32, _ spec.Spec) []float32 { return in }
	return []specKernel{
		copyCase(`{"kernel":"coalesced_copy","n":1048576}`, func(in, out *simt.Global[float32], s spec.Spec) func(*simt.Thread) {
			return coalescedCopy(in, out, int(s.N))
		}, same),
		copyCase(`{"kernel":"coalesced_copy","n":1000,"block":100}`, func(in, out *simt.Global[float32], s spec.Spec) func(*simt.Thread) {
			return coalescedCopy(in, out, int(s.N))
		}, same),
		copyCase(`{"kernel":"coalesced_copy","n":4096,"elem_bytes":1}`, func(in, out *simt.Global[uint8], s spec.Spec) func(*simt.Thread) {
			return coalescedCopy(in, out, int(s.N))
		}, func(in []uint8, _ spec.Spec) []uint8 { return in }),
		copyCase(`{"kernel":"coalesced_copy","n":4096,"elem_bytes":8}`, func(in, out *simt.Global[float64], s spec.Spec) func(*simt.Thread) {
			return coalescedCopy(in, out, int(s.N))
		}, func(in []float64, _ spec.Spec) []float64 { return in }),
		{`{"kernel":"coalesced_copy","n":4096,"elem_bytes":16}`, func(s spec.Spec) (func(*simt.Thread), func(t *testing.T)) {
			in, out := make([][4]float32, s.N), make([][4]float32, s.N)
			for i := range in {
				in[i] = [4]float32{float32(i), 1, 2, 3}
			}
			return coalescedCopy(simt.NewGlobal("in", in), simt.NewGlobal("out", out), int(s.N)), func(t *testing.T) { assert.Equal(t, in, out) }
		}},
		copyCase(`{"kernel":"strided_copy","n":1048576,"stride":32}`, func(in, out *simt.Global[float32], s spec.Spec) func(*simt.Thread) {
			return stridedCopy(in, out, int(s.N), int(s.Stride))
		}, func(in []float32, s spec.Spec) []float32 { return every(in, int(s.Stride)) }),
		copyCase(`{"kernel":"strided_copy","n":3000,"stride":3,"elem_bytes":8,"block":96}`, func(in, out *simt.Global[float64], s spec.Spec) func(*simt.Thread) {
			return stridedCopy(in, out, int(s.N), int(s.Stride))
		}, func(in []float64, s spec.Spec) []float64 { return every(in, int(s.Stride)) }),
		copyCase(`{"kernel":"offset_copy","n":1048576,"offset":1}`, func(in, out *simt.Global[float32], s spec.Spec) func(*simt.Thread) {
			return offsetCopy(in, out, int(s.N), int(s.Offset))
		}, func(in []float32, s spec.Spec) []float32 {
			return append(append([]float32{}, in[s.Offset:]...), make([]float32, s.Offset)...)
		}),
		copyCase(`{"kernel":"offset_copy","n":1000,"offset":5,"elem_bytes":2}`, func(in, out *simt.Global[uint16], s spec.Spec) func(*simt.Thread) {
			return offsetCopy(in, out, int(s.N), int(s.Offset))
		}, func(in []uint16, s spec.Spec) []uint16 {
			return append(append([]uint16{}, in[s.Offset:]...), make([]uint16, s.Offset)...)
		}),
		gatherCase(`{"kernel":"gather_copy","n":1048576,"index_pattern":"random"}`),
		gatherCase(`{"kernel":"gather_copy","n":777,"index_pattern":"reverse"}`),
		{`{"kernel":"update_x_aos","n":1048576}`, func(s spec.Spec) (func(*simt.Thread), func(t *testing.T)) {
			p := make([]particle16, s.N)
			x := simt.Field[float32](simt.NewGlobal("p", p), "X")
			return updateX(x, int(s.N)), func(t *testing.T) {
				assert.Equal(t, particle16{X: 1}, p[0])
				assert.Equal(t, particle16{X: 1}, p[s.N-1])
			}
		}},
		{`{"kernel":"update_x_aos","n":500,"struct_bytes":24,"field_offset":8}`, func(s spec.Spec) (func(*simt.Thread), func(t *testing.T)) {
			p := make([]particle24, s.N)
			x := simt.Field[float32](simt.NewGlobal("p", p), "X")
			return updateX(x, int(s.N)), func(t *testing.T) { assert.Equal(t, particle24{X: 1}, p[499]) }
		}},
		{`{"kernel":"vectorized_copy","n":1048576,"width":4}`, vectorCase},
		{`{"kernel":"vectorized_copy","n":1000,"width":4,"offset":4,"block":96}`, vectorCase},
		{`{"kernel":"sum_fields_aos","n":4096,"struct_bytes":48}`, func(s spec.Spec) (func(*simt.Thread), func(t *testing.T)) {
			fields := s.StructBytes / 4
			p, out := count[float32](int(s.N)*fields), make([]float32, s.N)
			return sumFieldsAoS(simt.NewGlobal("p", p), simt.NewGlobal("out", out), int(s.N), s.StructBytes), func(t *testing.T) {
				var want float32
				for _, v := range p[fields*7 : fields*8] {
					want += v
				}
				assert.Equal(t, want, out[7])
			}
		}},
		{`{"kernel":"sum_fields_aos","n":1000,"struct_bytes":32,"vector":true}`, func(s spec.Spec) (func(*simt.Thread), func(t *testing.T)) {
			p, out := count[float32](int(s.N)*s.StructBytes/4), make([]float32, s.N)
			v := simt.As[[4]float32](simt.NewGlobal("p", p), 0)
			return sumFieldsAoSVector(v, simt.NewGlobal("out", out), int(s.N), s.StructBytes), func(t *testing.T) {
				var want float32
				for _, x := range p[8*999:] {
					want += x
				}
				assert.Equal(t, want, out[999])
			}
		}},
		{`{"kernel":"strided_write","n":65536,"stride":8}`, func(s spec.Spec) (func(*simt.Thread), func(t *testing.T)) {
			out := make([]float32, s.N)
			return stridedWrite(simt.NewGlobal("out", out), int(s.N), int(s.Stride)), func(t *testing.T) {
				assert.Equal(t, float32(8), out[8])
				assert.Zero(t, out[9])
			}
		}},
		{`{"kernel":"update_x_soa","n":100000}`, func(s spec.Spec) (func(*simt.Thread), func(t *testing.T)) {
			x := count[float32](int(s.N))
			return updateX(simt.NewGlobal("x", x), int(s.N)), func(t *testing.T) { assert.Equal(t, float32(3), x[1]) }
		}},
		matrixCase(`{"kernel":"copy_columns","rows":100,"cols":70,"tile":16,"block_rows":4}`, copyColumns, false),
		matrixCase(`{"kernel":"transpose_coalesced_read","rows":33,"cols":100,"tile":8,"block_rows":1}`, transposeCoalescedRead, true),
		transposeCase(`{"kernel":"transpose_tiled","rows":1024,"cols":1024,"pad":1}`),
		transposeCase(`{"kernel":"transpose_tiled","rows":256,"cols":128,"pad":0}`),
		transposeCase(`{"kernel":"transpose_tiled","rows":64,"cols":96,"tile":16,"block_rows":2,"pad":3}`),
	}
}

func gatherCase(js string) specKernel {
	return specKernel{js, func(s spec.Spec) (func(*simt.Thread), func(t *testing.T)) {
		idx, err := s.Indices()
		if err != nil {
			panic(err)
		}
		in, out := count[float32](int(s.N)), make([]float32, s.N)
		k := gatherCopy(simt.NewGlobal("in", in), simt.NewGlobal("out", out), simt.NewGlobal("idx", idx), int(s.N))
		return k, func(t *testing.T) {
			for i, j := range idx {
				if out[i] != in[j] {
					assert.Equal(t, in[j], out[i], "out[%d] = in[idx[%d]] = in[%d]", i, i, j)
					return
				}
			}
		}
	}}
}

func vectorCase(s spec.Spec) (func(*simt.Thread), func(t *testing.T)) {
	in, out := count[float32](int(s.N)), make([][4]float32, s.N/4)
	k := vectorizedCopy(simt.NewGlobal("in", in), simt.NewGlobal("out", out), int(s.Offset))
	return k, func(t *testing.T) {
		last := (s.N-s.Offset)/4 - 1
		assert.Equal(t, [4]float32(in[s.Offset+4*last:]), out[last])
	}
}

// matrixCase is a 2D kernel without shared memory; transposed says out is
// cols x rows.
func matrixCase(js string, kernel func(in, out *simt.Global[float32], rows, cols, tile, blockRows int) func(*simt.Thread), transposed bool) specKernel {
	return specKernel{js, func(s spec.Spec) (func(*simt.Thread), func(t *testing.T)) {
		rows, cols := int(s.Rows), int(s.Cols)
		in, out := count[float32](rows*cols), make([]float32, rows*cols)
		k := kernel(simt.NewGlobal("in", in), simt.NewGlobal("out", out), rows, cols, s.Tile, s.BlockRows)
		return k, func(t *testing.T) {
			r, c := rows-1, cols-1
			at := r*cols + c
			if transposed {
				at = c*rows + r
			}
			assert.Equal(t, in[r*cols+c], out[at], "the last element")
		}
	}}
}

func transposeCase(js string) specKernel {
	return specKernel{js, func(s spec.Spec) (func(*simt.Thread), func(t *testing.T)) {
		rows, cols := int(s.Rows), int(s.Cols)
		in, out := count[float32](rows*cols), make([]float32, rows*cols)
		sh := simt.NewShared[float32]("s", s.Tile*(s.Tile+s.Pad))
		k := transposeTiled(simt.NewGlobal("in", in), simt.NewGlobal("out", out), sh, rows, cols, s.Tile, s.BlockRows, s.Pad)
		return k, func(t *testing.T) {
			for r := range rows {
				for c := range cols {
					if out[c*rows+r] != in[r*cols+c] {
						assert.Equal(t, in[r*cols+c], out[c*rows+r], "out[%d][%d]", c, r)
						return
					}
				}
			}
		}
	}}
}

func TestSpecKernelsMatchModel(t *testing.T) {
	for _, k := range specKernels() {
		t.Run(k.spec, func(t *testing.T) {
			s, err := spec.Parse([]byte(k.spec))
			require.NoError(t, err)
			want, err := sectors.Model(s)
			require.NoError(t, err)
			kernel, check := k.kernel(s)
			got, err := launchOf(s).Run(kernel)
			require.NoError(t, err)
			check(t)
			assert.Equal(t, want.Metrics, got.Modelled.Metrics)
			assert.Equal(t, want.L1UsefulBytes, got.Modelled.L1UsefulBytes)
			assert.Equal(t, want.Warps, got.Modelled.Warps)
			assert.Equal(t, want.Traffic, got.Modelled.Traffic)
			assert.Zero(t, got.Split)
			assert.Zero(t, got.RaceCount, "%v", got.Races)
		})
	}
}

// Where a tile does not divide the matrix, the CUDA kernel's first shared
// store is predicated (sectors.Instruction.Predicated): warps with no lane
// inside the matrix still execute it, and ncu counts it. A Go kernel's
// threads skip the call, so simt cannot see it: its count is the model's
// less those instructions, and every other count is the model's. 100x100,
// tile 32, block_rows 8: 16 blocks x 8 warps x 4 trips = 512 executed, of
// which 100 rows x 4 column tiles = 400 have a lane (TestTransposeTiledEdgeShared
// in lessons/sectors works both out).
func TestTransposeEdgePredicatedStores(t *testing.T) {
	k := transposeCase(`{"kernel":"transpose_tiled","rows":100,"cols":100,"pad":1}`)
	s, err := spec.Parse([]byte(k.spec))
	require.NoError(t, err)
	want, err := sectors.Model(s)
	require.NoError(t, err)
	kernel, check := k.kernel(s)
	got, err := launchOf(s).Run(kernel)
	require.NoError(t, err)
	check(t)
	assert.Equal(t, 512.0, want.Metrics[metrics.ShStRequests])
	assert.Equal(t, 400.0, got.Modelled.Metrics[metrics.ShStRequests])
	got.Modelled.Metrics[metrics.ShStRequests] = 512
	assert.Equal(t, want.Metrics, got.Modelled.Metrics)
}

// A float4 load from a float offset that is not a multiple of 4 is
// misaligned: the GPU refuses the launch, Model refuses the spec, and
// simt refuses the access.
func TestMisalignedVectorBothRefuse(t *testing.T) {
	s, err := spec.Parse([]byte(`{"kernel":"vectorized_copy","n":1024,"width":4,"offset":2}`))
	require.NoError(t, err)
	_, err = sectors.Model(s)
	assert.ErrorIs(t, err, sectors.ErrMisaligned)
	in, out := simt.NewGlobal("in", make([]float32, s.N)), simt.NewGlobal("out", make([][4]float32, s.N/4))
	_, err = launchOf(s).Run(vectorizedCopy(in, out, int(s.Offset)))
	assert.ErrorIs(t, err, simt.ErrAccess)
	assert.ErrorContains(t, err, "cudaErrorMisalignedAddress")
}
