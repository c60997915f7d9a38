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

// plainShuffle is Fisher-Yates as written in every textbook: the sequence
// shuffle must give, whatever it does to be quick.
func plainShuffle(rng *rand.Rand, a []int32) {
	for i := len(a) - 1; i > 0; i-- {
		j := rng.IntN(i + 1)
		a[i], a[j] = a[j], a[i]
	}
}

// shuffle draws ahead of its swaps over a large slice: the permutation
// must be the plain loop's, at every length about its thresholds.
func TestShuffle(t *testing.T) {
	for _, n := range []int{0, 1, 2, 3, 31, 32, 33, 64, 65, shuffleFar - 1, shuffleFar, shuffleFar + 1, shuffleFar + shuffleRing + 7, 3 << 20} {
		want, got := make([]int32, n), make([]int32, n)
		for i := range want {
			want[i], got[i] = int32(i), int32(i)
		}
		plainShuffle(rand.New(rand.NewPCG(7, uint64(n))), want)
		shuffle(rand.New(rand.NewPCG(7, uint64(n))), got)
		if !slices.Equal(want, got) {
			i := 0
			for want[i] == got[i] {
				i++
			}
			t.Fatalf("n = %d: a[%d] = %d, the plain loop's %d", n, i, got[i], want[i])
		}
	}
}

// BenchmarkShuffle is the draw of a 2^25-index random_perm gather, the
// prefetching shuffle beside the plain loop (go test -bench Shuffle).
func BenchmarkShuffle(b *testing.B) {
	a := make([]int32, 1<<25)
	for _, bm := range []struct {
		name string
		f    func(*rand.Rand, []int32)
	}{{"prefetch", shuffle}, {"plain", plainShuffle}} {
		b.Run(bm.name, func(b *testing.B) {
			for range b.N {
				for i := range a {
					a[i] = int32(i)
				}
				bm.f(rand.New(rand.NewPCG(1, uint64(len(a)))), a)
			}
		})
	}
}
