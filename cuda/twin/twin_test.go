package twin

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coalescing-course/coalesce/cuda/toolkit"
	"github.com/coalescing-course/coalesce/lessons/exercises"
	"github.com/coalescing-course/coalesce/lessons/simt"
)

// The GPU's side of these tests is what ncu printed on the H200 for the
// bodies below (cuda/toolkit/testdata/ncusource, runs/issue25_run1.sh).

func gpuLines(t *testing.T, name string) []toolkit.SourceLine {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("../toolkit/testdata/ncusource", name+".source.csv"))
	require.NoError(t, err)
	pages, err := toolkit.ParseNcuSource(data)
	require.NoError(t, err)
	require.Len(t, pages, 1)
	return pages[0].File("kernel.cu")
}

func rowAt(t *testing.T, tb Table, line int) Row {
	t.Helper()
	for _, r := range tb.Rows {
		if r.Line == line {
			return r
		}
	}
	t.Fatalf("no row for line %d in\n%s", line, tb)
	return Row{}
}

func TestAccesses(t *testing.T) {
	body := `
    __shared__ float tile[32][33];   // tile[0] in a comment is no access
    const float4* src = reinterpret_cast<const float4*>(in + off);
    float4* dst = reinterpret_cast<float4*>(out + off);
    if (i < n) dst[i] = src[i];
    tile[ty][tx] = in[r * cols + c];
    s[t] += s[t + w];
    out[c] = tile[tx][ty] == 0 ? 1.0f : 2.0f;
    printf("in[%d]\n", i);
    out[i]++;
    v.x = in[i];
    q[i] = 0;
`
	got := accesses(body, []string{"in", "out", "s"})
	want := []access{
		{5, "out", true}, {5, "in", false},
		{6, sharedBuffer, true}, {6, "in", false},
		{7, "s", false}, {7, "s", true}, {7, "s", false},
		{8, "out", true}, {8, sharedBuffer, false},
		{10, "out", false}, {10, "out", true},
		{11, "in", false},
	}
	assert.Equal(t, want, got)
}

// The default strided-copy variant (n = 100000, a multiple of 32, so no
// warp's lanes run different trip counts): the hoisted-stride loop agrees
// with its Go twin on every line, although nvcc unrolled it.
func TestBuildHoistedAgrees(t *testing.T) {
	e, err := exercises.Lookup("10-kernels/strided-copy")
	require.NoError(t, err)
	out, err := e.Run(e.Variant(""), func(t *simt.Thread, in, out *simt.Global[float32], n, k int) {
		i := t.BlockIdx.X*t.BlockDim.X + t.ThreadIdx.X
		stride := t.BlockDim.X * t.GridDim.X
		for e := i; e < n; e += stride {
			out.Store(t, e, in.Load(t, e))
		}
	})
	require.NoError(t, err)
	require.True(t, out.Pass)
	body := "\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    int stride = blockDim.x * gridDim.x;\n    for (int e = i; e < n; e += stride)\n        out[e] = in[e];\n"
	tb := Build(body, []string{"in", "out"}, gpuLines(t, "sc_hoisted"), out.Result.Sites)
	require.Len(t, tb.Rows, 1, tb.String())
	r := rowAt(t, tb, 5)
	// 3125 warp-trips of 32 lanes, 4 sectors each: ncu's and simt's alike.
	assert.Equal(t, Counts{Ld: 3125, LdSectors: 12500, St: 3125, StSectors: 12500, Lanes: 200000}, r.GPU)
	assert.Equal(t, r.GPU, r.Model)
	assert.False(t, r.Differs)
	assert.Len(t, r.SASS, 10, "five loads and five stores: a remainder loop and four unrolled copies")
	assert.Empty(t, tb.Unpaired)
}

// Without a Go twin (sites nil) a row has no model side to differ from,
// and what the SASS alone shows still names it: nvcc's copies of the
// unrolled grid-stride loop, which lab's card needs to allow the GPU's
// regrouping of a body passed with no twin.
func TestBuildNoTwinNamesUnrolling(t *testing.T) {
	body := "\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    int stride = blockDim.x * gridDim.x;\n    for (int e = i; e < n; e += stride)\n        out[e] = in[e];\n"
	tb := Build(body, []string{"in", "out"}, gpuLines(t, "sc_hoisted"), nil)
	r := rowAt(t, tb, 5)
	assert.False(t, r.Differs, "no twin, nothing to differ from")
	assert.Equal(t, []Reason{Unrolled}, r.Reasons)
	assert.Equal(t, Counts{}, r.Model)
}

// An if/else pair of loads (lines 6 and 8) that nvcc turned into a select
// and one load on line 9: simt's two sites of 16 lanes a warp against one
// instruction of 32, which touches the sectors the halves share once.
func TestBuildMergedLoads(t *testing.T) {
	n := 1000
	in, outv := simt.NewGlobal("in", make([]float32, n)), simt.NewGlobal("out", make([]float32, n))
	res, err := simt.Launch{Grid: simt.Dim{X: 4}, Block: simt.Dim{X: 256}}.Run(func(t *simt.Thread) {
		i := t.BlockIdx.X*t.BlockDim.X + t.ThreadIdx.X
		if i < n {
			var v float32
			if i%2 == 0 {
				v = in.Load(t, i)
			} else {
				v = in.Load(t, n-i)
			}
			outv.Store(t, i, v)
		}
	})
	require.NoError(t, err)
	body, err := os.ReadFile("testdata/select.cu")
	require.NoError(t, err)
	tb := Build(string(body), []string{"in", "out"}, gpuLines(t, "bl_select"), res.Sites)
	six, eight, nine := rowAt(t, tb, 6), rowAt(t, tb, 8), rowAt(t, tb, 9)
	assert.Equal(t, int64(0), six.GPU.Ld)
	assert.Equal(t, int64(32), six.Model.Ld, "32 warps, the even lanes of each")
	assert.Equal(t, int64(32), eight.Model.Ld)
	assert.Equal(t, int64(32), nine.GPU.Ld, "one load a warp, all its lanes")
	// One instruction touches the sectors of both lanes' halves once:
	// 247, where simt's two instructions of 16 lanes touch 125 each.
	assert.Equal(t, int64(250), six.Model.LdSectors+eight.Model.LdSectors)
	assert.Equal(t, int64(247), nine.GPU.LdSectors)
	for _, r := range []Row{six, eight, nine} {
		assert.True(t, r.Differs)
		assert.Contains(t, r.Reasons, Merged, "line %d", r.Line)
	}
	assert.Equal(t, nine.GPU.StSectors, nine.Model.StSectors)
}

// The shared reduction: its halving loop's guarded shared instructions
// run in all 32 warps each time; simt counts only the warps with a lane
// on. Same lanes, same wavefronts.
func TestBuildPredicated(t *testing.T) {
	n := 1000
	in, outv := simt.NewGlobal("in", make([]float32, n)), simt.NewGlobal("out", make([]float32, 4))
	s := simt.NewShared[float32]("s", 256)
	res, err := simt.Launch{Grid: simt.Dim{X: 4}, Block: simt.Dim{X: 256}}.Run(func(t *simt.Thread) {
		tid := t.ThreadIdx.X
		i := t.BlockIdx.X*t.BlockDim.X + tid
		var v float32
		if i < n {
			v = in.Load(t, i)
		}
		s.Store(t, tid, v)
		t.Sync()
		for w := 128; w > 0; w >>= 1 {
			if tid < w {
				s.Store(t, tid, s.Load(t, tid)+s.Load(t, tid+w))
			}
			t.Sync()
		}
		if tid == 0 {
			outv.Store(t, t.BlockIdx.X, s.Load(t, 0))
		}
	})
	require.NoError(t, err)
	body, err := os.ReadFile("testdata/reduce.cu")
	require.NoError(t, err)
	tb := Build(string(body), []string{"in", "out"}, gpuLines(t, "bl_reduce"), res.Sites)
	r := rowAt(t, tb, 9)
	assert.True(t, r.Differs)
	assert.Contains(t, r.Reasons, Predicated)
	assert.Equal(t, int64(16*32), r.GPU.ShLd, "16 loads, 32 warps each")
	assert.Greater(t, r.GPU.ShLd, r.Model.ShLd)
	assert.Equal(t, r.Model.ShLdWaves, r.GPU.ShLdWaves)
	assert.Equal(t, r.Model.ShStWaves, r.GPU.ShStWaves)
	assert.Equal(t, r.Model.Lanes, r.GPU.Lanes)
	assert.False(t, rowAt(t, tb, 13).Differs, "the last load and store: one warp a block")
}

// A Go kernel with an access the CUDA body lacks: the site is shown alone.
func TestBuildUnpaired(t *testing.T) {
	sites := []simt.Site{{File: "main.go", Line: 3, Buffer: "in", Instructions: 1}, {File: "main.go", Line: 4, Buffer: "in", Instructions: 1}}
	tb := Build("\n  out[i] = in[i];\n", []string{"in", "out"}, nil, sites)
	require.Len(t, tb.Unpaired, 1)
	assert.Equal(t, 4, tb.Unpaired[0].Line)
	assert.Contains(t, tb.String(), "main.go:4 (in) pairs with no access")
}
