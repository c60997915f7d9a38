package lab

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/janpfeifer/gonb/gonbui/protocol"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coalescing-course/coalesce/grader"
	"github.com/coalescing-course/coalesce/internal/attempt"
	"github.com/coalescing-course/coalesce/lessons/exercises"
	"github.com/coalescing-course/coalesce/lessons/figures"
	"github.com/coalescing-course/coalesce/lessons/plots"
)

// TestOneGate holds the package to its one gate: no file but gate.go
// writes to the cell (GoNB, the standard output, the package's stdout or
// send), so that every display goes through a display's emit, which
// withholds what the learner has not earned and records what it shows.
func TestOneGate(t *testing.T) {
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") || name == "gate.go" {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		require.NoError(t, err)
		ast.Inspect(f, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.SelectorExpr:
				if id, ok := x.X.(*ast.Ident); ok {
					switch {
					case id.Name == "gonbui":
						t.Errorf("%s: %s uses gonbui.%s: only gate.go talks to the notebook", name, fset.Position(x.Pos()), x.Sel.Name)
					case id.Name == "os" && x.Sel.Name == "Stdout":
						t.Errorf("%s: %s writes to os.Stdout: show it with a display (gate.go)", name, fset.Position(x.Pos()))
					case id.Name == "fmt" && strings.HasPrefix(x.Sel.Name, "Print"):
						t.Errorf("%s: %s calls fmt.%s: show it with a display (gate.go)", name, fset.Position(x.Pos()), x.Sel.Name)
					}
				}
			case *ast.CallExpr:
				if id, ok := x.Fun.(*ast.Ident); ok && (id.Name == "stdout" || id.Name == "send") {
					t.Errorf("%s: %s calls %s(): only gate.go writes to the cell", name, fset.Position(x.Pos()), id.Name)
				}
			}
			return true
		})
	}
}

// exported lists the package's exported functions and methods, as
// "Func" and "Type.Method".
func exported(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	fset := token.NewFileSet()
	var names []string
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		require.NoError(t, err)
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || !fd.Name.IsExported() {
				continue
			}
			n := fd.Name.Name
			if fd.Recv != nil && len(fd.Recv.List) == 1 {
				typ := fd.Recv.List[0].Type
				if st, ok := typ.(*ast.StarExpr); ok {
					typ = st.X
				}
				id, ok := typ.(*ast.Ident)
				if !ok || !id.IsExported() {
					continue
				}
				n = id.Name + "." + n
			}
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names
}

// notebook makes the test a GoNB cell of notebook name (a lesson's, as
// "03-strided") with no answer recorded, and returns what the cell
// displays as it displays it.
func notebook(t *testing.T, name string) *[]*protocol.DisplayData {
	t.Helper()
	dir := t.TempDir()
	t.Setenv(attempt.DirEnv, dir)
	t.Setenv(attempt.SessionEnv, "/course/notebooks/"+name+".ipynb")
	t.Setenv(RevealEnv, "")
	var got []*protocol.DisplayData
	oldIn, oldSend := inNotebook, send
	inNotebook, send = true, func(d *protocol.DisplayData) { got = append(got, d) }
	t.Cleanup(func() { inNotebook, send = oldIn, oldSend })
	return &got
}

// shownOf returns an output's record, failing the test when it has none.
func shownOf(t *testing.T, d *protocol.DisplayData) grader.Shown {
	t.Helper()
	raw, ok := d.Data[grader.ShownMIMEType]
	require.True(t, ok, "an output without its record: %v", d.Data[protocol.MIMETextPlain])
	var sh grader.Shown
	require.NoError(t, json.Unmarshal([]byte(raw.(string)), &sh))
	return sh
}

func withheldIDs(sh grader.Shown) []string {
	var ids []string
	for _, w := range sh.Withheld {
		for _, q := range w.Questions {
			if !slices.Contains(ids, q) {
				ids = append(ids, q)
			}
		}
	}
	sort.Strings(ids)
	return ids
}

// The displays of the package, each called as a lesson's cell calls it,
// with what it must withhold in a fresh notebook of lesson 3 (nil: none
// of its values tells an answer of lesson 3 or later). Every exported
// function is here or among quiet, with why.
var displays = map[string]struct {
	call     func(t *testing.T)
	withheld []string
}{
	"Status": {func(t *testing.T) { Status() }, []string{"08-h200/dram-stride-32", "08-h200/fetch-granularity-ratio"}},
	"Explain": {func(t *testing.T) { Must(Explain(Lanes(0, 128, 4))) },
		[]string{"03-strided/sectors-stride-32"}},
	"ShowWarp": {func(t *testing.T) { ShowWarp(Lanes(0, 16, 4), "stride 4") },
		// 128 bytes used in 16 sectors: not the float4 copy's 512.
		[]string{"05-aos-soa/sectors-aos-16", "07-ncu-metric/st-sectors-per-request-write-4"}},
	"ShowInstruction": {func(t *testing.T) { ShowInstruction(Spec(`{"kernel":"strided_copy","n":1048576,"stride":2}`), 0, 0) },
		[]string{"03-strided/efficiency-stride-2"}},
	"ShowBanks": {func(t *testing.T) {
		ShowBanks(Spec(`{"kernel":"transpose_tiled","rows":4096,"cols":4096,"pad":0}`), 0, 8)
	},
		[]string{"09-matrix/wavefronts-pad-0"}},
	"Show": {func(t *testing.T) {
		specs := Must(plots.StrideSpecs(Spec(`{"kernel":"strided_copy","n":65536}`), []int{4}, []int64{1, 2, 32}))
		Show(Must(plots.SectorsVsStride(Must(Model(specs...)))))
	}, []string{"03-strided/efficiency-stride-2", "03-strided/sectors-stride-32"}},
	"Table.Show": {func(t *testing.T) {
		NewTable("case", "sectors").AddRow("stride 32", Modelled(Must(Model(Spec(`{"kernel":"strided_copy","n":65536,"stride":32}`)))[0], figures.LdSectorsPerRequest)).Show()
	}, []string{"03-strided/sectors-stride-32"}},
	"Versus": {func(t *testing.T) {
		Must(Versus(Case{Name: "stride 1", Spec: Spec(`{"kernel":"strided_copy","n":67108864,"stride":1}`)},
			Case{Name: "stride 32", Spec: Spec(`{"kernel":"strided_copy","n":67108864,"stride":32}`)})).Show()
	}, []string{"03-strided/sectors-stride-32", "03-strided/slowdown-stride-32"}},
	"Compare": {func(t *testing.T) {
		Must(Compare([]Case{{Name: "float", Spec: Spec(`{"kernel":"coalesced_copy","n":67108864}`)}}, OfMemcpy)).Show()
	}, []string{"08-h200/block-32-slowdown", "08-h200/one-float-copy-of-memcpy"}},
	"ModelTable": {func(t *testing.T) {
		Must(ModelTable([]Case{{Name: "AoS 16 B", Spec: Spec(`{"kernel":"update_x_aos","n":65536,"struct_bytes":16}`)}}, LdSectorsPerRequest)).Show()
	}, []string{"05-aos-soa/sectors-aos-16", "06-vectorized/sectors-float4"}},
	"Counters": {func(t *testing.T) {
		Must(Counters([]Case{{Name: "stride 2", Spec: Spec(`{"kernel":"strided_copy","n":67108864,"stride":2}`)}})).Show()
	}, []string{"03-strided/efficiency-stride-2", "07-ncu-metric/ld-sectors-stride-2"}},
	"Measurements.Show": {func(t *testing.T) {
		Must(Measure(Spec(`{"kernel":"coalesced_copy","n":67108864}`))).Show()
	}, []string{"08-h200/block-32-slowdown", "08-h200/one-float-copy-of-memcpy"}},
	"Measurements.Counters": {func(t *testing.T) {
		Must(Profile(Spec(`{"kernel":"coalesced_copy","n":67108864}`))).Counters().Show()
	}, []string{"06-vectorized/requests-ratio", "07-ncu-metric/ld-requests-coalesced"}},
	"Printf": {func(t *testing.T) {
		p := Must(Model(Spec(`{"kernel":"strided_copy","n":65536,"stride":32}`)))[0]
		Printf("%s sectors a request, %d lanes\n", Modelled(p, figures.LdSectorsPerRequest), 32)
	}, []string{"03-strided/sectors-stride-32"}},
	"LoadTotals": {func(t *testing.T) {
		require.NoError(t, LoadTotals(Spec(`{"kernel":"strided_copy","n":67108864,"stride":2}`)))
	}, []string{"03-strided/efficiency-stride-2", "07-ncu-metric/ld-sectors-stride-2"}},
	"Check":    {func(t *testing.T) { Check("03-strided/sectors-stride-32", YourPrediction) }, nil},
	"Planted":  {func(t *testing.T) { Planted("03-strided/sectors-stride-32", 1024) }, nil},
	"Exercise": {func(t *testing.T) { Exercise("10-kernels/strided-copy") }, nil},
	"Try": {func(t *testing.T) {
		e, err := exercises.Lookup("10-kernels/strided-copy")
		require.NoError(t, err)
		Try(e.ID, e.Starter)
		// The starter's lanes are 8 floats apart: its picture is stride 32's warp.
	}, []string{"03-strided/sectors-stride-32"}},
	"TryCUDA": {func(t *testing.T) {
		e, err := exercises.Lookup("10-kernels/strided-copy")
		require.NoError(t, err)
		TryCUDA(e.ID, "", e.Starter)
	}, nil},
}

// quiet are the exported functions that display nothing, and why.
var quiet = map[string]string{
	"Must": "ends the cell on an error, on stderr", "ParseSpec": "parses", "Spec": "parses, Must on an error",
	"Describe": "formats", "Count": "formats", "Percent": "formats", "Ratio": "formats", "Format": "formats",
	"Lanes": "builds a warp", "Measure": "measures", "Profile": "measures", "Model": "runs the model",
	"Measurements.Caption": "a label", "Measurements.Table": "builds a gated table (Table.Show shows it)",
	"Table.AddRow": "gates a row as it adds it", "Table.String": "renders gated cells", "Table.HTML": "renders gated cells",
	"NewTable": "builds", "Value.String": "a gated cell's text", "Modelled": "a cell with its tells", "MeasuredValue": "a cell with its tells",
	"OnDevices": "builds cases", "FigureColumn": "a column", "MeasuredOnly": "a column", "Metric": "a column",
	"Questions": "the bank", "Learner": "who the learner is", "WithIndices": "builds a spec",
	"TryCUDAWith":   "TryCUDA with options: the same outputs",
	"Stopped.Error": "an error's text", "Stopped.Unwrap": "the error it wraps",
}

func TestEveryDisplayIsGated(t *testing.T) {
	for _, name := range exported(t) {
		_, shows := displays[name]
		_, why := quiet[name]
		assert.True(t, shows != why, "%s: list it in displays (with what it withholds) or in quiet (with why it shows nothing)", name)
	}
	recorded(t)
	for name, d := range displays {
		t.Run(name, func(t *testing.T) {
			out := notebook(t, "03-strided")
			d.call(t)
			require.NotEmpty(t, *out, "shows something")
			var ids []string
			for _, o := range *out {
				sh := shownOf(t, o)
				for _, id := range withheldIDs(sh) {
					if !slices.Contains(ids, id) {
						ids = append(ids, id)
					}
				}
				if len(sh.Withheld) > 0 {
					assert.Contains(t, o.Data[protocol.MIMETextPlain], Hidden+": ", "a withheld value says what to answer")
				}
			}
			sort.Strings(ids)
			assert.Equal(t, d.withheld, ids)
		})
	}
}

// An answer recorded, the next run of the cell shows what it withheld;
// questions of earlier lessons are never withheld.
func TestAnsweringReleases(t *testing.T) {
	recorded(t)
	out := notebook(t, "03-strided")
	versus := displays["Versus"].call
	versus(t)
	text := (*out)[0].Data[protocol.MIMETextPlain].(string)
	assert.Contains(t, text, Hidden+": answer 03-strided/sectors-stride-32 and 03-strided/slowdown-stride-32 in this notebook first, then run this cell again.")

	Check("03-strided/sectors-stride-32", 32)
	Check("03-strided/slowdown-stride-32", 10)
	*out = nil
	versus(t)
	require.Len(t, *out, 1)
	sh := shownOf(t, (*out)[0])
	assert.Empty(t, sh.Withheld, "answered: everything shows")
	assert.NotContains(t, (*out)[0].Data[protocol.MIMETextPlain], Hidden)

	// Lesson 5's notebook: lesson 3's questions are the past.
	later := notebook(t, "05-aos-soa")
	versus(t)
	assert.Empty(t, shownOf(t, (*later)[0]).Withheld)
}

// The instructor's view: COALESCE_REVEAL=all withholds nothing.
func TestRevealAll(t *testing.T) {
	recorded(t)
	out := notebook(t, "03-strided")
	t.Setenv(RevealEnv, "all")
	displays["Versus"].call(t)
	assert.Empty(t, shownOf(t, (*out)[0]).Withheld)
}

// LoadTotals multiplies lesson 7's totals out: 2^26 threads are 2^21 warps
// of one load each; stride 2 issues a load per thread for half as many
// threads, 2^20 requests of 8 sectors (lanes 8 bytes apart span 256
// bytes), twice the 4 of a request of 128 bytes.
func TestLoadTotals(t *testing.T) {
	out := capture(t)
	require.NoError(t, LoadTotals(Spec(`{"kernel":"coalesced_copy","n":67108864}`)))
	require.NoError(t, LoadTotals(Spec(`{"kernel":"strided_copy","n":67108864,"stride":2}`)))
	assert.Contains(t, out.String(), "  2,097,152 warps × 1 load per warp = 2,097,152 requests\n")
	assert.Contains(t, out.String(), "  1,048,576 requests × 8 sectors per request = 8,388,608 sectors\n")
	assert.Contains(t, out.String(), "= 2× the minimum\n")
}

// A verdict shows its own answer; a part of its explanation that tells
// another question not answered yet waits for it.
func TestCheckHoldsBackSections(t *testing.T) {
	recorded(t)
	out := notebook(t, "08-h200")
	text := func() string {
		var b strings.Builder
		for _, o := range *out {
			b.WriteString(o.Data[protocol.MIMETextPlain].(string))
		}
		return b.String()
	}
	Check("08-h200/dram-stride-32", 16)
	got := text()
	assert.Contains(t, got, "RIGHT 08-h200/dram-stride-32", "its own answer shows")
	assert.Contains(t, got, "This part gives away an answer you have not given yet")
	assert.Contains(t, got, Hidden+": answer 08-h200/fetch-granularity-ratio in this notebook first")

	Check("08-h200/fetch-granularity-ratio", 2)
	*out = nil
	Check("08-h200/dram-stride-32", 16)
	assert.NotContains(t, text(), "This part gives away")
	assert.NotContains(t, text(), Hidden)
}
