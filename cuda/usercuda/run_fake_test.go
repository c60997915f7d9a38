package usercuda

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coalescing-course/coalesce/cuda"
	"github.com/coalescing-course/coalesce/cuda/toolkit"
	"github.com/coalescing-course/coalesce/internal/faketool"
	"github.com/coalescing-course/coalesce/lessons/measure"
	"github.com/coalescing-course/coalesce/lessons/metrics"
)

// fakeUserNvcc stands in for nvcc: --version prints a version; a build
// appends a line to $FAKE_NVCC_CALLS, keeps the source it was given in
// $FAKE_NVCC_SRC, prints $FAKE_NVCC_STDERR (WORK replaced by its working
// directory, the build directory) and exits $FAKE_NVCC_EXIT, or copies
// $FAKE_PROGRAM to its -o.
const fakeUserNvcc = `
case "$1" in --version) echo "Cuda compilation tools, release 13.0, V13.0.88"; exit 0;; esac
echo run >> "$FAKE_NVCC_CALLS"
out=""; src=""
while [ $# -gt 0 ]; do case "$1" in -o) out="$2"; shift;; *.cu) src="$1";; esac; shift; done
cp "$src" "$FAKE_NVCC_SRC"
if [ -n "$FAKE_NVCC_STDERR" ]; then printf '%s\n' "$FAKE_NVCC_STDERR" | sed "s|WORK|$PWD|g" >&2; fi
if [ "${FAKE_NVCC_EXIT:-0}" != 0 ]; then exit "$FAKE_NVCC_EXIT"; fi
cp "$FAKE_PROGRAM" "$out"
`

// fakeProgram stands in for a compiled kernel program run as `program
// DIR`: it appends DIR/plan.json to $FAKE_LAUNCHES and, as $FAKE_PROG
// says, copies in0.bin to out1.bin and answers ok (times only when not
// once), answers a misaligned address, answers no device, or hangs with a
// grandchild that ignores interrupts (its pid in $FAKE_PID).
const fakeProgram = `
dir="$1"
cat "$dir/plan.json" >> "$FAKE_LAUNCHES"; echo "--" >> "$FAKE_LAUNCHES"
case "$FAKE_PROG" in
ok)
  cp "$dir/in0.bin" "$dir/out1.bin"
  times='[0.3,0.1,0.2]'; grep -q '"once":true' "$dir/plan.json" && times='[]'
  echo '{"status":"ok","gpu":"Fake GPU","cc":"9.0","registers":8,"warmup":3,"times_ms":'"$times"'}' > "$dir/result.json";;
fault)
  echo '{"status":"error","phase":"run","cuda_error":"cudaErrorMisalignedAddress","error":"misaligned address","call":"cudaDeviceSynchronize()","gpu":"Fake GPU"}' > "$dir/result.json"
  exit 1;;
nodevice)
  echo '{"status":"error","phase":"setup","cuda_error":"cudaErrorNoDevice","error":"no CUDA device","call":"cudaGetDeviceCount","gpu":""}' > "$dir/result.json"
  exit 3;;
hang)
  sleep 60 > /dev/null 2>&1 &
  echo $! > "$FAKE_PID"
  wait;;
esac
`

// fakeWrapper stands in for ncu and compute-sanitizer: it keeps its
// arguments in $FAKE_TOOL_ARGS, counts its runs in $FAKE_TOOL_CALLS, runs
// the program (its last two arguments: program DIR), prints
// $FAKE_TOOL_STDOUT's file and exits $FAKE_TOOL_EXIT, or as the program.
const fakeWrapper = `
echo "$*" > "$FAKE_TOOL_ARGS"
echo run >> "$FAKE_TOOL_CALLS"
prog=""; dir=""
for a in "$@"; do prog="$dir"; dir="$a"; done
"$prog" "$dir" > /dev/null 2>&1; code=$?
[ -n "$FAKE_TOOL_STDOUT" ] && cat "$FAKE_TOOL_STDOUT"
exit "${FAKE_TOOL_EXIT:-$code}"
`

type userFake struct {
	t   *testing.T
	dir string
	gpu *cuda.GPU
	san *toolkit.Sanitizer
}

// run runs k on the fake GPU under the fake compute-sanitizer.
func (f *userFake) run(ctx context.Context, k *Kernel, o Options) (*Result, error) {
	o.Sanitizer = f.san
	return Run(ctx, f.gpu, k, o)
}

func newUserFake(t *testing.T, prog string) *userFake {
	t.Helper()
	faketool.NeedSh(t)
	dir := t.TempDir()
	f := &userFake{t: t, dir: dir}
	wrapper := faketool.Script(t, dir, "wrapper", fakeWrapper)
	f.gpu = &cuda.GPU{
		Info:    measure.DeviceInfo{GPU: "Fake GPU"},
		Ncu:     &toolkit.Ncu{Path: wrapper},
		Builder: cuda.Builder{Nvcc: toolkit.Nvcc{Path: faketool.Script(t, dir, "nvcc", fakeUserNvcc)}, CacheDir: filepath.Join(dir, "cache")},
	}
	f.san = &toolkit.Sanitizer{Path: wrapper}
	env := map[string]string{
		"FAKE_NVCC_CALLS": "nvcc-calls", "FAKE_NVCC_SRC": "compiled.cu", "FAKE_LAUNCHES": "launches",
		"FAKE_PID": "pid", "FAKE_TOOL_ARGS": "tool-args", "FAKE_TOOL_CALLS": "tool-calls",
	}
	for k, v := range env {
		t.Setenv(k, filepath.Join(dir, v))
	}
	for _, k := range []string{"FAKE_NVCC_STDERR", "FAKE_NVCC_EXIT", "FAKE_TOOL_STDOUT", "FAKE_TOOL_EXIT"} {
		t.Setenv(k, "")
	}
	t.Setenv("FAKE_PROGRAM", faketool.Script(t, dir, "program", fakeProgram))
	t.Setenv("FAKE_PROG", prog)
	return f
}

func (f *userFake) read(name string) string {
	data, err := os.ReadFile(filepath.Join(f.dir, name))
	if os.IsNotExist(err) {
		return ""
	}
	require.NoError(f.t, err)
	return string(data)
}

func (f *userFake) toolOutput(text string) {
	p := filepath.Join(f.dir, "tool-stdout")
	require.NoError(f.t, os.WriteFile(p, []byte(text), 0o644))
	f.t.Setenv("FAKE_TOOL_STDOUT", p)
}

func TestCompile(t *testing.T) {
	t.Run("compiled once, then from the cache", func(t *testing.T) {
		f := newUserFake(t, "ok")
		k := copyKernel()
		p, err := Compile(context.Background(), f.gpu.Builder, k, toolkit.ArchNative())
		require.NoError(t, err)
		assert.False(t, p.Cached)
		assert.Equal(t, filepath.Join(f.dir, "cache", "kernel-"+p.Key), p.Path)
		src, err := k.Source()
		require.NoError(t, err)
		assert.Equal(t, src, f.read("compiled.cu"), "nvcc gets the generated program")
		again, err := Compile(context.Background(), f.gpu.Builder, k, toolkit.ArchNative())
		require.NoError(t, err)
		assert.True(t, again.Cached)
		assert.Equal(t, p.Path, again.Path)
		assert.Equal(t, 1, strings.Count(f.read("nvcc-calls"), "run"), "the second is a file lookup")
		other, err := Compile(context.Background(), f.gpu.Builder, k, toolkit.ArchFat())
		require.NoError(t, err)
		assert.NotEqual(t, p.Key, other.Key, "another architecture is another program")
	})
	t.Run("nvcc's message with the learner's lines", func(t *testing.T) {
		f := newUserFake(t, "ok")
		t.Setenv("FAKE_NVCC_EXIT", "2")
		// nvcc's format: file(line): severity: message, the source line
		// and a caret, then a count naming the file compiled.
		t.Setenv("FAKE_NVCC_STDERR", `WORK/kernel.cu(2): warning #177-D: variable "j" was declared but never referenced
WORK/kernel.cu(3): error: identifier "x" is undefined
      out[i] = x;
               ^

1 error detected in the compilation of "WORK/kernel.cu".`)
		_, err := Compile(context.Background(), f.gpu.Builder, copyKernel(), toolkit.ArchNative())
		var ce *CompileError
		require.ErrorAs(t, err, &ce)
		assert.Equal(t, `kernel.cu(2): warning #177-D: variable "j" was declared but never referenced
kernel.cu(3): error: identifier "x" is undefined
      out[i] = x;
               ^

1 error detected in the compilation of "kernel.cu".
`, ce.Log)
		assert.Equal(t, []Diagnostic{
			{File: "kernel.cu", Line: 2, Severity: "warning", Message: `variable "j" was declared but never referenced`},
			{File: "kernel.cu", Line: 3, Severity: "error", Message: `identifier "x" is undefined`},
		}, ce.Diagnostics)
		assert.True(t, strings.HasPrefix(err.Error(), "cuda: kernel copy does not compile:\nkernel.cu(2): warning"))
		assert.NotContains(t, err.Error(), "unbalanced")
		entries, err := os.ReadDir(filepath.Join(f.dir, "cache"))
		require.NoError(t, err)
		assert.Empty(t, entries, "no program and no build directory is left")
	})
	t.Run("an error in the generated lines says why", func(t *testing.T) {
		f := newUserFake(t, "ok")
		t.Setenv("FAKE_NVCC_EXIT", "1")
		t.Setenv("FAKE_NVCC_STDERR", `coalesce_host.cu(22): error: expected a declaration`)
		_, err := Compile(context.Background(), f.gpu.Builder, copyKernel(), toolkit.ArchNative())
		var ce *CompileError
		require.ErrorAs(t, err, &ce)
		assert.Equal(t, []Diagnostic{{File: "coalesce_host.cu", Line: 22, Severity: "error", Message: "expected a declaration"}}, ce.Diagnostics)
		assert.Contains(t, err.Error(), "usually means a { or } too many or too few in the kernel's body")
	})
}

func TestParseNvccLog(t *testing.T) {
	got := parseNvccLog("ptxas error   : Entry function 'copy' uses too much shared data (0x40000 bytes, 0xc000 max)\nkernel.cu(1): catastrophic error: cannot open source file \"x.h\"\n  #include \"x.h\"\n")
	assert.Equal(t, []Diagnostic{
		{File: "ptxas", Severity: "error", Message: "Entry function 'copy' uses too much shared data (0x40000 bytes, 0xc000 max)"},
		{File: "kernel.cu", Line: 1, Severity: "fatal", Message: `cannot open source file "x.h"`},
	}, got)
}

func TestPruneKernels(t *testing.T) {
	dir := t.TempDir()
	old := time.Now().Add(-time.Hour)
	for i, name := range []string{"kernel-a", "kernel-b", "kernel-c"} {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, nil, 0o755))
		at := old.Add(time.Duration(i) * time.Minute)
		require.NoError(t, os.Chtimes(p, at, at))
	}
	require.NoError(t, os.Mkdir(filepath.Join(dir, "kernel-build-1"), 0o755))
	pruneKernels(dir, 2)
	left, err := filepath.Glob(filepath.Join(dir, "kernel-*"))
	require.NoError(t, err)
	assert.Equal(t, []string{filepath.Join(dir, "kernel-b"), filepath.Join(dir, "kernel-build-1"), filepath.Join(dir, "kernel-c")}, left,
		"the least recently used program goes; a build directory is not a program")
}

func TestRunFake(t *testing.T) {
	ctx := context.Background()
	t.Run("outputs and times", func(t *testing.T) {
		f := newUserFake(t, "ok")
		k := copyKernel()
		res, err := f.run(ctx, k, Options{})
		require.NoError(t, err)
		assert.Equal(t, "Fake GPU", res.GPU)
		assert.Equal(t, map[string][]byte{"out": k.Args[0].Data}, res.Outputs)
		assert.Equal(t, []float64{0.3, 0.1, 0.2}, res.TimesMs)
		assert.Equal(t, 0.2, res.MedianMs)
		assert.Equal(t, 8, res.Registers)
		assert.Nil(t, res.Sanitizer)
		assert.Nil(t, res.Counters)
		assert.NoError(t, res.CountersErr)
		// One plan (cuda.PlanWriter's, one line): the launch of
		// copyKernel, the defaults of Options (3 warm-up, 20 timed
		// launches, the L2 flushed), in's data given, out read back.
		assert.Equal(t, `{"kernel":"copy","grid_x":4,"grid_y":1,"grid_z":1,"block_x":256,"block_y":1,"block_z":1,"shared_bytes":0,`+
			`"warmup":3,"reps":20,"flush":true,"once":false,`+
			`"arg0_kind":"ptr","arg0_bytes":4000,"arg0_input":true,"arg0_output":false,`+
			`"arg1_kind":"ptr","arg1_bytes":4000,"arg1_input":false,"arg1_output":true,`+
			`"arg2_kind":"int","arg2_int":1000}`+"\n--\n", f.read("launches"))
	})
	t.Run("a float value, a 2D launch, no flush", func(t *testing.T) {
		f := newUserFake(t, "ok")
		k := copyKernel()
		k.Args[2] = Arg{Name: "scale", CType: "float", Float: -1.5}
		k.Grid, k.Block, k.SharedBytes = Dim3{X: 2, Y: 3}, Dim3{X: 32, Y: 8}, 4224
		_, err := f.run(ctx, k, Options{NoFlush: true, Warmup: 1, Reps: 5})
		require.NoError(t, err)
		// -1.5 as a hex float, which strtod reads back exactly.
		assert.Contains(t, f.read("launches"), `"grid_x":2,"grid_y":3,"grid_z":1,"block_x":32,"block_y":8,"block_z":1,"shared_bytes":4224,"warmup":1,"reps":5,"flush":false,"once":false,`)
		assert.Contains(t, f.read("launches"), `"arg2_kind":"float","arg2_float":"-0x1.8p+00"}`)
	})
	t.Run("a fault", func(t *testing.T) {
		f := newUserFake(t, "fault")
		_, err := f.run(ctx, copyKernel(), Options{})
		var le *LaunchError
		require.ErrorAs(t, err, &le)
		assert.Equal(t, LaunchError{Kernel: "copy", Phase: "run", CUDAError: "cudaErrorMisalignedAddress", Message: "misaligned address", Call: "cudaDeviceSynchronize()"}, *le)
		assert.Contains(t, err.Error(), "cuda: kernel copy failed while it ran: misaligned address (cudaErrorMisalignedAddress): a misaligned address: a load or store of N bytes")
	})
	t.Run("no GPU", func(t *testing.T) {
		f := newUserFake(t, "nodevice")
		_, err := f.run(ctx, copyKernel(), Options{})
		assert.ErrorIs(t, err, toolkit.ErrNoGPU)
		assert.ErrorContains(t, err, "no CUDA device")
	})
	t.Run("a kernel that never returns is killed, its process group with it", func(t *testing.T) {
		f := newUserFake(t, "hang")
		_, err := f.run(ctx, copyKernel(), Options{Timeout: 300 * time.Millisecond})
		var te *TimeoutError
		require.ErrorAs(t, err, &te)
		assert.Equal(t, 300*time.Millisecond, te.Timeout)
		assert.False(t, te.Err.Survived)
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		assert.Contains(t, err.Error(), "cuda: kernel copy did not finish within 300ms and was stopped")
		pid, perr := strconv.Atoi(strings.TrimSpace(f.read("pid")))
		require.NoError(t, perr)
		// The grandchild ignored the interrupt; it is gone all the same.
		assert.True(t, processGone(pid), "pid %d still runs", pid)
	})
	t.Run("memcheck findings stop the run", func(t *testing.T) {
		f := newUserFake(t, "ok")
		sample, err := os.ReadFile(filepath.Join("testdata", "sanitizer_memcheck.txt"))
		require.NoError(t, err)
		f.toolOutput(string(sample))
		t.Setenv("FAKE_TOOL_EXIT", strconv.Itoa(toolkit.SanitizerExit))
		res, err := f.run(ctx, copyKernel(), Options{Check: toolkit.Memcheck})
		var se *SanitizerError
		require.ErrorAs(t, err, &se)
		require.NotNil(t, res)
		assert.Same(t, se.Report, res.Sanitizer)
		assert.Len(t, se.Report.Findings, 3)
		assert.Nil(t, res.TimesMs)
		assert.Equal(t, 1, strings.Count(f.read("launches"), "--"), "the program ran once, under the sanitizer")
		assert.Contains(t, f.read("launches"), `"once":true`)
		args := strings.Fields(f.read("tool-args"))
		require.GreaterOrEqual(t, len(args), 8)
		assert.Equal(t, []string{"--tool", "memcheck", "--error-exitcode", "86", "--print-limit", "20"}, args[:6])
	})
	t.Run("a clean check, then the timed run", func(t *testing.T) {
		f := newUserFake(t, "ok")
		f.toolOutput("========= COMPUTE-SANITIZER\n========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)\n")
		res, err := f.run(ctx, copyKernel(), Options{Check: toolkit.Racecheck})
		require.NoError(t, err)
		require.NotNil(t, res.Sanitizer)
		assert.True(t, res.Sanitizer.Clean())
		assert.Equal(t, []float64{0.3, 0.1, 0.2}, res.TimesMs)
		assert.Equal(t, 2, strings.Count(f.read("launches"), "--"))
	})
	t.Run("an unknown check", func(t *testing.T) {
		f := newUserFake(t, "ok")
		_, err := f.run(ctx, copyKernel(), Options{Check: "initcheck"})
		assert.ErrorContains(t, err, `check "initcheck": want "memcheck" or "racecheck"`)
	})
}

// processGone reports whether pid has ended (a zombie has).
func processGone(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return errors.Is(err, os.ErrNotExist)
	}
	i := bytes.LastIndexByte(data, ')')
	return i >= 0 && len(data) > i+2 && (data[i+2] == 'Z' || data[i+2] == 'X')
}

// ncuCSV is what ncu --csv --page raw prints for one profiled launch of
// kernel: a header of the course's metrics, their units, one row.
func ncuCSV(kernel string, values map[string]string) string {
	header := []string{`"ID"`, `"Process ID"`, `"Kernel Name"`}
	units := []string{`""`, `""`, `""`}
	row := []string{`"0"`, `"4242"`, `"` + kernel + `"`}
	for _, m := range metrics.Profiled {
		header = append(header, `"`+m+`"`)
		units = append(units, `""`)
		v := values[m]
		if v == "" {
			v = "0"
		}
		row = append(row, `"`+v+`"`)
	}
	return "==PROF== Connected to process 4242\n" + strings.Join(header, ",") + "\n" + strings.Join(units, ",") + "\n" + strings.Join(row, ",") + "\n"
}

func TestRunCounters(t *testing.T) {
	ctx := context.Background()
	t.Run("ncu's counts for the kernel's launch", func(t *testing.T) {
		f := newUserFake(t, "ok")
		// 1000 floats: 4000 bytes, 125 sectors of 32 bytes.
		f.toolOutput(ncuCSV("copy", map[string]string{metrics.LdSectors: "125", metrics.StSectors: "125", metrics.LdRequests: "32"}))
		res, err := f.run(ctx, copyKernel(), Options{Counters: true})
		require.NoError(t, err)
		assert.NoError(t, res.CountersErr)
		assert.Equal(t, 125.0, res.Counters[metrics.LdSectors])
		assert.Equal(t, 32.0, res.Counters[metrics.LdRequests])
		assert.Len(t, res.Counters, len(metrics.Profiled))
		args := f.read("tool-args")
		assert.Contains(t, args, "--clock-control none --metrics "+strings.Join(metrics.Profiled, ","))
		assert.Contains(t, args, "--kernel-name regex:^copy$ --launch-count 1 ")
		assert.Contains(t, f.read("launches"), `"once":true`, "ncu profiles a single launch")
	})
	t.Run("another kernel profiled", func(t *testing.T) {
		f := newUserFake(t, "ok")
		f.toolOutput(ncuCSV("coalesce_host::flush_l2", nil))
		_, err := f.run(ctx, copyKernel(), Options{Counters: true})
		var oe *toolkit.OutputError
		require.ErrorAs(t, err, &oe)
		assert.Contains(t, err.Error(), `profiled kernels ["coalesce_host::flush_l2"]: want the one launch of copy`)
	})
	t.Run("counters denied: times kept, ncu not asked again", func(t *testing.T) {
		f := newUserFake(t, "ok")
		f.toolOutput(faketool.NcuDenied)
		t.Setenv("FAKE_TOOL_EXIT", "1")
		for range 2 {
			res, err := f.run(ctx, copyKernel(), Options{Counters: true})
			require.NoError(t, err)
			assert.Equal(t, 0.2, res.MedianMs)
			assert.Nil(t, res.Counters)
			var d *toolkit.CountersDeniedError
			require.ErrorAs(t, res.CountersErr, &d)
			assert.ErrorIs(t, res.CountersErr, toolkit.ErrCountersDenied)
			assert.ErrorIs(t, res.CountersErr, measure.ErrNoCounters)
			assert.Equal(t, "Fake GPU", d.GPU)
		}
		assert.Equal(t, 1, strings.Count(f.read("tool-calls"), "run"))
	})
	t.Run("no ncu", func(t *testing.T) {
		f := newUserFake(t, "ok")
		f.gpu.Ncu, f.gpu.NoNcu = nil, "ncu not found on PATH"
		res, err := f.run(ctx, copyKernel(), Options{Counters: true})
		require.NoError(t, err)
		assert.ErrorIs(t, res.CountersErr, measure.ErrNoCounters)
		assert.ErrorContains(t, res.CountersErr, "ncu not found on PATH")
	})
}

func TestRunUserKernelLines(t *testing.T) {
	ctx := context.Background()
	t.Run("the body's lines from ncu's source page", func(t *testing.T) {
		f := newUserFake(t, "ok")
		// What ncu printed for a select load on the H200 (run 1), its
		// kernel renamed: the load the body writes on lines 6 and 8 sits
		// on line 9 with the store.
		page, err := os.ReadFile("../toolkit/testdata/ncusource/bl_select.source.csv")
		require.NoError(t, err)
		f.toolOutput(strings.ReplaceAll(string(page), `"select_load"`, `"copy"`))
		res, err := f.run(ctx, copyKernel(), Options{Lines: true})
		require.NoError(t, err)
		require.NoError(t, res.LinesErr)
		var lines []int
		for _, l := range res.Lines {
			lines = append(lines, l.Line)
			assert.Equal(t, "kernel.cu", l.File, "the generated host lines are left out")
		}
		assert.Equal(t, []int{2, 3, 5, 8, 9, 11}, lines)
		args := f.read("tool-args")
		assert.Contains(t, args, "--section SourceCounters --kernel-name regex:^copy$ --launch-count 1 --page source --print-source cuda,sass --csv")
	})
	t.Run("another kernel's page", func(t *testing.T) {
		f := newUserFake(t, "ok")
		page, err := os.ReadFile("../toolkit/testdata/ncusource/bl_select.source.csv")
		require.NoError(t, err)
		f.toolOutput(string(page))
		_, err = f.run(ctx, copyKernel(), Options{Lines: true})
		assert.ErrorContains(t, err, `source pages of ["select_load"]: want the one of copy`)
	})
	t.Run("no ncu", func(t *testing.T) {
		f := newUserFake(t, "ok")
		f.gpu.Ncu, f.gpu.NoNcu = nil, "ncu not found on PATH"
		res, err := f.run(ctx, copyKernel(), Options{Lines: true})
		require.NoError(t, err)
		assert.ErrorIs(t, res.LinesErr, measure.ErrNoCounters)
	})
}
