package usercuda

import (
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var updateGolden = flag.Bool("update-golden", false, "rewrite testdata/userkernel_copy.cu from Kernel.Source")

// copyKernel is a learner's copy of n floats: 1000 threads in blocks of
// 256, so 4 blocks, the last one partly idle.
func copyKernel() *Kernel {
	const n = 1000
	in := make([]byte, 4*n)
	for i := range in {
		in[i] = byte(i)
	}
	return &Kernel{
		Name: "copy",
		Body: "int i = blockIdx.x * blockDim.x + threadIdx.x;\nif (i < n) out[i] = in[i];\n",
		Args: []Arg{
			{Name: "in", CType: "const float*", Data: in, Bytes: 4 * n},
			{Name: "out", CType: "float*", Bytes: 4 * n, Out: true},
			{Name: "n", CType: "int", Int: n},
		},
		Grid:  Dim3{X: 4},
		Block: Dim3{X: 256},
	}
}

func TestUserKernelValidate(t *testing.T) {
	tests := []struct {
		name string
		edit func(k *Kernel)
		want string // substring of the error; "" for none
	}{
		{"the copy is valid", func(*Kernel) {}, ""},
		{"types spelled with other spaces", func(k *Kernel) { k.Args[0].CType = "const  float *" }, ""},
		{"a matching signature", func(k *Kernel) {
			k.Signature = `extern "C" __global__ void copy(const float *in, float *out, int n)`
		}, ""},
		{"a float value", func(k *Kernel) { k.Args[2] = Arg{Name: "scale", CType: "float", Float: 2.5} }, ""},
		{"a 2D launch", func(k *Kernel) { k.Grid, k.Block = Dim3{8, 8, 0}, Dim3{32, 8, 0} }, ""},
		{"a bad kernel name", func(k *Kernel) { k.Name = "2copy" }, `kernel name: "2copy" is not a C identifier`},
		{"a keyword for a name", func(k *Kernel) { k.Name = "float" }, `"float" is a C++ keyword or a CUDA built-in`},
		{"the program's prefix", func(k *Kernel) { k.Name = "coalesce_launch" }, "names starting with coalesce_ or __ are the generated program's"},
		{"a built-in as an arg", func(k *Kernel) { k.Args[2].Name = "threadIdx" }, `arg 2 (threadIdx): name: "threadIdx" is a C++ keyword or a CUDA built-in`},
		{"a type not in the list", func(k *Kernel) { k.Args[1].CType = "half*" }, `arg 1 (out): C type "half*" is not allowed: want one of const double*, const float*, const float2*, const float4*`},
		{"two args of one name", func(k *Kernel) { k.Args[1].Name = "in" }, `arg 1: the name "in" is taken`},
		{"an arg named as the kernel", func(k *Kernel) { k.Args[2].Name = "copy" }, `arg 2: the name "copy" is taken`},
		{"no args", func(k *Kernel) { k.Args = nil }, "0 args, want 1 to 16"},
		{"an empty buffer", func(k *Kernel) { k.Args[1].Bytes = 0 }, "float* buffer of 0 bytes: want 1 to 4294967296"},
		{"a buffer too large", func(k *Kernel) { k.Args[1].Bytes = 8 << 30 }, "want 1 to 4294967296"},
		{"a buffer of part of a float4", func(k *Kernel) { k.Args[1].CType = "float4*"; k.Args[1].Bytes = 4000 + 4 }, "float4* buffer of 4004 bytes: not a whole number of 16-byte elements"},
		{"data of another size", func(k *Kernel) { k.Args[0].Data = k.Args[0].Data[:10] }, "10 bytes of data for a buffer of 4000"},
		{"a const output", func(k *Kernel) { k.Args[0].Out = true }, "const float* is read only, so it cannot be an output"},
		{"a value with bytes", func(k *Kernel) { k.Args[2].Bytes = 4 }, "the int value has no Bytes, Data or Out"},
		{"an int given a Float", func(k *Kernel) { k.Args[2].Float = 1.5 }, "the int value takes Int, not Float (1.5)"},
		{"an int out of range", func(k *Kernel) { k.Args[2].Int = 1 << 31 }, "2147483648 does not fit in the type int (-2147483648 to 2147483647)"},
		{"a negative unsigned", func(k *Kernel) { k.Args[2].CType = "unsigned int"; k.Args[2].Int = -1 }, "-1 does not fit in the type unsigned int"},
		{"a float too large", func(k *Kernel) { k.Args[2] = Arg{Name: "s", CType: "float", Float: 1e39} }, "1e+39 is not a finite float"},
		{"a NaN", func(k *Kernel) { k.Args[2] = Arg{Name: "s", CType: "double", Float: math.NaN()} }, "NaN is not a finite double"},
		{"a pointer given an Int", func(k *Kernel) { k.Args[1].Int = 3 }, "the float* buffer has no Int or Float value"},
		{"no grid", func(k *Kernel) { k.Grid = Dim3{} }, "grid (0,1,1): want X in 1..2147483647"},
		{"a block too wide", func(k *Kernel) { k.Block = Dim3{X: 2048} }, "block (2048,1,1): want X and Y in 1..1024"},
		{"a block of too many threads", func(k *Kernel) { k.Block = Dim3{64, 32, 1} }, "block (64,32,1) has 2048 threads, at most 1024 allowed"},
		{"too much shared memory", func(k *Kernel) { k.SharedBytes = 228 << 10 }, "shared bytes 233472: want 0 to 232448"},
		{"a body not text", func(k *Kernel) { k.Body = "int i;\x00" }, "the body is not text"},
		{"a body too long", func(k *Kernel) { k.Body = strings.Repeat(" ", 64<<10+1) }, "the body is 65537 bytes, at most 65536 allowed"},
		{"a signature of other args", func(k *Kernel) { k.Signature = "__global__ void copy(const float* in, float* out, long long n)" }, `does not declare the kernel's args: want "__global__ void copy(const float* in, float* out, int n)"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k := copyKernel()
			tt.edit(k)
			err := k.Validate()
			if tt.want == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
			_, err = k.Source()
			assert.Error(t, err, "no source for an invalid kernel")
		})
	}
}

func TestUserArgTypes(t *testing.T) {
	types := ArgTypes()
	// 10 element types, each const and not, and 5 value types.
	assert.Len(t, types, 25)
	for _, ty := range types {
		_, _, ok := argKind(ty)
		assert.True(t, ok, ty)
	}
	for ty, want := range map[string]byte{"const float4*": 'p', "float  *": 'p', "unsigned int": 'i', "long long": 'i', "double": 'f'} {
		kind, _, ok := argKind(ty)
		require.True(t, ok, ty)
		assert.Equal(t, string(want), string(kind), ty)
	}
}

// The generated program, byte for byte, for the copy kernel: rewritten by
// go test ./cuda -run UserKernelSource -update-golden after a deliberate
// change of the generator or of kernelsrc/host.cu (which the golden file
// holds whole, so that the diff shows every change a GPU run depends on).
func TestUserKernelSourceGolden(t *testing.T) {
	src, err := copyKernel().Source()
	require.NoError(t, err)
	golden := filepath.Join("testdata", "userkernel_copy.cu")
	if *updateGolden {
		require.NoError(t, os.WriteFile(golden, []byte(src), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err)
	assert.Equal(t, string(want), src, "run go test ./cuda -run UserKernelSource -update-golden after a deliberate change")
	// It depends on the code, not the launch or the data.
	k := copyKernel()
	k.Grid, k.Args[0].Data, k.Args[2].Int = Dim3{X: 9}, nil, 5
	k.Args[0].Bytes, k.Args[1].Bytes = 64, 64
	other, err := k.Source()
	require.NoError(t, err)
	assert.Equal(t, src, other)
}

// Every #line directive names the line that follows it truly: the
// learner's body starts at kernel.cu line 1, and every generated line
// named coalesce_host.cu carries its own number in the whole text.
func TestUserKernelLineNumbers(t *testing.T) {
	k := copyKernel()
	k.Body = "int i = blockIdx.x * blockDim.x + threadIdx.x;\n\n// three lines, no newline at the end\nif (i < n) out[i] = in[i];"
	src, err := k.Source()
	require.NoError(t, err)
	lines := strings.Split(src, "\n")
	directive := regexp.MustCompile(`^#line (\d+) "([^"]+)"$`)
	file, num := "", 0
	var seenBody bool
	for i, l := range lines {
		if m := directive.FindStringSubmatch(l); m != nil {
			n, _ := strconv.Atoi(m[1])
			file, num = m[2], n
			continue
		}
		switch file {
		case hostFile:
			require.Equal(t, i+1, num, "line %d of the text is named %s:%d: %q", i+1, file, num, l)
		case userFile:
			bodyLines := strings.Split(k.Body, "\n")
			if num <= len(bodyLines) {
				require.Equal(t, bodyLines[num-1], l, "kernel.cu:%d", num)
				seenBody = true
			} else {
				require.Equal(t, "}", l, "the line after the body closes the kernel")
			}
		default:
			t.Fatalf("line %d (%q) before any #line", i+1, l)
		}
		num++
	}
	assert.True(t, seenBody)
	assert.Contains(t, src, "#line 1 \"kernel.cu\"\nint i = blockIdx.x")
	assert.Contains(t, src, `extern "C" __global__ void copy(const float* in, float* out, int n)`)
	assert.Contains(t, src, "        (const float*)coalesce_p[0],\n        (float*)coalesce_p[1],\n        (int)coalesce_v[2].i);")
	assert.Contains(t, src, `coalesce_kinds[] = "ppi";`)
}

func TestDim3(t *testing.T) {
	assert.Equal(t, "(256,0,0)", Dim3{X: 256}.String(), "as given: 0 is a thread index too")
	assert.Equal(t, Dim3{256, 1, 1}, Dim3{X: 256}.norm())
	assert.Equal(t, "(32,8,2)", fmt.Sprint(Dim3{32, 8, 2}))
}
