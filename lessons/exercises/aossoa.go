package exercises

import (
	"fmt"
	"math/rand/v2"
	"reflect"

	"github.com/coalescing-course/coalesce/lessons/metrics"
	"github.com/coalescing-course/coalesce/lessons/simt"
)

// AoSSoAKernel is the Go signature of 10-kernels/aos-soa.
type AoSSoAKernel = func(t *simt.Thread, aos, soa, out *simt.Global[float32], n, fields, fx, fv int)

type aosSoAImpl struct{}

func aosSoA() *Exercise {
	return &Exercise{
		ID:    "10-kernels/aos-soa",
		Title: "An array of structs read as a struct of arrays",
		Goal: "n particles of `fields` floats each; field fx is the position x, field fv the velocity vx. " +
			"Write out[i] = x + vx of particle i. The same particles are given in two layouts: aos, an array of " +
			"structs (particle i's field f at aos[i*fields+f]), and soa, a struct of arrays (field f's n values " +
			"one after another: particle i's field f at soa[f*n+i]). The starter reads aos: a warp's lanes are a " +
			"struct apart, and each load touches up to a sector per lane. Read the fields where each one's values " +
			"lie side by side. Targets: load sectors no more than two arrays of n floats fill, store sectors no " +
			"more than out fills. Only out is compared.",
		Signature: "func(t *simt.Thread, aos, soa, out *simt.Global[float32], n, fields, fx, fv int)",
		Metrics:   []string{metrics.LdSectors, metrics.StSectors},
		Params: []Param{
			{Name: "n", Doc: "particles, a multiple of 256", Min: 8192, Max: 65536, Step: 256, Default: 32768},
			{Name: "fields", Doc: "floats in a particle's struct (12 to 64 bytes)", Min: 3, Max: 16, Default: 4},
			{Name: "fx", Doc: "the field that holds x", Min: 0, Max: 15, Default: 0},
			{Name: "fv", Doc: "the field that holds vx, not fx", Min: 0, Max: 15, Default: 3},
		},
		Starter:   AoSSoAKernel(aosSoAStarter),
		StarterGo: starterSource("aosSoAStarter"),
		impl:      aosSoAImpl{},
	}
}

func (aosSoAImpl) typ() reflect.Type { return reflect.TypeFor[AoSSoAKernel]() }

// draw draws fields first: fx and fv are two different fields of it, within
// the ranges the Params state for the largest struct.
func (aosSoAImpl) draw(r *rand.Rand, ps params) map[string]int {
	fields := ps.draw(r, "fields")
	fx := r.IntN(fields)
	fv := (fx + 1 + r.IntN(fields-1)) % fields
	return map[string]int{"n": ps.draw(r, "n"), "fields": fields, "fx": fx, "fv": fv}
}

func (aosSoAImpl) valid(p map[string]int) error {
	switch {
	case p["fx"] >= p["fields"] || p["fv"] >= p["fields"]:
		return fmt.Errorf("fx=%d, fv=%d: want fields of the %d", p["fx"], p["fv"], p["fields"])
	case p["fx"] == p["fv"]:
		return fmt.Errorf("fx=fv=%d: want two fields", p["fx"])
	}
	return nil
}

func (aosSoAImpl) prepare(v Variant) *instance {
	n, fields, fx, fv := v.Params["n"], v.Params["fields"], v.Params["fx"], v.Params["fv"]
	soa := values(v.rng(), n*fields)
	aos := make([]float32, n*fields)
	want := make([]float32, n)
	for i := range n {
		for f := range fields {
			aos[i*fields+f] = soa[f*n+i]
		}
		want[i] = soa[fx*n+i] + soa[fv*n+i] // whole numbers below 2^21: exact
	}
	out := make([]float32, n)
	aosG, soaG, outG := simt.NewGlobal("aos", aos), simt.NewGlobal("soa", soa), simt.NewGlobal("out", out)
	check := func(outputs map[string]any) *Mismatch {
		got, m := floatsOut(outputs, "out", n)
		if m != nil {
			return m
		}
		return sameFloats("out", got, want)
	}
	// n is a multiple of 256, so each field's array in soa starts on a
	// 32-byte boundary: two fields' n floats fill 2*n*4/32 sectors.
	ideal := span(0, 4*int64(n))
	l := line(n)
	return &instance{
		launch: l,
		bind: func(kernel reflect.Value) (func(*simt.Thread), error) {
			f := kernel.Interface().(AoSSoAKernel)
			return func(t *simt.Thread) { f(t, aosG, soaG, outG, n, fields, fx, fv) }, nil
		},
		outputs: map[string]any{"out": out},
		inputs:  map[string]any{"aos": aos, "soa": soa},
		check:   check,
		// Each particle's x and vx, from either layout.
		needs: func(loaded func(string, int) bool) (string, int, bool) {
			for i := range n {
				for _, f := range []int{fx, fv} {
					if !loaded("aos", i*fields+f) && !loaded("soa", f*n+i) {
						return "soa", f*n + i, false
					}
				}
			}
			return "", 0, true
		},
		// The least: x and vx of every particle, 8n bytes, in whichever layout.
		targets: []target{{metrics.LdSectors, float64(2 * ideal), float64(2 * ideal)}, {metrics.StSectors, float64(ideal), float64(ideal)}},
		cuda: Problem{
			Name: "aos_soa",
			Signature: "__global__ void aos_soa(const float* __restrict__ aos, const float* __restrict__ soa, " +
				"float* __restrict__ out, int n, int fields, int fx, int fv)",
			Starter: `
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = aos[i * fields + fx] + aos[i * fields + fv];
`,
			Solution: `
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = soa[fx * n + i] + soa[fv * n + i];
`,
			Wrong: `
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = soa[fx * n + i] + soa[fx * n + i];
`,
			Args: []Arg{
				{Name: "aos", CType: "const float*", ElemBytes: 4, Data: floatBytes(aos)},
				{Name: "soa", CType: "const float*", ElemBytes: 4, Data: floatBytes(soa)},
				{Name: "out", CType: "float*", ElemBytes: 4, Data: make([]byte, 4*n), Output: true},
				{Name: "n", CType: "int", Value: int64(n)},
				{Name: "fields", CType: "int", Value: int64(fields)},
				{Name: "fx", CType: "int", Value: int64(fx)},
				{Name: "fv", CType: "int", Value: int64(fv)},
			},
			Grid: l.Grid, Block: l.Block,
			check: check,
		},
	}
}
