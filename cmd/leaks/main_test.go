package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coalescing-course/coalesce/grader"
	"github.com/coalescing-course/coalesce/internal/attempt"
	"github.com/coalescing-course/coalesce/internal/notebook"
	"github.com/coalescing-course/coalesce/lessons/figures"
	"github.com/coalescing-course/coalesce/lessons/sectors"
	"github.com/coalescing-course/coalesce/lessons/spec"
)

// cell is one cell of a test notebook: markdown, or code with outputs.
type cell struct {
	md      string
	outputs []map[string]any
}

// write saves an executed notebook of the cells under dir as name.ipynb.
func write(t *testing.T, dir, name string, cells ...cell) string {
	t.Helper()
	var cs []map[string]any
	for _, c := range cells {
		if c.outputs == nil {
			cs = append(cs, map[string]any{"cell_type": "markdown", "metadata": map[string]any{}, "source": c.md})
			continue
		}
		cs = append(cs, map[string]any{"cell_type": "code", "metadata": map[string]any{}, "source": c.md, "outputs": c.outputs, "execution_count": 1})
	}
	data, err := json.Marshal(map[string]any{"nbformat": 4, "nbformat_minor": 5, "metadata": map[string]any{}, "cells": cs})
	require.NoError(t, err)
	path := filepath.Join(dir, name+".ipynb")
	require.NoError(t, os.WriteFile(path, data, 0o644))
	return path
}

// shows is a display output whose record says it showed tells.
func shows(t *testing.T, text string, tells ...grader.Tell) map[string]any {
	t.Helper()
	rec, err := json.Marshal(grader.Shown{Tells: tells})
	require.NoError(t, err)
	return map[string]any{"output_type": "display_data", "metadata": map[string]any{}, "data": map[string]any{"text/plain": text, grader.ShownMIMEType: string(rec)}}
}

func stream(text string) map[string]any {
	return map[string]any{"output_type": "stream", "name": "stdout", "text": text}
}

// answered is a Check output that recorded an attempt at id.
func answered(t *testing.T, id string) map[string]any {
	t.Helper()
	r := attempt.Record{}.Add(id, 1, mustTime(t))
	js, err := json.Marshal(r)
	require.NoError(t, err)
	return map[string]any{"output_type": "display_data", "metadata": map[string]any{}, "data": map[string]any{"text/plain": id + ": WRONG", attempt.MIMEType: string(js)}}
}

func sectorsOf(t *testing.T, js string) grader.Tell {
	t.Helper()
	s, err := spec.Parse([]byte(js))
	require.NoError(t, err)
	p, err := sectors.Model(s)
	require.NoError(t, err)
	v := figures.Model(p)
	x, err := figures.LdSectorsPerRequest.Of(v)
	require.NoError(t, err)
	return grader.Tell{Spec: s, Figure: figures.LdSectorsPerRequest.Name, Judge: grader.Model, Value: x, Counts: grader.CountsOf(v)}
}

func TestRun(t *testing.T) {
	stride32 := sectorsOf(t, `{"kernel":"strided_copy","n":1048576,"stride":32}`)
	check := func(id string) string { return `lab.Check("` + id + `", lab.YourPrediction)` }
	tests := []struct {
		name  string
		nbs   func(dir string) []string
		leaks []string // what each leak line must contain, in order
	}{
		{"a value of the question's launch, shown after its Check, not answered", func(dir string) []string {
			return []string{write(t, dir, "03-strided", cell{md: check("03-strided/sectors-stride-32"), outputs: []map[string]any{}},
				cell{md: "lab.Compare(...)", outputs: []map[string]any{shows(t, "stride 32  32", stride32)}})}
		}, []string{"03-strided.ipynb: cell 2: it shows ld_sectors_per_request of strided_copy, stride 32, n 2^20 (model) = 32, which tells 03-strided/sectors-stride-32"}},
		{"answered first, it may show", func(dir string) []string {
			return []string{write(t, dir, "03-strided", cell{md: `lab.Check("03-strided/sectors-stride-32", 32)`, outputs: []map[string]any{answered(t, "03-strided/sectors-stride-32")}},
				cell{md: "lab.Compare(...)", outputs: []map[string]any{shows(t, "stride 32  32", stride32)}})}
		}, nil},
		{"an earlier lesson's question is the past", func(dir string) []string {
			return []string{write(t, dir, "05-aos-soa", cell{md: "lab.Compare(...)", outputs: []map[string]any{shows(t, "stride 32  32", stride32)}})}
		}, nil},
		{"prose states an answer before its question, not after", func(dir string) []string {
			return []string{write(t, dir, "03-strided", cell{md: "At stride 32 a request touches 32 sectors."},
				cell{md: check("03-strided/sectors-stride-32"), outputs: []map[string]any{}},
				cell{md: "So 32 sectors it was."})}
		}, []string{`cell 1: the text states "At stride 32 a request touches 32 sectors.", which tells 03-strided/sectors-stride-32`}},
		{"a cell's own printing: a distinctive number of a later lesson; a small one is that lesson's own", func(dir string) []string {
			return []string{write(t, dir, "05-aos-soa", cell{md: `fmt.Println(...)`, outputs: []map[string]any{stream("2,097,152 requests, and 4 sectors per request\n")}})}
		}, []string{`cell 1: the text states coalesced_copy, n 2^26's value: "2,097,152 requests, and 4 sectors per request", which tells 06-vectorized/requests-ratio`,
			`cell 1: the text states "2,097,152 requests, and 4 sectors per request", which tells 07-ncu-metric/ld-requests-coalesced`}},
		{"half of a ratio, printed with its unit", func(dir string) []string {
			return []string{write(t, dir, "09-matrix", cell{md: `fmt.Printf(...)`, outputs: []map[string]any{stream("strided write (transpose_coalesced_read):  283.0 µs\n")}})}
		}, []string{"transpose_coalesced_read, 4096x4096's value"}},
		{"the device's fetch granularity in prose, not a comparison of granularities", func(dir string) []string {
			return []string{write(t, dir, "05-aos-soa", cell{md: "Each lane has a 64-byte fetch block to itself."},
				cell{md: "How many more DRAM bytes with the granularity at 64 bytes than at 32 bytes?"})}
		}, []string{"cell 1: the text states the device's l2_fetch_granularity", "cell 1: the text states the device's l2_fetch_granularity"}},
		{"a table cell no tell names, read with its column's unit", func(dir string) []string {
			return []string{write(t, dir, "09-matrix", cell{md: "t.Show()", outputs: []map[string]any{untagged(t, "283.0", "time (µs)")}})}
		}, []string{`a table cell "283.0" under "time (µs)" of unknown origin`}},
		{"an id is no number", func(dir string) []string {
			return []string{write(t, dir, "01-sectors", cell{md: "See 01-sectors/sectors-byte."})}
		}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := run(tt.nbs(t.TempDir()), &out, &errOut)
			require.Empty(t, errOut.String())
			lines := strings.Split(strings.TrimSpace(out.String()), "\n")
			if len(tt.leaks) == 0 {
				assert.Equal(t, 0, code, out.String())
				return
			}
			assert.Equal(t, 1, code)
			require.Len(t, lines, len(tt.leaks)+1, out.String())
			for i, want := range tt.leaks {
				assert.Contains(t, lines[i], want)
			}
			assert.Contains(t, lines[len(lines)-1], "found")
		})
	}
}

func untagged(t *testing.T, text, column string) map[string]any {
	t.Helper()
	rec, err := json.Marshal(grader.Shown{Untagged: []grader.Untagged{{Column: column, Text: text}}})
	require.NoError(t, err)
	return map[string]any{"output_type": "display_data", "metadata": map[string]any{}, "data": map[string]any{"text/plain": text, grader.ShownMIMEType: string(rec)}}
}

func TestUsage(t *testing.T) {
	var out, errOut bytes.Buffer
	assert.Equal(t, 2, run(nil, &out, &errOut))
	assert.Equal(t, 2, run([]string{filepath.Join(t.TempDir(), "none.ipynb")}, &out, &errOut))
}

// The numbers check reads the same records: one name for their type.
func TestOneMIMEType(t *testing.T) {
	assert.Equal(t, grader.ShownMIMEType, notebook.ShownMIMEType)
}

func mustTime(t *testing.T) time.Time {
	t.Helper()
	return time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
}
