package exercises

import (
	"math/rand/v2"
	"reflect"
	"slices"

	"github.com/coalescing-course/coalesce/lessons/metrics"
	"github.com/coalescing-course/coalesce/lessons/simt"
)

// TransposeKernel is the Go signature of 10-kernels/transpose. tile is
// the block's shared array of TileWords floats; the CUDA body declares
// its own.
type TransposeKernel = func(t *simt.Thread, in, out *simt.Global[float32], tile *simt.Shared[float32], rows, cols int)

// TileWords is the size of the transpose's shared tile: 32 rows of 33
// floats, room for a 32x32 tile with one float of padding a row.
const TileWords = 32 * 33

type transposeImpl struct{}

func transpose() *Exercise {
	return &Exercise{
		ID:    "10-kernels/transpose",
		Title: "A transpose with coalesced reads and writes",
		Goal: "Write the rows x cols matrix in (row-major) as the cols x rows matrix out: out[c*rows+r] = in[r*cols+c]. " +
			"The launch has a block of 32x8 threads for each 32x32 tile (ceil(cols/32) x ceil(rows/32) blocks), " +
			"and tile is the block's shared array of 32*33 floats. The starter reads along rows but writes down " +
			"columns: its stores touch a sector per lane. Read the tile along rows into shared memory, Sync, and " +
			"write it out along the rows of out; lay the tile out so that a warp reading down a column of it hits " +
			"32 different banks. Targets: load and store sectors no more than the rows of the tiles fill, and no " +
			"shared-memory bank conflicts.",
		Signature: "func(t *simt.Thread, in, out *simt.Global[float32], tile *simt.Shared[float32], rows, cols int)",
		Metrics:   []string{metrics.LdSectors, metrics.StSectors, metrics.ShLdBankConflicts, metrics.ShStBankConflicts},
		Params: []Param{
			{Name: "rows", Doc: "rows of in", Min: 96, Max: 768, Default: 500},
			{Name: "cols", Doc: "columns of in", Min: 96, Max: 768, Default: 300},
		},
		Starter:   TransposeKernel(transposeStarter),
		StarterGo: starterSource("transposeStarter"),
		impl:      transposeImpl{},
	}
}

func (transposeImpl) typ() reflect.Type { return reflect.TypeFor[TransposeKernel]() }

func (transposeImpl) draw(r *rand.Rand, ps params) map[string]int {
	return map[string]int{"rows": ps.draw(r, "rows"), "cols": ps.draw(r, "cols")}
}

func (transposeImpl) valid(map[string]int) error { return nil }

// rowSectors returns the sectors that reading (or writing) a rows x cols
// row-major matrix costs, 32 elements of a row at a time, each run
// starting at a multiple of 32 columns: the best a warp a tile row can do
// when a row's start is not on a sector boundary.
func rowSectors(rows, cols int) int64 {
	var n int64
	for r := range int64(rows) {
		for c := int64(0); c < int64(cols); c += 32 {
			n += span(4*(r*int64(cols)+c), 4*(r*int64(cols)+min(c+32, int64(cols))))
		}
	}
	return n
}

func (transposeImpl) prepare(v Variant) *instance {
	rows, cols := v.Params["rows"], v.Params["cols"]
	in, out := values(v.rng(), rows*cols), make([]float32, rows*cols)
	want := make([]float32, rows*cols)
	for r := range rows {
		for c := range cols {
			want[c*rows+r] = in[r*cols+c]
		}
	}
	inG, outG := simt.NewGlobal("in", slices.Clone(in)), simt.NewGlobal("out", out)
	tile := simt.NewShared[float32]("tile", TileWords)
	check := func(outputs map[string]any) *Mismatch {
		got, m := floatsOut(outputs, "out", rows*cols)
		if m != nil {
			return m
		}
		return sameFloats("out", got, want)
	}
	l := simt.Launch{Grid: simt.Dim{X: (cols + 31) / 32, Y: (rows + 31) / 32}, Block: simt.Dim{X: 32, Y: 8}}
	return &instance{
		launch: l,
		bind: func(kernel reflect.Value) (func(*simt.Thread), error) {
			f := kernel.Interface().(TransposeKernel)
			return func(t *simt.Thread) { f(t, inG, outG, tile, rows, cols) }, nil
		},
		outputs: map[string]any{"out": out},
		inputs:  map[string]any{"in": in},
		check:   check,
		needs:   loadedAll("in", 0, rows*cols),
		targets: []target{
			{metrics.LdSectors, float64(rowSectors(rows, cols)), sectorsOf(0, int64(rows*cols))},
			{metrics.StSectors, float64(rowSectors(cols, rows)), sectorsOf(0, int64(rows*cols))},
			{metrics.ShLdBankConflicts, 0, 0},
			{metrics.ShStBankConflicts, 0, 0},
		},
		cuda: Problem{
			Name:      "transpose",
			Signature: "__global__ void transpose(const float* __restrict__ in, float* __restrict__ out, int rows, int cols)",
			Starter: `
    int c = blockIdx.x * 32 + threadIdx.x;
    for (int j = 0; j < 32; j += 8) {
        int r = blockIdx.y * 32 + threadIdx.y + j;
        if (r < rows && c < cols) out[c * rows + r] = in[r * cols + c];
    }
`,
			Solution: `
    __shared__ float tile[32][33];
    int tx = threadIdx.x, ty = threadIdx.y;
    int c = blockIdx.x * 32 + tx;
    for (int j = 0; j < 32; j += 8) {
        int r = blockIdx.y * 32 + ty + j;
        if (r < rows && c < cols) tile[ty + j][tx] = in[r * cols + c];
    }
    __syncthreads();
    int r = blockIdx.y * 32 + tx;
    for (int j = 0; j < 32; j += 8) {
        int oc = blockIdx.x * 32 + ty + j;
        if (r < rows && oc < cols) out[oc * rows + r] = tile[tx][ty + j];
    }
`,
			Wrong: `
    int c = blockIdx.x * 32 + threadIdx.x;
    for (int j = 0; j < 32; j += 8) {
        int r = blockIdx.y * 32 + threadIdx.y + j;
        if (r < rows && c < cols) out[r * cols + c] = in[r * cols + c];
    }
`,
			Args: []Arg{
				{Name: "in", CType: "const float*", ElemBytes: 4, Data: floatBytes(in)},
				{Name: "out", CType: "float*", ElemBytes: 4, Data: make([]byte, 4*rows*cols), Output: true},
				{Name: "rows", CType: "int", Value: int64(rows)},
				{Name: "cols", CType: "int", Value: int64(cols)},
			},
			Grid: l.Grid, Block: l.Block,
			check: check,
		},
	}
}
