package exercises

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"

	"github.com/coalescing-course/coalesce/lessons/metrics"
	"github.com/coalescing-course/coalesce/lessons/sectors"
	"github.com/coalescing-course/coalesce/lessons/simt"
)

// GatherKernel is the kernel of a Gather.
type GatherKernel = func(t *simt.Thread, table *simt.Global[float32], keys, outKey *simt.Global[int32], outVal *simt.Global[float32], n int)

// Gather is an answer to 10-kernels/gather: a host step, then a kernel.
// Order runs on the CPU before the launch: it gets the n keys and
// returns them in the order the kernel's threads are to take them (the
// same keys, each as often: a reordering); the kernel's keys buffer holds
// what it returns.
type Gather struct {
	Order  func(keys []int32) []int32
	Kernel GatherKernel
}

type gatherImpl struct{}

func gather() *Exercise {
	return &Exercise{
		ID:    "10-kernels/gather",
		Title: "A gather with its keys sorted",
		Goal: "Look up n keys in a table of m floats: for every key k, write the pair (k, table[k]), the key to " +
			"out_key and the value to out_val at the same index. The pairs may come in any order: the check " +
			"takes them as a multiset. The keys are scattered over the table, so a warp's 32 lookups touch up " +
			"to 32 sectors. Your answer is a Gather: Order, run on the host before the launch, reorders the keys " +
			"so that the 32 keys a warp looks up lie close together (sort them, or bucket them by sector); the " +
			"kernel then looks them up. Targets: load sectors no more than the keys' own plus the table's for the " +
			"keys sorted; store sectors no more than the two outputs fill.",
		Signature: "exercises.Gather{Order: func(keys []int32) []int32, Kernel: func(t *simt.Thread, table *simt.Global[float32], " +
			"keys, outKey *simt.Global[int32], outVal *simt.Global[float32], n int)}",
		Metrics: []string{metrics.LdSectors, metrics.StSectors},
		Params: []Param{
			{Name: "m", Doc: "floats in the table", Min: 8192, Max: 65536, Default: 32768},
			{Name: "n", Doc: "keys to look up, from m to 4m", Min: 8192, Max: 4 * 65536, Default: 65536},
		},
		Starter:   Gather{Order: gatherStarterOrder, Kernel: gatherStarter},
		StarterGo: starterSource("gatherStarterOrder", "gatherStarter"),
		impl:      gatherImpl{},
	}
}

func (gatherImpl) typ() reflect.Type { return reflect.TypeFor[Gather]() }

// draw draws m, then n from m to 4m: the Params' range of n is what that
// gives for every m.
func (gatherImpl) draw(r *rand.Rand, ps params) map[string]int {
	m := ps.draw(r, "m")
	return map[string]int{"m": m, "n": between(r, m, 4*m)}
}

func (gatherImpl) valid(p map[string]int) error {
	if p["n"] < p["m"] || p["n"] > 4*p["m"] {
		return fmt.Errorf("n=%d: want m (%d) to 4m", p["n"], p["m"])
	}
	return nil
}

// sortedSectors returns the table sectors that looking the keys up costs
// with the keys sorted, 32 a warp: each warp's distinct sectors. Sorting
// by sector alone (key/8) gives the same sequence of sectors, and so the
// same count.
func sortedSectors(keys []int32) int64 {
	s := slices.Clone(keys)
	slices.Sort(s)
	var n int64
	const per = sectors.SectorBytes / 4
	for w := 0; w < len(s); w += sectors.WarpSize {
		last := int32(-1)
		for _, k := range s[w:min(w+sectors.WarpSize, len(s))] {
			if k/per != last {
				n++
				last = k / per
			}
		}
	}
	return n
}

// tableSectors returns the table sectors some key lies in: what any order
// of the lookups loads at least.
func tableSectors(keys []int32) int64 {
	const per = sectors.SectorBytes / 4
	seen := map[int32]bool{}
	for _, k := range keys {
		seen[k/per] = true
	}
	return int64(len(seen))
}

// nonZero counts the keys that are not 0: out_key starts zeroed, so
// only those must be stored.
func nonZero(keys []int32) int64 {
	var n int64
	for _, k := range keys {
		if k != 0 {
			n++
		}
	}
	return n
}

// callOrder runs a learner's Order on a copy of keys, as a host step that
// may not use simt (simt.Host: the lookups are the kernel's, in the graded
// launch), turning a panic or a use of simt into an error.
func callOrder(order func([]int32) []int32, keys []int32) (out []int32, err error) {
	if order == nil {
		return nil, fmt.Errorf("exercises: 10-kernels/gather: Gather.Order is nil")
	}
	herr := simt.Host("Gather.Order", func() {
		defer func() {
			if v := recover(); v != nil {
				out, err = nil, fmt.Errorf("exercises: 10-kernels/gather: Gather.Order panicked: %v", v)
			}
		}()
		out = order(slices.Clone(keys))
	})
	if herr != nil {
		return nil, fmt.Errorf("exercises: 10-kernels/gather: %w: Order, the host step, only reorders the keys; the lookups are the kernel's, in the launch that is graded", herr)
	}
	return out, err
}

// keyCounts counts each key of the table's m.
func keyCounts(keys []int32, m int) []int32 {
	c := make([]int32, m)
	for _, k := range keys {
		c[k]++
	}
	return c
}

func (gatherImpl) prepare(v Variant) *instance {
	m, n := v.Params["m"], v.Params["n"]
	r := v.rng()
	table := values(r, m)
	keys := make([]int32, n)
	for i := range keys {
		keys[i] = int32(r.IntN(m))
	}
	want := keyCounts(keys, m)
	ref := slices.Clone(table)
	outKey, outVal := make([]int32, n), make([]float32, n)
	tableG, outKeyG, outValG := simt.NewGlobal("table", table), simt.NewGlobal("out_key", outKey), simt.NewGlobal("out_val", outVal)
	// validKey says why an Order's result is not a reordering of the keys.
	validKey := func(got []int32) error {
		if len(got) != n {
			return fmt.Errorf("exercises: 10-kernels/gather: Gather.Order returned %d keys, want the %d it was given", len(got), n)
		}
		left := slices.Clone(want)
		for i, k := range got {
			if k < 0 || int(k) >= m || left[k] == 0 {
				return fmt.Errorf("exercises: 10-kernels/gather: Gather.Order returned key %d at %d, which is not among the keys (or more often than among them): return the keys it was given, reordered", k, i)
			}
			left[k]--
		}
		return nil
	}
	check := func(outputs map[string]any) *Mismatch {
		gk, mm := intsOut(outputs, "out_key", n)
		if mm != nil {
			return mm
		}
		gv, mm := floatsOut(outputs, "out_val", n)
		if mm != nil {
			return mm
		}
		left := slices.Clone(want)
		for i, k := range gk {
			if k < 0 || int(k) >= m || left[k] == 0 {
				return &Mismatch{Buffer: "out_key", Index: i, Got: fmt.Sprint(k), Want: "one of the keys",
					Why: "a key that is not among the keys, or more often than among them"}
			}
			left[k]--
			if gv[i] != ref[k] {
				return &Mismatch{Buffer: "out_val", Index: i, Got: fmt.Sprint(gv[i]), Want: fmt.Sprint(ref[k]),
					Why: fmt.Sprintf("out_val[%d] must be table[out_key[%d]] = table[%d]", i, i, k)}
			}
		}
		return nil
	}
	ideal := span(0, 4*int64(n))
	l := line(n)
	return &instance{
		launch: l,
		bind: func(kernel reflect.Value) (func(*simt.Thread), error) {
			g := kernel.Interface().(Gather)
			if g.Kernel == nil {
				return nil, fmt.Errorf("exercises: 10-kernels/gather: Gather.Kernel is nil")
			}
			ordered, err := callOrder(g.Order, keys)
			if err == nil {
				err = validKey(ordered)
			}
			if err != nil {
				return nil, err
			}
			keysG := simt.NewGlobal("keys", ordered)
			return func(t *simt.Thread) { g.Kernel(t, tableG, keysG, outKeyG, outValG, n) }, nil
		},
		outputs: map[string]any{"out_key": outKey, "out_val": outVal},
		inputs:  map[string]any{"table": table, "keys": keys},
		check:   check,
		// Every key, and the table's word at each: the keys buffer holds
		// the keys in Order's order, and table[k] is what any order loads.
		needs: func(loaded func(string, int) bool) (string, int, bool) {
			if buf, i, ok := loadedAll("keys", 0, n)(loaded); !ok {
				return buf, i, false
			}
			for _, k := range keys {
				if !loaded("table", int(k)) {
					return "table", int(k), false
				}
			}
			return "", 0, true
		},
		targets: []target{
			// The least: every key, and each table sector some key is in;
			// every value (none is 0) and every key that is not 0.
			{metrics.LdSectors, float64(ideal + sortedSectors(keys)), float64(ideal + tableSectors(keys))},
			{metrics.StSectors, float64(2 * ideal), float64(ideal) + sectorsOf(0, nonZero(keys))},
		},
		cuda: Problem{
			Name: "gather",
			Signature: "__global__ void gather(const float* __restrict__ table, const int* __restrict__ keys, " +
				"int* __restrict__ out_key, float* __restrict__ out_val, int n)",
			// The solution's body is the starter's: what changes is the
			// order of the keys (Problem.Ordered).
			Starter:  gatherBody,
			Solution: gatherBody,
			Wrong: `
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        int k = keys[i];
        out_key[i] = k;
        out_val[i] = table[k / 2];
    }
`,
			Args: []Arg{
				{Name: "table", CType: "const float*", ElemBytes: 4, Data: floatBytes(table)},
				{Name: "keys", CType: "const int*", ElemBytes: 4, Data: intBytes(keys)},
				{Name: "out_key", CType: "int*", ElemBytes: 4, Data: make([]byte, 4*n), Output: true},
				{Name: "out_val", CType: "float*", ElemBytes: 4, Data: make([]byte, 4*n), Output: true},
				{Name: "n", CType: "int", Value: int64(n)},
			},
			Grid: l.Grid, Block: l.Block,
			check:    check,
			validKey: validKey,
		},
	}
}

// gatherBody is the gather's CUDA body: thread i looks up keys[i].
const gatherBody = `
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        int k = keys[i];
        out_key[i] = k;
        out_val[i] = table[k];
    }
`
