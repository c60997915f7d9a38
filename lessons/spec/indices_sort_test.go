package spec

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
)

// countingSort must give exactly what a comparison sort gives, for random
// values and for values repeated past its byte-wide counts (the fallback).
func TestCountingSortSorts(t *testing.T) {
	for _, n := range []int64{1, 2, 3, 31, 1 << 16, 1<<16 + 1, 100003, 1 << 20} {
		rng := rand.New(rand.NewPCG(uint64(n), 7))
		a := make([]int32, n)
		for i := range a {
			a[i] = rng.Int32N(int32(n))
		}
		want := slices.Clone(a)
		slices.Sort(want)
		countingSort(a, n)
		assert.Equal(t, want, a, "n = %d", n)
	}
	// 300 copies of 5 and one of 0..9: 5's count passes 255.
	a := make([]int32, 0, 310)
	for range 300 {
		a = append(a, 5)
	}
	for v := range int32(10) {
		a = append(a, 9-v)
	}
	want := slices.Clone(a)
	slices.Sort(want)
	countingSort(a, 10)
	assert.Equal(t, want, a, "a value repeated 300 times")
}
