package answers

import (
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coalescing-course/coalesce/internal/attempt"
	"github.com/coalescing-course/coalesce/internal/notebook"
)

func TestParsePrediction(t *testing.T) {
	tests := []struct {
		src     string
		want    float64
		form    Form
		errText string
	}{
		{"32", 32, FormLiteral, ""},
		{"0.125", 0.125, FormLiteral, ""},
		{"-0.5", -0.5, FormLiteral, ""},
		{"+4", 4, FormLiteral, ""},
		{"(16)", 16, FormLiteral, ""},
		{"1e3", 1000, FormLiteral, ""},
		{"8.388608e6", 8388608, FormLiteral, ""},
		{"0x20", 32, FormLiteral, ""},
		{"1_000", 1000, FormLiteral, ""},
		{".5", 0.5, FormLiteral, ""},
		// Constant expressions, evaluated as Go evaluates untyped constants.
		{"64/2", 32, FormConstant, ""},
		{"1/8", 0, FormConstant, ""}, // integer division, as the running notebook saw it
		{"1.0/8", 0.125, FormConstant, ""},
		{"1/8.0", 0.125, FormConstant, ""},
		{"128 * 8 / 128", 8, FormConstant, ""},
		{"(4 + 4) * 2", 16, FormConstant, ""},
		{"7 % 4", 3, FormConstant, ""},
		{"-(2*3)", -6, FormConstant, ""},
		// Every constant form Go compiles, as the notebook saw it (issue 12):
		{"1 << 5", 32, FormConstant, ""},        // 2^5
		{"^1", -2, FormConstant, ""},            // untyped: -1-1
		{"float64(3)/2", 1.5, FormConstant, ""}, // typed float64: no integer division
		{"float64(32)", 32, FormConstant, ""},   //
		{"'a'", 97, FormConstant, ""},           // a rune constant is a number: ASCII a
		{"0b101 | 0o10", 13, FormConstant, ""},  // 5 | 8
		{"max(2, 3.5)", 3.5, FormConstant, ""},  //
		{"2i * 2i", -4, FormConstant, ""},       // i*i = -1, times 4
		{"123456789.125", 123456789.125, FormLiteral, ""},
		// Not numbers written in the call.
		{"x", 0, FormUnreadable, "x is a name"},
		{"math.Pi", 0, FormUnreadable, "math.Pi is a name"},
		{"f()", 0, FormUnreadable, "function call"},
		{"len(\"ab\")", 0, FormUnreadable, "function call"}, // constant in Go, but no number written
		{`"32"`, 0, FormUnreadable, "string"},
		// Go would not compile these: never a number.
		{"2i", 0, FormUnreadable, "complex"},
		{"1/0", 0, FormUnreadable, "divides by zero"},
		{"1.5 % 1", 0, FormUnreadable, "operator %"},
		{"1e400", 0, FormUnreadable, "overflows float64"},
		{"1 << 600", 0, FormUnreadable, "512-bit"},
		{"int(3)", 0, FormUnreadable, "type int"},
		{"float32(0.5)", 0, FormUnreadable, "type float32"},
		{"x * 2", 0, FormUnreadable, "x is a name"},
		{"[]int{1}", 0, FormUnreadable, "composite"},
		{"32)", 0, FormUnreadable, "not a Go expression"},
		{"", 0, FormUnreadable, "not a Go expression"},
		{strings.Repeat("(", 10000) + "1" + strings.Repeat(")", 10000), 0, FormUnreadable, "over the 4096 read"},
	}
	for _, tt := range tests {
		t.Run(tt.src, func(t *testing.T) {
			got, form, err := ParsePrediction(tt.src)
			assert.Equal(t, tt.form, form)
			if tt.errText != "" {
				require.Error(t, err)
				assert.ErrorIs(t, err, ErrPrediction)
				assert.Contains(t, err.Error(), tt.errText)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

// cellsNotebook builds a notebook of code cells, or of typed cells written
// "markdown:..." / "raw:...".
func cellsNotebook(cells ...string) *notebook.Notebook {
	nb := &notebook.Notebook{Format: 4}
	for i, c := range cells {
		typ := notebook.Code
		if t, rest, ok := strings.Cut(c, ":"); ok && (t == "markdown" || t == "raw") {
			typ, c = t, rest
		}
		nb.Cells = append(nb.Cells, notebook.Cell{Index: i, Type: typ, Source: c})
	}
	return nb
}

func TestFindCalls(t *testing.T) {
	type call struct {
		Cell, Line int
		ID         string
		Arg        string
		Value      float64
		Form       Form
		Problem    string // a substring of the problem; "" for none
	}
	tests := []struct {
		name     string
		cells    []string
		calls    []call
		mentions []Mention
		course   bool
	}{
		{
			name:   "lab.Check, as the lessons call it",
			cells:  []string{"import \"" + labPath + "\"\n%%\nlab.Check(\"03-strided/sectors-stride-32\", 32)\n"},
			calls:  []call{{0, 3, "03-strided/sectors-stride-32", "32", 32, FormLiteral, ""}},
			course: true,
		},
		{
			name:   "the body of main after %% (grader.Check, as the first build called it)",
			cells:  []string{"import \"" + graderPath + "\"\n%%\ngrader.Check(\"03-strided/sectors-stride-32\", 32)\n"},
			calls:  []call{{0, 3, "03-strided/sectors-stride-32", "32", 32, FormLiteral, ""}},
			course: true,
		},
		{
			name:  "a top-level statement, no %%: GoNB does not compile it, the call never ran",
			cells: []string{"grader.Check(\"a/b\", 4)"},
			calls: []call{{0, 1, "a/b", "4", 0, FormUnreadable, "never ran: a call outside %%"}},
		},
		{
			name:  "statements above %% never ran; those after it did",
			cells: []string{"x := 1\ngrader.Check(\"a/b\", 4)\n%%\ngrader.Check(\"a/c\", 8)"},
			calls: []call{
				{0, 2, "a/b", "4", 0, FormUnreadable, "never ran"},
				{0, 4, "a/c", "8", 8, FormLiteral, ""},
			},
		},
		{
			name:  "%main starts the body as %% does",
			cells: []string{"%main\ngrader.Check(\"a/b\", 1<<5)"},
			calls: []call{{0, 2, "a/b", "1<<5", 32, FormConstant, ""}},
		},
		{
			name:  "a package-level var initialiser runs: GoNB runs every cell that compiles",
			cells: []string{"var v = grader.Check(\"a/b\", 2)"},
			calls: []call{{0, 1, "a/b", "2", 2, FormLiteral, ""}},
		},
		{
			name: "a predeclared name the notebook redeclares is not Go's",
			cells: []string{
				"func max(a, b float64) float64 { return a }",
				"%%\ngrader.Check(\"a/b\", max(1, 2))\ngrader.Check(\"a/c\", float64(2))",
				"%%\nfloat64 := 3\ngrader.Check(\"a/d\", float64(2))",
			},
			calls: []call{
				{1, 2, "a/b", "max(1, 2)", 0, FormUnreadable, "max is declared in the notebook"},
				{1, 3, "a/c", "float64(2)", 2, FormConstant, ""},
				{2, 3, "a/d", "float64(2)", 0, FormUnreadable, "float64 is declared in the notebook"},
			},
		},
		{
			name:  "inside a function declaration, and as an argument",
			cells: []string{"func main() {\n\tv := grader.Check(\"a/b\", 0.5)\n\tfmt.Println(grader.Check(\"a/c\", 1))\n}"},
			calls: []call{{0, 2, "a/b", "0.5", 0.5, FormLiteral, ""}, {0, 3, "a/c", "1", 1, FormLiteral, ""}},
		},
		{
			name:  "special lines around the call",
			cells: []string{"%goworkfix\n!echo hi \\\n  there\n%%\n// predict first\ngrader.Check(\"a/b\", 16)"},
			calls: []call{{0, 6, "a/b", "16", 16, FormLiteral, ""}},
		},
		{
			name:  "a constant expression",
			cells: []string{"%%\ngrader.Check(\"a/b\", 64/2)"},
			calls: []call{{0, 2, "a/b", "64/2", 32, FormConstant, ""}},
		},
		{
			name:  "a variable, a call and a string are unreadable",
			cells: []string{"%%\nx := 3.0\ngrader.Check(\"a/b\", x)\ngrader.Check(\"a/c\", math.Sqrt(2))\ngrader.Check(\"a/d\", \"4\")"},
			calls: []call{
				{0, 3, "a/b", "x", 0, FormUnreadable, "x is a name"},
				{0, 4, "a/c", "math.Sqrt(2)", 0, FormUnreadable, "function call"},
				{0, 5, "a/d", `"4"`, 0, FormUnreadable, "string"},
			},
		},
		{
			name:  "wrong number of arguments",
			cells: []string{"%%\ngrader.Check(\"a/b\")\ngrader.Check(\"a/c\", 1, 2)"},
			calls: []call{
				{0, 2, "a/b", "", 0, FormUnreadable, "this call has 1 argument"},
				{0, 3, "a/c", "1", 0, FormUnreadable, "this call has 3 arguments"},
			},
		},
		{
			name:  "an id that is not a string literal",
			cells: []string{"%%\nid := \"a/b\"\ngrader.Check(id, 3)"},
			calls: []call{{0, 3, "", "3", 0, FormUnreadable, "the first argument, id, is not a string literal"}},
		},
		{
			name:     "a call in a comment is a mention, not a call",
			cells:    []string{"%%\n// grader.Check(\"a/b\", 32)\n/* grader.Check(\"a/c\", 1) */"},
			mentions: []Mention{{Cell: 0, Line: 2, ID: "a/b", Where: "a comment"}, {Cell: 0, Line: 3, ID: "a/c", Where: "a comment"}},
		},
		{
			name:     "markdown and raw cells only mention",
			cells:    []string{"markdown:Try `grader.Check(\"a/b\", 32)`", "raw:\n\ngrader.Check(\"a/c\", 1)"},
			mentions: []Mention{{Cell: 0, Line: 1, ID: "a/b", Where: "a markdown cell"}, {Cell: 1, Line: 3, ID: "a/c", Where: "a raw cell"}},
		},
		{
			name:     "a %%writefile cell is not run as Go",
			cells:    []string{"%%writefile x.go\ngrader.Check(\"a/b\", 32)"},
			mentions: []Mention{{Cell: 0, Line: 2, ID: "a/b", Where: "a cell GoNB does not run as Go (%%writefile)"}},
		},
		{
			name:  "a call split across two cells: neither compiles",
			cells: []string{"%%\ngrader.Check(\"a/b\",", "%%\n32)"},
			calls: []call{{0, 2, "a/b", "", 0, FormUnreadable, "does not compile"}},
		},
		{
			name:  "a syntax error elsewhere in the cell",
			cells: []string{"%%\nx := )\ngrader.Check(\"a/b\", 4)"},
			calls: []call{{0, 3, "a/b", "", 0, FormUnreadable, "line 2: expected operand"}},
		},
		{
			name: "an import alias, in another cell",
			cells: []string{
				"%%\ng.Check(\"a/b\", 1)\nh.Check(\"a/c\", 2)",
				"import g \"" + graderPath + "\"",
			},
			calls:  []call{{0, 2, "a/b", "1", 1, FormLiteral, ""}},
			course: true,
		},
		{
			name:   "a dot import makes a bare Check count",
			cells:  []string{"import . \"" + graderPath + "\"\n%%\nCheck(\"a/b\", 8)\nother.Check(\"a/c\", 1)"},
			calls:  []call{{0, 3, "a/b", "8", 8, FormLiteral, ""}},
			course: true,
		},
		{
			name:  "a bare Check without a dot import is someone else's",
			cells: []string{"%%\nCheck(\"a/b\", 8)"},
		},
		{
			name:   "the course's module imported makes it this course's",
			cells:  []string{"import \"github.com/coalescing-course/coalesce/lessons/spec\""},
			course: true,
		},
		{
			name:  "cells in any order: calls come in notebook order",
			cells: []string{"%%\ngrader.Check(\"a/c\", 2)", "markdown:# intro", "%%\ngrader.Check(\"a/b\", 1)"},
			calls: []call{{0, 2, "a/c", "2", 2, FormLiteral, ""}, {2, 2, "a/b", "1", 1, FormLiteral, ""}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := FindCalls(cellsNotebook(tt.cells...))
			var got []call
			for _, c := range f.Calls {
				gc := call{c.Cell, c.Line, c.ID, c.Arg, c.Value, c.Form, ""}
				if c.Problem != "" {
					gc.Problem = c.Problem
				}
				got = append(got, gc)
			}
			require.Len(t, got, len(tt.calls), "calls: %+v", got)
			for i, want := range tt.calls {
				g := got[i]
				if want.Problem == "" {
					assert.Empty(t, g.Problem, "call %d", i)
				} else {
					assert.Contains(t, g.Problem, want.Problem, "call %d", i)
				}
				g.Problem, want.Problem = "", ""
				assert.Equal(t, want, g, "call %d", i)
			}
			assert.Equal(t, tt.mentions, f.Mentions)
			assert.Equal(t, tt.course, f.Course)
		})
	}
}

// FuzzFindCalls feeds any text to the cell parser: it must not panic, and a
// call it reads as a number must say the number it was given.
func FuzzFindCalls(f *testing.F) {
	for _, s := range []string{
		"%%\ngrader.Check(\"03-strided/sectors-stride-32\", 32)",
		"grader.Check(\"a/b\", 64/2)",
		"// grader.Check(\"a/b\", 1)\n%%\nx := 1",
		"import g \"" + graderPath + "\"\n%%\ng.Check(\"a/b\", -0.5)",
		"%%\ngrader.Check(\"a/b\",",
		"!echo \\\n%%\ngrader.Check(`a/b`, 1e3)",
	} {
		f.Add(s, 1.5)
	}
	f.Fuzz(func(t *testing.T, src string, v float64) {
		_ = FindCalls(cellsNotebook(src))
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return
		}
		lit := strconv.FormatFloat(v, 'g', -1, 64)
		fc := FindCalls(cellsNotebook("%%\ngrader.Check(\"a/b\", " + lit + ")\n" + strings.ReplaceAll(src, "\n", " ")))
		if len(fc.Calls) == 0 {
			return // src made the cell unparsable in a way that hides the call: fine
		}
		c := fc.Calls[0]
		if c.Form == FormUnreadable {
			if !strings.Contains(c.Problem, "does not compile") {
				t.Fatalf("literal %s unreadable: %s", lit, c.Problem)
			}
			return
		}
		if c.Value != v {
			t.Fatalf("literal %s read as %v", lit, c.Value)
		}
		if _, _, err := ParsePrediction(c.Arg); err != nil && !errors.Is(err, ErrPrediction) {
			t.Fatalf("ParsePrediction(%q): %v does not wrap ErrPrediction", c.Arg, err)
		}
	})
}

// FuzzParsePrediction: never a panic; an error always wraps ErrPrediction;
// a value read is finite.
func FuzzParsePrediction(f *testing.F) {
	for _, s := range []string{"32", "64/2", "1/8", "-0.5", "x", "1e400", "((((1))))", "1/0", `"4"`, "0x1p-2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		v, form, err := ParsePrediction(src)
		if err != nil {
			if !errors.Is(err, ErrPrediction) || form != FormUnreadable {
				t.Fatalf("%q: error %v, form %v", src, err, form)
			}
			return
		}
		if math.IsNaN(v) || math.IsInf(v, 0) || form == FormUnreadable {
			t.Fatalf("%q read as %v (%v)", src, v, form)
		}
	})
}

// The paths of the packages whose Check records a prediction.
const (
	labPath    = ModulePath + "/lab"
	graderPath = ModulePath + "/grader"
)

// TestFirstBuildTemplate: a 0 in a cell exactly as the first build
// shipped it is no prediction, unless an attempt record shows it ran.
func TestFirstBuildTemplate(t *testing.T) {
	// Two cells of the first build, as `git show c0bdccb:notebooks/01-sectors.ipynb`
	// and `git show 64ede78:notebooks/03-strided.ipynb` hold them.
	const (
		graderCell = "%%\ngrader.Check(\"01-sectors/sectors-double\", 0)\ngrader.Check(\"01-sectors/sectors-byte\", 0)"
		labCell    = "%%\nlab.Check(\"03-strided/slowdown-stride-32\", 0)"
	)
	record := func(id string, attempts int) notebook.Output {
		js := `{"id":"` + id + `","first":{"value":0,"time":"2026-12-01T10:00:00Z"},"attempts":` + strconv.Itoa(attempts) +
			`,"last":{"value":0,"time":"2026-12-01T10:00:00Z"}}`
		return notebook.Output{Type: "display_data", Data: map[string]json.RawMessage{attempt.MIMEType: json.RawMessage(js)}}
	}
	tests := []struct {
		name     string
		src      string
		outputs  []notebook.Output
		template []bool // per call: Template (and FormPlaceholder), else a prediction of 0
	}{
		{"the first build's grader cell, untouched", graderCell, nil, []bool{true, true}},
		{"a lab cell of the later first build, untouched", labCell, nil, []bool{true}},
		{"a record shows an attempt at one of the two", graderCell, []notebook.Output{record("01-sectors/sectors-byte", 1)}, []bool{true, false}},
		{"a record of another exercise changes nothing", labCell, []notebook.Output{record("01-sectors/sectors-byte", 2)}, []bool{true}},
		{"a trailing newline: the cell was edited", labCell + "\n", nil, []bool{false}},
		{"0.0 typed: a prediction", "%%\nlab.Check(\"03-strided/slowdown-stride-32\", 0.0)", nil, []bool{false}},
		{"0 in a cell the course never shipped", "%%\nlab.Check(\"03-strided/sectors-stride-32\", 0)", nil, []bool{false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			nb := cellsNotebook(tt.src)
			nb.Cells[0].Outputs = tt.outputs
			f := FindCalls(nb)
			require.Len(t, f.Calls, len(tt.template))
			for i, c := range f.Calls {
				assert.Equal(t, tt.template[i], c.Template, "call %d", i)
				assert.Zero(t, c.Value, "call %d", i)
				assert.Empty(t, c.Problem, "call %d", i)
				if tt.template[i] {
					assert.Equal(t, FormPlaceholder, c.Form, "call %d", i)
				} else {
					assert.NotEqual(t, FormPlaceholder, c.Form, "call %d", i)
				}
			}
		})
	}
	// Every first-build cell, under both names: 17 cells, 2 names.
	assert.Len(t, firstBuildTemplates, 34)
}

func TestFormatNumber(t *testing.T) {
	tests := []struct {
		v    float64
		want string
	}{
		{32, "32"},
		{0.125, "0.125"},
		{-0.5, "-0.5"},
		{123456789.125, "123456789.125"}, // csvNum's six digits would say 123457000
		{8388608, "8388608"},             // 2^23, whole
		{1.0 / 3, "0.3333333333333333"},  // float64's shortest: 16 digits
		{1e20, "100000000000000000000"},  // below 1e21: no exponent
		{1e21, "1e+21"},                  // from 1e21 an exponent, as JSON writes it
		{0.000001, "0.000001"},           // 1e-6: still plain
		{1.5e-7, "1.5e-07"},              // below: an exponent
		{0, "0"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			assert.Equal(t, tt.want, FormatNumber(tt.v))
		})
	}
}

// FuzzFormatNumber: every finite float64 reads back exactly.
func FuzzFormatNumber(f *testing.F) {
	for _, v := range []float64{0, 1, -1, 123456789.125, 1e21, 1e-7, math.MaxFloat64, math.SmallestNonzeroFloat64} {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, v float64) {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return
		}
		s := FormatNumber(v)
		got, err := strconv.ParseFloat(s, 64)
		if err != nil || got != v {
			t.Fatalf("%v written %q, read back %v (%v)", v, s, got, err)
		}
	})
}

// TestShownLearners: the learners a saved notebook's displays name are
// read from their text/plain (lab's variant line), as a string or a list
// of lines, each once; text elsewhere (a stream, HTML) is not read.
func TestShownLearners(t *testing.T) {
	out := func(data string) string {
		return `{"output_type":"display_data","metadata":{},"data":` + data + `}`
	}
	nb, err := notebook.Parse([]byte(`{"nbformat":4,"nbformat_minor":5,"metadata":{},"cells":[
	 {"cell_type":"code","source":"%%\nlab.Exercise(\"10-kernels/strided-copy\")","metadata":{},"outputs":[` +
		out(`{"text/plain":"Your variant (learner ada): n = 4096, stride = 2\n","text/html":"<p>(learner zoe)</p>"}`) + `]},
	 {"cell_type":"code","source":"%%\nlab.Try(\"10-kernels/strided-copy\", Copy)","metadata":{},"outputs":[` +
		out(`{"text/plain":["10-kernels/strided-copy, n=4096 (learner ada): passed\n","(learner bob-2)\n"]}`) + `,
	   {"output_type":"stream","name":"stdout","text":"(learner cy)"}]}]}`))
	require.NoError(t, err)
	assert.Equal(t, []string{"ada", "bob-2"}, FindCalls(nb).Learners)
}
