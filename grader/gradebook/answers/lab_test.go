package answers

import (
	"bufio"
	"bytes"
	"go/importer"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// notRead are lab's entry points that take an exercise's or a question's
// id and that the reader leaves alone on purpose, each with why. A new one
// must be read (a call the gradebook grades) or listed here.
var notRead = map[string]string{
	"Exercise":    "shows a kernel exercise: it answers nothing",
	"Planted":     "the grader grading its own answer and a wrong one: no prediction of the learner's",
	"TryCUDA":     "a CUDA body runs only on a GPU; the gradebook grades the exercise's Go kernel (lab.Try)",
	"TryCUDAWith": "TryCUDA with options: the same",
}

// labPackage type-checks lab from the export data the go command builds
// for it and its dependencies, so that the test sees lab's API as the
// compiler does, without a type checker run over gonum and GoNB.
func labPackage(t *testing.T) *types.Package {
	t.Helper()
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command to build lab's export data with: %v", err)
	}
	var stderr bytes.Buffer
	cmd := exec.Command(goCmd, "list", "-export", "-deps", "-f", "{{.ImportPath}}\t{{.Export}}", ModulePath+"/lab")
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "go list -export: %s", stderr.String())
	exports := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if path, file, ok := strings.Cut(sc.Text(), "\t"); ok && file != "" {
			exports[path] = file
		}
	}
	imp := importer.ForCompiler(token.NewFileSet(), "gc", func(path string) (io.ReadCloser, error) {
		return os.Open(exports[path])
	})
	pkg, err := imp.Import(ModulePath + "/lab")
	require.NoError(t, err)
	return pkg
}

// params returns f's parameters, failing the test when lab has no func
// named name.
func params(t *testing.T, lab *types.Package, name string) *types.Tuple {
	t.Helper()
	f, ok := lab.Scope().Lookup(name).(*types.Func)
	require.True(t, ok, "lab.%s is not a func: the reader looks for calls of it", name)
	return f.Type().(*types.Signature).Params()
}

func isBasic(t types.Type, k types.BasicKind) bool {
	b, ok := t.(*types.Basic)
	return ok && b.Kind() == k
}

// TestReaderMatchesLab holds the reader to lab's real API: the calls it
// finds by name in a notebook's source (Check, Try, the Gather literal
// and the YourPrediction placeholder), the arguments it takes of them, and
// the package they are found under. A change to lab that the reader does
// not follow fails here, not in an instructor's gradebook.
func TestReaderMatchesLab(t *testing.T) {
	lab := labPackage(t)
	assert.Equal(t, "lab", CheckPackages[lab.Path()], "CheckPackages names lab by its path and its package name")

	t.Run("Check(id string, prediction any)", func(t *testing.T) {
		p := params(t, lab, checkFunc)
		require.Equal(t, callArgs, p.Len(), "the reader takes Check's calls of %d arguments", callArgs)
		assert.True(t, isBasic(p.At(0).Type(), types.String), "the id is a string literal: %s", p.At(0).Type())
		// An any takes a constant at its default type, int or float64,
		// whose value the reader computes as a float64 (a call that would
		// overflow an int does not compile), or a string, which the
		// reader keeps as FormText for grader.ReadPrediction.
		it, ok := p.At(1).Type().Underlying().(*types.Interface)
		assert.True(t, ok && it.Empty(), "the reader reads a number or a text with its unit, which only an any takes: %s", p.At(1).Type())
	})
	t.Run("YourPrediction float64", func(t *testing.T) {
		v, ok := lab.Scope().Lookup(Placeholder).(*types.Var)
		require.True(t, ok, "lab.%s is the placeholder the reader takes for no prediction", Placeholder)
		assert.True(t, isBasic(v.Type(), types.Float64), "the placeholder is what Check's prediction is: %s", v.Type())
	})
	t.Run("Try(id string, kernel any)", func(t *testing.T) {
		p := params(t, lab, tryFunc)
		require.Equal(t, callArgs, p.Len())
		assert.True(t, isBasic(p.At(0).Type(), types.String), "%s", p.At(0).Type())
		it, ok := p.At(1).Type().Underlying().(*types.Interface)
		assert.True(t, ok && it.Empty(), "the reader takes the kernel as a func's name or a %s literal, which only an any takes: %s", gatherType, p.At(1).Type())
	})
	t.Run("Gather{Order, Kernel}", func(t *testing.T) {
		tn, ok := lab.Scope().Lookup(gatherType).(*types.TypeName)
		require.True(t, ok, "lab.%s is the literal the reader reads a gather's two funcs from", gatherType)
		st, ok := tn.Type().Underlying().(*types.Struct)
		require.True(t, ok, "%s", tn.Type())
		var fields []string
		for i := range st.NumFields() {
			f := st.Field(i)
			fields = append(fields, f.Name())
			_, isFunc := f.Type().Underlying().(*types.Signature)
			assert.True(t, isFunc, "%s.%s is a func the reader names by its name: %s", gatherType, f.Name(), f.Type())
		}
		assert.ElementsMatch(t, []string{gatherOrder, gatherKernel}, fields)
	})
	t.Run("every entry point that takes an id", func(t *testing.T) {
		for _, name := range lab.Scope().Names() {
			f, ok := lab.Scope().Lookup(name).(*types.Func)
			if !ok || !f.Exported() {
				continue
			}
			p := f.Type().(*types.Signature).Params()
			if p.Len() == 0 || p.At(0).Name() != "id" || !isBasic(p.At(0).Type(), types.String) {
				continue
			}
			_, skipped := notRead[name]
			assert.True(t, name == checkFunc || name == tryFunc || skipped,
				"lab.%s takes an id: the gradebook's reader must read its calls (answers.FindCalls) or say in notRead why not", name)
		}
		for name := range notRead {
			assert.NotNil(t, lab.Scope().Lookup(name), "notRead lists lab.%s, which is gone", name)
		}
	})
}
