package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRun(t *testing.T) {
	dir := t.TempDir()
	write := func(name, md, printed string) string {
		path := filepath.Join(dir, name)
		nb := `{"nbformat":4,"nbformat_minor":5,"metadata":{},"cells":[` +
			`{"cell_type":"markdown","metadata":{},"source":"` + md + `"},` +
			`{"cell_type":"code","metadata":{},"source":"lab.Measure(s)","outputs":[{"output_type":"stream","name":"stdout","text":"` + printed + `"}]}]}`
		require.NoError(t, os.WriteFile(path, []byte(nb), 0o644))
		return path
	}
	good := write("good.ipynb", "It reaches 251 GB/s.", "251 GB/s")
	bad := write("bad.ipynb", "It reaches 258 GB/s.", "251 GB/s")
	// Lesson 7 printed this once: 2,097,152 × 5 is 10,485,760.
	falseEq := write("eq.ipynb", "A total.", "2,097,152 requests × 5 sectors per request = 10,485,759 sectors")
	trueEq := write("eq-ok.ipynb", "A total.", "2,097,152 requests × 4.9999995 sectors per request = 10,485,759 sectors")
	for _, tc := range []struct {
		name       string
		args       []string
		code       int
		out, notIn string
	}{
		{"backed", []string{good}, 0, "", "251"},
		{"verbose lists what backs it", []string{"-v", good}, 0, `"251": printed 251 by cell 1`, ""},
		{"unbacked names notebook, cell, number and sentence", []string{good, bad}, 1,
			bad + `: cell 1 (markdown, index 0): "258" is in no code cell's source or output: "It reaches 258 GB/s."`, good},
		{"a false equation printed", []string{falseEq}, 1,
			falseEq + `: cell 2 (code, index 1) printed "2,097,152 requests × 5 sectors per request = 10,485,759": its terms work out to 10485760, not its result`, ""},
		{"a true one", []string{trueEq}, 0, "", "printed"},
		{"no notebook", nil, 2, "", ""},
		{"unreadable notebook", []string{filepath.Join(dir, "none.ipynb")}, 2, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			assert.Equal(t, tc.code, run(tc.args, &out, &errOut), "stderr: %s", errOut.String())
			assert.Contains(t, out.String(), tc.out)
			if tc.notIn != "" {
				assert.NotContains(t, out.String(), tc.notIn)
			}
		})
	}
}
