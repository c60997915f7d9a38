package notebook

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func codeNotebook(t *testing.T, cells ...string) *Notebook {
	t.Helper()
	var cs []map[string]any
	for _, c := range cells {
		cs = append(cs, map[string]any{"cell_type": "code", "metadata": map[string]any{}, "source": c, "outputs": []any{}})
	}
	data, err := json.Marshal(map[string]any{"nbformat": 4, "nbformat_minor": 5, "metadata": map[string]any{}, "cells": cs})
	require.NoError(t, err)
	nb, err := Parse(data)
	require.NoError(t, err)
	return nb
}

// The 09-matrix case: a cell that uses metrics.LdSectors, imported by no
// cell, compiled only where goimports found the package.
func TestMissingImports(t *testing.T) {
	nb := codeNotebook(t,
		"import (\n\t\"fmt\"\n\n\t\"github.com/coalescing-course/coalesce/lab\"\n)\n\n%%\nlab.Status()",
		"%%\nm := lab.Must(lab.Measure(lab.Spec(`{}`)))\nfor _, l := range m.Launches {\n\tc := l.Metrics\n\tfmt.Println(c[metrics.LdSectors])\n}",
		"// a helper of the notebook's own\nfunc arithmetic(js string) { fmt.Println(strings.TrimSpace(js)) }",
		"import m2 \"github.com/coalescing-course/coalesce/lessons/metrics\"\n\ntype point struct{ x int }\n\nvar p point\n\n%%\nfmt.Println(m2.LdSectors, p.x, len(\"a\"))\narithmetic(\"x\")",
		"%%\nfmt.Println(metrics.All)",
		"%%writefile x.go\nfmt.Println(os.Args)",
		"%%\nthis does not parse",
	)
	got := MissingImports(nb)
	var s []string
	for _, m := range got {
		s = append(s, m.String())
	}
	assert.Equal(t, []string{
		"cell 2, line 5: metrics.LdSectors uses package metrics, which no import of this cell or an earlier one brings in",
		"cell 3, line 2: strings.TrimSpace uses package strings, which no import of this cell or an earlier one brings in",
		"cell 5, line 2: metrics.All uses package metrics, which no import of this cell or an earlier one brings in",
	}, s)
}
