package cuda_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coalescing-course/coalesce/cuda"
	"github.com/coalescing-course/coalesce/cuda/cudatest"
	"github.com/coalescing-course/coalesce/cuda/toolkit"
	"github.com/coalescing-course/coalesce/lessons/measure"
	"github.com/coalescing-course/coalesce/lessons/metrics"
	"github.com/coalescing-course/coalesce/lessons/sectors"
	"github.com/coalescing-course/coalesce/lessons/spec"
)

// The tests in this file need nvcc and a GPU; each skips, saying which is
// missing, where they are not. On the device machine they run as
//
//	go test -c -o .devbin/cuda.test ./cuda          # here
//	cd cuda && ../.devbin/cuda.test -test.run GPU -test.v   # there

func run(t *testing.T, g *cuda.GPU, specs []spec.Spec, want measure.Want) []measure.Launch {
	t.Helper()
	set, err := g.Measure(context.Background(), specs, want)
	require.NoError(t, err)
	require.Len(t, set.Launches, len(specs))
	return set.Launches
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
	// The end of the vectors falls inside a warp (lane 18 of warp 251 of
	// the last round): the first harness's loop let that warp's lanes run
	// different rounds in one instruction, 5 requests more than the model
	// (cuda/NOTES.md, check run 2).
	`{"kernel":"grid_stride_copy","n":247666,"block":96,"width":1,"unroll":6,"grid":208}`,
	`{"kernel":"grid_stride_copy","n":247666,"block":96,"width":1,"unroll":4,"grid":208}`,
	// vectorized_copy from an aligned offset (8 floats: 32 bytes, a whole
	// number of float4s).
	`{"kernel":"vectorized_copy","n":100004,"width":4,"offset":8}`,
	`{"kernel":"sum_fields_soa","n":100003,"struct_bytes":20}`,
	// The matrix kernels on edges that cut squares and warps: 300 x 200
	// with tiles of 32 (200 = 6*32 + 8), 8 (one warp = 4 rows of a
	// square) and 16 with one row a thread.
	`{"kernel":"copy_rows","rows":300,"cols":200}`,
	`{"kernel":"copy_columns","rows":300,"cols":200,"tile":8,"block_rows":2}`,
	`{"kernel":"transpose_coalesced_read","rows":300,"cols":200,"tile":16,"block_rows":16}`,
	`{"kernel":"transpose_coalesced_write","rows":300,"cols":200}`,
	`{"kernel":"transpose_tiled","rows":300,"cols":200}`,
	`{"kernel":"transpose_tiled","rows":300,"cols":200,"pad":1}`,
	`{"kernel":"transpose_tiled","rows":257,"cols":129,"tile":16,"block_rows":4,"pad":3}`,
	`{"kernel":"transpose_tiled","rows":64,"cols":64,"tile":8,"block_rows":8,"pad":8}`,
}

func TestGPURunVerifiesAndTimes(t *testing.T) {
	g := cudatest.NeedGPU(t)
	specs := parse(t, smallSpecs...)
	results := run(t, g, specs, measure.Times)
	for i, r := range results {
		t.Run(fmt.Sprintf("%d_%s", i, specs[i].Kernel), func(t *testing.T) {
			require.False(t, r.Failed(), "harness: %s", r.Error)
			assert.True(t, r.Verified)
			assert.Equal(t, specs[i].String(), r.Spec.String())
			assert.Greater(t, r.TimeMs, 0.0)
			assert.LessOrEqual(t, r.TimeMsMin, r.TimeMs)
			assert.GreaterOrEqual(t, r.TimeMsMax, r.TimeMs)
			assert.GreaterOrEqual(t, r.TimedLaunches, cuda.MinTimedLaunches)
			assert.Greater(t, r.MemcpyBandwidth(), 0.0)
			shape := specs[i].ShapeOn(g.Info.SMs, g.Info.MaxThreadsPerSM)
			assert.Equal(t, shape.Threads, r.Threads)
			assert.Equal(t, shape.Blocks, r.GridBlocks)
			assert.Equal(t, specs[i].L2Fetch, r.L2Fetch)
		})
	}
}

// The harness must refuse what cannot run before launching anything, and
// say why: what only the GPU can tell (free memory) and what only the
// index file can (its size and contents).
func TestGPURefusesImpossibleSpecs(t *testing.T) {
	g := cudatest.NeedGPU(t)
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
		{"index out of range", spec.Spec{Kernel: spec.GatherCopy, N: 4, Block: 256, IndexFile: bad, L2Fetch: 64, Device: "h200"}, "out of range"},
		{"short index file", spec.Spec{Kernel: spec.GatherCopy, N: 4, Block: 256, IndexFile: short, L2Fetch: 64, Device: "h200"}, "12 bytes"},
		// 16 float4 in flight are 64 registers of data alone: 1024 such
		// threads need more than the 65536 registers an SM has.
		{"a block too large for the body's registers", parse(t, `{"kernel":"grid_stride_copy","n":1048576,"block":1024,"width":4,"unroll":16}`)[0], "registers a thread, so a block holds at most"},
		// Launched, not refused: float4 loads from in+3 floats fault.
		{"misaligned float4 loads fault", parse(t, `{"kernel":"vectorized_copy","n":1048576,"width":4,"offset":3}`)[0], "misaligned address"},
	}
	var specs []spec.Spec
	for _, tt := range tests {
		specs = append(specs, tt.s)
	}
	// A good spec after the bad ones still runs: refusals are per line,
	// and after the fault the rest go to a fresh harness.
	specs = append(specs, parse(t, `{"kernel":"coalesced_copy","n":1000}`)...)
	set, err := g.Measure(context.Background(), specs, measure.Times)
	require.NoError(t, err)
	results := set.Launches
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.True(t, results[i].Failed())
			assert.Contains(t, results[i].Error, tt.want)
		})
	}
	assert.False(t, results[len(tests)].Failed(), results[len(tests)].Error)
	var ge *measure.GPUError
	require.ErrorAs(t, set.Err(), &ge, "the fault reaches the caller typed")
	assert.Equal(t, "cudaErrorMisalignedAddress", ge.Name)
	assert.False(t, ge.Recorded())
}

// Fed plans by hand, the harness refuses before launching whatever its
// kernel bodies could not run without faulting or writing past a buffer.
func TestGPUHarnessRefusesBadPlans(t *testing.T) {
	g := cudatest.NeedGPU(t)
	base := `"block":256,"blocks":4,"threads":1000,"l2_fetch_granularity":64,"block_x":256,"block_y":1,"grid_x":4,"grid_y":1,"shared_bytes":0`
	// A transpose_tiled of 64 x 64, tile 32, block_rows 8, pad 1, as plan
	// writes it but for the key the case changes: a grid of 2 x 2 blocks of
	// 32 x 8, 4*32*33 = 4224 bytes of shared memory.
	tiled := func(change ...string) string {
		kv := map[string]string{"kernel": `"transpose_tiled"`, "rows": "64", "cols": "64", "tile": "32", "block_rows": "8", "pad": "1",
			"n": "4096", "block": "256", "blocks": "4", "threads": "1024", "l2_fetch_granularity": "64",
			"block_x": "32", "block_y": "8", "grid_x": "2", "grid_y": "2", "shared_bytes": "4224",
			"bytes_in": "16384", "bytes_out": "16384", "memcpy_from": `"in"`, "memcpy_to": `"out"`}
		for i := 0; i+1 < len(change); i += 2 {
			kv[change[i]] = change[i+1]
		}
		var parts []string
		for k, v := range kv {
			parts = append(parts, fmt.Sprintf("%q:%s", k, v))
		}
		return "{" + strings.Join(parts, ",") + "}"
	}
	tests := []struct {
		name, plan, want string
	}{
		{"stride 0", `{"kernel":"strided_copy","n":1000,"elem_bytes":4,"stride":0,` + base + `,"bytes_in":4000,"bytes_out":4000,"memcpy_from":"in","memcpy_to":"out"}`, "stride 0"},
		{"buffer too small", `{"kernel":"coalesced_copy","n":1000,"elem_bytes":4,` + base + `,"bytes_in":400,"bytes_out":4000,"memcpy_from":"in","memcpy_to":"out"}`, "touches 4000 bytes of in"},
		{"misaligned float4", `{"kernel":"sum_fields_aos","n":1000,"struct_bytes":24,"vector":true,` + base + `,"bytes_p":24000,"bytes_out":4000,"memcpy_from":"p","memcpy_to":""}`, "multiple of 16"},
		{"no buffer", `{"kernel":"update_x_soa","n":1000,` + base + `,"memcpy_from":"x","memcpy_to":""}`, "no bytes_NAME"},
		{"threads beyond the grid", `{"kernel":"update_x_soa","n":1000,"block":256,"blocks":1,"threads":1000,"l2_fetch_granularity":64,"bytes_x":4000,"memcpy_from":"x","memcpy_to":""}`, "1000 threads in 1 blocks"},
		{"unknown kernel", `{"kernel":"transpose","n":1000,` + base + `,"bytes_in":4000,"memcpy_from":"in","memcpy_to":""}`, "unknown kernel"},
		{"missing key", `{"kernel":"update_x_soa","n":1000,"block":256}`, `no \"blocks\"`},
		{"not a plan", `{"kernel":"update_x_soa","n":[1]}`, "nested objects and arrays"},
		{"block x and y not the block", "{" + strings.Replace(base, `"block_x":256`, `"block_x":128`, 1) + `,"kernel":"update_x_soa","n":1000,"bytes_x":4000,"memcpy_from":"x","memcpy_to":""}`, "a block of 128 x 1 threads"},
		{"a 1D kernel on a 2D grid", `{"kernel":"update_x_soa","n":1000,"block":256,"blocks":4,"threads":1000,"l2_fetch_granularity":64,"block_x":256,"block_y":1,"grid_x":2,"grid_y":2,"shared_bytes":0,"bytes_x":4000,"memcpy_from":"x","memcpy_to":""}`, "is a 1D kernel"},
		{"shared memory for a kernel without", tiled("kernel", `"transpose_coalesced_read"`), "uses no shared memory"},
		{"shared memory short of the square", tiled("shared_bytes", "4096"), "needs 4224"},
		{"shared memory beyond the square", tiled("pad", "32", "shared_bytes", "1048576"), "needs 8192"},
		{"block_rows not dividing the tile", tiled("block_rows", "6", "block_y", "6", "block", "192", "threads", "768"), "a divisor of tile"},
		{"a grid short of the matrix", tiled("grid_x", "1", "blocks", "2", "threads", "512"), "needs 2 x 2"},
		{"rows x cols not n", tiled("rows", "65"), "want n = 4096"},
		{"vectorized_copy past its buffer", `{"kernel":"vectorized_copy","n":1000,"width":4,"offset":998,` + base + `,"bytes_in":4000,"bytes_out":4000,"memcpy_from":"in","memcpy_to":"out"}`, "at least one whole vector"},
	}
	var input strings.Builder
	for _, tt := range tests {
		input.WriteString(tt.plan + "\n")
	}
	input.WriteString(tiled() + "\n")
	dir := t.TempDir()
	in, out := filepath.Join(dir, "plans.jsonl"), filepath.Join(dir, "out.jsonl")
	require.NoError(t, os.WriteFile(in, []byte(input.String()), 0o644))
	inv := toolkit.Invocation{Tool: "harness", Path: g.Harness.Path, Args: []string{"--input", in, "--output", out, "--profile"}, Timeout: 5 * time.Minute}
	_, err := inv.Run(context.Background())
	var te *toolkit.ToolError
	require.ErrorAs(t, err, &te, "some lines failed: status 1")
	assert.Equal(t, 1, te.ExitCode)
	data, err := os.ReadFile(out)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	require.Len(t, lines, len(tests)+1)
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Contains(t, lines[i], `"error"`)
			assert.NotContains(t, lines[i], `"launched"`, "refused before the launch")
			assert.Contains(t, lines[i], tt.want)
		})
	}
	assert.Contains(t, lines[len(tests)], `"verified":true`, "a good plan (transpose_tiled, pad 1) after the bad ones still runs")
}

// The L1 counts ncu reads from the harness's kernels must be the model's,
// exactly: that is the course's first claim.
func TestGPUProfileMatchesModel(t *testing.T) {
	g := cudatest.NeedNcu(t)
	specs := parse(t, smallSpecs...)
	var raw strings.Builder
	g.NcuOutput = &raw
	defer func() { g.NcuOutput = nil }()
	results := run(t, g, specs, measure.Counters)
	for i, r := range results {
		t.Run(fmt.Sprintf("%d_%s", i, specs[i].Kernel), func(t *testing.T) {
			require.False(t, r.Failed(), r.Error)
			p, err := sectors.Model(specs[i])
			require.NoError(t, err)
			for _, m := range metrics.Profiled {
				got, ok := r.Metrics[m]
				require.True(t, ok, "ncu gave no %s", m)
				if metrics.Exact(m) {
					assert.Equal(t, p.Metrics[m], got, "%s: model %v, ncu %v", m, p.Metrics[m], got)
				}
			}
			reportShared(t, specs[i], p.Metrics, r.Metrics)
		})
	}
	assert.Contains(t, raw.String(), `"ID"`, "the raw ncu output is passed on")
}

// reportShared logs where ncu's shared-memory counts differ from the bank
// rule's: how closely the H200 follows the rule is what the device runs
// measure (runs/matrix.sh), so a difference is reported, not failed.
func reportShared(t *testing.T, s spec.Spec, model, ncu metrics.Set) {
	t.Helper()
	for _, m := range metrics.Shared {
		if model[m] != ncu[m] {
			t.Logf("shared differs: %s: %s: rule %v, ncu %v", s.Brief(), m, model[m], ncu[m])
		}
	}
}

func TestGPUMeasureWithNcu(t *testing.T) {
	g := cudatest.NeedNcu(t)
	specs := parse(t, `{"kernel":"vectorized_copy","n":16777216}`)
	r := run(t, g, specs, measure.Times|measure.Counters)[0]
	require.False(t, r.Failed(), r.Error)
	assert.Greater(t, r.TimeMs, 0.0)
	assert.Greater(t, r.MemcpyBandwidth(), 0.0)
	assert.Greater(t, r.Metrics[metrics.DRAMRead], 0.0)
	assert.Equal(t, float64(16777216*4/32), r.Metrics[metrics.LdSectors])
}

func TestGPUDeviceInfo(t *testing.T) {
	g := cudatest.NeedGPU(t)
	assert.NotEmpty(t, g.Info.GPU)
	assert.Greater(t, g.Info.SMs, 0)
	assert.Greater(t, g.Info.L2Bytes, int64(0))
	assert.Contains(t, []int{0, 32, 64, 128}, g.Info.DefaultL2Fetch)
	p := g.Provenance(context.Background(), "go test")
	assert.Equal(t, g.Info.GPU, p.Device.GPU)
	assert.NotEmpty(t, p.CUDA)
	assert.NotEmpty(t, p.Nvcc)
	t.Logf("provenance: %+v", p)
}
