package notebook

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		cells   []Cell
		md      Metadata
		wantErr error
		errText string
	}{
		{
			name:  "source as a list of lines",
			in:    `{"nbformat":4,"nbformat_minor":5,"metadata":{},"cells":[{"cell_type":"code","id":"a","source":["%%\n","x := 1\n"],"outputs":[]}]}`,
			cells: []Cell{{Index: 0, ID: "a", Type: Code, Source: "%%\nx := 1\n"}},
		},
		{
			name:  "source as one string, markdown and raw cells",
			in:    `{"nbformat":4,"nbformat_minor":2,"metadata":{},"cells":[{"cell_type":"markdown","source":"# T"},{"cell_type":"raw","source":[]},{"cell_type":"code","source":null}]}`,
			cells: []Cell{{Index: 0, Type: Markdown, Source: "# T"}, {Index: 1, Type: Raw}, {Index: 2, Type: Code}},
		},
		{
			name: "metadata: kernel, coalesce learner and lesson, authors",
			in: `{"nbformat":4,"nbformat_minor":5,"cells":[],"metadata":{"kernelspec":{"name":"gonb","language":"go","display_name":"Go (gonb)"},
				"language_info":{"name":"go"},"coalesce":{"learner":"  Ada Lovelace ","lesson":"03-strided"},"authors":[{"name":"A. L."},{"name":"B"}]}}`,
			cells: []Cell{},
			md: Metadata{KernelName: "gonb", KernelLanguage: "go", LanguageName: "go", Coalesce: true,
				Learner: "Ada Lovelace", Lesson: "03-strided", Authors: []string{"A. L.", "B"}},
		},
		{
			name:  "metadata of the wrong shape is left out, not an error",
			in:    `{"nbformat":4,"cells":[],"metadata":{"kernelspec":"gonb","coalesce":{"learner":7},"authors":"me"}}`,
			cells: []Cell{},
			md:    Metadata{Coalesce: true},
		},
		{
			name:  "a byte order mark is skipped",
			in:    "\xef\xbb\xbf" + `{"nbformat":4,"cells":[]}`,
			cells: []Cell{},
		},
		{name: "truncated JSON", in: `{"nbformat":4,"cells":[{"cell_type":"code",`, wantErr: ErrSyntax, errText: "line 1"},
		{name: "syntax error on line 3", in: "{\n\"nbformat\": 4,\n\"cells\": [}\n", wantErr: ErrSyntax, errText: "line 3, column 11"},
		{name: "empty file", in: ``, wantErr: ErrSyntax},
		{name: "a JSON list", in: `[1,2]`, wantErr: ErrNotNotebook, errText: "found a list"},
		{name: "no cells", in: `{"nbformat":4}`, wantErr: ErrNotNotebook, errText: "no cells field"},
		{name: "no nbformat", in: `{"cells":[]}`, wantErr: ErrNotNotebook, errText: "no nbformat field"},
		{name: "neither", in: `{"a":1}`, wantErr: ErrNotNotebook, errText: "no nbformat and cells"},
		{name: "nbformat 3", in: `{"nbformat":3,"worksheets":[],"cells":[]}`, wantErr: ErrVersion, errText: "nbformat 3, want 4"},
		{name: "nbformat a string", in: `{"nbformat":"4","cells":[]}`, wantErr: ErrNotNotebook, errText: "want an integer"},
		{name: "cells an object", in: `{"nbformat":4,"cells":{}}`, wantErr: ErrNotNotebook, errText: "cells is an object"},
		{name: "a cell that is a number", in: `{"nbformat":4,"cells":[{"cell_type":"code","source":""},3]}`, wantErr: ErrNotNotebook, errText: "cell 1"},
		{name: "a source that is a number", in: `{"nbformat":4,"cells":[{"cell_type":"code","source":3}]}`, wantErr: ErrNotNotebook, errText: "source is a number"},
		{name: "a source list with a number", in: `{"nbformat":4,"cells":[{"cell_type":"code","source":["a",1]}]}`, wantErr: ErrNotNotebook, errText: "cell 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			nb, err := Parse([]byte(tt.in))
			if tt.wantErr != nil {
				require.Error(t, err)
				assert.ErrorIs(t, err, tt.wantErr)
				var ne *Error
				assert.True(t, errors.As(err, &ne), "want a *notebook.Error, got %T", err)
				assert.Contains(t, err.Error(), tt.errText)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, 4, nb.Format)
			assert.Equal(t, tt.cells, nb.Cells)
			assert.Equal(t, tt.md, nb.Metadata)
		})
	}
}

func TestRead(t *testing.T) {
	small := `{"nbformat":4,"cells":[]}`
	t.Run("within the limit", func(t *testing.T) {
		_, err := Read(strings.NewReader(small), int64(len(small)))
		assert.NoError(t, err)
	})
	t.Run("over the limit", func(t *testing.T) {
		_, err := Read(strings.NewReader(small), int64(len(small)-1))
		assert.ErrorIs(t, err, ErrTooLarge)
	})
	t.Run("no limit", func(t *testing.T) {
		_, err := Read(strings.NewReader(small), 0)
		assert.NoError(t, err)
	})
}

func TestMetadataIsGo(t *testing.T) {
	tests := []struct {
		md   Metadata
		want bool
		desc string
	}{
		{Metadata{}, true, "none named"},
		{Metadata{KernelName: "gonb", KernelLanguage: "go"}, true, "gonb (go)"},
		{Metadata{KernelName: "gophernotes", KernelLanguage: "go"}, true, "gophernotes (go)"},
		{Metadata{LanguageName: "Go"}, true, "Go"},
		{Metadata{KernelName: "python3", KernelLanguage: "python"}, false, "python3 (python)"},
		{Metadata{KernelName: "ir"}, false, "ir"},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.md.IsGo())
			assert.Equal(t, tt.desc, tt.md.Kernel())
		})
	}
}

func TestSplitGoNB(t *testing.T) {
	tests := []struct {
		name    string
		src     string
		want    GoNB
		comment string
	}{
		{
			name: "declarations only",
			src:  "import \"fmt\"\n\nfunc f() {}",
			want: GoNB{Decls: "import \"fmt\"\n\nfunc f() {}"},
		},
		{
			name: "%% splits declarations from the body of main",
			src:  "import \"x\"\n%%\nx.Check(\"a\", 1)",
			want: GoNB{Decls: "import \"x\"\n\n", Body: "\n\nx.Check(\"a\", 1)", HasMain: true, Special: []int{2}},
		},
		{
			name: "%main works like %%, args after it too",
			src:  "%main -flag\ny()",
			want: GoNB{Decls: "\n", Body: "\ny()", HasMain: true, Special: []int{1}},
		},
		{
			name: "shell and magic lines are blanked, with their continuations",
			src:  "%goworkfix\n!echo a \\\n  b\nvar x = 1\n!*ls",
			want: GoNB{Decls: "\n\n\nvar x = 1\n", Special: []int{1, 2, 3, 5}},
		},
		{
			name: "the //gonb: prefix marks a special line",
			src:  "//gonb:%%\nf()",
			want: GoNB{Decls: "\n", Body: "\nf()", HasMain: true, Special: []int{1}},
		},
		{
			name: "an indented % is Go, not special",
			src:  "  %x",
			want: GoNB{Decls: "  %x"},
		},
		{
			name: "a lone % is not special",
			src:  "%",
			want: GoNB{Decls: "%"},
		},
		{
			name: "package clauses are dropped",
			src:  "package foo\nvar a int",
			want: GoNB{Decls: "\nvar a int"},
		},
		{name: "%%writefile makes the cell not Go", src: "%%writefile a.go\npackage a", want: GoNB{NotGo: true}},
		{name: "%%bash too", src: "%%bash\necho hi", want: GoNB{NotGo: true}},
		{name: "CRLF line ends", src: "%%\r\nf()\r\n", want: GoNB{Decls: "\n\n", Body: "\nf()\n", HasMain: true, Special: []int{1}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := SplitGoNB(tt.src)
			assert.Equal(t, tt.want, got)
			if !got.NotGo {
				assert.Equal(t, strings.Count(tt.src, "\n"), strings.Count(got.Decls, "\n"), "Decls keeps the cell's lines")
			}
		})
	}
}

// FuzzParse holds the reader to its contract on any input: an error is a
// *notebook.Error wrapping a sentinel, never a panic; a notebook it reads
// has cells indexed in order and reads the same once written back.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`{"nbformat":4,"nbformat_minor":5,"metadata":{"kernelspec":{"name":"gonb"}},"cells":[{"cell_type":"code","source":["%%\n","grader.Check(\"a/b\", 1)"]}]}`,
		`{"nbformat":4,"cells":[{"cell_type":"markdown","source":"x"}]}`,
		`{"nbformat":3}`, `[]`, `{`, ``, `null`, `{"nbformat":4,"cells":[1]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		nb, err := Parse(data)
		if err != nil {
			var ne *Error
			if !errors.As(err, &ne) {
				t.Fatalf("error %v is a %T, want *notebook.Error", err, err)
			}
			if !errors.Is(err, ErrSyntax) && !errors.Is(err, ErrNotNotebook) && !errors.Is(err, ErrVersion) {
				t.Fatalf("error %v wraps no sentinel", err)
			}
			return
		}
		for i, c := range nb.Cells {
			if c.Index != i {
				t.Fatalf("cell %d has index %d", i, c.Index)
			}
			_ = SplitGoNB(c.Source)
		}
		// Round trip: the cells written back as a notebook read the same.
		type cell struct {
			Type   string `json:"cell_type"`
			Source string `json:"source"`
		}
		out := struct {
			Format int    `json:"nbformat"`
			Cells  []cell `json:"cells"`
		}{Format: 4, Cells: []cell{}}
		for _, c := range nb.Cells {
			out.Cells = append(out.Cells, cell{c.Type, c.Source})
		}
		b, err := json.Marshal(out)
		if err != nil {
			t.Fatal(err)
		}
		nb2, err := Parse(b)
		if err != nil {
			t.Fatalf("re-reading %s: %v", b, err)
		}
		if len(nb2.Cells) != len(nb.Cells) {
			t.Fatalf("%d cells, then %d", len(nb.Cells), len(nb2.Cells))
		}
		for i := range nb.Cells {
			if nb.Cells[i].Source != nb2.Cells[i].Source || nb.Cells[i].Type != nb2.Cells[i].Type {
				t.Fatalf("cell %d changed: %q, then %q", i, nb.Cells[i].Source, nb2.Cells[i].Source)
			}
		}
	})
}

// TestOutputs: the outputs that carry a data object are kept, in order;
// a stream, an output whose data is not an object, and outputs that are
// not a list are left out without failing the notebook.
func TestOutputs(t *testing.T) {
	for _, tt := range []struct {
		name    string
		outputs string
		want    []string // each kept output's type
	}{
		{"data kept, stream left out", `[{"output_type":"stream","name":"stdout","text":"x"},{"output_type":"display_data","data":{"text/plain":"a","application/x+json":{"k":1}}}]`, []string{"display_data"}},
		{"data not an object", `[{"output_type":"display_data","data":"a"},{"output_type":"execute_result","data":{"text/plain":"b"}}]`, []string{"execute_result"}},
		{"outputs not a list", `{"a":1}`, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			nb, err := Parse([]byte(`{"nbformat":4,"nbformat_minor":5,"metadata":{},"cells":[{"cell_type":"code","source":"x","outputs":` + tt.outputs + `}]}`))
			require.NoError(t, err)
			var got []string
			for _, o := range nb.Cells[0].Outputs {
				got = append(got, o.Type)
			}
			assert.Equal(t, tt.want, got)
		})
	}
}

// TestReadStreamsOutputs: of an output's data only JSON values of at most
// 64 KiB are kept; a plot's bytes and an oversized JSON value are skipped,
// and the cell's source is read whatever comes after them.
func TestReadStreamsOutputs(t *testing.T) {
	big := strings.Repeat("A", 1<<20) // a 1 MiB plot, over 64 KiB
	tests := []struct {
		name string
		data string
		want []string // the MIME types kept
	}{
		{"a plot is skipped, a record kept", `{"image/png":"` + big + `","application/vnd.coalesce.attempt+json":{"id":"a/b"}}`, []string{"application/vnd.coalesce.attempt+json"}},
		{"JSON over 64 KiB is skipped", `{"application/json":"` + big + `"}`, nil},
		{"JSON of 64 KiB is kept", `{"application/json":"` + strings.Repeat("B", 64<<10-2) + `"}`, []string{"application/json"}},
		{"text is kept (the names a display shows)", `{"text/plain":"4"}`, []string{"text/plain"}},
		{"HTML is skipped", `{"text/html":"<b>4</b>"}`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := `{"nbformat":4,"cells":[{"cell_type":"code","outputs":[{"output_type":"display_data","data":` + tt.data + `}],"source":"%%\nx"}]}`
			nb, err := Read(strings.NewReader(in), 0)
			require.NoError(t, err)
			require.Len(t, nb.Cells, 1)
			assert.Equal(t, "%%\nx", nb.Cells[0].Source)
			require.Len(t, nb.Cells[0].Outputs, 1)
			var got []string
			for mime := range nb.Cells[0].Outputs[0].Data {
				got = append(got, mime)
			}
			assert.Equal(t, tt.want, got)
		})
	}
}

// TestReadTextBudget: a notebook's text/plain values are kept up to 1 MiB
// in all, so that outputs are never held whatever their number.
func TestReadTextBudget(t *testing.T) {
	text := strings.Repeat("t", 60<<10)
	var outs []string
	for range 40 { // 40 × 60 KiB: 2.4 MiB of text
		outs = append(outs, `{"output_type":"display_data","data":{"text/plain":"`+text+`"}}`)
	}
	nb, err := Parse([]byte(`{"nbformat":4,"cells":[{"cell_type":"code","source":"x","outputs":[` + strings.Join(outs, ",") + `]}]}`))
	require.NoError(t, err)
	kept := 0
	for _, o := range nb.Cells[0].Outputs {
		kept += len(o.Data["text/plain"])
	}
	assert.LessOrEqual(t, kept, 1<<20+60<<10+2, "at most one value past the budget")
	assert.Greater(t, kept, 1<<20-60<<10)
}

// TestReadErrors: a file over the limit is ErrTooLarge wherever the limit
// falls, and a syntax error in a file read as a stream has its line and
// column when the reader can seek.
func TestReadErrors(t *testing.T) {
	nb := `{"nbformat":4,"cells":[{"cell_type":"code","source":"x","outputs":[{"output_type":"stream","text":"` + strings.Repeat("y", 10000) + `"}]}]}`
	for _, limit := range []int64{1, 100, 5000, int64(len(nb)) - 1} {
		t.Run(fmt.Sprintf("limit %d", limit), func(t *testing.T) {
			_, err := Read(strings.NewReader(nb), limit)
			assert.ErrorIs(t, err, ErrTooLarge)
		})
	}
	t.Run("line of a syntax error", func(t *testing.T) {
		// x is on line 3 after `"cells":`, 8 bytes: column 9.
		_, err := Read(strings.NewReader("{\n\"nbformat\": 4,\n\"cells\":x}"), 0)
		assert.ErrorIs(t, err, ErrSyntax)
		assert.Contains(t, err.Error(), "line 3, column 9")
	})
	t.Run("trailing data", func(t *testing.T) {
		_, err := Parse([]byte(`{"nbformat":4,"cells":[]} []`))
		assert.ErrorIs(t, err, ErrSyntax)
	})
}
