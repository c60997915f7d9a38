package simt_test

import (
	"testing"

	"github.com/coalescing-course/coalesce/lessons/simt"
)

// BenchmarkTransposeTiled is simt's speed goal: a 1024x1024 float tiled
// transpose (tile 32, blocks of 32x8, pad 1), every thread run and every
// access priced by the model, in one to two seconds on one core
// (go test -bench . -cpu 1 ./lessons/simt).
func BenchmarkTransposeTiled(b *testing.B) {
	const n, tile, rows = 1024, 32, 8
	in, out := make([]float32, n*n), make([]float32, n*n)
	sh := simt.NewShared[float32]("s", tile*(tile+1))
	k := transposeTiled(simt.NewGlobal("in", in), simt.NewGlobal("out", out), sh, n, n, tile, rows, 1)
	l := simt.Launch{Grid: simt.Dim{X: n / tile, Y: n / tile}, Block: simt.Dim{X: tile, Y: rows}}
	for b.Loop() {
		if _, err := l.Run(k); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n*n)*float64(b.N)/b.Elapsed().Seconds()/1e6, "Melements/s")
}

// BenchmarkCopy is a coalesced copy of 2^20 floats, one thread an element:
// well under a second.
func BenchmarkCopy(b *testing.B) {
	const n = 1 << 20
	in, out := make([]float32, n), make([]float32, n)
	k := coalescedCopy(simt.NewGlobal("in", in), simt.NewGlobal("out", out), n)
	l := simt.Launch{Grid: simt.Dim{X: n / 256}, Block: simt.Dim{X: 256}}
	for b.Loop() {
		if _, err := l.Run(k); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds()/1e6, "Mthreads/s")
}
