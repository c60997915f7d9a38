package exercises

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coalescing-course/coalesce/lessons/exercises/exercisestest"
	"github.com/coalescing-course/coalesce/lessons/simt"
)

func TestLookup(t *testing.T) {
	assert.Equal(t, []string{"10-kernels/strided-copy", "10-kernels/aos-soa", "10-kernels/transpose", "10-kernels/gather", "10-kernels/aligned-vector"}, IDs())
	for _, id := range IDs() {
		e, err := Lookup(id)
		require.NoError(t, err)
		assert.Equal(t, id, e.ID)
	}
	_, err := Lookup("10-kernels/nope")
	assert.ErrorIs(t, err, ErrUnknown)
	assert.ErrorContains(t, err, `"10-kernels/nope": the exercises are 10-kernels/strided-copy, 10-kernels/aos-soa, 10-kernels/transpose, 10-kernels/gather, 10-kernels/aligned-vector`)
}

// Variants are the same for the same learner, within their ranges, valid,
// and differ from learner to learner; the empty learner's are the
// documented defaults.
func TestVariants(t *testing.T) {
	for _, e := range all {
		t.Run(e.ID, func(t *testing.T) {
			def := e.Variant("")
			for _, p := range e.Params {
				assert.Equal(t, p.Default, def.Params[p.Name], p.Name)
			}
			require.NoError(t, e.check(def))
			distinct := map[string]bool{}
			for i := range 50 {
				learner := fmt.Sprintf("learner-%d", i)
				v := e.Variant(learner)
				require.NoError(t, e.check(v), "%s: %v", learner, v.Params)
				assert.Equal(t, v, e.Variant(learner), "the same learner, the same variant")
				distinct[v.String()] = true
			}
			// 50 draws: the narrowest space, the aligned copy's 48 offsets
			// times 250001 sizes, repeats with probability about 50^2/2/1.2e7.
			assert.GreaterOrEqual(t, len(distinct), 49, "%v", distinct)
		})
	}
}

func TestVariantSeed(t *testing.T) {
	e := e0(t, "10-kernels/strided-copy")
	// sha256("10-kernels/strided-copy\x00ada")[:8], from
	// printf '10-kernels/strided-copy\0ada' | sha256sum
	assert.Equal(t, uint64(0x3c07ecf689de2966), e.Variant("ada").Seed)
}

func TestRunRefuses(t *testing.T) {
	e := e0(t, "10-kernels/transpose")
	v := e.Variant("ada")
	wrongType := func(t *simt.Thread, in, out *simt.Global[float32], rows, cols int) {}
	type named func(t *simt.Thread, in, out *simt.Global[float32], tile *simt.Shared[float32], rows, cols int)
	tests := []struct {
		name   string
		v      Variant
		kernel any
		msg    string // "" when it runs
	}{
		{"wrong signature", v, wrongType, "exercises: 10-kernels/transpose: kernel is func(*simt.Thread, *simt.Global[float32], *simt.Global[float32], int, int), " +
			"want func(t *simt.Thread, in, out *simt.Global[float32], tile *simt.Shared[float32], rows, cols int)"},
		{"not a func", v, 42, "kernel is int, want func("},
		{"nil", v, nil, "the kernel is nil"},
		{"nil func", v, TransposeKernel(nil), "the kernel is a nil func"},
		{"another exercise's variant", e0(t, "10-kernels/gather").Variant("ada"), e.Starter, `exercises: 10-kernels/transpose: the variant is of "10-kernels/gather"`},
		{"a parameter out of range", Variant{ID: e.ID, Params: map[string]int{"rows": 1 << 20, "cols": 100}}, e.Starter, "rows=1048576: want 96 to 768"},
		{"a parameter missing", Variant{ID: e.ID, Params: map[string]int{"rows": 100}}, e.Starter, "the variant has no cols"},
		{"a named func type", v, named(exercisestest.TransposeSolution), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := e.Run(tt.v, tt.kernel)
			if tt.msg == "" {
				require.NoError(t, err)
				assert.True(t, out.Pass)
				return
			}
			assert.ErrorContains(t, err, tt.msg)
			assert.Nil(t, out)
		})
	}
}

// What learner code does wrong is an Outcome with a Fault or a mismatch,
// never a panic out of Run or Grade.
func TestHostileKernels(t *testing.T) {
	copyID, gatherID := "10-kernels/strided-copy", "10-kernels/gather"
	tests := []struct {
		name, id string
		kernel   any
		is       error  // the Fault's kind; nil for a mismatch or another fault
		msg      string // in the Fault, or in the mismatch
	}{
		{"panics", copyID, StridedCopyKernel(func(t *simt.Thread, in, out *simt.Global[float32], n, k int) {
			if t.ThreadIdx.X == 7 {
				panic("boom")
			}
		}), simt.ErrPanic, "block (0,0) thread (7,0): boom at variants_test.go:"},
		{"divides by zero", copyID, StridedCopyKernel(func(t *simt.Thread, in, out *simt.Global[float32], n, k int) {
			out.Store(t, 0, float32(n/(k-k)))
		}), simt.ErrPanic, "integer divide by zero"},
		{"out of bounds", copyID, StridedCopyKernel(func(t *simt.Thread, in, out *simt.Global[float32], n, k int) {
			out.Store(t, n, in.Load(t, 0))
		}), simt.ErrAccess, "out.Store(t, 100000) at variants_test.go:"},
		{"writes its input", copyID, StridedCopyKernel(func(t *simt.Thread, in, out *simt.Global[float32], n, k int) {
			i := t.BlockIdx.X*t.BlockDim.X + t.ThreadIdx.X
			for j := range k {
				if e := i*k + j; e < n {
					in.Store(t, e, -1)
					out.Store(t, e, in.Load(t, e))
				}
			}
		}), nil, "out[0] is -1, want "},
		{"a nil thread", copyID, StridedCopyKernel(func(t *simt.Thread, in, out *simt.Global[float32], n, k int) {
			in.Load(nil, 0)
		}), simt.ErrAccess, "with a nil *Thread"},
		{"an Order that panics", gatherID, Gather{Order: func([]int32) []int32 { panic("no") }, Kernel: gatherStarter}, nil, "Gather.Order panicked: no"},
		{"an Order that drops a key", gatherID, Gather{Order: func(k []int32) []int32 { return k[1:] }, Kernel: gatherStarter}, nil, "Gather.Order returned 65535 keys, want the 65536"},
		{"an Order that makes keys up", gatherID, Gather{Order: func(k []int32) []int32 { k[5] = -3; return k }, Kernel: gatherStarter}, nil, "returned key -3 at 5, which is not among the keys"},
		{"a nil Order", gatherID, Gather{Kernel: gatherStarter}, nil, "Gather.Order is nil"},
		{"a nil Kernel", gatherID, Gather{Order: sortKeys}, nil, "Gather.Kernel is nil"},
		{"pairs made up", gatherID, Gather{Order: sortKeys, Kernel: func(t *simt.Thread, table *simt.Global[float32], keys, outKey *simt.Global[int32], outVal *simt.Global[float32], n int) {
			if i := t.BlockIdx.X*t.BlockDim.X + t.ThreadIdx.X; i < n {
				outKey.Store(t, i, 0)
				outVal.Store(t, i, table.Load(t, 0))
			}
		}}, nil, "out_key[", // key 0 appears more often than among the keys
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := e0(t, tt.id)
			out, err := e.Run(e.Variant(""), tt.kernel)
			require.NoError(t, err)
			assert.False(t, out.Correct)
			assert.False(t, out.Pass)
			switch {
			case tt.is != nil:
				assert.ErrorIs(t, out.Fault, tt.is)
				assert.ErrorContains(t, out.Fault, tt.msg)
			case out.Fault != nil:
				assert.ErrorContains(t, out.Fault, tt.msg)
			default:
				require.NotNil(t, out.Mismatch)
				assert.Contains(t, out.Mismatch.String(), tt.msg)
			}
			rep := Grade(tt.id, "", tt.kernel)
			assert.Zero(t, rep.Points)
			assert.False(t, rep.Pass)
		})
	}
}

// A Report's JSON has the fields the package documentation lists, and
// nothing else.
func TestGradeJSON(t *testing.T) {
	fields := []string{"correct", "error", "id", "learner", "max_points", "mismatch", "params", "pass", "points", "targets"}
	tests := []struct {
		name, id string
		kernel   any
		points   int
		max      int
		pass     bool
		err      string
	}{
		{"solution", "10-kernels/transpose", answers["10-kernels/transpose"].solution, 5, 5, true, ""},
		{"starter", "10-kernels/transpose", e0(t, "10-kernels/transpose").Starter, 4, 5, false, ""},
		{"wrong", "10-kernels/transpose", answers["10-kernels/transpose"].wrong, 0, 5, false, ""},
		{"faults", "10-kernels/aligned-vector", e0(t, "10-kernels/aligned-vector").Starter, 0, 5, false, "cudaErrorMisalignedAddress"},
		{"wrong signature", "10-kernels/aos-soa", answers["10-kernels/transpose"].solution, 0, 3, false, "kernel is func("},
		{"unknown exercise", "10-kernels/nope", nil, 0, 0, false, "unknown exercise"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep := Grade(tt.id, "ada", tt.kernel)
			b, err := json.Marshal(rep)
			require.NoError(t, err)
			var got map[string]any
			require.NoError(t, json.Unmarshal(b, &got))
			assert.ElementsMatch(t, fields, keys(got), "%s", b)
			assert.Equal(t, tt.points, rep.Points, "%s", b)
			assert.Equal(t, tt.max, rep.MaxPoints)
			assert.Equal(t, tt.pass, rep.Pass)
			assert.Equal(t, "ada", got["learner"])
			assert.NotNil(t, got["targets"], "targets is an array, never null")
			if tt.err == "" {
				assert.Empty(t, rep.Error)
			} else {
				assert.Contains(t, rep.Error, tt.err)
			}
			for _, tg := range rep.Targets {
				assert.Equal(t, tg.Got <= tg.Want && rep.Error == "", tg.Pass)
			}
		})
	}
}

func keys(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// StarterGo is the starter's source, with the signature the exercise
// asks for (the gather's: its two functions' types).
func TestStarterGo(t *testing.T) {
	for _, e := range all {
		t.Run(e.ID, func(t *testing.T) {
			f, err := parser.ParseFile(token.NewFileSet(), "", "package p\n"+e.StarterGo, parser.ParseComments)
			require.NoError(t, err, e.StarterGo)
			var types []string
			for _, d := range f.Decls {
				fd := d.(*ast.FuncDecl)
				assert.NotNil(t, fd.Doc, "a starter says what it does")
				assert.True(t, strings.HasPrefix(fd.Doc.Text(), fd.Name.Name+" "), "the comment starts with the shown name")
				var b strings.Builder
				require.NoError(t, printer.Fprint(&b, token.NewFileSet(), fd.Type))
				types = append(types, b.String())
			}
			if e.ID == "10-kernels/gather" {
				assert.Equal(t, []string{"func(keys []int32) []int32", "func(t *simt.Thread, table *simt.Global[float32], keys, outKey *simt.Global[int32], outVal *simt.Global[float32], n int)"}, types)
				assert.Contains(t, e.Signature, "Order: "+types[0])
				assert.Contains(t, e.Signature, "Kernel: "+types[1])
				return
			}
			assert.Equal(t, []string{e.Signature}, types)
		})
	}
}

// A variant's parameters are held to the ranges the Params state, Step
// included: the draw reads its ranges from them, and check refuses what
// is outside (aos-soa's n is a multiple of 256 particles).
func TestParamRanges(t *testing.T) {
	e, err := Lookup("10-kernels/aos-soa")
	require.NoError(t, err)
	v := e.Variant("ada")
	require.NoError(t, e.check(v))
	v.Params["n"] = 8192 + 1
	assert.ErrorContains(t, e.check(v), "n=8193: want a multiple of 256")
	v.Params["n"] = 65536 + 256
	assert.ErrorContains(t, e.check(v), "n=65792: want 8192 to 65536")
	assert.Panics(t, func() { params(e.Params).draw(nil, "no such") }, "a draw of a parameter the table lacks")
}
