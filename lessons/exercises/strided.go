package exercises

import (
	"math/rand/v2"
	"reflect"
	"slices"

	"github.com/coalescing-course/coalesce/lessons/metrics"
	"github.com/coalescing-course/coalesce/lessons/simt"
)

// StridedCopyKernel is the Go signature of 10-kernels/strided-copy.
type StridedCopyKernel = func(t *simt.Thread, in, out *simt.Global[float32], n, k int)

type strided struct{}

func stridedCopy() *Exercise {
	return &Exercise{
		ID:    "10-kernels/strided-copy",
		Title: "A strided copy made coalesced",
		Goal: "Copy the n floats of in to out. The launch has ceil(n/k) threads, so each thread copies k elements; " +
			"the starter gives each thread k neighbouring elements, which puts the lanes of a warp k floats apart " +
			"and makes every load and store touch up to a sector per lane. Give the elements out so that at each step " +
			"the 32 lanes of a warp touch 32 neighbouring floats (thread i takes i, i+T, i+2T, ... for T threads " +
			"in all). Targets: load and store sectors no more than the sectors the n floats fill.",
		Signature: "func(t *simt.Thread, in, out *simt.Global[float32], n, k int)",
		Metrics:   []string{metrics.LdSectors, metrics.StSectors},
		Params: []Param{
			{Name: "n", Doc: "floats to copy", Min: 50_000, Max: 300_000, Default: 100_000},
			{Name: "k", Doc: "elements each thread copies", Min: 3, Max: 12, Default: 8},
		},
		Starter:   StridedCopyKernel(stridedCopyStarter),
		StarterGo: starterSource("stridedCopyStarter"),
		impl:      strided{},
	}
}

func (strided) typ() reflect.Type { return reflect.TypeFor[StridedCopyKernel]() }

func (strided) draw(r *rand.Rand, ps params) map[string]int {
	return map[string]int{"n": ps.draw(r, "n"), "k": ps.draw(r, "k")}
}

func (strided) valid(map[string]int) error { return nil }

func (strided) prepare(v Variant) *instance {
	n, k := v.Params["n"], v.Params["k"]
	in, out := values(v.rng(), n), make([]float32, n)
	want := slices.Clone(in) // the kernel may write to in: the reference is apart
	threads := (n + k - 1) / k
	inG, outG := simt.NewGlobal("in", in), simt.NewGlobal("out", out)
	check := func(outputs map[string]any) *Mismatch {
		got, m := floatsOut(outputs, "out", n)
		if m != nil {
			return m
		}
		return sameFloats("out", got, want)
	}
	// A copy moves every float once: at best each sector of in is loaded
	// once and each of out stored once.
	ideal := float64(span(0, 4*int64(n)))
	l := line(threads)
	return &instance{
		launch: l,
		bind: func(kernel reflect.Value) (func(*simt.Thread), error) {
			f := kernel.Interface().(StridedCopyKernel)
			return func(t *simt.Thread) { f(t, inG, outG, n, k) }, nil
		},
		outputs: map[string]any{"out": out},
		inputs:  map[string]any{"in": in},
		check:   check,
		needs:   loadedAll("in", 0, n),
		targets: []target{{metrics.LdSectors, ideal, ideal}, {metrics.StSectors, ideal, ideal}},
		cuda: Problem{
			Name:      "strided_copy",
			Signature: "__global__ void strided_copy(const float* __restrict__ in, float* __restrict__ out, int n, int k)",
			Starter: `
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    for (int j = 0; j < k; j++) {
        int e = i * k + j;
        if (e < n) out[e] = in[e];
    }
`,
			Solution: `
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int threads = gridDim.x * blockDim.x;
    for (int j = 0; j < k; j++) {
        int e = j * threads + i;
        if (e < n) out[e] = in[e];
    }
`,
			Wrong: `
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    for (int j = 0; j < k; j++) {
        int e = i * k + j;
        if (e < n - 1) out[e] = in[e];
    }
`,
			Args: []Arg{
				{Name: "in", CType: "const float*", ElemBytes: 4, Data: floatBytes(in)},
				{Name: "out", CType: "float*", ElemBytes: 4, Data: make([]byte, 4*n), Output: true},
				{Name: "n", CType: "int", Value: int64(n)},
				{Name: "k", CType: "int", Value: int64(k)},
			},
			Grid: l.Grid, Block: l.Block,
			check: check,
		},
	}
}
