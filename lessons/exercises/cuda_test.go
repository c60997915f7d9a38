package exercises

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// goBytes returns a Go buffer's bytes as a GPU holds them.
func goBytes(t *testing.T, v any) []byte {
	t.Helper()
	switch v := v.(type) {
	case []float32:
		return floatBytes(v)
	case []int32:
		return intBytes(v)
	}
	require.Failf(t, "no bytes", "a buffer of %T", v)
	return nil
}

// The CUDA side says what the Go side does: the signature's parameters
// are the arguments; each buffer argument is a Go buffer of the same
// bytes, each scalar the variant's parameter; the launch is the same;
// Check takes the Go solution's output and refuses the untouched one.
func TestCUDAMatchesGo(t *testing.T) {
	param := regexp.MustCompile(`^(const )?(float|int)(\*)?( __restrict__)? (\w+)$`)
	for _, e := range all {
		for _, learner := range learners[:2] {
			v := e.Variant(learner)
			t.Run(e.ID+"/"+v.String(), func(t *testing.T) {
				p, err := e.CUDA(v)
				require.NoError(t, err)
				in := e.impl.prepare(v)
				// The signature, parameter by parameter.
				head, list, ok := strings.Cut(p.Signature, "(")
				require.True(t, ok)
				assert.Equal(t, "__global__ void "+p.Name, head)
				require.True(t, strings.HasSuffix(list, ")"))
				parts := strings.Split(strings.TrimSuffix(list, ")"), ", ")
				require.Len(t, p.Args, len(parts))
				buffers := map[string]bool{}
				for i, a := range p.Args {
					m := param.FindStringSubmatch(parts[i])
					require.NotNil(t, m, parts[i])
					assert.Equal(t, a.Name, m[5])
					assert.Equal(t, a.CType, m[1]+m[2]+m[3])
					assert.Equal(t, m[3] == "*", m[4] != "", "pointers, and only they, are __restrict__")
					for _, body := range []string{p.Starter, p.Solution, p.Wrong} {
						assert.Equal(t, strings.Count(body, "{"), strings.Count(body, "}"))
					}
					assert.Regexp(t, `\b`+a.Name+`\b`, p.Solution+p.Starter)
					if a.Scalar() {
						assert.Equal(t, "int", a.CType)
						assert.Zero(t, a.ElemBytes)
						assert.False(t, a.Output)
						assert.EqualValues(t, v.Params[a.Name], a.Value, "%s is the variant's", a.Name)
						continue
					}
					buffers[a.Name] = true
					assert.Equal(t, 4, a.ElemBytes)
					assert.Equal(t, a.Output, !strings.HasPrefix(a.CType, "const "), "outputs, and only they, are written")
					if a.Output {
						assert.Equal(t, len(goBytes(t, in.outputs[a.Name])), len(a.Data))
						assert.Zero(t, bytes.Count(a.Data, []byte{0})-len(a.Data), "an output starts zeroed")
					} else {
						assert.Equal(t, goBytes(t, in.inputs[a.Name]), a.Data, "%s holds the Go buffer's data", a.Name)
					}
				}
				assert.ElementsMatch(t, append(sortedKeys(in.inputs), sortedKeys(in.outputs)...), sortedKeys(buffers))
				assert.Equal(t, in.launch.Grid, p.Grid)
				assert.Equal(t, in.launch.Block, p.Block)
				assert.Zero(t, p.DynamicShared)

				// Check: the untouched outputs are wrong, a missing one too,
				// the Go solution's right.
				zeros := map[string][]byte{}
				for _, a := range p.Args {
					if a.Output {
						zeros[a.Name] = a.Data
					}
				}
				assert.ErrorIs(t, p.Check(zeros), ErrWrong)
				assert.ErrorContains(t, p.Check(map[string][]byte{}), "no output")
				k, err := in.bind(reflect.ValueOf(answers[e.ID].solution))
				require.NoError(t, err)
				_, err = in.launch.Run(k)
				require.NoError(t, err)
				got := map[string][]byte{}
				for name, o := range in.outputs {
					got[name] = goBytes(t, o)
				}
				assert.NoError(t, p.Check(got))
			})
		}
	}
}

func sortedKeys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func TestOrdered(t *testing.T) {
	g := e0(t, "10-kernels/gather")
	p, err := g.CUDA(g.Variant("ada"))
	require.NoError(t, err)
	sorted, err := p.Ordered(sortKeys)
	require.NoError(t, err)
	keys, _ := intsOut(map[string]any{"keys": sorted.Args[1].Data}, "keys", len(sorted.Args[1].Data)/4)
	assert.True(t, slices.IsSorted(keys))
	assert.NotEqual(t, p.Args[1].Data, sorted.Args[1].Data, "the problem it came from keeps its keys")
	_, err = p.Ordered(func(k []int32) []int32 { return k[:3] })
	assert.ErrorContains(t, err, "Gather.Order returned 3 keys")
	_, err = p.Ordered(func(k []int32) []int32 { panic("x") })
	assert.ErrorContains(t, err, "Gather.Order panicked: x")
	s := e0(t, "10-kernels/strided-copy")
	q, err := s.CUDA(s.Variant("ada"))
	require.NoError(t, err)
	_, err = q.Ordered(sortKeys)
	assert.ErrorContains(t, err, "strided_copy has no keys to order")
}

// shim makes a CUDA kernel C++ that g++ compiles, run on the CPU: a
// block's threads one after another, or, for a kernel that calls
// __syncthreads, each as a std::thread meeting at a std::barrier.
const shim = `#include <barrier>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>
struct uint3 { unsigned x, y, z; };
struct alignas(16) float4 { float x, y, z, w; };
static thread_local uint3 threadIdx, blockIdx;
static uint3 blockDim, gridDim;
static std::barrier<>* block_barrier;
[[maybe_unused]] static void __syncthreads() { block_barrier->arrive_and_wait(); }
#define __global__
#define __restrict__ __restrict
#define __shared__ static
`

// cppProgram returns a C++ program of the bodies, each a kernel of its
// own, that runs the one its first argument numbers over the arguments
// read from files (arg name + ".bin") and writes the outputs back to
// them.
func cppProgram(p Problem, bodies []string) string {
	var b strings.Builder
	b.WriteString(shim)
	for i, body := range bodies {
		fmt.Fprintf(&b, "%s {%s}\n", strings.Replace(p.Signature, p.Name+"(", fmt.Sprintf("%s_%d(", p.Name, i), 1), body)
	}
	b.WriteString(`static void* load(const char* path, size_t n) {
    void* p = aligned_alloc(256, (n + 255) / 256 * 256);
    FILE* f = fopen(path, "rb");
    if (!f || fread(p, 1, n, f) != n) { perror(path); exit(2); }
    fclose(f);
    return p;
}
static void save(const char* path, void* p, size_t n) {
    FILE* f = fopen(path, "wb");
    if (!f || fwrite(p, 1, n, f) != n) { perror(path); exit(2); }
    fclose(f);
}
int main(int argc, char** argv) {
    int which = argc > 1 ? atoi(argv[1]) : -1;
`)
	var call []string
	for _, a := range p.Args {
		if a.Scalar() {
			fmt.Fprintf(&b, "    int %s = %d;\n", a.Name, a.Value)
		} else {
			fmt.Fprintf(&b, "    %s %s = (%s)load(%q, %d);\n", a.CType, a.Name, a.CType, a.Name+".bin", len(a.Data))
		}
		call = append(call, a.Name)
	}
	fmt.Fprintf(&b, "    gridDim = {%d, %d, 1}; blockDim = {%d, %d, 1};\n", p.Grid.X, p.Grid.Y, p.Block.X, p.Block.Y)
	b.WriteString("    auto kernel = [&] {\n        switch (which) {\n")
	for i := range bodies {
		fmt.Fprintf(&b, "        case %d: %s_%d(%s); break;\n", i, p.Name, i, strings.Join(call, ", "))
	}
	b.WriteString("        default: exit(3);\n        }\n    };\n")
	fmt.Fprintf(&b, "    bool sync = ")
	for i, body := range bodies {
		if strings.Contains(body, "__syncthreads") {
			fmt.Fprintf(&b, "which == %d || ", i)
		}
	}
	b.WriteString("false;\n")
	fmt.Fprintf(&b, `    for (unsigned by = 0; by < gridDim.y; by++) for (unsigned bx = 0; bx < gridDim.x; bx++) {
        unsigned threads = blockDim.x * blockDim.y;
        if (!sync) {
            for (unsigned t = 0; t < threads; t++) {
                blockIdx = {bx, by, 0}; threadIdx = {t %% blockDim.x, t / blockDim.x, 0};
                kernel();
            }
            continue;
        }
        std::barrier<> bar(threads);
        block_barrier = &bar;
        std::vector<std::thread> ts;
        for (unsigned t = 0; t < threads; t++) ts.emplace_back([=] {
            blockIdx = {bx, by, 0}; threadIdx = {t %% blockDim.x, t / blockDim.x, 0};
            kernel();
        });
        for (auto& th : ts) th.join();
    }
`)
	for _, a := range p.Args {
		if a.Output {
			fmt.Fprintf(&b, "    save(%q, (void*)%s, %d);\n", a.Name+".bin", a.Name, len(a.Data))
		}
	}
	b.WriteString("    return 0;\n}\n")
	return b.String()
}

// The CUDA bodies, compiled by g++ over a shim of CUDA's names and run on
// the CPU on the smallest variant of each exercise, give what Check
// wants: the starter and the solution right, the wrong body wrong. (The
// aligned copy's starter is left out: a misaligned float4 on a CPU is
// not the fault it is on a GPU.) Skipped without g++.
func TestCUDABodiesOnCPU(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles C++")
	}
	gpp, err := exec.LookPath("g++")
	if err != nil {
		t.Skip("no g++")
	}
	small := map[string]map[string]int{
		"10-kernels/strided-copy":   {"n": 50_000, "k": 7},
		"10-kernels/aos-soa":        {"n": 8192, "fields": 5, "fx": 4, "fv": 1},
		"10-kernels/transpose":      {"rows": 97, "cols": 130},
		"10-kernels/gather":         {"m": 8192, "n": 9000},
		"10-kernels/aligned-vector": {"off": 6, "n": 50_003},
	}
	for _, e := range all {
		t.Run(e.ID, func(t *testing.T) {
			t.Parallel() // each waits on g++
			v := e.Variant("ada")
			v.Params = small[e.ID]
			p, err := e.CUDA(v)
			require.NoError(t, err)
			bodies := []struct {
				name  string
				body  string
				right bool
			}{{"starter", p.Starter, true}, {"solution", p.Solution, true}, {"wrong", p.Wrong, false}}
			dir := t.TempDir()
			var texts []string
			for _, b := range bodies {
				texts = append(texts, b.body)
			}
			require.NoError(t, os.WriteFile(filepath.Join(dir, "k.cpp"), []byte(cppProgram(p, texts)), 0o644))
			out, err := exec.Command(gpp, "-std=c++20", "-O1", "-pthread", "-Wall", "-Werror", "-o", filepath.Join(dir, "k"), filepath.Join(dir, "k.cpp")).CombinedOutput()
			require.NoError(t, err, "%s", out)
			for i, b := range bodies {
				if e.ID == "10-kernels/aligned-vector" && b.name == "starter" {
					continue
				}
				q := p
				if e.ID == "10-kernels/gather" && b.name == "solution" {
					q, err = p.Ordered(sortKeys)
					require.NoError(t, err)
				}
				for _, a := range q.Args {
					if !a.Scalar() {
						require.NoError(t, os.WriteFile(filepath.Join(dir, a.Name+".bin"), a.Data, 0o644))
					}
				}
				run := exec.Command(filepath.Join(dir, "k"), fmt.Sprint(i))
				run.Dir = dir
				out, err = run.CombinedOutput()
				require.NoError(t, err, "%s: %s", b.name, out)
				got := map[string][]byte{}
				for _, a := range q.Args {
					if a.Output {
						got[a.Name], err = os.ReadFile(filepath.Join(dir, a.Name+".bin"))
						require.NoError(t, err)
					}
				}
				if err := q.Check(got); b.right {
					assert.NoError(t, err, b.name)
				} else {
					assert.ErrorIs(t, err, ErrWrong, b.name)
				}
			}
		})
	}
}
