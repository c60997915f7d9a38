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
	batchDir = flag.String("batch-dir", "", "TestWriteBatch writes a generated batch of submissions here")
	batchN   = flag.Int("batch-n", 2000, "notebooks in a generated batch")
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
func TestWriteBatch(t *testing.T) {
	if *batchDir == "" {
		t.Skip("give -batch-dir to write a generated batch")
	}
	writeBatch(t, *batchDir, *batchN)
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
