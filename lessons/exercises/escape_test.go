package exercises

import (
	"encoding/binary"
	"math"
	"reflect"
	"slices"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coalescing-course/coalesce/lessons/simt"
)

// hostFloats returns input arg of exercise id's default variant as the
// host has it (the CUDA side's bytes): the copy of the inputs a notebook
// can reach, which a kernel must not read instead of loading them.
func hostFloats(t *testing.T, id, arg string) []float32 {
	t.Helper()
	e := e0(t, id)
	p, err := e.CUDA(e.Variant(""))
	require.NoError(t, err)
	for _, a := range p.Args {
		if a.Name == arg {
			out := make([]float32, len(a.Data)/4)
			for i := range out {
				out[i] = math.Float32frombits(binary.LittleEndian.Uint32(a.Data[4*i:]))
			}
			return out
		}
	}
	t.Fatalf("%s has no argument %s", id, arg)
	return nil
}

// slice returns the Go slice a Global wraps, by reflection and unsafe: the
// path around Store that a notebook's learner code can take (a sandboxed
// kernel cannot import either).
func slice(g *simt.Global[float32]) []float32 {
	m := reflect.ValueOf(g).Elem().Field(0)
	base := unsafe.Pointer(m.FieldByName("base").Pointer())
	return unsafe.Slice((*float32)(base), m.FieldByName("n").Int())
}

// The class "work moved outside the graded launch", at the exercises'
// level: every member's output is right, and none may pass. A launch
// inside the kernel, or simt in a gather's Order, is simt.ErrEscape; an
// output stored around the launch or made from a host copy of the inputs
// is ErrUncounted. The Fault says what and where; no target is met; the
// grade is 0.
func TestWorkOutsideTheLaunch(t *testing.T) {
	const copyID, transposeID, gatherID, aosID = "10-kernels/strided-copy", "10-kernels/transpose", "10-kernels/gather", "10-kernels/aos-soa"
	hostIn := hostFloats(t, copyID, "in")
	hostT := hostFloats(t, transposeID, "in")
	hostSoA := hostFloats(t, aosID, "soa")
	var stash []int32
	tests := []struct {
		name, id string
		kernel   any
		is       error
		msg      []string
	}{
		{"the copy in a launch of thread 0's", copyID, StridedCopyKernel(func(t *simt.Thread, in, out *simt.Global[float32], n, k int) {
			if t.BlockIdx.X == 0 && t.ThreadIdx.X == 0 {
				simt.Launch{Grid: simt.Dim{X: (n + 255) / 256}, Block: simt.Dim{X: 256}}.Run(func(u *simt.Thread) {
					if i := u.BlockIdx.X*256 + u.ThreadIdx.X; i < n {
						out.Store(u, i, in.Load(u, i))
					}
				})
			}
		}), simt.ErrEscape, []string{"Launch.Run at escape_test.go:", "inside the kernel"}},
		{"stores of a host copy, no loads", copyID, StridedCopyKernel(func(t *simt.Thread, in, out *simt.Global[float32], n, k int) {
			i := t.BlockIdx.X*t.BlockDim.X + t.ThreadIdx.X
			threads := t.GridDim.X * t.BlockDim.X
			for j := range k {
				if e := j*threads + i; e < n {
					out.Store(t, e, hostIn[e])
				}
			}
		}), ErrUncounted, []string{"in[0] is in the output, but no thread of the launch loaded it"}},
		{"half the output written around Store", copyID, StridedCopyKernel(func(t *simt.Thread, in, out *simt.Global[float32], n, k int) {
			i := t.BlockIdx.X*t.BlockDim.X + t.ThreadIdx.X
			threads := t.GridDim.X * t.BlockDim.X
			for j := range k {
				if e := j*threads + i; e < n {
					v := in.Load(t, e)
					if e < n/2 {
						out.Store(t, e, v)
					} else {
						slice(out)[e] = v
					}
				}
			}
		}), ErrUncounted, []string{"out[50000] holds", "but no thread of the launch stored it"}},
		{"a transpose of a host copy", transposeID, TransposeKernel(func(t *simt.Thread, in, out *simt.Global[float32], tile *simt.Shared[float32], rows, cols int) {
			// Coalesced stores, straight from the host's matrix.
			r := t.BlockIdx.Y*32 + t.ThreadIdx.X
			for j := 0; j < 32; j += 8 {
				if c := t.BlockIdx.X*32 + t.ThreadIdx.Y + j; r < rows && c < cols {
					out.Store(t, c*rows+r, hostT[r*cols+c])
				}
			}
		}), ErrUncounted, []string{"in[0] is in the output, but no thread of the launch loaded it"}},
		{"one layout's field from a host copy", aosID, AoSSoAKernel(func(t *simt.Thread, aos, soa, out *simt.Global[float32], n, fields, fx, fv int) {
			if i := t.BlockIdx.X*t.BlockDim.X + t.ThreadIdx.X; i < n {
				out.Store(t, i, soa.Load(t, fx*n+i)+hostSoA[fv*n+i])
			}
		}), ErrUncounted, []string{"soa[", "is in the output, but no thread of the launch loaded it"}},
		{"an Order that keeps the keys for the kernel", gatherID, Gather{
			Order: func(keys []int32) []int32 { slices.Sort(keys); stash = keys; return keys },
			Kernel: func(t *simt.Thread, table *simt.Global[float32], keys, outKey *simt.Global[int32], outVal *simt.Global[float32], n int) {
				if i := t.BlockIdx.X*t.BlockDim.X + t.ThreadIdx.X; i < n {
					k := stash[i] // not keys.Load
					outKey.Store(t, i, k)
					outVal.Store(t, i, table.Load(t, int(k)))
				}
			}}, ErrUncounted, []string{"keys[0] is in the output, but no thread of the launch loaded it"}},
		{"an Order that launches", gatherID, Gather{
			Order: func(keys []int32) []int32 {
				simt.Launch{Grid: simt.Dim{X: 1}, Block: simt.Dim{X: 1}}.Run(func(*simt.Thread) {})
				return keys
			}, Kernel: gatherStarter}, simt.ErrEscape, []string{"Launch.Run at escape_test.go:", "in Gather.Order", "only reorders the keys"}},
		{"an out-of-bounds store, recovered", copyID, StridedCopyKernel(func(t *simt.Thread, in, out *simt.Global[float32], n, k int) {
			defer func() { recover() }()
			i := t.BlockIdx.X*t.BlockDim.X + t.ThreadIdx.X
			threads := t.GridDim.X * t.BlockDim.X
			for j := 0; j <= k; j++ { // one trip too many: past the end
				out.Store(t, j*threads+i, in.Load(t, min(j*threads+i, n-1)))
			}
		}), simt.ErrAccess, []string{"index out of range"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := e0(t, tt.id)
			out, err := e.Run(e.Variant(""), tt.kernel)
			require.NoError(t, err)
			require.ErrorIs(t, out.Fault, tt.is, "%v", out.Fault)
			for _, m := range tt.msg {
				assert.ErrorContains(t, out.Fault, m)
			}
			assert.False(t, out.Correct)
			assert.False(t, out.Pass)
			for _, tr := range out.Targets {
				assert.False(t, tr.Pass, "%s", tr.Metric)
			}
			rep := Grade(tt.id, "", tt.kernel)
			assert.Zero(t, rep.Points)
			assert.NotEmpty(t, rep.Error)
		})
	}
}

// Every exercise's own answers make their output within the launch: the
// check of what the launch loaded and stored takes them (their
// Outcome has no Fault), the gather's with either Order.
func TestAnswersAreCounted(t *testing.T) {
	for id, a := range answers {
		for name, k := range map[string]any{"solution": a.solution, "starter": e0(t, id).Starter} {
			e := e0(t, id)
			out, err := e.Run(e.Variant("ada"), k)
			require.NoError(t, err)
			if id == "10-kernels/aligned-vector" && name == "starter" {
				assert.ErrorIs(t, out.Fault, simt.ErrAccess, "the starter faults")
				continue
			}
			assert.NoError(t, out.Fault, "%s %s", id, name)
			assert.True(t, out.Correct, "%s %s", id, name)
		}
	}
	out, err := e0(t, "10-kernels/gather").Run(e0(t, "10-kernels/gather").Variant("ada"), gatherBucketed)
	require.NoError(t, err)
	assert.NoError(t, out.Fault)
	assert.True(t, out.Pass)
}
