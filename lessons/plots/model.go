package plots

import (
	"fmt"
	"slices"

	"github.com/coalescing-course/coalesce/lessons/spec"
)

// Strides are the strides of the stride charts, in elements: 1 to 128,
// powers of two.
var Strides = []int64{1, 2, 4, 8, 16, 32, 64, 128}

// ElemSizes are the element sizes of the stride charts, in bytes.
var ElemSizes = []int{1, 2, 4, 8, 16}

// StructSizes are the struct sizes of the struct charts: 4 to 128 bytes,
// every multiple of 4.
var StructSizes = func() []int {
	var s []int
	for b := 4; b <= 128; b += 4 {
		s = append(s, b)
	}
	return s
}()

// Base specs of the charts. The L1 figures (sectors, efficiency) do not
// depend on n once a launch has full warps, so the model charts use small
// launches that predict in milliseconds; the bandwidth and DRAM charts use
// the launches of the recorded sweep (cuda/reference/sweep.jsonl), buffers
// several times the L2, because time and DRAM traffic depend on n.
var (
	StrideBase         = mustSpec(`{"kernel":"strided_copy","n":1048576}`)
	StructBase         = mustSpec(`{"kernel":"update_x_aos","n":1048576}`)
	MeasuredStrideBase = mustSpec(`{"kernel":"strided_copy","n":67108864}`)
	MeasuredStructBase = mustSpec(`{"kernel":"update_x_aos","n":16777216}`)
)

func mustSpec(js string) spec.Spec {
	s, err := spec.Parse([]byte(js))
	if err != nil {
		panic(err)
	}
	return s
}

// isStrided reports whether k is one of the strided kernels.
func isStrided(k spec.Kernel) bool {
	return k == spec.StridedCopy || k == spec.StridedRead || k == spec.StridedWrite
}

// StrideSpecs returns base at every element size and stride, element size
// first. base must be a strided_copy, strided_read or strided_write spec;
// elemSizes may be nil for base's own.
func StrideSpecs(base spec.Spec, elemSizes []int, strides []int64) ([]spec.Spec, error) {
	if !isStrided(base.Kernel) {
		return nil, fmt.Errorf("plots: stride charts sweep strided_copy, strided_read or strided_write, not %s", base.Kernel)
	}
	if len(strides) == 0 {
		return nil, fmt.Errorf("plots: no strides to sweep")
	}
	if elemSizes == nil {
		elemSizes = []int{base.ElemBytes}
	}
	var out []spec.Spec
	for _, e := range elemSizes {
		for _, st := range strides {
			s := base
			s.ElemBytes, s.Stride = e, st
			if err := s.Validate(); err != nil {
				return nil, wrap(err)
			}
			out = append(out, s)
		}
	}
	return out, nil
}

// StructSpecs returns base, an update_x_aos spec, at every struct size.
// A field offset that no longer fits a smaller struct is an error.
func StructSpecs(base spec.Spec, structBytes []int) ([]spec.Spec, error) {
	if base.Kernel != spec.UpdateXAoS {
		return nil, fmt.Errorf("plots: struct charts sweep update_x_aos, not %s", base.Kernel)
	}
	if len(structBytes) == 0 {
		return nil, fmt.Errorf("plots: no struct sizes to sweep")
	}
	var out []spec.Spec
	for _, b := range structBytes {
		s := base
		s.StructBytes = b
		if err := s.Validate(); err != nil {
			return nil, wrap(err)
		}
		out = append(out, s)
	}
	return out, nil
}

// SoAOf returns the update_x_soa launch that does the work of the
// update_x_aos launch aos: the same n, block, device and L2 fetch.
func SoAOf(aos spec.Spec) spec.Spec {
	return spec.Spec{Kernel: spec.UpdateXSoA, N: aos.N, Block: aos.Block, L2Fetch: aos.L2Fetch, Device: aos.Device}
}

// sortedUnique sorts a and drops repeats, in place.
func sortedUnique[T int | int64](a []T) []T {
	slices.Sort(a)
	return slices.Compact(a)
}
