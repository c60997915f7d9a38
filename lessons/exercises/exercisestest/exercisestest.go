// Package exercisestest holds kernels a learner might write for the
// kernel exercises (lessons/exercises), for the tests of every package
// that judges or draws one: the solution, kernels right but slow for a
// reason the feedback must name, and kernels wrong. Each says what it
// does, so that a test's expectation can be worked out from it.
package exercisestest

import "github.com/coalescing-course/coalesce/lessons/simt"

// TransposeSolution is the transpose exercise's solution: a tile of 32
// rows of 33 words, read along its rows and written down its columns, its
// global accesses coalesced and its shared accesses free of conflicts.
func TransposeSolution(t *simt.Thread, in, out *simt.Global[float32], tile *simt.Shared[float32], rows, cols int) {
	tx, ty := t.ThreadIdx.X, t.ThreadIdx.Y
	c := t.BlockIdx.X*32 + tx
	for j := 0; j < 32; j += 8 {
		if r := t.BlockIdx.Y*32 + ty + j; r < rows && c < cols {
			tile.Store(t, (ty+j)*33+tx, in.Load(t, r*cols+c))
		}
	}
	t.Sync()
	r := t.BlockIdx.Y*32 + tx
	for j := 0; j < 32; j += 8 {
		if oc := t.BlockIdx.X*32 + ty + j; r < rows && oc < cols {
			out.Store(t, oc*rows+r, tile.Load(t, tx*33+ty+j))
		}
	}
}

// TransposeUnpadded is the solution with rows of 32 words: right, its
// global accesses coalesced, its shared loads 32-way conflicted.
func TransposeUnpadded(t *simt.Thread, in, out *simt.Global[float32], tile *simt.Shared[float32], rows, cols int) {
	tx, ty := t.ThreadIdx.X, t.ThreadIdx.Y
	c := t.BlockIdx.X*32 + tx
	for j := 0; j < 32; j += 8 {
		if r := t.BlockIdx.Y*32 + ty + j; r < rows && c < cols {
			tile.Store(t, (ty+j)*32+tx, in.Load(t, r*cols+c))
		}
	}
	t.Sync()
	r := t.BlockIdx.Y*32 + tx
	for j := 0; j < 32; j += 8 {
		if oc := t.BlockIdx.X*32 + ty + j; r < rows && oc < cols {
			out.Store(t, oc*rows+r, tile.Load(t, tx*32+ty+j))
		}
	}
}

// TransposeColumnStore writes the tile down its columns (word 32*tx in
// warp 0: all 32 lanes in bank 0) and reads it along its rows: its
// conflicts are the stores'.
func TransposeColumnStore(t *simt.Thread, in, out *simt.Global[float32], tile *simt.Shared[float32], rows, cols int) {
	tx, ty := t.ThreadIdx.X, t.ThreadIdx.Y
	c := t.BlockIdx.X*32 + tx
	for j := 0; j < 32; j += 8 {
		if r := t.BlockIdx.Y*32 + ty + j; r < rows && c < cols {
			tile.Store(t, tx*32+ty+j, in.Load(t, r*cols+c))
		}
	}
	t.Sync()
	r := t.BlockIdx.Y*32 + tx
	for j := 0; j < 32; j += 8 {
		if oc := t.BlockIdx.X*32 + ty + j; r < rows && oc < cols {
			out.Store(t, oc*rows+r, tile.Load(t, (ty+j)*32+tx))
		}
	}
}

// TransposeWrong copies without transposing.
func TransposeWrong(t *simt.Thread, in, out *simt.Global[float32], tile *simt.Shared[float32], rows, cols int) {
	c := t.BlockIdx.X*32 + t.ThreadIdx.X
	for j := 0; j < 32; j += 8 {
		if r := t.BlockIdx.Y*32 + t.ThreadIdx.Y + j; r < rows && c < cols {
			out.Store(t, r*cols+c, in.Load(t, r*cols+c))
		}
	}
}
