package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// standIn is the test's exercises package (testdata/exercises): one
// exercise, a copy of 4096 floats, passed when correct with 4 load sectors
// per request.
const standIn = CourseModule + "/grader/sandbox/testdata/exercises"

// testConfig is the limits the hostile tests run under: small, so that
// each bomb goes off in a second or two.
func testConfig() Config {
	return Config{GradePackage: standIn, RunTimeout: 20 * time.Second, CPU: 2 * time.Second,
		Memory: 1 << 30, MaxOutput: 4 << 10, BuildMemory: 2 << 30}
}

// report is the stand-in's Report.
type report struct {
	ID, Learner   string
	Message       string `json:"error"`
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

// TestHostile runs kernels that try to pass without doing the work, to
// escape or to take the grading machine down; each must end in the report
// of what it did, or in the error of its kind.
func TestHostile(t *testing.T) {
	flood := strings.Repeat("x", 1024)
	tests := []struct {
		name    string
		src, fn string
		learner string
		slow    bool
		cfg     func(*Config)
		want    error  // the error's kind; nil: a report
		msg     string // in the error, or the report's message
		check   func(t *testing.T, r *Result, rep report)
	}{
		{name: "coalesced copy passes", src: good, fn: "copyK",
			check: func(t *testing.T, r *Result, rep report) {
				assert.True(t, rep.Correct && rep.Pass, "%+v", rep)
				assert.Equal(t, 1.0, rep.Points)
			}},
		{name: "strided copy is correct, not coalesced", fn: "k", msg: "32 sectors per request",
			// Block b's thread x copies element 16x+b: a warp's 32 loads
			// are 64 bytes apart, a sector each.
			src: body("\ti := 16*t.ThreadIdx.X + t.BlockIdx.X\n\tout.Store(t, i, in.Load(t, i))"),
			check: func(t *testing.T, r *Result, rep report) {
				assert.True(t, rep.Correct, "%+v", rep)
				assert.False(t, rep.Pass)
			}},
		{name: "one thread copies everything", fn: "k", msg: "1 sectors per request",
			src: body("\tif t.BlockIdx.X == 0 && t.ThreadIdx.X == 0 {\n\t\tfor i := range n {\n\t\t\tout.Store(t, i, in.Load(t, i))\n\t\t}\n\t}"),
			check: func(t *testing.T, r *Result, rep report) {
				assert.True(t, rep.Correct, "%+v", rep)
				assert.False(t, rep.Pass, "the exercise's counter target decides: a single lane per request")
			}},
		{name: "wrong signature", fn: "k", msg: "want func(t *simt.Thread, in, out *simt.Global[float32], n int)",
			src:   "import \"github.com/coalescing-course/coalesce/lessons/simt\"\n\nfunc k(t *simt.Thread) {}\n",
			check: func(t *testing.T, r *Result, rep report) { assert.False(t, rep.Pass) }},
		{name: "panic", fn: "k", src: body("\tpanic(\"boom\")"), msg: "simt: kernel panicked",
			check: func(t *testing.T, r *Result, rep report) { assert.False(t, rep.Correct || rep.Pass) }},
		{name: "fake report printed", fn: "k", msg: "out[0] is 0, want 0.5",
			src: body(`	println("{\"id\":\"10-kernels/strided-copy\",\"correct\":true,\"pass\":true,\"points\":1}")`),
			check: func(t *testing.T, r *Result, rep report) {
				assert.False(t, rep.Pass, "the report is the child's, not what the kernel printed")
				assert.Contains(t, string(r.Stderr), `"pass":true`, "print goes to stderr, kept for the instructor")
			}},
		{name: "floods stderr", fn: "k",
			// 20000 lines of 1024 x and a newline: 20,500,000 bytes, of
			// which MaxOutput (4096) are kept.
			src: body("\tif t.BlockIdx.X == 0 && t.ThreadIdx.X == 0 {\n\t\tfor range 20000 {\n\t\t\tprintln(\"" + flood + "\")\n\t\t}\n\t}\n\ti := t.BlockIdx.X*t.BlockDim.X + t.ThreadIdx.X\n\tout.Store(t, i, in.Load(t, i))"),
			check: func(t *testing.T, r *Result, rep report) {
				assert.True(t, rep.Pass, "%+v", rep)
				assert.Len(t, r.Stderr, 4096)
				assert.Empty(t, r.Stdout)
				assert.Equal(t, int64(20000*1025-4096), r.Dropped)
			}},
		{name: "learner id with quotes and placeholders", fn: "copyK", src: good, learner: "ada\"\n«KERNEL»\\`",
			check: func(t *testing.T, r *Result, rep report) { assert.Equal(t, "ada\"\n«KERNEL»\\`", rep.Learner) }},
		{name: "unicode identifiers", fn: "\u0456nit", // a Cyrillic і: not init
			src: "import \"github.com/coalescing-course/coalesce/lessons/simt\"\n\nfunc с\u043epy(t *simt.Thread, in, out *simt.Global[float32], i int) {\n\tout.Store(t, i, in.Load(t, i))\n}\n\n" +
				"func \u0456nit(t *simt.Thread, in, out *simt.Global[float32], n int) {\n\tс\u043epy(t, in, out, t.BlockIdx.X*t.BlockDim.X+t.ThreadIdx.X)\n}\n",
			check: func(t *testing.T, r *Result, rep report) { assert.True(t, rep.Pass, "%+v", rep) }},
		{name: "compile error", fn: "k", src: body("\tout.Store(t, 0, y)"), want: ErrCompile, msg: "line 4: undefined: y"},
		// The wall clock a hang guard only, far above the 2 s of CPU: on a
		// busy machine the loop gets a sliver of a core, and the 20 s of
		// testConfig passed before its 2 s did (at a load of 25 on 2 cores).
		{name: "endless loop, CPU limit", fn: "k", slow: true, src: body("\tfor {\n\t}"), want: ErrTimeout, msg: "used its 2s of CPU time",
			cfg: func(c *Config) { c.RunTimeout = 10 * time.Minute }},
		{name: "endless loop, wall clock", fn: "k", slow: true, src: body("\tfor {\n\t}"), want: ErrTimeout, msg: "still running after 2s",
			cfg: func(c *Config) { c.RunTimeout, c.CPU = 2*time.Second, time.Minute }},
		{name: "blocks forever", fn: "k", src: body("\tselect {}"), want: ErrCrashed, msg: "all goroutines are asleep"},
		{name: "allocation bomb", fn: "k", src: body("\tvar keep [][]byte\n\tfor {\n\t\tkeep = append(keep, make([]byte, 1<<20))\n\t}"),
			want: ErrMemory, msg: "out of memory: the child may use 1 GiB of address space"},
		{name: "one huge allocation", fn: "k", src: body("\tb := make([]float32, 1<<40)\n\tout.Store(t, 0, b[len(b)-1])"), want: ErrMemory},
		{name: "deep recursion", fn: "k", src: body("\tdeep(0)", "func deep(n int) int { return deep(n+1) + 1 }\n\n"),
			want: ErrStack, msg: "the stack outgrew its limit"},
		{name: "compile bomb", fn: "k", slow: true, want: ErrCompile, msg: "the compiler ran out of its 2 GiB of memory",
			// 2^33 copies of 16 bytes: a 128 GiB constant.
			src: body("\t_ = s33[5]", bomb()),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.slow && testing.Short() {
				t.Skip("slow: runs into a limit of seconds")
			}
			c := testConfig()
			if tt.cfg != nil {
				tt.cfg(&c)
			}
			learner := tt.learner
			if learner == "" {
				learner = "ada"
			}
			r, err := c.Run(context.Background(), Kernel{Exercise: "10-kernels/strided-copy", Learner: learner, Source: tt.src, Func: tt.fn})
			if tt.want != nil {
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

// bomb is 35 consts that double a string: s33 is 2^33 × 16 bytes.
func bomb() string {
	var b strings.Builder
	b.WriteString("const s0 = \"xxxxxxxxxxxxxxxx\"\n")
	for i := 1; i <= 33; i++ {
		fmt.Fprintf(&b, "const s%d = s%d + s%d\n", i, i-1, i-1)
	}
	return b.String() + "\n"
}

func itoa(i int) string {
	return strings.TrimSpace(strings.Repeat(" ", 0) + string(rune('0'+i/10)) + string(rune('0'+i%10)))
}

// TestRefusedBeforeBuild holds that a refused source never reaches the
// compiler: with no go command, the refusal still comes back.
func TestRefusedBeforeBuild(t *testing.T) {
	c := Config{Go: "/nonexistent/go", GradePackage: standIn}
	_, err := c.Run(context.Background(), Kernel{Exercise: "x", Learner: "ada", Source: "import \"os\"\n\nfunc k() { os.Exit(0) }\n", Func: "k"})
	assert.ErrorIs(t, err, ErrRefused)
}

// TestMachineErrors holds that what is wrong with the grading machine is
// not an *Error: it says nothing of the kernel.
func TestMachineErrors(t *testing.T) {
	for name, c := range map[string]Config{
		"no course": {CourseRoot: t.TempDir(), GradePackage: standIn},
		"no go":     {Go: "/nonexistent/go", GradePackage: standIn},
		// The default, until lessons/exercises is in the module.
		"no grade package": {GradePackage: CourseModule + "/lessons/nonexistent"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := c.Run(context.Background(), Kernel{Exercise: "x", Learner: "ada", Source: good, Func: "copyK"})
			require.Error(t, err)
			var e *Error
			assert.False(t, errors.As(err, &e), "%v", err)
		})
	}
}

// The real exercises (lessons/exercises), graded in the child as coalesce
// grade -kernels grades them: a gather whose host step sorts the keys
// passes (its report's points: 1 for the output, 1 for each of the two
// targets), and the same kernel with the keys as they came misses the
// load target; a plain func kernel takes the other path.
func TestRealExercises(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the real exercises package in a child: seconds; run without -short")
	}
	const kernel = `import (
	"slices"

	"github.com/coalescing-course/coalesce/lessons/simt"
)

func sortKeys(keys []int32) []int32 { slices.Sort(keys); return keys }

func asGiven(keys []int32) []int32 { return keys }

func gather(t *simt.Thread, table *simt.Global[float32], keys, outKey *simt.Global[int32], outVal *simt.Global[float32], n int) {
	if i := t.BlockIdx.X*t.BlockDim.X + t.ThreadIdx.X; i < n {
		k := keys.Load(t, i)
		outKey.Store(t, i, k)
		outVal.Store(t, i, table.Load(t, int(k)))
	}
}

func copyGrid(t *simt.Thread, in, out *simt.Global[float32], n, k int) {
	T := t.GridDim.X * t.BlockDim.X
	for i := t.BlockIdx.X*t.BlockDim.X + t.ThreadIdx.X; i < n; i += T {
		out.Store(t, i, in.Load(t, i))
	}
}
`
	c := testConfig()
	c.GradePackage = DefaultGradePackage
	for _, tt := range []struct {
		name, id, fn, order string
		pass                bool
		points              float64
	}{
		{name: "gather sorted", id: "10-kernels/gather", fn: "gather", order: "sortKeys", pass: true, points: 3},
		{name: "gather as given", id: "10-kernels/gather", fn: "gather", order: "asGiven", pass: false, points: 2},
		{name: "coalesced copy", id: "10-kernels/strided-copy", fn: "copyGrid", pass: true, points: 3},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res, err := c.Run(context.Background(), Kernel{Exercise: tt.id, Learner: "ada", Source: kernel, Func: tt.fn, Order: tt.order})
			require.NoError(t, err)
			var rep struct {
				Pass    bool    `json:"pass"`
				Correct bool    `json:"correct"`
				Points  float64 `json:"points"`
				Learner string  `json:"learner"`
				Error   string  `json:"error"`
			}
			require.NoError(t, json.Unmarshal(res.Report, &rep), string(res.Report))
			assert.Empty(t, rep.Error)
			assert.True(t, rep.Correct)
			assert.Equal(t, tt.pass, rep.Pass, string(res.Report))
			assert.Equal(t, tt.points, rep.Points)
			assert.Equal(t, "ada", rep.Learner)
		})
	}
	_, err := c.Run(context.Background(), Kernel{Exercise: "10-kernels/gather", Source: kernel, Func: "gather", Order: "no such"})
	assert.ErrorIs(t, err, ErrRefused, "an order that is no Go name")
}
