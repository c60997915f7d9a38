package cuda

import (
	"encoding/json"
	"io/fs"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coalescing-course/coalesce/lessons/spec"
)

// TestKernelTablesAgree holds the CUDA sources to the kernel table of
// lessons/spec: every kernel has a body named k_<kernel> in kernels.cuh and
// an entry in the harness's kKernels, the harness has no kernel the course
// lacks, and the buffers each entry's prepare function asks the plan for
// are the ones spec.Buffers sizes. It reads the sources, so it fails here,
// without a GPU, when the two languages drift.
func TestKernelTablesAgree(t *testing.T) {
	read := func(name string) string {
		b, err := fs.ReadFile(sources, "src/"+name)
		require.NoError(t, err)
		return string(b)
	}
	kernels, harness := read("kernels.cuh"), read("harness.cu")

	table := regexp.MustCompile(`(?s)kKernels = \{(.*?)\n\};`).FindStringSubmatch(harness)
	require.NotNil(t, table, "no kKernels table in harness.cu")
	entries := regexp.MustCompile(`\{"(\w+)", (\w+)\}`).FindAllStringSubmatch(table[1], -1)
	prep := map[spec.Kernel]string{}
	for _, e := range entries {
		prep[spec.Kernel(e[1])] = e[2]
	}
	for _, k := range spec.Kernels {
		assert.Regexp(t, `__global__ void k_`+string(k)+`\(`, kernels, "kernels.cuh has no body for %s", k)
		assert.Contains(t, prep, k, "the harness's kKernels has no entry for %s", k)
	}
	for k := range prep {
		assert.True(t, slices.Contains(spec.Kernels, k), "the harness has %s, which lessons/spec does not", k)
	}

	// The buffers (r.buf, r.need) or plan keys (r.p.integer, text, flag) a
	// prepare function names, itself or through the functions it calls.
	named := func(fn string, what *regexp.Regexp) []string {
		var out []string
		seen := map[string]bool{}
		var walk func(string)
		walk = func(fn string) {
			if seen[fn] {
				return
			}
			seen[fn] = true
			body := functionBody(harness, fn)
			require.NotEmpty(t, body, "no function %s in harness.cu", fn)
			for _, m := range what.FindAllStringSubmatch(body, -1) {
				for _, g := range m[1:] {
					if g != "" {
						out = append(out, g)
					}
				}
			}
			for _, m := range regexp.MustCompile(`\b(prep_\w+|matrix_of)(?:<[^>]*>)?\(r`).FindAllStringSubmatch(body, -1) {
				if m[1] != "prep_update" {
					walk(m[1])
				}
			}
		}
		walk(fn)
		slices.Sort(out)
		return slices.Compact(out)
	}
	buffers := regexp.MustCompile(`r\.(?:buf|need)\("(\w+)"|prep_update\(r, "(\w+)"`)
	keys := regexp.MustCompile(`r\.p\.(?:integer|text|flag)\("(\w+)"`)
	served := map[string][]spec.Kernel{}
	for k, fn := range prep {
		served[fn] = append(served[fn], k)
	}
	isField := map[string]bool{}
	for _, k := range spec.Kernels {
		for _, f := range spec.Fields(k) {
			isField[f] = true
		}
	}
	// Keys every plan must hold: those prepare and allocate read for all.
	common := append(named("prepare", keys), named("allocate", keys)...)
	require.Contains(t, common, "grid_y", "prepare reads the launch's shape")
	for fn, ks := range served {
		uses := named(fn, buffers)
		var sized []string
		for _, k := range ks {
			s := smallSpec(t, k)
			// Every key the harness reads for k is one plan writes for it.
			line, err := plan(s, nil, "idx.bin")
			require.NoError(t, err)
			var written map[string]any
			require.NoError(t, json.Unmarshal(line, &written))
			for _, key := range append(named(fn, keys), common...) {
				if isField[key] && !spec.Takes(k, key) && !spec.Is2D(k) {
					continue // a field its family's function reads only for the kernels that take it
				}
				assert.Contains(t, written, key, "%s reads plan key %q for %s, which plan does not write", fn, key, k)
			}
			for _, b := range s.Buffers() {
				assert.Contains(t, uses, b.Name, "%s (%s) never asks the plan for buffer %s that spec.Buffers sizes", fn, k, b.Name)
				sized = append(sized, b.Name)
			}
		}
		for _, u := range uses {
			assert.Contains(t, sized, u, "%s asks the plan for a buffer %s that no kernel it serves (%s) has", fn, u, strings.Join(kernelNames(ks), ", "))
		}
	}
}

func kernelNames(ks []spec.Kernel) []string {
	out := make([]string, len(ks))
	for i, k := range ks {
		out[i] = string(k)
	}
	return out
}

// smallSpec is a small valid launch of k.
func smallSpec(t *testing.T, k spec.Kernel) spec.Spec {
	t.Helper()
	text := `{"kernel":"` + string(k) + `","n":64}`
	if spec.Is2D(k) {
		text = `{"kernel":"` + string(k) + `","rows":8,"cols":8}`
	}
	s, err := spec.Parse([]byte(text))
	require.NoError(t, err)
	return s
}

// functionBody returns the body of the C++ function fn defined in src
// ("static T fn(...) { body }"), found by matching braces; "" when there
// is none.
func functionBody(src, fn string) string {
	loc := regexp.MustCompile(`static \w+ ` + fn + `\([^)]*\) \{`).FindStringIndex(src)
	if loc == nil {
		return ""
	}
	depth := 1
	for i := loc[1]; i < len(src); i++ {
		switch src[i] {
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				return src[loc[1]:i]
			}
		}
	}
	return ""
}
