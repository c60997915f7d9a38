package cuda_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coalescing-course/coalesce/cuda"
	"github.com/coalescing-course/coalesce/lessons/metrics"
	"github.com/coalescing-course/coalesce/lessons/sectors"
	"github.com/coalescing-course/coalesce/lessons/spec"
)

// The tests in this file need nvcc and a GPU; each skips, saying which is
// missing, where they are not. On the device machine they run as
//
//	go test -c -o .devbin/cuda.test ./cuda          # here
//	cd cuda && ../.devbin/cuda.test -test.run GPU -test.v   # there

var (
	gpuOnce sync.Once
	gpu     *cuda.GPU
	gpuErr  error
)

// needGPU returns the GPU, or skips the test with the reason there is none.
func needGPU(t *testing.T) *cuda.GPU {
	t.Helper()
	gpuOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		gpu, gpuErr = cuda.Open(ctx, cuda.Builder{CacheDir: os.Getenv(cuda.CacheEnv)})
	})
	var missing *cuda.MissingError
	if errors.As(gpuErr, &missing) {
		t.Skipf("no GPU to measure on: %v", gpuErr)
	}
	require.NoError(t, gpuErr, "building the harness or reading the device")
	return gpu
}

func needNcu(t *testing.T) cuda.Ncu {
	t.Helper()
	n, err := cuda.FindNcu()
	if err != nil {
		t.Skipf("no ncu: %v", err)
	}
	return n
}

func parse(t *testing.T, lines ...string) []spec.Spec {
	t.Helper()
	var specs []spec.Spec
	for _, l := range lines {
		s, err := spec.Parse([]byte(l))
		require.NoError(t, err, l)
		specs = append(specs, s)
	}
	return specs
}

// smallSpecs has one small launch of every kernel, with partial warps,
// partial blocks and every element size.
var smallSpecs = []string{
	`{"kernel":"coalesced_copy","n":100003,"elem_bytes":1}`,
	`{"kernel":"coalesced_copy","n":100003,"elem_bytes":16,"block":100}`,
	`{"kernel":"strided_copy","n":100003,"elem_bytes":2,"stride":3}`,
	`{"kernel":"strided_copy","n":100003,"elem_bytes":8,"stride":33,"block":33}`,
	`{"kernel":"strided_read","n":100003,"stride":5}`,
	`{"kernel":"strided_write","n":100003,"stride":7,"elem_bytes":16}`,
	`{"kernel":"offset_copy","n":100003,"offset":3}`,
	`{"kernel":"vectorized_copy","n":100004,"width":4}`,
	`{"kernel":"vectorized_copy","n":100002,"width":2}`,
	`{"kernel":"grid_stride_copy","n":100004,"width":4,"unroll":3,"grid":7}`,
	`{"kernel":"grid_stride_copy","n":100003,"width":1,"unroll":8,"grid":2}`,
	`{"kernel":"gather_copy","n":100003,"index_pattern":"random"}`,
	`{"kernel":"gather_copy","n":100003,"index_pattern":"broadcast_warp"}`,
	`{"kernel":"update_x_aos","n":100003,"struct_bytes":24,"field_offset":20}`,
	`{"kernel":"update_x_soa","n":100003}`,
	`{"kernel":"sum_fields_aos","n":100003,"struct_bytes":20}`,
	`{"kernel":"sum_fields_aos","n":100003,"struct_bytes":64,"vector":true}`,
	`{"kernel":"coalesced_copy","n":100003,"l2_fetch_granularity":32}`,
	`{"kernel":"coalesced_copy","n":100003,"l2_fetch_granularity":128}`,
}

func TestGPURunVerifiesAndTimes(t *testing.T) {
	g := needGPU(t)
	specs := parse(t, smallSpecs...)
	results, err := g.Run(context.Background(), specs)
	require.NoError(t, err)
	require.Len(t, results, len(specs))
	for i, r := range results {
		t.Run(fmt.Sprintf("%d_%s", i, specs[i].Kernel), func(t *testing.T) {
			require.False(t, r.Failed(), "harness: %s", r.Error)
			assert.True(t, r.Verified)
			assert.Equal(t, specs[i].String(), r.Spec.String())
			assert.Greater(t, r.TimeMs, 0.0)
			assert.LessOrEqual(t, r.TimeMsMin, r.TimeMs)
			assert.GreaterOrEqual(t, r.TimeMsMax, r.TimeMs)
			assert.GreaterOrEqual(t, r.TimedLaunches, cuda.MinTimedLaunches)
			assert.Equal(t, specs[i].UsefulBytes(), r.UsefulBytes)
			assert.Greater(t, r.MemcpyGBps, 0.0)
			assert.Equal(t, specs[i].L2Fetch, r.L2Fetch)
		})
	}
}

// The harness must refuse what cannot run before launching anything, and
// say why; the Go side refuses what spec.Validate refuses before that.
func TestGPURefusesImpossibleSpecs(t *testing.T) {
	g := needGPU(t)
	dir := t.TempDir()
	short := filepath.Join(dir, "short.bin")
	require.NoError(t, spec.WriteIndexFile(short, []int32{0, 1, 2}))
	bad := filepath.Join(dir, "bad.bin")
	require.NoError(t, spec.WriteIndexFile(bad, []int32{0, 1, 2, 4}))
	tests := []struct {
		name string
		s    spec.Spec
		want string
	}{
		{"larger than device memory", spec.Spec{Kernel: spec.UpdateXAoS, N: spec.MaxN, Block: 256, StructBytes: 512, L2Fetch: 64, Device: "h200"}, "device memory"},
		{"stride 0", spec.Spec{Kernel: spec.StridedCopy, N: 1024, Block: 256, ElemBytes: 4, Stride: 0, L2Fetch: 64, Device: "h200"}, "stride"},
		{"misaligned vector load", spec.Spec{Kernel: spec.SumFieldsAoS, N: 1024, Block: 256, StructBytes: 24, Vector: true, L2Fetch: 64, Device: "h200"}, "multiple of 16"},
		{"index out of range", spec.Spec{Kernel: spec.GatherCopy, N: 4, Block: 256, IndexFile: bad, L2Fetch: 64, Device: "h200"}, "out of range"},
		{"short index file", spec.Spec{Kernel: spec.GatherCopy, N: 4, Block: 256, IndexFile: short, L2Fetch: 64, Device: "h200"}, "12 bytes"},
	}
	var specs []spec.Spec
	for _, tt := range tests {
		specs = append(specs, tt.s)
	}
	// A good spec after the bad ones still runs: refusals are per line.
	specs = append(specs, parse(t, `{"kernel":"coalesced_copy","n":1000}`)...)
	results, err := g.Run(context.Background(), specs)
	require.NoError(t, err)
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.True(t, results[i].Failed())
			assert.Contains(t, results[i].Error, tt.want)
		})
	}
	assert.False(t, results[len(tests)].Failed(), results[len(tests)].Error)
}

// The L1 counts ncu reads from the harness's kernels must be the model's,
// exactly: that is the course's first claim.
func TestGPUProfileMatchesModel(t *testing.T) {
	g := needGPU(t)
	ncu := needNcu(t)
	specs := parse(t, smallSpecs...)
	var raw strings.Builder
	results, err := g.Profile(context.Background(), specs, cuda.ProfileOptions{Ncu: ncu, Raw: &raw})
	require.NoError(t, err)
	require.Len(t, results, len(specs))
	for i, r := range results {
		t.Run(fmt.Sprintf("%d_%s", i, specs[i].Kernel), func(t *testing.T) {
			require.False(t, r.Failed(), r.Error)
			p, err := sectors.Predict(specs[i])
			require.NoError(t, err)
			for _, m := range metrics.All {
				got, ok := r.Metrics[m]
				require.True(t, ok, "ncu gave no %s", m)
				if metrics.Exact(m) {
					assert.Equal(t, p.Metrics[m], got, "%s: model %v, ncu %v", m, p.Metrics[m], got)
				}
			}
		})
	}
	assert.Contains(t, raw.String(), `"ID"`, "the raw ncu output is passed on")
}

func TestGPUMeasureWithNcu(t *testing.T) {
	g := needGPU(t)
	ncu := needNcu(t)
	specs := parse(t, `{"kernel":"vectorized_copy","n":16777216}`)
	results, err := g.Measure(context.Background(), specs, &cuda.ProfileOptions{Ncu: ncu})
	require.NoError(t, err)
	r := results[0]
	require.False(t, r.Failed(), r.Error)
	assert.Greater(t, r.TimeMs, 0.0)
	assert.Greater(t, r.MovedGBps, 0.0)
	assert.Equal(t, float64(16777216*4/32), r.Metrics[metrics.LdSectors])
}

func TestGPUDeviceInfo(t *testing.T) {
	g := needGPU(t)
	assert.NotEmpty(t, g.Info.GPU)
	assert.Greater(t, g.Info.SMs, 0)
	assert.Greater(t, g.Info.L2Bytes, int64(0))
	assert.Contains(t, []int{0, 32, 64, 128}, g.Info.DefaultL2Fetch)
	p := g.CollectProvenance(context.Background(), nil, "go test")
	assert.Equal(t, g.Info.GPU, p.Device.GPU)
	assert.NotEmpty(t, p.CUDA)
	assert.NotEmpty(t, p.Nvcc)
	t.Logf("provenance: %+v", p)
}
