package lab

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coalescing-course/coalesce/lessons/exercises"
	"github.com/coalescing-course/coalesce/lessons/metrics"
	"github.com/coalescing-course/coalesce/lessons/simt"
)

// Learner-style CUDA bodies, beyond the course's own starter, solution
// and wrong body, each with the verdict it must get on the GPU and, where
// given, its Go twin: every correct one passes, every wrong one fails
// (a wrong output, or a target missed). TestGPULearnerStyles runs them.
type learnerStyle struct {
	id, name string
	body     string
	twin     any // the Go kernel, or nil for the CUDA body judged alone
	pass     bool
}

func sortKeys(k []int32) []int32 { slices.Sort(k); return k }

var learnerStyles = []learnerStyle{
	{"10-kernels/strided-copy", "hoisted-stride grid-stride loop", `
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int stride = blockDim.x * gridDim.x;
    for (int e = i; e < n; e += stride)
        out[e] = in[e];
`, func(t *simt.Thread, in, out *simt.Global[float32], n, k int) {
		i := t.BlockIdx.X*t.BlockDim.X + t.ThreadIdx.X
		stride := t.BlockDim.X * t.GridDim.X
		for e := i; e < n; e += stride {
			out.Store(t, e, in.Load(t, e))
		}
	}, true},
	{"10-kernels/strided-copy", "hoisted stride, no Go twin", `
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int stride = blockDim.x * gridDim.x;
    for (int e = i; e < n; e += stride)
        out[e] = in[e];
`, nil, true},
	{"10-kernels/strided-copy", "inline-stride grid-stride loop", `
    for (int e = blockIdx.x * blockDim.x + threadIdx.x; e < n; e += blockDim.x * gridDim.x)
        out[e] = in[e];
`, func(t *simt.Thread, in, out *simt.Global[float32], n, k int) {
		for e := t.BlockIdx.X*t.BlockDim.X + t.ThreadIdx.X; e < n; e += t.BlockDim.X * t.GridDim.X {
			out.Store(t, e, in.Load(t, e))
		}
	}, true},
	{"10-kernels/strided-copy", "while loop over k steps", `
    int T = gridDim.x * blockDim.x;
    int e = blockIdx.x * blockDim.x + threadIdx.x;
    int j = 0;
    while (j < k) {
        if (e < n) out[e] = in[e];
        e += T;
        j++;
    }
`, func(t *simt.Thread, in, out *simt.Global[float32], n, k int) {
		T := t.GridDim.X * t.BlockDim.X
		e := t.BlockIdx.X*t.BlockDim.X + t.ThreadIdx.X
		for j := 0; j < k; j++ {
			if e < n {
				out.Store(t, e, in.Load(t, e))
			}
			e += T
		}
	}, true},
	{"10-kernels/strided-copy", "pairs: lanes 8 bytes apart (right output, targets missed)", `
    int T = gridDim.x * blockDim.x;
    for (int b = 2 * (blockIdx.x * blockDim.x + threadIdx.x); b < n; b += 2 * T) {
        out[b] = in[b];
        if (b + 1 < n) out[b + 1] = in[b + 1];
    }
`, func(t *simt.Thread, in, out *simt.Global[float32], n, k int) {
		T := t.GridDim.X * t.BlockDim.X
		for b := 2 * (t.BlockIdx.X*t.BlockDim.X + t.ThreadIdx.X); b < n; b += 2 * T {
			out.Store(t, b, in.Load(t, b))
			if b+1 < n {
				out.Store(t, b+1, in.Load(t, b+1))
			}
		}
	}, false},
	{"10-kernels/strided-copy", "hoisted stride, the last element dropped", `
    int stride = blockDim.x * gridDim.x;
    for (int e = blockIdx.x * blockDim.x + threadIdx.x; e < n - 1; e += stride)
        out[e] = in[e];
`, nil, false},
	{"10-kernels/strided-copy", "the starter with a hoisted stride (targets missed)", `
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int first = i * k;
    for (int e = first; e < first + k && e < n; e++)
        out[e] = in[e];
`, func(t *simt.Thread, in, out *simt.Global[float32], n, k int) {
		first := (t.BlockIdx.X*t.BlockDim.X + t.ThreadIdx.X) * k
		for e := first; e < first+k && e < n; e++ {
			out.Store(t, e, in.Load(t, e))
		}
	}, false},
	{"10-kernels/aos-soa", "struct of arrays, one line a field", `
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float x = soa[fx * n + i];
    float v = soa[fv * n + i];
    out[i] = x + v;
`, nil, true},
	{"10-kernels/aos-soa", "array of structs through a pointer (targets missed)", `
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        const float* p = aos + i * fields;
        out[i] = p[fx] + p[fv];
    }
`, nil, false},
	{"10-kernels/transpose", "padded tile, hoisted indices", `
    __shared__ float t[32][33];
    int bx = blockIdx.x * 32, by = blockIdx.y * 32;
    for (int j = threadIdx.y; j < 32; j += 8)
        if (by + j < rows && bx + threadIdx.x < cols)
            t[j][threadIdx.x] = in[(by + j) * cols + bx + threadIdx.x];
    __syncthreads();
    for (int j = threadIdx.y; j < 32; j += 8)
        if (bx + j < cols && by + threadIdx.x < rows)
            out[(bx + j) * rows + by + threadIdx.x] = t[threadIdx.x][j];
`, nil, true},
	{"10-kernels/transpose", "tile without padding (bank conflicts)", `
    __shared__ float t[32][32];
    int bx = blockIdx.x * 32, by = blockIdx.y * 32;
    for (int j = threadIdx.y; j < 32; j += 8)
        if (by + j < rows && bx + threadIdx.x < cols)
            t[j][threadIdx.x] = in[(by + j) * cols + bx + threadIdx.x];
    __syncthreads();
    for (int j = threadIdx.y; j < 32; j += 8)
        if (bx + j < cols && by + threadIdx.x < rows)
            out[(bx + j) * rows + by + threadIdx.x] = t[threadIdx.x][j];
`, nil, false},
	{"10-kernels/gather", "sorted keys", `
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        int k = keys[i];
        out_val[i] = table[k];
        out_key[i] = k;
    }
`, exercises.Gather{Order: sortKeys, Kernel: func(t *simt.Thread, table *simt.Global[float32], keys, outKey *simt.Global[int32], outVal *simt.Global[float32], n int) {
		if i := t.BlockIdx.X*t.BlockDim.X + t.ThreadIdx.X; i < n {
			k := keys.Load(t, i)
			outVal.Store(t, i, table.Load(t, int(k)))
			outKey.Store(t, i, k)
		}
	}}, true},
	{"10-kernels/gather", "keys as they come (targets missed)", `
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        int k = keys[i];
        out_val[i] = table[k];
        out_key[i] = k;
    }
`, exercises.Gather{Order: func(k []int32) []int32 { return k }, Kernel: func(t *simt.Thread, table *simt.Global[float32], keys, outKey *simt.Global[int32], outVal *simt.Global[float32], n int) {
		if i := t.BlockIdx.X*t.BlockDim.X + t.ThreadIdx.X; i < n {
			k := keys.Load(t, i)
			outVal.Store(t, i, table.Load(t, int(k)))
			outKey.Store(t, i, k)
		}
	}}, false},
	{"10-kernels/aligned-vector", "head, float4 middle, tail in one pass", `
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int head = min((4 - off % 4) % 4, n);
    int nv = (n - head) / 4;
    int rest = n - head - 4 * nv;
    if (i < nv) reinterpret_cast<float4*>(out + off + head)[i] = reinterpret_cast<const float4*>(in + off + head)[i];
    if (i < head) out[off + i] = in[off + i];
    if (i < rest) out[off + head + 4 * nv + i] = in[off + head + 4 * nv + i];
`, nil, true},
	{"10-kernels/aligned-vector", "one float a thread (targets missed)", `
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    for (int e = i; e < n; e += blockDim.x * gridDim.x)
        out[off + e] = in[off + e];
`, nil, false},
}

// TestGPULearnerStyles runs every learner style through TryCUDA on this
// machine's GPU, for the learners of COALESCE_EXERCISE_LEARNERS (default
// "ada", and "issue25" too for the strided copy), and holds each to its
// verdict. It also holds the
// per-line table to ncu: its rows' GPU sectors, summed, are ncu's
// hardware sector counts of the launch, and a correct body's lines that
// differ from its Go twin are ones the SASS explains.
func TestGPULearnerStyles(t *testing.T) {
	useLiveGPU(t)
	for _, st := range learnerStyles {
		// ada's and issue25's strided-copy variants each have a warp whose
		// lanes run different trip counts, split off a sector boundary
		// (n mod T = 27435 and 14407): where nvcc's unrolling shows.
		learners := []string{"ada"}
		if st.id == "10-kernels/strided-copy" {
			learners = append(learners, "issue25")
		}
		if s := os.Getenv("COALESCE_EXERCISE_LEARNERS"); s != "" {
			learners = strings.Split(s, ",")
		}
		for _, learner := range learners {
			t.Run(st.id+"/"+st.name+"/"+learner, func(t *testing.T) {
				t.Setenv(LearnerEnv, learner)
				out := capture(t)
				r := TryCUDA(st.id, st.body, st.twin)
				require.NotNil(t, r)
				t.Log("\n" + out.String())
				assert.Equal(t, st.pass, r.Pass, "the CUDA body's verdict")
				if r.Run == nil {
					assert.False(t, st.pass, "a correct body runs")
					return
				}
				require.NoError(t, r.Run.LinesErr)
				var ld, st2 int64
				for _, row := range r.Lines.Rows {
					ld += row.GPU.LdSectors
					st2 += row.GPU.StSectors
				}
				assert.Equal(t, r.Run.Counters[metrics.LdSectors], float64(ld), "the table's load sectors against ncu's counter")
				assert.Equal(t, r.Run.Counters[metrics.StSectors], float64(st2), "the table's store sectors against ncu's counter")
				if st.pass && st.twin != nil {
					for _, row := range r.Lines.Rows {
						assert.True(t, row.Explained(), "line %d differs from its twin unexplained:\n%s", row.Line, r.Lines)
					}
				}
				if r.Model != nil {
					assert.Equal(t, st.pass, r.Model.Pass, "the Go twin's verdict on the model")
				}
			})
		}
	}
}
