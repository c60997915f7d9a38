package plots_test

import (
	"log"

	"github.com/coalescing-course/coalesce/lessons/plots"
	"github.com/coalescing-course/coalesce/lessons/simt"
)

// The kernel of the traced bank diagrams: one 32x32 tile of a transpose
// through a shared array of 32 rows of 32+pad words, on a block of 32x8
// threads. Its sites are named by this file's lines, which the goldens'
// titles show: moving the kernel moves them (regenerate, see golden_test.go).
func tracedTile(pad int) []simt.Traced {
	const n = 32
	in, out := make([]float32, n*n), make([]float32, n*n)
	gin, gout := simt.NewGlobal("in", in), simt.NewGlobal("out", out)
	tile := simt.NewShared[float32]("tile", n*(n+pad))
	r, err := simt.Launch{Grid: simt.Dim{X: 1}, Block: simt.Dim{X: 32, Y: 8}, Trace: 1}.Run(func(t *simt.Thread) {
		tx, ty := t.ThreadIdx.X, t.ThreadIdx.Y
		for j := 0; j < n; j += 8 {
			tile.Store(t, (ty+j)*(n+pad)+tx, gin.Load(t, (ty+j)*n+tx))
		}
		t.Sync()
		for j := 0; j < n; j += 8 {
			gout.Store(t, (ty+j)*n+tx, tile.Load(t, tx*(n+pad)+ty+j))
		}
	})
	if err != nil {
		log.Fatal(err)
	}
	return r.Trace
}

// firstShared returns the first traced shared load (or store) of warp 0.
func firstShared(trace []simt.Traced, store bool) simt.Traced {
	for _, tr := range trace {
		if tr.Warp == 0 && tr.Instruction.Shared && tr.Instruction.Store == store {
			return tr
		}
	}
	log.Fatalf("no shared store=%v traced", store)
	return simt.Traced{}
}

// A learner's transpose as its banks see it: the column read of an
// unpadded tile (lane l reads word 32*l: all 32 lanes in bank 0, 32
// wavefronts), the same read with a word of padding a row (word 33*l,
// bank l: 1 wavefront), and the row write (32 neighbouring words).
func ExampleTracedBankDiagram() {
	for _, d := range []struct {
		name  string
		pad   int
		store bool
	}{
		{"traced_banks_pad0_load", 0, false},
		{"traced_banks_pad1_load", 1, false},
		{"traced_banks_pad0_store", 0, true},
	} {
		p, err := plots.TracedBankDiagram(firstShared(tracedTile(d.pad), d.store))
		if err != nil {
			log.Fatal(err)
		}
		save(d.name+".png", plots.Banks, p)
	}
}
