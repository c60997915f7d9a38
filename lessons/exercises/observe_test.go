package exercises

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coalescing-course/coalesce/lessons/exercises/exercisestest"
	"github.com/coalescing-course/coalesce/lessons/metrics"
	"github.com/coalescing-course/coalesce/lessons/simt"
)

// Judge of an Observe that went through JSON, as a sandbox's child writes
// it and its parent reads it, is the verdict Run gives in process: for
// each exercise's starter, solution and wrong kernel, on a learner's own
// variant.
func TestJudgeIsRun(t *testing.T) {
	for _, e := range all {
		for name, kernel := range map[string]any{"starter": e.Starter, "solution": answers[e.ID].solution, "wrong": answers[e.ID].wrong} {
			t.Run(e.ID+"/"+name, func(t *testing.T) {
				t.Parallel()
				var obs Observation
				if g, ok := kernel.(Gather); ok {
					obs = Observe(e.ID, "ada", g.Kernel, g.Order)
				} else {
					obs = Observe(e.ID, "ada", kernel, nil)
				}
				data, err := json.Marshal(obs)
				require.NoError(t, err)
				var back Observation
				require.NoError(t, json.Unmarshal(data, &back))
				rep := Judge(e.ID, "ada", back)
				out, err := e.Run(e.Variant("ada"), kernel)
				require.NoError(t, err)
				assert.Equal(t, out.Correct, rep.Correct)
				assert.Equal(t, out.Pass, rep.Pass)
				assert.Equal(t, out.Mismatch, rep.Mismatch)
				assert.Equal(t, out.Targets, rep.Targets)
				assert.Equal(t, points(out), rep.Points)
				if out.Fault != nil {
					assert.Equal(t, out.Fault.Error(), rep.Error)
				}
			})
		}
	}
}

// Every counter target of sectors has its least, and no right kernel
// counts below it: the starters, the solutions and the alternatives the
// package's tests know, each on three learners' variants.
func TestLeastHoldsForRightKernels(t *testing.T) {
	right := map[string][]any{}
	for _, e := range all {
		right[e.ID] = []any{e.Starter, answers[e.ID].solution}
	}
	right["10-kernels/transpose"] = append(right["10-kernels/transpose"], TransposeKernel(exercisestest.TransposeUnpadded))
	right["10-kernels/gather"] = append(right["10-kernels/gather"], gatherBucketed)
	right["10-kernels/aligned-vector"] = append(right["10-kernels/aligned-vector"], AlignedVectorKernel(alignedVector32), AlignedVectorKernel(alignedVectorScalar))
	for _, e := range all {
		in := e.impl.prepare(e.Variant(""))
		for _, tg := range in.targets {
			if tg.metric == metrics.LdSectors || tg.metric == metrics.StSectors {
				assert.Positive(t, tg.least, "%s: %s has no least: a launch inside the kernel would go unseen", e.ID, tg.metric)
			}
			assert.LessOrEqual(t, tg.least, tg.want, "%s: %s: a target below its least is unmeetable", e.ID, tg.metric)
		}
		for i, k := range right[e.ID] {
			for _, learner := range []string{"ada", "grace", "linus"} {
				out, err := e.Run(e.Variant(learner), k)
				require.NoError(t, err)
				if e.ID == "10-kernels/aligned-vector" && i == 0 {
					continue // the starter faults
				}
				assert.NoError(t, out.Fault, "%s kernel %d, %s", e.ID, i, learner)
				assert.True(t, out.Correct, "%s kernel %d, %s", e.ID, i, learner)
			}
		}
	}
}

// nested runs f as a launch of one thread inside the graded one: what
// the launch inside does, the graded launch does not count.
func nested(f func(t *simt.Thread)) error {
	_, err := simt.Launch{Grid: simt.Dim{X: 1, Y: 1}, Block: simt.Dim{X: 1, Y: 1}}.Run(f)
	return err
}

// Kernels that move their work into a launch of their own, inside the
// graded one, for all or part of it: whatever simt makes of a launch
// inside a launch (a fault, or counts of its own), none gets a point.
func TestFewerAccessesThanTheOutputNeeds(t *testing.T) {
	tests := []struct {
		name   string
		id     string
		kernel any
	}{
		{"one thread copies everything inside", "10-kernels/strided-copy", StridedCopyKernel(func(t *simt.Thread, in, out *simt.Global[float32], n, k int) {
			if t.BlockIdx.X == 0 && t.ThreadIdx.X == 0 {
				_ = nested(func(u *simt.Thread) {
					for i := range n {
						out.Store(u, i, in.Load(u, i))
					}
				})
			}
		})},
		// The others do it for block 0 alone, the rest of the work
		// counted: the least is exact enough to miss one block's sectors.
		{"block 0's loads inside, the stores coalesced", "10-kernels/strided-copy", StridedCopyKernel(func(t *simt.Thread, in, out *simt.Global[float32], n, k int) {
			i := t.BlockIdx.X*t.BlockDim.X + t.ThreadIdx.X
			T := t.GridDim.X * t.BlockDim.X
			for j := range k {
				if e := j*T + i; e < n {
					v := float32(0)
					if t.BlockIdx.X == 0 {
						_ = nested(func(u *simt.Thread) { v = in.Load(u, e) })
					} else {
						v = in.Load(t, e)
					}
					out.Store(t, e, v)
				}
			}
		})},
		{"block 0's stores inside, the loads counted", "10-kernels/aos-soa", AoSSoAKernel(func(t *simt.Thread, aos, soa, out *simt.Global[float32], n, fields, fx, fv int) {
			if i := t.BlockIdx.X*t.BlockDim.X + t.ThreadIdx.X; i < n {
				v := soa.Load(t, fx*n+i) + soa.Load(t, fv*n+i)
				if t.BlockIdx.X == 0 {
					_ = nested(func(u *simt.Thread) { out.Store(u, i, v) })
				} else {
					out.Store(t, i, v)
				}
			}
		})},
		// The gather's table sectors have slack (the target counts each
		// warp's, the least each sector once), so its lookups go inside
		// a block at a time: each block's first thread looks its keys up
		// and stores the values.
		{"the gather's lookups inside, a launch a block", "10-kernels/gather", Gather{Order: sortKeys, Kernel: func(t *simt.Thread, table *simt.Global[float32], keys, outKey *simt.Global[int32], outVal *simt.Global[float32], n int) {
			i := t.BlockIdx.X*t.BlockDim.X + t.ThreadIdx.X
			if i < n {
				outKey.Store(t, i, keys.Load(t, i))
			}
			if t.ThreadIdx.X == 0 {
				_ = nested(func(u *simt.Thread) {
					for j := i; j < min(i+t.BlockDim.X, n); j++ {
						outVal.Store(u, j, table.Load(u, int(keys.Load(u, j))))
					}
				})
			}
		}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := e0(t, tt.id)
			out, err := e.Run(e.Variant("ada"), tt.kernel)
			require.NoError(t, err)
			assert.False(t, out.Correct, "the output is not the graded launch's")
			assert.False(t, out.Pass)
			// ErrUncounted; or, where simt refuses a launch inside a launch,
			// its fault or the output left wrong.
			require.True(t, out.Fault != nil || out.Mismatch != nil, "%+v", out)
			if errors.Is(out.Fault, ErrUncounted) {
				assert.Contains(t, out.Fault.Error(), "fewer than the")
			}
			var obs Observation
			if g, ok := tt.kernel.(Gather); ok {
				obs = Observe(tt.id, "ada", g.Kernel, g.Order)
			} else {
				obs = Observe(tt.id, "ada", tt.kernel, nil)
			}
			rep := Judge(tt.id, "ada", obs)
			assert.Zero(t, rep.Points, "%+v", rep)
			assert.False(t, rep.Pass)
			assert.True(t, rep.Error != "" || rep.Mismatch != nil, "%+v", rep)
		})
	}
}

// Judge takes nothing of an observation on trust but its bytes and
// counts: outputs of the wrong size or missing, counts below what the
// output needs, another learner's observation, text past MaxText: each
// is no point and an error or mismatch that says so, never a panic.
func TestJudgeRefuses(t *testing.T) {
	const id = "10-kernels/strided-copy"
	good := Observe(id, "ada", answers[id].solution, nil)
	require.Empty(t, good.Error+good.Fault)
	require.Equal(t, 3, Judge(id, "ada", good).Points)
	tamper := func(f func(o *Observation)) Observation {
		data, _ := json.Marshal(good)
		var o Observation
		require.NoError(t, json.Unmarshal(data, &o))
		f(&o)
		return o
	}
	tests := []struct {
		name string
		obs  Observation
		msg  string
	}{
		{"another learner's", tamper(func(o *Observation) { o.Learner = "grace" }), `for learner "grace", not of`},
		{"another exercise's", tamper(func(o *Observation) { o.ID = "10-kernels/aos-soa" }), `the observation is of "10-kernels/aos-soa"`},
		{"output cut short", tamper(func(o *Observation) { o.Outputs["out"] = o.Outputs["out"][:8] }), "out[0] is 8 bytes"},
		{"output missing", tamper(func(o *Observation) { delete(o.Outputs, "out") }), "out[0] is no output"},
		{"one element changed", tamper(func(o *Observation) { o.Outputs["out"][4] ^= 1 }), "out[1] is"},
		{"no counts", tamper(func(o *Observation) { o.Metrics = nil }), "fewer than the"},
		{"counts halved", tamper(func(o *Observation) { o.Metrics[metrics.StSectors] /= 2 }), metrics.StSectors},
		{"a fault", tamper(func(o *Observation) { o.Fault = "simt: kernel panicked: SCORE 3/3" }), "SCORE 3/3"},
		{"a fault past MaxText", tamper(func(o *Observation) { o.Fault = strings.Repeat("x", 1<<20) }), "bytes more)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep := Judge(id, "ada", tt.obs)
			assert.Zero(t, rep.Points)
			assert.False(t, rep.Pass)
			msg := rep.Error
			if rep.Mismatch != nil {
				msg += rep.Mismatch.String()
			}
			assert.Contains(t, msg, tt.msg)
			assert.LessOrEqual(t, len(rep.Error), MaxText)
		})
	}
}

// Observe turns every way a learner's kernel is of the wrong type into
// its Error: a nil, a func of another signature, an order for a kernel
// that has none, an order of the wrong type.
func TestObserveWrongTypes(t *testing.T) {
	tests := []struct {
		name, id      string
		kernel, order any
		msg           string
	}{
		{"nil kernel", "10-kernels/strided-copy", nil, nil, "the kernel is nil"},
		{"another signature", "10-kernels/strided-copy", func() {}, nil, "kernel is func(), want"},
		{"an order for a copy", "10-kernels/strided-copy", answers["10-kernels/strided-copy"].solution, sortKeys, "an order is a gather's host step"},
		{"an order of the wrong type", "10-kernels/gather", gatherStarter, func(keys []int64) []int64 { return keys }, "the order is func([]int64) []int64, want func([]int32) []int32"},
		{"a nil order func", "10-kernels/gather", gatherStarter, (func([]int32) []int32)(nil), "Gather.Order is nil"},
		{"an order that is no func", "10-kernels/gather", gatherStarter, 3, "the order is int, want"},
		{"unknown exercise", "10-kernels/nope", nil, nil, "unknown exercise"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obs := Observe(tt.id, "ada", tt.kernel, tt.order)
			assert.Contains(t, obs.Error+obs.Fault, tt.msg)
			rep := Judge(tt.id, "ada", obs)
			assert.Zero(t, rep.Points)
			assert.Contains(t, rep.Error, tt.msg)
		})
	}
}

// FuzzJudge: whatever a child writes, reading and judging it never
// panics, and its points are within the exercise's.
func FuzzJudge(f *testing.F) {
	const id = "10-kernels/strided-copy"
	f.Add([]byte(`{"id":"10-kernels/strided-copy","learner":"ada","error":"","fault":"","outputs":{"out":"AAAA"},"metrics":{},"why":{}}`))
	f.Add([]byte(`{"id":"10-kernels/strided-copy","learner":"ada","outputs":null,"metrics":{"l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum":-1}}`))
	f.Add([]byte(`{"id":1}`))
	f.Add([]byte(`{"id":"10-kernels/strided-copy","learner":"ada"} {}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		obs, err := ParseObservation(data)
		if err != nil {
			return
		}
		rep := Judge(id, "ada", obs)
		if rep.Points < 0 || rep.Points > rep.MaxPoints {
			t.Fatalf("points %d of %d", rep.Points, rep.MaxPoints)
		}
		if rep.Points > 0 && !rep.Correct {
			t.Fatalf("points %d for a wrong output", rep.Points)
		}
	})
}
