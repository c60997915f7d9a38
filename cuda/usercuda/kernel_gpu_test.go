package usercuda_test

import (
	"context"
	"encoding/binary"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coalescing-course/coalesce/cuda"
	"github.com/coalescing-course/coalesce/cuda/cudatest"
	"github.com/coalescing-course/coalesce/cuda/toolkit"
	"github.com/coalescing-course/coalesce/cuda/usercuda"
	"github.com/coalescing-course/coalesce/lessons/metrics"
)

// The tests of learners' kernels on a GPU; each skips without one. On the
// device machine:
//
//	go test -c -o .devbin/usercuda.test ./cuda/usercuda                     # here
//	cd cuda/usercuda && ../../.devbin/usercuda.test -test.run GPU -test.v  # there
//
// They log what they measured.

// floats returns n float32s 0, 1, 2, ... as bytes.
func floats(n int) []byte {
	b := make([]byte, 4*n)
	for i := range n {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(float32(i)))
	}
	return b
}

func gpuCopy(n, block int) *usercuda.Kernel {
	return &usercuda.Kernel{
		Name: "copy",
		Body: "int i = blockIdx.x * blockDim.x + threadIdx.x;\nif (i < n) out[i] = in[i];\n",
		Args: []usercuda.Arg{
			{Name: "in", CType: "const float*", Data: floats(n), Bytes: int64(4 * n)},
			{Name: "out", CType: "float*", Bytes: int64(4 * n), Out: true},
			{Name: "n", CType: "int", Int: int64(n)},
		},
		Grid:  usercuda.Dim3{X: (n + block - 1) / block},
		Block: usercuda.Dim3{X: block},
	}
}

func runUser(t *testing.T, g *cuda.GPU, k *usercuda.Kernel, o usercuda.Options) (*usercuda.Result, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	start := time.Now()
	res, err := usercuda.Run(ctx, g, k, o)
	t.Logf("%s: %v, returned after %v", k.Name, err, time.Since(start).Round(time.Millisecond))
	return res, err
}

func TestGPUUserKernelCopy(t *testing.T) {
	g := cudatest.NeedGPU(t)
	const n = 1 << 20
	k := gpuCopy(n, 256)
	res, err := runUser(t, g, k, usercuda.Options{Counters: true})
	require.NoError(t, err)
	t.Logf("GPU %s, program %s (cached %v), %d registers; times %v ms, median %g ms",
		res.GPU, res.Program.Path, res.Program.Cached, res.Registers, res.TimesMs, res.MedianMs)
	assert.Equal(t, k.Args[0].Data, res.Outputs["out"])
	assert.Len(t, res.TimesMs, 20)
	assert.Greater(t, res.MedianMs, 0.0)
	assert.NotEmpty(t, res.GPU)
	if res.CountersErr != nil {
		t.Logf("no counters: %v", res.CountersErr)
		return
	}
	for _, m := range res.Counters.Names() {
		t.Logf("  %s = %g", m, res.Counters[m])
	}
	// n floats of 4 bytes: n*4/32 sectors loaded and stored, in n/32 warp
	// requests each.
	assert.Equal(t, float64(n*4/32), res.Counters[metrics.LdSectors])
	assert.Equal(t, float64(n*4/32), res.Counters[metrics.StSectors])
	assert.Equal(t, float64(n/32), res.Counters[metrics.LdRequests])
	assert.Equal(t, float64(n/32), res.Counters[metrics.StRequests])

	// The same kernel on a partial block, clean under memcheck.
	small, err := runUser(t, g, gpuCopy(1000, 256), usercuda.Options{Check: toolkit.Memcheck})
	require.NoError(t, err)
	require.NotNil(t, small.Sanitizer)
	assert.True(t, small.Sanitizer.Clean(), small.Sanitizer.Text)
	t.Logf("memcheck: %q", small.Sanitizer.Text)
}

// A kernel that updates in place gives the first launch's result, and its
// timed launches each start from the same data.
func TestGPUUserKernelInPlace(t *testing.T) {
	g := cudatest.NeedGPU(t)
	const n = 4096
	k := &usercuda.Kernel{
		Name: "add_one",
		Body: "int i = blockIdx.x * blockDim.x + threadIdx.x;\nif (i < n) x[i] += 1.0f;\n",
		Args: []usercuda.Arg{
			{Name: "x", CType: "float*", Data: floats(n), Bytes: 4 * n, Out: true},
			{Name: "n", CType: "int", Int: n},
		},
		Grid: usercuda.Dim3{X: n / 256}, Block: usercuda.Dim3{X: 256},
	}
	res, err := runUser(t, g, k, usercuda.Options{})
	require.NoError(t, err)
	out := res.Outputs["x"]
	for i := range n {
		require.Equal(t, float32(i+1), math.Float32frombits(binary.LittleEndian.Uint32(out[4*i:])), "element %d", i)
	}
	t.Logf("median %g ms", res.MedianMs)
}

func TestGPUUserKernelCompileError(t *testing.T) {
	g := cudatest.NeedGPU(t)
	k := gpuCopy(1000, 256)
	k.Body = "int i = blockIdx.x * blockDim.x + threadIdx.x;\nif (i < n) out[i] = in[j];\n"
	_, err := runUser(t, g, k, usercuda.Options{})
	var ce *usercuda.CompileError
	require.ErrorAs(t, err, &ce)
	t.Logf("nvcc said:\n%s", ce.Log)
	require.NotEmpty(t, ce.Diagnostics)
	d := ce.Diagnostics[0]
	assert.Equal(t, "kernel.cu", d.File)
	assert.Equal(t, 2, d.Line, "the learner's own line")
	assert.Equal(t, "error", d.Severity)
	assert.Contains(t, d.Message, `"j"`)
	assert.NotContains(t, ce.Log, "kernel-build-", "no build directory in the message")
}

func TestGPUUserKernelOutOfBounds(t *testing.T) {
	g := cudatest.NeedGPU(t)
	// 2048 threads over 1000 floats, without the bound: threads 1000 and
	// up read and write past the buffers' 4000 bytes.
	k := gpuCopy(1000, 256)
	k.Name = "oob_copy"
	k.Body = "int i = blockIdx.x * blockDim.x + threadIdx.x;\nout[i] = in[i];\n"
	k.Grid = usercuda.Dim3{X: 8}
	res, err := runUser(t, g, k, usercuda.Options{Check: toolkit.Memcheck})
	var se *usercuda.SanitizerError
	require.ErrorAs(t, err, &se)
	require.NotNil(t, res)
	t.Logf("report:\n%s", res.Sanitizer.Text)
	require.NotEmpty(t, se.Report.Findings)
	f := se.Report.Findings[0]
	assert.Contains(t, f.What, "Invalid __global__")
	assert.Equal(t, "kernel.cu", f.File)
	assert.Equal(t, 2, f.Line)
	assert.True(t, f.HasThread)
	assert.GreaterOrEqual(t, f.Block.X*256+f.Thread.X, 1000, "a thread past the end")
}

func TestGPUUserKernelRace(t *testing.T) {
	g := cudatest.NeedGPU(t)
	// Each thread reads what another warp's thread wrote to shared
	// memory, with no __syncthreads() between.
	k := gpuCopy(1024, 256)
	k.Name = "reverse_block"
	k.Body = "__shared__ float t[256];\nint i = blockIdx.x * blockDim.x + threadIdx.x;\nt[threadIdx.x] = in[i];\nout[i] = t[255 - threadIdx.x];\n"
	res, err := runUser(t, g, k, usercuda.Options{Check: toolkit.Racecheck})
	var se *usercuda.SanitizerError
	require.ErrorAs(t, err, &se)
	t.Logf("report:\n%s", res.Sanitizer.Text)
	require.NotEmpty(t, se.Report.Findings)
	assert.Equal(t, "kernel.cu", se.Report.Findings[0].File)
}

func TestGPUUserKernelTimeout(t *testing.T) {
	g := cudatest.NeedGPU(t)
	// A flag no thread ever sets: read through volatile, the loop cannot
	// be optimized away.
	k := &usercuda.Kernel{
		Name: "spin",
		Body: "volatile int* f = flag;\nwhile (f[0] == 0) { }\n",
		Args: []usercuda.Arg{{Name: "flag", CType: "int*", Data: make([]byte, 4), Bytes: 4}},
		Grid: usercuda.Dim3{X: 1}, Block: usercuda.Dim3{X: 32},
	}
	_, err := runUser(t, g, k, usercuda.Options{Timeout: 10 * time.Second})
	var te *usercuda.TimeoutError
	require.ErrorAs(t, err, &te)
	assert.False(t, te.Err.Survived, "the program was still running after it was killed")
	// The GPU is free again.
	res, err := runUser(t, g, gpuCopy(1000, 256), usercuda.Options{})
	require.NoError(t, err)
	assert.Greater(t, res.MedianMs, 0.0)
}

func TestGPUUserKernelMisaligned(t *testing.T) {
	g := cudatest.NeedGPU(t)
	const n = 1024 // floats read as float4s, one float past the start
	k := &usercuda.Kernel{
		Name: "shifted_vec",
		Body: "int i = blockIdx.x * blockDim.x + threadIdx.x;\nconst float4* v = reinterpret_cast<const float4*>(in + 1);\nif (i < n / 4) out[i] = v[i];\n",
		Args: []usercuda.Arg{
			{Name: "in", CType: "const float*", Data: floats(n + 4), Bytes: 4 * (n + 4)},
			{Name: "out", CType: "float4*", Bytes: 4 * n, Out: true},
			{Name: "n", CType: "int", Int: n},
		},
		Grid: usercuda.Dim3{X: 1}, Block: usercuda.Dim3{X: 256},
	}
	_, err := runUser(t, g, k, usercuda.Options{})
	var le *usercuda.LaunchError
	require.ErrorAs(t, err, &le)
	assert.Equal(t, "cudaErrorMisalignedAddress", le.CUDAError)
	assert.Equal(t, "run", le.Phase)
	assert.Contains(t, err.Error(), "misaligned")
	assert.False(t, errors.Is(err, context.DeadlineExceeded))
	assert.True(t, strings.HasPrefix(err.Error(), "cuda: kernel shifted_vec failed while it ran"))
}
