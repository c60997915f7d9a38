package exercises

import (
	"fmt"
	"math/rand/v2"
	"reflect"

	"github.com/coalescing-course/coalesce/lessons/metrics"
	"github.com/coalescing-course/coalesce/lessons/simt"
)

// AlignedVectorKernel is the Go signature of 10-kernels/aligned-vector.
type AlignedVectorKernel = func(t *simt.Thread, in, out *simt.Global[float32], off, n int)

// vectorPad is how many floats each buffer has past the window: a store
// past its end lands there and shows.
const vectorPad = 4

type alignedVectorImpl struct{}

func alignedVector() *Exercise {
	return &Exercise{
		ID:    "10-kernels/aligned-vector",
		Title: "A misaligned vector copy made aligned",
		Goal: "Copy the window in[off : off+n] to out[off : off+n]; the rest of out stays 0. The launch has " +
			"ceil(n/4) threads, one float4 (simt.As[[4]float32]) each. The starter views the window from off as " +
			"float4s, but off is not a multiple of 4 floats, so every float4 is misaligned: the GPU refuses the " +
			"load (cudaErrorMisalignedAddress) and so does simt. Copy the few floats before the first 16-byte " +
			"boundary one by one, the middle as float4s, and the floats after the last whole float4 one by one. " +
			"Targets: load and store requests no more than the float4s of the middle take plus one each for the " +
			"head and the tail, and sectors no more than that copy touches.",
		Signature: "func(t *simt.Thread, in, out *simt.Global[float32], off, n int)",
		Metrics:   []string{metrics.LdRequests, metrics.LdSectors, metrics.StRequests, metrics.StSectors},
		Params: []Param{
			{Name: "off", Doc: "the window's first element, not a multiple of 4", Min: 1, Max: 63, Default: 3},
			{Name: "n", Doc: "floats in the window", Min: 50_000, Max: 300_000, Default: 100_001},
		},
		Starter:   AlignedVectorKernel(alignedVectorStarter),
		StarterGo: starterSource("alignedVectorStarter"),
		impl:      alignedVectorImpl{},
	}
}

func (alignedVectorImpl) typ() reflect.Type { return reflect.TypeFor[AlignedVectorKernel]() }

// draw moves an off that is a multiple of 4 on by 1 to 3: never past 63,
// the largest multiple of 4 in its range being 60.
func (alignedVectorImpl) draw(r *rand.Rand, ps params) map[string]int {
	off := ps.draw(r, "off")
	if off%4 == 0 {
		off += 1 + r.IntN(3)
	}
	return map[string]int{"off": off, "n": ps.draw(r, "n")}
}

func (alignedVectorImpl) valid(p map[string]int) error {
	if p["off"]%4 == 0 {
		return fmt.Errorf("off=%d: want an offset that is not a multiple of 4 floats", p["off"])
	}
	return nil
}

// vectorTargets returns the requests and sectors of one side (loads or
// stores) of the copy the targets are made of: a head of the floats up to
// the first 16-byte boundary, one instruction of warp 0; then nv float4s,
// a warp's 32 lanes 512 contiguous bytes; then the tail, one instruction.
func vectorTargets(off, n int64) (requests, sects int64) {
	head := min((4-off%4)%4, n)
	nv := (n - head) / 4
	rem := n - head - 4*nv
	start := 4 * (off + head)
	for w := int64(0); 32*w < nv; w++ {
		sects += span(start+512*w, start+16*min(32*(w+1), nv))
	}
	if head > 0 {
		sects += span(4*off, start)
	}
	if rem > 0 {
		sects += span(start+16*nv, 4*(off+n))
	}
	// The head and the tail are each an instruction the targets allow
	// for, whether or not this variant has one: a copy that peels to a
	// 32-byte boundary may have a tail where this one has none.
	return (nv+31)/32 + 2, sects
}

func (alignedVectorImpl) prepare(v Variant) *instance {
	off, n := v.Params["off"], v.Params["n"]
	size := off + n + vectorPad
	in, out := values(v.rng(), size), make([]float32, size)
	want := make([]float32, size)
	copy(want[off:off+n], in[off:off+n])
	inG, outG := simt.NewGlobal("in", append([]float32(nil), in...)), simt.NewGlobal("out", out)
	check := func(outputs map[string]any) *Mismatch {
		got, m := floatsOut(outputs, "out", size)
		if m != nil {
			return m
		}
		return sameFloats("out", got, want)
	}
	req, sec := vectorTargets(int64(off), int64(n))
	l := line((n + 3) / 4)
	return &instance{
		launch: l,
		bind: func(kernel reflect.Value) (func(*simt.Thread), error) {
			f := kernel.Interface().(AlignedVectorKernel)
			return func(t *simt.Thread) { f(t, inG, outG, off, n) }, nil
		},
		outputs: map[string]any{"out": out},
		inputs:  map[string]any{"in": in},
		check:   check,
		needs:   loadedAll("in", off, off+n),
		// The least: the sectors of the n floats copied, read and written.
		targets: []target{
			{metrics.LdRequests, float64(req), 0}, {metrics.LdSectors, float64(sec), sectorsOf(int64(off), int64(n))},
			{metrics.StRequests, float64(req), 0}, {metrics.StSectors, float64(sec), sectorsOf(int64(off), int64(n))},
		},
		cuda: Problem{
			Name:      "aligned_vector",
			Signature: "__global__ void aligned_vector(const float* __restrict__ in, float* __restrict__ out, int off, int n)",
			Starter: `
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    const float4* src = reinterpret_cast<const float4*>(in + off);
    float4* dst = reinterpret_cast<float4*>(out + off);
    if (i < n / 4) dst[i] = src[i];
    int e = off + n / 4 * 4 + i;
    if (i < n % 4) out[e] = in[e];
`,
			Solution: `
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int head = (4 - off % 4) % 4;
    if (head > n) head = n;
    int nv = (n - head) / 4;
    const float4* src = reinterpret_cast<const float4*>(in + off + head);
    float4* dst = reinterpret_cast<float4*>(out + off + head);
    if (i < nv) dst[i] = src[i];
    if (i < head) out[off + i] = in[off + i];
    int tail = off + head + 4 * nv;
    if (i < n - head - 4 * nv) out[tail + i] = in[tail + i];
`,
			Wrong: `
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int head = (4 - off % 4) % 4;
    if (head > n) head = n;
    int nv = (n - head) / 4;
    const float4* src = reinterpret_cast<const float4*>(in + off + head);
    float4* dst = reinterpret_cast<float4*>(out + off + head);
    if (i < nv) dst[i] = src[i];
    int tail = off + head + 4 * nv;
    if (i < n - head - 4 * nv) out[tail + i] = in[tail + i];
`,
			Args: []Arg{
				{Name: "in", CType: "const float*", ElemBytes: 4, Data: floatBytes(in)},
				{Name: "out", CType: "float*", ElemBytes: 4, Data: make([]byte, 4*size), Output: true},
				{Name: "off", CType: "int", Value: int64(off)},
				{Name: "n", CType: "int", Value: int64(n)},
			},
			Grid: l.Grid, Block: l.Block,
			check: check,
		},
	}
}
