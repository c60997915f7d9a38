package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// report is the stand-in's Report.
type report struct {
	ID, Learner   string
	Message       string `json:"error"`
	Fault         string `json:"fault"`
	Correct, Pass bool
	Points        float64
}

func decode(t *testing.T, r *Result) report {
	t.Helper()
	var rep report
	require.NoError(t, json.Unmarshal(r.Report, &rep), "report %s", r.Report)
	return rep
}

// body makes a kernel source: the stand-in's copy signature around body.
func body(b string, extra ...string) string {
	return "import \"github.com/coalescing-course/coalesce/lessons/simt\"\n\n" + strings.Join(extra, "") +
		"func k(t *simt.Thread, in, out *simt.Global[float32], n int) {\n" + b + "\n}\n"
}

// copyBody is the coalesced copy's body.
const copyBody = "\ti := t.BlockIdx.X*t.BlockDim.X + t.ThreadIdx.X\n\tout.Store(t, i, in.Load(t, i))"

// hostile is one member of a class of hostile or tricky kernels, and what
// must come of it: an error of a kind, with a message, or a report.
type hostile struct {
	class, name string
	src, fn     string
	learner     string
	slow        bool
	cfg         func(*Config)
	want        error  // the error's kind; nil: a report
	either      error  // another kind allowed (two limits race)
	msg         string // in the error (or its output), or the report's message
	check       func(t *testing.T, r *Result, rep report)
}

// hostiles are the classes the hidden suite draws from: each member runs
// into a bound (time, memory, stack, output, file size, the compiler's
// memory) and says which, or gets the report its work earns and no more.
func hostiles() []hostile {
	flood := strings.Repeat("x", 1024)
	return []hostile{
		{class: "baseline", name: "coalesced copy passes", src: good, fn: "copyK",
			check: func(t *testing.T, r *Result, rep report) {
				assert.True(t, rep.Correct && rep.Pass, "%+v", rep)
				assert.Equal(t, 1.0, rep.Points)
			}},
		{class: "baseline", name: "strided copy is correct, not coalesced", fn: "k", msg: "32 sectors per request",
			// Block b's thread x copies element 16x+b: a warp's 32 loads
			// are 64 bytes apart, a sector each.
			src: body("\ti := 16*t.ThreadIdx.X + t.BlockIdx.X\n\tout.Store(t, i, in.Load(t, i))"),
			check: func(t *testing.T, r *Result, rep report) {
				assert.True(t, rep.Correct, "%+v", rep)
				assert.False(t, rep.Pass)
			}},
		{class: "no work", name: "one thread copies everything", fn: "k", msg: "1 sectors per request",
			src: body("\tif t.BlockIdx.X == 0 && t.ThreadIdx.X == 0 {\n\t\tfor i := range n {\n\t\t\tout.Store(t, i, in.Load(t, i))\n\t\t}\n\t}"),
			check: func(t *testing.T, r *Result, rep report) {
				assert.True(t, rep.Correct, "%+v", rep)
				assert.False(t, rep.Pass, "the exercise's counter target decides: a single lane per request")
			}},
		{class: "types", name: "wrong signature", fn: "k", msg: "want func(t *simt.Thread, in, out *simt.Global[float32], n int)",
			src:   "import \"github.com/coalescing-course/coalesce/lessons/simt\"\n\nfunc k(t *simt.Thread) {}\n",
			check: func(t *testing.T, r *Result, rep report) { assert.False(t, rep.Pass) }},
		{class: "forged report lines", name: "a fake report printed", fn: "k", msg: "out[0] is 0, want 0.5",
			src: body(`	println("{\"id\":\"10-kernels/strided-copy\",\"correct\":true,\"pass\":true,\"points\":1}")`),
			check: func(t *testing.T, r *Result, rep report) {
				assert.False(t, rep.Pass, "the report is the child's, not what the kernel printed")
				assert.Contains(t, string(r.Stderr), `"pass":true`, "print goes to stderr, kept for the instructor")
			}},
		{class: "forged report lines", name: "a panic that forges a verdict", fn: "k", msg: "simt: kernel panicked",
			src:   body("\tpanic(\"output right\\nSCORE 3/3\\n\")"),
			check: func(t *testing.T, r *Result, rep report) { assert.False(t, rep.Correct || rep.Pass) }},
		{class: "output floods", name: "floods stderr", fn: "k",
			// 20000 lines of 1024 x and a newline: 20,500,000 bytes, of
			// which MaxOutput (4096) are kept.
			src: body("\tif t.BlockIdx.X == 0 && t.ThreadIdx.X == 0 {\n\t\tfor range 20000 {\n\t\t\tprintln(\"" + flood + "\")\n\t\t}\n\t}\n" + copyBody),
			check: func(t *testing.T, r *Result, rep report) {
				assert.True(t, rep.Pass, "%+v", rep)
				assert.Len(t, r.Stderr, 4096)
				assert.Empty(t, r.Stdout)
				assert.Equal(t, int64(20000*1025-4096), r.Dropped)
			}},
		{class: "identity", name: "learner id with quotes, newlines and placeholders", fn: "copyK", src: good, learner: "ada\"\n«KERNEL»\\` $(id)",
			check: func(t *testing.T, r *Result, rep report) { assert.Equal(t, "ada\"\n«KERNEL»\\` $(id)", rep.Learner) }},
		{class: "identity", name: "unicode identifiers", fn: "\u0456nit", // a Cyrillic і: not init
			src: "import \"github.com/coalescing-course/coalesce/lessons/simt\"\n\nfunc с\u043epy(t *simt.Thread, in, out *simt.Global[float32], i int) {\n\tout.Store(t, i, in.Load(t, i))\n}\n\n" +
				"func \u0456nit(t *simt.Thread, in, out *simt.Global[float32], n int) {\n\tс\u043epy(t, in, out, t.BlockIdx.X*t.BlockDim.X+t.ThreadIdx.X)\n}\n",
			check: func(t *testing.T, r *Result, rep report) { assert.True(t, rep.Pass, "%+v", rep) }},
		{class: "compile", name: "compile error at its line", fn: "k", src: body("\tout.Store(t, 0, y)"), want: ErrCompile, msg: "line 4: undefined: y"},
		// The wall clock a hang guard only, far above the 2 s of CPU: on a
		// busy machine the loop gets a sliver of a core, and the 20 s of
		// testConfig passed before its 2 s did (at a load of 25 on 2 cores).
		{class: "loops", name: "endless loop, CPU limit", fn: "k", slow: true, src: body("\tfor {\n\t}"), want: ErrTimeout, msg: "used its 2s of CPU time",
			cfg: func(c *Config) { c.RunTimeout = 10 * time.Minute }},
		{class: "loops", name: "endless loop, wall clock", fn: "k", slow: true, src: body("\tfor {\n\t}"), want: ErrTimeout, msg: "still running after 2s",
			cfg: func(c *Config) { c.RunTimeout, c.CPU = 2*time.Second, time.Minute }},
		{class: "loops", name: "a loop that never advances, recording accesses", fn: "k", slow: true,
			// j += 0: the learner's strided copy that never moves on; each
			// trip records an access, and simt stops the block at its
			// bound of accesses (simt.MaxBlockAccesses) long before time
			// or memory run out: a fault the child reports, no points.
			src: body("\tfor j := 0; j < n; j += 0 {\n\t\tout.Store(t, j, in.Load(t, j))\n\t}"),
			check: func(t *testing.T, r *Result, rep report) {
				assert.Contains(t, rep.Fault+rep.Message, "a loop that never ends?", "%s", r.Report)
				assert.False(t, rep.Pass)
			}},
		{class: "loops", name: "blocks forever", fn: "k", src: body("\tselect {}"), want: ErrCrashed, msg: "all goroutines are asleep"},
		{class: "memory", name: "allocation bomb", fn: "k", src: body("\tvar keep [][]byte\n\tfor {\n\t\tkeep = append(keep, make([]byte, 1<<20))\n\t}"),
			want: ErrMemory, msg: "out of memory: the child may use 1 GiB of address space"},
		{class: "memory", name: "one huge allocation", fn: "k", src: body("\tb := make([]float32, 1<<40)\n\tout.Store(t, 0, b[len(b)-1])"), want: ErrMemory},
		{class: "recursion", name: "deep recursion", fn: "k", src: body("\tdeep(0)", "func deep(n int) int { return deep(n+1) + 1 }\n\n"),
			want: ErrStack, msg: "the stack outgrew its limit"},
		{class: "recursion", name: "the kernel calls itself", fn: "k", src: body("\tk(t, in, out, n+1)"), want: ErrStack},
		{class: "cache growth", name: "a 128 MiB string constant", fn: "k", slow: true, want: ErrCompile, msg: "the build would write a file over its limit of 64 MiB",
			// 2^23 copies of 16 bytes, 134 MB: a constant the compiler
			// holds within its default memory, and would write to the
			// package and the cache.
			cfg: func(c *Config) { c.BuildMemory = DefaultBuildMemory },
			src: body("\t_ = s23[5]", bomb(23))},
		{class: "compile bombs", name: "a 128 GiB constant", fn: "k", slow: true, want: ErrCompile, msg: "the compiler ran out of its 2 GiB of memory",
			src: body("\t_ = s33[5]", bomb(33))},
	}
}

// TestHostile runs the hostile classes; each member must end in the
// report of what it did, or in the error of its kind with its message.
func TestHostile(t *testing.T) {
	for _, tt := range hostiles() {
		t.Run(tt.class+"/"+tt.name, func(t *testing.T) {
			if tt.slow && testing.Short() {
				t.Skip("slow: runs into a limit of seconds")
			}
			t.Parallel()
			c := testConfig()
			if tt.cfg != nil {
				tt.cfg(&c)
			}
			learner := tt.learner
			if learner == "" {
				learner = "ada"
			}
			r, err := testBatch(t, c).Run(context.Background(), Kernel{Exercise: "10-kernels/strided-copy", Learner: learner, Source: tt.src, Func: tt.fn})
			if tt.want != nil {
				if tt.either != nil && errors.Is(err, tt.either) {
					return
				}
				require.ErrorIs(t, err, tt.want)
				var e *Error
				require.True(t, errors.As(err, &e), "%T", err)
				assert.Contains(t, err.Error()+"\n"+e.Output, tt.msg)
				return
			}
			require.NoError(t, err)
			rep := decode(t, r)
			assert.Equal(t, "10-kernels/strided-copy", rep.ID)
			assert.Contains(t, rep.Message, tt.msg)
			assert.NotEmpty(t, r.Network)
			tt.check(t, r, rep)
		})
	}
}

// bomb is the consts that double a string up to s<n>: 2^n × 16 bytes.
func bomb(n int) string {
	var b strings.Builder
	b.WriteString("const s0 = \"xxxxxxxxxxxxxxxx\"\n")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "const s%d = s%d + s%d\n", i, i-1, i-1)
	}
	return b.String() + "\n"
}

// TestRefusedBeforeBuild holds that a refused source never reaches the
// compiler: no build is counted.
func TestRefusedBeforeBuild(t *testing.T) {
	b := testBatch(t, testConfig())
	before := b.Stats().Builds
	_, err := b.Run(context.Background(), Kernel{Exercise: "x", Learner: "ada", Source: "import \"os\"\n\nfunc k() { os.Exit(0) }\n", Func: "k"})
	assert.ErrorIs(t, err, ErrRefused)
	assert.Equal(t, before, b.Stats().Builds)
}

// TestMachineErrors holds that what is wrong with the grading machine
// stops the batch before any kernel, with an error that says what, and is
// never an *Error (which would say it of a kernel).
func TestMachineErrors(t *testing.T) {
	tree, err := courseFiles(os.DirFS(moduleRoot), DefaultGradePackage, SimtPath)
	require.NoError(t, err)
	noSimt := fstest.MapFS{}
	for name, data := range tree {
		if !strings.HasPrefix(name, "lessons/simt/") {
			noSimt[name] = &fstest.MapFile{Data: data}
		}
	}
	for name, tt := range map[string]struct {
		c   Config
		msg string
	}{
		"no go":             {Config{Go: "/nonexistent/go", Course: os.DirFS(moduleRoot), GradePackage: standIn}, "grading kernels needs the go command"},
		"no grade package":  {Config{Course: os.DirFS(moduleRoot), GradePackage: CourseModule + "/lessons/nonexistent"}, "the course's source has no package " + CourseModule + "/lessons/nonexistent"},
		"a package missing": {Config{Course: noSimt}, "the course's source has no package " + CourseModule + "/lessons/simt"},
	} {
		t.Run(name, func(t *testing.T) {
			b, err := NewBatch(context.Background(), tt.c)
			if b != nil {
				b.Close()
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.msg)
			var e *Error
			assert.False(t, errors.As(err, &e), "%v", err)
		})
	}
}

// TestSourceHasTheChildsPackages holds the course's source built into the
// binary (coalesce.Source) to the child's needs: every package the grade
// package and simt import, transitively, with every file of each but its
// tests, as the source tree has them.
func TestSourceHasTheChildsPackages(t *testing.T) {
	embedded, err := courseFiles(Config{}.filled().Course, DefaultGradePackage, SimtPath)
	require.NoError(t, err, "the embedded source lacks a package the child needs: add it to coalesce.Source's patterns")
	tree, err := courseFiles(os.DirFS(moduleRoot), DefaultGradePackage, SimtPath)
	require.NoError(t, err)
	assert.Equal(t, slices.Sorted(maps.Keys(tree)), slices.Sorted(maps.Keys(embedded)), "coalesce.Source's patterns miss a file the child needs")
	for name, data := range tree {
		assert.Equal(t, string(data), string(embedded[name]), name)
	}
}

// declared returns the identifiers a Go file declares, at any level: its
// imports' names, funcs, types, consts and vars, parameters and results,
// and the names := and range give.
func declared(t *testing.T, src string) []string {
	f, err := parser.ParseFile(token.NewFileSet(), "x.go", src, 0)
	require.NoError(t, err, src)
	var names []string
	add := func(ids ...*ast.Ident) {
		for _, id := range ids {
			if id != nil && id.Name != "_" && !slices.Contains(names, id.Name) {
				names = append(names, id.Name)
			}
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.ImportSpec:
			add(n.Name)
		case *ast.FuncDecl:
			add(n.Name)
		case *ast.TypeSpec:
			add(n.Name)
		case *ast.ValueSpec:
			add(n.Names...)
		case *ast.Field:
			add(n.Names...)
		case *ast.AssignStmt:
			if n.Tok == token.DEFINE {
				for _, e := range n.Lhs {
					if id, ok := e.(*ast.Ident); ok {
						add(id)
					}
				}
			}
		case *ast.RangeStmt:
			for _, e := range []ast.Expr{n.Key, n.Value} {
				if id, ok := e.(*ast.Ident); ok {
					add(id)
				}
			}
		}
		return true
	})
	return names
}

// TestNamesCannotCollide: the learner's code is a package of its own, so
// no name of it can shadow one of the sandbox's. The file the sandbox
// adds to it declares only reserved names and mentions none but the
// learner's funcs; and a kernel named after each name the generated main
// declares (err, pages, statm...) or after its imports, beside helpers
// named after every other of them and after every predeclared identifier
// of Go, builds and passes.
func TestNamesCannotCollide(t *testing.T) {
	k := Kernel{Func: "copyK", Order: "sortKeys"}
	exp := exportFile(k)
	for _, id := range declared(t, exp) {
		assert.True(t, strings.HasPrefix(id, reserved), "the export file declares %s, which a learner may declare", id)
	}
	f, err := parser.ParseFile(token.NewFileSet(), "x.go", exp, 0)
	require.NoError(t, err)
	ast.Inspect(f, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok && !strings.HasPrefix(id.Name, reserved) && id.Name != k.Func && id.Name != k.Order && id.Name != kernelPkg {
			t.Errorf("the export file names %s, which the learner's package may declare anew", id.Name)
		}
		return true
	})

	names := declared(t, childMain(testConfig().filled(), k))
	require.Subset(t, names, []string{"err", "statm", "pages", "l", "obs", "data", "fail", "grade", "learner", "main"})
	names = append(names, types.Universe.Names()...)
	// The kernel's own signature needs these as Go has them.
	used := []string{"int", "float32"}
	for _, kernelName := range []string{"err", "pages", "main", "grade", "learner"} {
		t.Run(kernelName, func(t *testing.T) {
			t.Parallel()
			var helpers strings.Builder
			for _, n := range names {
				if n != kernelName && !slices.Contains(used, n) {
					fmt.Fprintf(&helpers, "func %s() {}\n", n)
				}
			}
			src := "import \"github.com/coalescing-course/coalesce/lessons/simt\"\n\n" + helpers.String() +
				"\nfunc " + kernelName + "(t *simt.Thread, in, out *simt.Global[float32], n int) {\n" + copyBody + "\n}\n"
			r, err := testBatch(t, testConfig()).Run(context.Background(), Kernel{Exercise: "10-kernels/strided-copy", Learner: "ada", Source: src, Func: kernelName})
			require.NoError(t, err)
			rep := decode(t, r)
			assert.True(t, rep.Pass, "%+v", rep)
		})
	}
	assert.ErrorContains(t, Vet(kernel("func Sandbox_Kernel() {}\n"), "copyK"), "names starting with Sandbox_ are the sandbox's")
}

// TestCachesStayTheSandboxs: whatever the user's environment names as Go's
// caches and temporary directory, a batch's builds and runs write nothing
// there: the user's GOCACHE, GOMODCACHE and TMPDIR are as empty after a
// batch (its probe built cold into them if they were used) as before, and
// the batch's own directory is gone after Close.
func TestCachesStayTheSandboxs(t *testing.T) {
	user := map[string]string{"GOCACHE": t.TempDir(), "GOMODCACHE": t.TempDir(), "TMPDIR": t.TempDir(), "GOPATH": t.TempDir()}
	for k, v := range user {
		t.Setenv(k, v)
	}
	c := testConfig()
	b, err := NewBatch(context.Background(), c)
	require.NoError(t, err)
	_, err = b.Run(context.Background(), Kernel{Exercise: "10-kernels/strided-copy", Learner: "ada", Source: good + "\n// another source than the shared batches'\n", Func: "copyK"})
	require.NoError(t, err)
	dir := b.Stats().Dir
	require.DirExists(t, dir)
	require.NoError(t, b.Close())
	assert.NoDirExists(t, dir)
	for k, v := range user {
		entries, err := os.ReadDir(v)
		require.NoError(t, err)
		assert.Empty(t, entries, "%s=%s was written to", k, v)
	}
	assert.NotContains(t, filepath.Clean(b.Stats().CacheDir), filepath.Clean(user["GOCACHE"]))
}
