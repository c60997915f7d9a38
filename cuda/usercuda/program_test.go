package usercuda

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coalescing-course/coalesce/cuda"
	"github.com/coalescing-course/coalesce/cuda/toolkit"
)

// scaleKernel takes every kind of arg: out[i] = in[i] * s for i < n, over
// 100 floats 0, 1, 2, ... in blocks of 64.
func scaleKernel() *Kernel {
	const n = 100
	in := make([]byte, 4*n)
	for i := range n {
		binary.LittleEndian.PutUint32(in[4*i:], math.Float32bits(float32(i)))
	}
	return &Kernel{
		Name: "scale",
		Body: "int i = blockIdx.x * blockDim.x + threadIdx.x;\nif (i < n) out[i] = in[i] * s;\n",
		Args: []Arg{
			{Name: "in", CType: "const float*", Data: in, Bytes: 4 * n},
			{Name: "out", CType: "float*", Bytes: 4 * n, Out: true},
			{Name: "n", CType: "int", Int: n},
			{Name: "s", CType: "float", Float: -1.5},
		},
		Grid:  Dim3{X: 2},
		Block: Dim3{X: 64},
	}
}

// The headers the generated code includes all come before the learner's
// lines (hostHeaders), so that none of them meets the learner's names.
func TestHostHeadersFirst(t *testing.T) {
	src, err := scaleKernel().Source()
	require.NoError(t, err)
	before, _, ok := strings.Cut(src, `#line 1 "kernel.cu"`)
	require.True(t, ok)
	include := regexp.MustCompile(`(?m)^#include <([\w.]+)>`)
	var included []string
	for _, text := range []string{cuda.SharedHeader, userHost} {
		for _, m := range include.FindAllStringSubmatch(text, -1) {
			included = append(included, m[1])
			assert.Contains(t, before, "#include <"+m[1]+">\n", "a header of the host code that the learner's lines do not come after")
		}
	}
	slices.Sort(included)
	want := slices.Sorted(slices.Values(hostHeaders))
	assert.Equal(t, want, slices.Compact(included), "hostHeaders are exactly the headers the host code includes")
	assert.NotContains(t, userHost, "#include", "host.cu includes nothing of its own: the headers are written once, in hostHeaders")
}

// host.cu ends only with shared.cuh's named statuses.
func TestHostStatusesNamed(t *testing.T) {
	bare := regexp.MustCompile(`\b(?:exit\(\s*[^c)]|return\s+\d+\s*;)`)
	assert.Empty(t, bare.FindAllString(userHost, -1), "use coalesce_host::Exit*")
	for _, want := range []string{"exit(coalesce_host::ExitUsage)", "coalesce_host::missing_exit(e) : coalesce_host::ExitFailed", "return coalesce_host::ExitOK;"} {
		assert.Contains(t, userHost, want)
	}
	// And the timing loop is the shared one, not a copy.
	assert.Contains(t, userHost, "coalesce_host::time_launches(")
	assert.NotContains(t, userHost, "cudaEventRecord")
	assert.NotContains(t, userHost, "__global__")
}

// The keys writePlan writes are the keys host.cu reads, each with the
// type it reads it as (Plan's integer, text or flag), for every kind of
// arg: a key one side has and the other lacks fails here, without nvcc.
func TestPlanKeysRead(t *testing.T) {
	// What host.cu reads: plan.integer("grid_x"), plan.flag(a + "_input"),
	// where a is "argI".
	read := map[string]string{}
	for _, m := range regexp.MustCompile(`plan\.(integer|text|flag)\((a \+ )?"(\w+)"\)`).FindAllStringSubmatch(userHost, -1) {
		key := m[3]
		if m[2] != "" {
			key = "argI" + key
		}
		read[key] = m[1]
	}
	assert.Contains(t, userHost, `plan.kernel()`)
	read["kernel"] = "text"

	dir := t.TempDir()
	require.NoError(t, writePlan(dir, scaleKernel(), Options{}, false))
	data, err := os.ReadFile(filepath.Join(dir, "plan.json"))
	require.NoError(t, err)
	require.True(t, strings.HasSuffix(string(data), "}\n"), "one line")
	var plan map[string]any
	require.NoError(t, json.Unmarshal(data, &plan))
	written := map[string]string{}
	for k, v := range plan {
		k = regexp.MustCompile(`^arg\d+_`).ReplaceAllString(k, "argI_")
		switch v.(type) {
		case float64:
			written[k] = "integer"
		case string:
			written[k] = "text"
		case bool:
			written[k] = "flag"
		default:
			t.Fatalf("%s: %v is not a plan value", k, v)
		}
	}
	assert.Equal(t, read, written)
	// scaleKernel's values, as host.cu reads them back: -1.5 as a hex
	// float, which strtod reads exactly.
	assert.Equal(t, "-0x1.8p+00", plan["arg3_float"])
	assert.Equal(t, 100.0, plan["arg2_int"])
	assert.Equal(t, true, plan["arg0_input"])
	assert.Equal(t, "scale", plan["kernel"])
}

// A learner's program built by the real nvcc (for sm_90 alone) reads the
// plan writePlan writes: on a machine without a GPU it gets past the plan
// and ends with ExitNoDevice or ExitNoDriver; on one with a GPU it runs
// the kernel, right, and times it as asked. Every broken plan ends it with
// ExitUsage and the reason, before it touches a GPU.
func TestNvccProgramReadsPlans(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: no nvcc builds")
	}
	nv, err := toolkit.FindNvcc()
	if err != nil {
		t.Skipf("no nvcc to build the program with: %v", err)
	}
	arch, err := toolkit.ArchFor("9.0")
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	k := scaleKernel()
	prog, err := Compile(ctx, cuda.Builder{Nvcc: nv, CacheDir: t.TempDir()}, k, arch)
	require.NoError(t, err)

	run := func(t *testing.T, plan string) (int, string, string) {
		work := t.TempDir()
		require.NoError(t, writeInputs(work, k))
		if plan != "" {
			require.NoError(t, os.WriteFile(filepath.Join(work, "plan.json"), []byte(plan), 0o600))
		}
		_, err := toolkit.Invocation{Tool: "kernel scale", Path: prog.Path, Args: []string{work}, Timeout: time.Minute}.Run(ctx)
		var te *toolkit.ToolError
		if err != nil {
			require.ErrorAs(t, err, &te)
			return te.ExitCode, te.Stderr, work
		}
		return 0, "", work
	}
	good := func(o Options) string {
		dir := t.TempDir()
		require.NoError(t, writePlan(dir, k, o, false))
		data, err := os.ReadFile(filepath.Join(dir, "plan.json"))
		require.NoError(t, err)
		return string(data)
	}

	t.Run("the plan writePlan writes", func(t *testing.T) {
		code, stderr, work := run(t, good(Options{Warmup: 4, Reps: 9}))
		switch code {
		case cuda.ExitNoDevice, cuda.ExitNoDriver:
			_, err := readAnswer(work, k, "", time.Minute, &toolkit.ToolError{Tool: "kernel scale", ExitCode: code, Stderr: stderr})
			var me *toolkit.MissingError
			assert.ErrorAs(t, err, &me, "result.json names the missing GPU")
			t.Logf("no GPU here: status %d: %v", code, err)
		case 0:
			a, err := readAnswer(work, k, "", time.Minute, nil)
			require.NoError(t, err)
			assert.Equal(t, 4, a.Warmup)
			assert.Len(t, a.TimesMs, 9)
			out, err := readOutputs(work, k)
			require.NoError(t, err)
			for i := range 100 {
				got := math.Float32frombits(binary.LittleEndian.Uint32(out["out"][4*i:]))
				require.Equal(t, float32(i)*-1.5, got, "out[%d]", i)
			}
			t.Logf("on %s: %v ms", a.GPU, a.TimesMs)
		default:
			t.Fatalf("status %d, want 0, %d or %d: %s", code, cuda.ExitNoDevice, cuda.ExitNoDriver, stderr)
		}
	})

	plan := good(Options{})
	tests := []struct {
		name, plan, want string
	}{
		{"no plan", "", "plan.json: No such file or directory"},
		{"not JSON", "grid 4 1 1\n", "plan.json: invalid JSON at byte 1: want '{'"},
		{"another kernel", strings.Replace(plan, `"kernel":"scale"`, `"kernel":"copy"`, 1), `plan: "kernel" is "copy", and this program's kernel is scale`},
		{"a key missing", strings.Replace(plan, `"arg1_bytes":400,`, ``, 1), `plan: no "arg1_bytes"`},
		{"a number as text", strings.Replace(plan, `"grid_y":1`, `"grid_y":"1"`, 1), `plan: "grid_y": want an integer`},
		{"a flag as a number", strings.Replace(plan, `"once":false`, `"once":0`, 1), `plan: "once": want true or false`},
		{"an arg of another kind", strings.Replace(plan, `"arg2_kind":"int"`, `"arg2_kind":"ptr"`, 1), `plan: arg 2 is ptr, the kernel's is 'i'`},
		{"a float that is not a number", strings.Replace(plan, `"arg3_float":"-0x1.8p+00"`, `"arg3_float":"-1.5x"`, 1), `plan: "arg3_float": "-1.5x" is not a number`},
		{"a fraction", strings.Replace(plan, `"warmup":3`, `"warmup":3.5`, 1), "want an integer"},
		{"a key twice", strings.Replace(plan, `"reps":20`, `"reps":20,"reps":21`, 1), `duplicate key "reps"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.True(t, tt.plan == "" || tt.plan != plan, "the case changes the plan")
			code, stderr, work := run(t, tt.plan)
			assert.Equal(t, 2, code, "ExitUsage")
			assert.Contains(t, stderr, tt.want)
			_, err := os.Stat(filepath.Join(work, "result.json"))
			assert.True(t, errors.Is(err, os.ErrNotExist), "no result.json: the plan stopped it before the GPU")
		})
	}
}
