package gradebook

import (
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/coalescing-course/coalesce/grader"
	"github.com/coalescing-course/coalesce/grader/gradebook/answers"
	"github.com/coalescing-course/coalesce/grader/gradebook/intake"
)

var (
	batchDir     = flag.String("batch-dir", "", "TestWriteBatch writes a generated batch of submissions here")
	batchN       = flag.Int("batch-n", 2000, "notebooks in a generated batch")
	batchKernels = flag.Bool("batch-kernels", false, "TestWriteBatch also writes each learner a 10-kernels notebook with a lab.Try call for every kernel exercise, each kernel's source the learner's own")
)

// writeBatch writes n generated notebooks under dir: learners of eight
// notebooks each (one per lesson), in folders of their own, every notebook
// shaped like a lesson (prose, code, a saved plot, the lesson's Check
// calls with predictions right or wrong at random), and one in fifty
// broken in one of the ways the grader reports.
func writeBatch(t testing.TB, dir string, n int) {
	t.Helper()
	b, err := grader.Questions()
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(1, 2))
	png := base64.StdEncoding.EncodeToString(make([]byte, 12<<10)) // a saved 12 KB plot
	for i := range n {
		lesson := b.Lessons[i%len(b.Lessons)].ID
		learner := fmt.Sprintf("learner%04d", i/len(b.Lessons))
		var cells []map[string]any
		code := func(src string, outputs ...any) {
			cells = append(cells, map[string]any{"cell_type": "code", "execution_count": nil, "metadata": map[string]any{},
				"source": strings.SplitAfter(src, "\n"), "outputs": append([]any{}, outputs...)})
		}
		md := func(src string) {
			cells = append(cells, map[string]any{"cell_type": "markdown", "metadata": map[string]any{}, "source": strings.SplitAfter(src, "\n")})
		}
		code("%noautoget\n!*root=\"$(cd \"$GONB_DIR\" && go list -m -f '{{.Dir}}')\" && go work init . \"$root\"")
		code("import (\n\t\"fmt\"\n\n\t\"" + answers.ModulePath + "/grader" + "\"\n\t\"" + answers.ModulePath + "/lessons/sectors\"\n)")
		for j := range 10 {
			md(fmt.Sprintf("## Step %d\n\nA warp issues one instruction for its 32 lanes; the addresses decide how many sectors it touches.\nChange the stride and run the cell again: what happens to the sector count?\n", j))
			code(fmt.Sprintf("%%%%\ns, _ := spec.Parse([]byte(`{\"kernel\":\"strided_copy\",\"n\":1048576,\"stride\":%d}`))\np, _ := sectors.Model(s)\nfmt.Println(p.LdSectorsPerRequest)", j+1),
				map[string]any{"output_type": "stream", "name": "stdout", "text": []string{"4\n"}})
		}
		code("%%\nplot(\"stride\")", map[string]any{"output_type": "display_data", "metadata": map[string]any{}, "data": map[string]any{"image/png": png, "text/plain": "<plot>"}})
		for _, e := range b.OfLesson(lesson) {
			p := "1"
			if rng.IntN(2) == 0 {
				p = "32"
			}
			md("Predict before you run: " + e.Text)
			code("%%\n// Your prediction:\ngrader.Check(\"" + e.ID + "\", " + p + ")")
		}
		nb := map[string]any{"nbformat": 4, "nbformat_minor": 5, "cells": cells,
			"metadata": map[string]any{"kernelspec": map[string]any{"name": "gonb", "language": "go", "display_name": "Go (gonb)"},
				"coalesce": map[string]any{"learner": learner, "lesson": lesson}}}
		data, err := json.MarshalIndent(nb, "", " ")
		require.NoError(t, err)
		switch i % 50 {
		case 7:
			data = data[:len(data)/3] // malformed
		case 23:
			data = []byte(strings.Replace(string(data), `"gonb"`, `"python3"`, 1))
		}
		path := filepath.Join(dir, learner, lesson+".ipynb")
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, data, 0o644))
	}
}

// TestWriteBatch writes a generated batch for timing the command by hand:
//
//	go test ./grader -run TestWriteBatch -batch-dir /tmp/batch -batch-n 2000
//	time coalesce grade -out /tmp/grades /tmp/batch
//
// With -batch-kernels each learner also has a 10-kernels notebook (see
// writeKernels), for timing -kernels.
func TestWriteBatch(t *testing.T) {
	if *batchDir == "" {
		t.Skip("give -batch-dir to write a generated batch")
	}
	writeBatch(t, *batchDir, *batchN)
	if *batchKernels {
		writeKernels(t, *batchDir)
	}
}

// kernelAnswers are a learner's two ways with each kernel exercise: the
// starter's, and a fix (the gather's host step sorts its keys).
var kernelAnswers = []struct{ id, call, starter, fix string }{
	{"10-kernels/strided-copy", "stridedCopy",
		"func stridedCopy(t *simt.Thread, in, out *simt.Global[float32], n, k int) {\n\ti := t.BlockIdx.X*t.BlockDim.X + t.ThreadIdx.X\n\tfor j := 0; j < k; j++ {\n\t\tif e := i*k + j; e < n {\n\t\t\tout.Store(t, e, in.Load(t, e))\n\t\t}\n\t}\n}\n",
		"func stridedCopy(t *simt.Thread, in, out *simt.Global[float32], n, k int) {\n\tT := t.GridDim.X * t.BlockDim.X\n\tfor i := t.BlockIdx.X*t.BlockDim.X + t.ThreadIdx.X; i < n; i += T {\n\t\tout.Store(t, i, in.Load(t, i))\n\t}\n}\n"},
	{"10-kernels/aos-soa", "aosSoA",
		"func aosSoA(t *simt.Thread, aos, soa, out *simt.Global[float32], n, fields, fx, fv int) {\n\tif i := t.BlockIdx.X*t.BlockDim.X + t.ThreadIdx.X; i < n {\n\t\tout.Store(t, i, aos.Load(t, i*fields+fx)+aos.Load(t, i*fields+fv))\n\t}\n}\n",
		"func aosSoA(t *simt.Thread, aos, soa, out *simt.Global[float32], n, fields, fx, fv int) {\n\tif i := t.BlockIdx.X*t.BlockDim.X + t.ThreadIdx.X; i < n {\n\t\tout.Store(t, i, soa.Load(t, fx*n+i)+soa.Load(t, fv*n+i))\n\t}\n}\n"},
	{"10-kernels/transpose", "transpose",
		"func transpose(t *simt.Thread, in, out *simt.Global[float32], tile *simt.Shared[float32], rows, cols int) {\n\tc := t.BlockIdx.X*32 + t.ThreadIdx.X\n\tfor j := 0; j < 32; j += 8 {\n\t\tif r := t.BlockIdx.Y*32 + t.ThreadIdx.Y + j; r < rows && c < cols {\n\t\t\tout.Store(t, c*rows+r, in.Load(t, r*cols+c))\n\t\t}\n\t}\n}\n",
		"func transpose(t *simt.Thread, in, out *simt.Global[float32], tile *simt.Shared[float32], rows, cols int) {\n\ttx, ty := t.ThreadIdx.X, t.ThreadIdx.Y\n\tc := t.BlockIdx.X*32 + tx\n\tfor j := 0; j < 32; j += 8 {\n\t\tif r := t.BlockIdx.Y*32 + ty + j; r < rows && c < cols {\n\t\t\ttile.Store(t, (ty+j)*33+tx, in.Load(t, r*cols+c))\n\t\t}\n\t}\n\tt.Sync()\n\tr := t.BlockIdx.Y*32 + tx\n\tfor j := 0; j < 32; j += 8 {\n\t\tif oc := t.BlockIdx.X*32 + ty + j; r < rows && oc < cols {\n\t\t\tout.Store(t, oc*rows+r, tile.Load(t, tx*33+ty+j))\n\t\t}\n\t}\n}\n"},
	{"10-kernels/gather", "lab.Gather{Order: order, Kernel: gather}",
		"func order(keys []int32) []int32 { return keys }\n\nfunc gather(t *simt.Thread, table *simt.Global[float32], keys, outKey *simt.Global[int32], outVal *simt.Global[float32], n int) {\n\tif i := t.BlockIdx.X*t.BlockDim.X + t.ThreadIdx.X; i < n {\n\t\tk := keys.Load(t, i)\n\t\toutKey.Store(t, i, k)\n\t\toutVal.Store(t, i, table.Load(t, int(k)))\n\t}\n}\n",
		"func order(keys []int32) []int32 { slices.Sort(keys); return keys }\n\nfunc gather(t *simt.Thread, table *simt.Global[float32], keys, outKey *simt.Global[int32], outVal *simt.Global[float32], n int) {\n\tif i := t.BlockIdx.X*t.BlockDim.X + t.ThreadIdx.X; i < n {\n\t\tk := keys.Load(t, i)\n\t\toutKey.Store(t, i, k)\n\t\toutVal.Store(t, i, table.Load(t, int(k)))\n\t}\n}\n"},
	{"10-kernels/aligned-vector", "alignedVector",
		"func alignedVector(t *simt.Thread, in, out *simt.Global[float32], off, n int) {\n\ti := t.BlockIdx.X*t.BlockDim.X + t.ThreadIdx.X\n\tsrc, dst := simt.As[[4]float32](in, off), simt.As[[4]float32](out, off)\n\tif i < n/4 {\n\t\tdst.Store(t, i, src.Load(t, i))\n\t}\n\tif e := off + n/4*4 + i; i < n%4 {\n\t\tout.Store(t, e, in.Load(t, e))\n\t}\n}\n",
		"func alignedVector(t *simt.Thread, in, out *simt.Global[float32], off, n int) {\n\ti := t.BlockIdx.X*t.BlockDim.X + t.ThreadIdx.X\n\thead := min((4-off%4)%4, n)\n\tnv := (n - head) / 4\n\tsrc, dst := simt.As[[4]float32](in, off+head), simt.As[[4]float32](out, off+head)\n\tif i < nv {\n\t\tdst.Store(t, i, src.Load(t, i))\n\t}\n\tif i < head {\n\t\tout.Store(t, off+i, in.Load(t, off+i))\n\t}\n\ttail := off + head + 4*nv\n\tif i < n-head-4*nv {\n\t\tout.Store(t, tail+i, in.Load(t, tail+i))\n\t}\n}\n"},
}

// writeKernels gives every learner folder under dir a 10-kernels notebook:
// a lab.Try call for each kernel exercise, the starter or its fix at
// random, each kernel's body marked with the learner's name, so that no
// two learners' kernels are the same source (each is a build of its own).
func writeKernels(t testing.TB, dir string) {
	t.Helper()
	learners, err := os.ReadDir(dir)
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(3, 4))
	for _, l := range learners {
		if !l.IsDir() {
			continue
		}
		var cells []map[string]any
		code := func(src string) {
			cells = append(cells, map[string]any{"cell_type": "code", "execution_count": nil, "metadata": map[string]any{},
				"source": strings.SplitAfter(src, "\n"), "outputs": []any{}})
		}
		code("import (\n\t\"slices\"\n\n\t\"" + answers.ModulePath + "/lab\"\n\t\"" + answers.ModulePath + "/lessons/simt\"\n)\n\nvar _ = slices.Sort[[]int]")
		for _, k := range kernelAnswers {
			src := k.starter
			if rng.IntN(2) == 0 {
				src = k.fix
			}
			// The mark goes in the body: the source graded is the
			// declarations, whose comments are not theirs.
			src = strings.Replace(src, "int) {\n", "int) {\n\t_ = \""+l.Name()+"\"\n", 1)
			code(src + "%%\nlab.Try(\"" + k.id + "\", " + k.call + ")")
		}
		nb := map[string]any{"nbformat": 4, "nbformat_minor": 5, "cells": cells,
			"metadata": map[string]any{"kernelspec": map[string]any{"name": "gonb", "language": "go", "display_name": "Go (gonb)"},
				"coalesce": map[string]any{"learner": l.Name(), "lesson": "10-kernels"}}}
		data, err := json.MarshalIndent(nb, "", " ")
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, l.Name(), "10-kernels.ipynb"), data, 0o644))
	}
}

// BenchmarkFindCalls is the per-notebook work alone: parse one lesson
// notebook's JSON and read its calls.
func BenchmarkFindCalls(b *testing.B) {
	dir := b.TempDir()
	writeBatch(b, dir, 8)
	data, err := os.ReadFile(filepath.Join(dir, "learner0000", "03-strided.ipynb"))
	require.NoError(b, err)
	bank, err := grader.Questions()
	require.NoError(b, err)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		s := intake.Reader{Bank: bank}.Parse(intake.Input{Path: "x.ipynb"}, data)
		if len(s.Found.Calls) != 3 {
			b.Fatalf("%d calls", len(s.Found.Calls))
		}
	}
}
