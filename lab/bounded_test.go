package lab

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// trycell builds testdata/trycell, a notebook cell's program that calls
// Try with the kernel its argument names, once for the package's tests.
var trycell = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "lab-trycell-")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "trycell")
	out, err := exec.Command("go", "build", "-o", bin, "./testdata/trycell").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build ./testdata/trycell: %v\n%s", err, out)
	}
	return bin, nil
})

// The limits the hostile suite runs its cells under: small, so that it is
// quick, and what a hub would set for a crowded node.
const (
	suiteTimeout = 2 * time.Second
	suiteMemory  = 256 << 20
)

// cellRun is what one run of the cell program did: its output, how long
// it took, and the peak memory of its whole process tree (the cell's
// program and Try's child), sampled every few milliseconds.
type cellRun struct {
	out     string
	elapsed time.Duration
	peak    int64
	err     error
}

// runCell runs the cell program on kernel name under the suite's limits.
func runCell(t *testing.T, name string) cellRun {
	t.Helper()
	return runCellWith(t, name, []string{TryTimeoutEnv + "=" + suiteTimeout.String(), fmt.Sprintf("%s=%d", TryMemoryEnv, suiteMemory)})
}

// runCellWith runs the cell program on kernel name with env added to the
// test's environment.
func runCellWith(t testing.TB, name string, env []string) cellRun {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("Try bounds a kernel in a child on Linux only")
	}
	bin, err := trycell()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, name)
	cmd.Env = append(append(os.Environ(), LearnerEnv+"=", "JUPYTERHUB_USER="), env...)
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var peak atomic.Int64
	var sampled sync.WaitGroup
	sampled.Add(1)
	go func() {
		defer sampled.Done()
		for {
			if m := treeRSS(cmd.Process.Pid); m > peak.Load() {
				peak.Store(m)
			}
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	err = cmd.Wait()
	elapsed := time.Since(start)
	close(stop)
	sampled.Wait()
	t.Logf("%s: %s, peak of the process tree %d MiB", name, elapsed.Round(time.Millisecond), peak.Load()>>20)
	if ctx.Err() != nil {
		err = fmt.Errorf("the cell program ran past a minute: %w", err)
	}
	return cellRun{out: buf.String(), elapsed: elapsed, peak: peak.Load(), err: err}
}

// treeRSS sums the resident memory of process root and every process
// descended from it (/proc: each process's parent, and its statm).
func treeRSS(root int) int64 {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	parent := map[int]int{}
	for _, p := range stats {
		data, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		i := bytes.LastIndexByte(data, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(data[i+1:]))
		pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(p)))
		if len(f) > 1 {
			parent[pid], _ = strconv.Atoi(f[1])
		}
	}
	var sum int64
	for pid := range parent {
		for p := pid; p > 1; p = parent[p] {
			if p != root {
				continue
			}
			data, err := os.ReadFile(fmt.Sprintf("/proc/%d/statm", pid))
			if f := strings.Fields(string(data)); err == nil && len(f) > 1 {
				pages, _ := strconv.ParseInt(f[1], 10, 64)
				sum += pages * int64(os.Getpagesize())
			}
			break
		}
	}
	return sum
}

// The hostile class of the notebook side, by kind: loops with and without
// accesses, memory taken without end or in one huge buffer, recursion,
// output floods, launches inside the kernel, recovered faults, a process
// that exits or crashes, an Order that never returns. Each cell program
// runs Try on one under the suite's limits (2 s, 256 MiB), and must end
// within a hang guard three times above its goal (the limit and a second
// of start), its whole process tree's memory within the limit and 128 MiB
// for the two Go runtimes, with the verdict and the sentence its kind
// gets, where the kernel was, and the cell's own line printed once. A new
// member joins with its kernel in testdata/trycell and a row here.
func TestTryHostile(t *testing.T) {
	tests := []struct {
		kernel string
		// goal is how long the cell should take: the time limit, or
		// about nothing for a kernel stopped by simt or its crash.
		goal time.Duration
		want []string // regular expressions, each of which the output must match
	}{
		{"copy", time.Second, []string{`: passed\n`, `Copy line 6\s+load`}},
		{"stuck", time.Second, []string{`: faulted\n`, `simt: the kernel does not finish: block \(0,0\) thread \(0,0\): its block made 1048576 accesses`, `a loop that never ends\?`}},
		{"spin", suiteTimeout + time.Second, []string{`: stopped\n`, `The kernel did not finish after [\d.]+s and 0 accesses, none in its last [\d.]+s: a loop that never ends\?`, `It was at Spin( line \d+: for \{)?\.`}}, // the loop's line when the stopped frame maps to one
		{"hoard", time.Second, []string{`: stopped\n`, `of memory`, `an allocation that never ends, or a buffer too big\?`, `It was at Hoard line \d: `}},
		{"huge", time.Second, []string{`: stopped\n`, `ran out of its 256 MiB of memory \(COALESCE_TRY_MEMORY\)`, `It was at Huge line 2: b := make\(\[\]float32, 2<<30\)`}},
		{"recurse", time.Second, []string{`: stopped\n`, `The kernel's stack grew past its limit of 64 MiB: a recursion that never ends\?`, `It was at depth line [1-4]: (func depth|var pad|pad\[|return depth)`}},
		{"flood", suiteTimeout + time.Second, []string{`: stopped\n`, `… the kernel printed [\d.]+ [MK]iB more, not shown \(lab shows the first 64 KiB of each stream\)`, `It was at Flood line 3: fmt\.Println`}},
		{"nested", time.Second, []string{`: faulted\n`, `simt: work outside the launch: block \(0,0\) thread \(0,0\): Launch\.Run at main\.go:\d+ inside the kernel`}},
		{"hidden", time.Second, []string{`: faulted\n`, `simt: bad access: block \(0,0\) thread \(0,0\): out\.Store\(t, 100000\)`}},
		{"exit", time.Second, []string{`: stopped\n`, `The kernel's process ended before the kernel finished, with no error: os\.Exit in the kernel`}},
		{"gopanic", time.Second, []string{`: stopped\n`, `The kernel's process crashed: panic: a goroutine of the kernel's\.`, `It was at GoPanic\.func1`}},
		{"after-spin", 2*suiteTimeout + 2*time.Second, []string{`: stopped\n(.|\n)*: passed\n`, `trycell: pass=true`}},
		{"slow-order", suiteTimeout + time.Second, []string{`: stopped\n`, `The kernel did not finish after [\d.]+s`, `It was at SlowOrder line 3: keys\[0\] = keys\[0\] \+ 0`}},
	}
	for _, tt := range tests {
		t.Run(tt.kernel, func(t *testing.T) {
			// Each cell is its own process tree, bounded alone: most of
			// them wait out a time limit, which they may as well do
			// together.
			t.Parallel()
			r := runCell(t, tt.kernel)
			require.NoError(t, r.err, r.out)
			for _, w := range tt.want {
				assert.Regexp(t, regexp.MustCompile(w), r.out)
			}
			assert.Equal(t, 1, strings.Count(r.out, "trycell: the cell's code before lab.Try"), "the child's run of the cell's code is not shown")
			assert.Regexp(t, `trycell: pass=(true|false) elapsed=`, r.out, "Try returned to the cell")
			assert.Less(t, r.elapsed, 3*(tt.goal+time.Second), "the hang guard: three times the goal")
			assert.Less(t, r.peak, int64(suiteMemory+128<<20), "the process tree's peak memory")
		})
	}
}

// BenchmarkTryHostile is the figure of the bounds with the default limits
// (10 s, 512 MiB): for each kind of kernel that does not end well, the
// time from the cell's start to Try's message and the peak memory of the
// cell's whole process tree (go test -run '^$' -bench TryHostile
// -benchtime 1x ./lab).
func BenchmarkTryHostile(b *testing.B) {
	for _, name := range []string{"copy", "stuck", "spin", "hoard", "huge", "recurse", "flood"} {
		b.Run(name, func(b *testing.B) {
			var elapsed time.Duration
			var peak int64
			for b.Loop() {
				r := runCellWith(b, name, []string{TryTimeoutEnv + "=", TryMemoryEnv + "="})
				if r.err != nil {
					b.Fatal(r.err, r.out)
				}
				elapsed += r.elapsed
				peak = max(peak, r.peak)
			}
			b.ReportMetric(float64(elapsed.Milliseconds())/float64(b.N), "ms/message")
			b.ReportMetric(float64(peak>>20), "peak-MiB")
		})
	}
}

// The child's environment leaves GoNB's pipes, the spec log and the
// attempts out, measures from the recording, and says which run it is.
func TestChildEnv(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("Linux only")
	}
	t.Setenv("GONB_PIPE", "/tmp/pipe")
	t.Setenv("GONB_PIPE_BACK", "/tmp/back")
	t.Setenv(SpecLogEnv, "/tmp/specs.jsonl")
	t.Setenv("GOMAXPROCS", "8")
	env := strings.Join(childEnv(3, TryLimits{Timeout: 2500 * time.Millisecond, Memory: 1 << 28}), "\n") + "\n"
	for _, gone := range []string{"GONB_PIPE=", "GONB_PIPE_BACK=", SpecLogEnv + "=", "GOMAXPROCS=8"} {
		assert.NotContains(t, env, "\n"+gone)
	}
	for _, kept := range []string{"COALESCE_ATTEMPTS=off\n", "COALESCE_MEASURE=recorded\n", "GOMAXPROCS=1\n", tryChildEnv + "=n=3,timeout=2500,memory=268435456\n"} {
		assert.Contains(t, env, kept)
	}
}

func TestTryLimits(t *testing.T) {
	tests := []struct {
		timeout, memory string
		want            TryLimits
		err             string
	}{
		{"", "", DefaultTryLimits, ""},
		{"30s", "1GiB", TryLimits{Timeout: 30 * time.Second, Memory: 1 << 30, Output: DefaultTryLimits.Output}, ""},
		{"1s", "64MiB", TryLimits{Timeout: time.Second, Memory: 64 << 20, Output: DefaultTryLimits.Output}, ""},
		{"", "536870912", DefaultTryLimits, ""},
		{"500ms", "", DefaultTryLimits, `COALESCE_TRY_TIMEOUT="500ms": want a duration from 1s to 10m`},
		{"forever", "", DefaultTryLimits, `COALESCE_TRY_TIMEOUT="forever"`},
		{"", "32MiB", DefaultTryLimits, `COALESCE_TRY_MEMORY="32MiB": want a size from 64MiB to 16GiB`},
		{"", "1TiB", DefaultTryLimits, `COALESCE_TRY_MEMORY="1TiB"`},
		{"", "lots", DefaultTryLimits, `COALESCE_TRY_MEMORY="lots"`},
	}
	for _, tt := range tests {
		t.Run(tt.timeout+"/"+tt.memory, func(t *testing.T) {
			env := map[string]string{TryTimeoutEnv: tt.timeout, TryMemoryEnv: tt.memory}
			got, err := tryLimits(func(k string) string { return env[k] })
			if tt.err != "" {
				assert.ErrorContains(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func FuzzParseBytes(f *testing.F) {
	for _, s := range []string{"512MiB", "1G", "0", "9223372036854775807", "8589934592GiB", "12 KiB", "-1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := parseBytes(s)
		if err == nil {
			assert.GreaterOrEqual(t, n, int64(0), "%q", s)
		}
	})
}

// A traceback's goroutines and frames, as runtime.Stack and a fatal error
// write them; the kernel's goroutine is the one running its function, and
// where names the kernel's line.
func TestTraceback(t *testing.T) {
	text := `fatal error: runtime: out of memory

runtime stack:
runtime.throw({0x7a1b2c?, 0x0?})
	/usr/local/go/src/runtime/panic.go:1101 +0x48

goroutine 1 gp=0xc000002380 m=0 mp=0x9a8f40 [running]:
runtime.systemstack_switch()
	/usr/local/go/src/runtime/asm_amd64.s:479 fp=0xc0000ab6a8 sp=0xc0000ab698 pc=0x47a0a0
main.Hoard(0xc0000a4000, 0x0, 0x0, 0x186a0, 0x8)
	/tmp/gonb_1/main.go:52 +0x1d
github.com/coalescing-course/coalesce/lessons/simt.(*run).call(0xc0001a0000, 0xc0000a4000, 0xc0000b2000)
	/src/lessons/simt/simt.go:500 +0x8c
created by github.com/coalescing-course/coalesce/lessons/simt.Launch.Run in goroutine 18
	/src/lessons/simt/simt.go:280 +0x1b0

goroutine 7 [select]:
github.com/coalescing-course/coalesce/lab.watch(...)
	/src/lab/bounded_linux.go:250 +0x5
`
	gs := parseTraceback(text)
	require.Len(t, gs, 2)
	assert.Equal(t, []frame{
		{"runtime.systemstack_switch", "/usr/local/go/src/runtime/asm_amd64.s", 479},
		{"main.Hoard", "/tmp/gonb_1/main.go", 52},
		{"github.com/coalescing-course/coalesce/lessons/simt.(*run).call", "/src/lessons/simt/simt.go", 500},
	}, gs[0])
	assert.Equal(t, gs[0], kernelFrames(gs, nil), "the goroutine running a simt thread")
	assert.Equal(t, "Hoard (main.go:52)", where(nil, gs[0]), "a function that is not the kernel's: its file and line")
	assert.Empty(t, where(nil, gs[1]), "no frame of the learner's")

	// The kernel's own function: its line counted from its first.
	fn := TestTraceback
	name, first := fullStart(fn)
	frames := []frame{{"runtime.asyncPreempt", "x.s", 1}, {name, "/nowhere/bounded_test.go", first + 3}}
	assert.Equal(t, "TestTraceback line 4", where(fn, frames))
	assert.Equal(t, frames, kernelFrames([][]frame{gs[1], frames}, fn), "the goroutine running the kernel's function")
}

// TestFuncLine: a helper's line is counted within its own func, found
// above the line in the file, as the cell shows it; a line outside any
// func of its name, or a closure's, has none.
func TestFuncLine(t *testing.T) {
	lines := strings.Split(`package main

// depth recurses.
func depth(n int) int {
	var pad [64]byte
	return depth(n+1) + int(pad[0])
}

func (b *buf) grow(n int) {
	b.data = append(b.data, make([]byte, n)...)
}

func Map[T any](xs []T) {
	_ = xs
}

func other() {}`, "\n")
	tests := []struct {
		name string
		line int
		want int
	}{
		{"depth", 6, 4},        // "return depth(...)": line 3 of depth
		{"depth", 4, 4},        // the func line itself: line 1
		{"(*buf).grow", 10, 9}, // a method, as a traceback names it
		{"buf.grow", 10, 9},    // and a value receiver's
		{"Map[...]", 14, 13},   // a generic function
		{"depth", 10, 0},       // in grow, not depth
		{"depth.func1", 6, 0},  // a closure has no func line of its name
		{"depth", 99, 0},       // past the file
		{"other", 17, 17},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s:%d", tt.name, tt.line), func(t *testing.T) {
			assert.Equal(t, tt.want, funcLine(lines, tt.name, tt.line))
		})
	}
}

// Whatever a child's standard error holds (a kernel prints there too),
// reading it as a traceback neither fails nor keeps more than 64 frames a
// goroutine, and where names a frame it was given or nothing.
func FuzzParseTraceback(f *testing.F) {
	f.Add("goroutine 1 [running]:\nmain.K(0x1)\n\t/tmp/main.go:12 +0x1d\n\ngoroutine 2 [select]:\nlab.watch(...)\n\t/x.go:3\n")
	f.Add("fatal error: stack overflow\n\nruntime stack:\nruntime.throw()\n\t/a.s:1\n\ngoroutine 7 gp=0x1 m=0 [running]:\nmain.down(...)\n\t/m.go:5 fp=0x1 sp=0x2 pc=0x3\n...additional frames elided...\ncreated by main.main in goroutine 1\n\t/m.go:9 +0x5\n")
	f.Add("goroutine ")
	f.Fuzz(func(t *testing.T, s string) {
		gs := parseTraceback(s)
		for _, g := range gs {
			assert.LessOrEqual(t, len(g), 64)
		}
		at := where(nil, kernelFrames(gs, nil))
		if at != "" {
			assert.NotContains(t, at, "\n", "one line")
		}
	})
}
