package usercuda

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/coalescing-course/coalesce/cuda"
	"github.com/coalescing-course/coalesce/cuda/toolkit"
	"github.com/coalescing-course/coalesce/lessons/measure"
	"github.com/coalescing-course/coalesce/lessons/metrics"
	"github.com/coalescing-course/coalesce/units"
)

// Program is a learner's kernel compiled into a program, kept in the
// cache directory under the hash of its source, the nvcc version and the
// flags.
type Program struct {
	Path   string
	Key    string
	Arch   []string
	Cached bool // found in the cache, not compiled now
	// Log is what nvcc printed while compiling it (its warnings), the
	// build directory's paths cut to the file names; "" for a cached one.
	Log string
}

// CompileError is a learner's kernel that nvcc refused. Log is nvcc's
// message as it printed it, with the build directory's paths cut, so that
// it reads "kernel.cu(3): error: identifier "x" is undefined": the
// notebook shows it as it is.
type CompileError struct {
	Kernel      string
	Log         string
	Diagnostics []Diagnostic
}

// Diagnostic is one error or warning of nvcc's: the file it names
// ("kernel.cu" for the learner's lines, "coalesce_host.cu" for the
// generated ones), the line (0 when it names none), the severity
// ("error", "warning", "fatal") and the message.
type Diagnostic struct {
	File     string
	Line     int
	Severity string
	Message  string
}

func (e *CompileError) Error() string {
	msg := fmt.Sprintf("cuda: kernel %s does not compile:\n%s", e.Kernel, strings.TrimRight(e.Log, "\n"))
	for _, d := range e.Diagnostics {
		if d.File == hostFile && d.Severity == "error" {
			return msg + "\n(an error in " + hostFile + ", the code the course puts around the kernel, usually means a { or } too many or too few in the kernel's body)"
		}
	}
	return msg
}

// nvccDiagRE matches nvcc's diagnostics: the front end's
// `kernel.cu(3): error: identifier "x" is undefined` (or `warning #177-D:`)
// and the back end's `ptxas error   : Entry function ...`.
var (
	nvccDiagRE  = regexp.MustCompile(`^(\S+?)\((\d+)\): (error|warning|remark|catastrophic error)(?: #[\w-]+)?: (.*)$`)
	nvccToolRE  = regexp.MustCompile(`^(ptxas|nvlink|nvcc|fatbinary|cicc)(?: (error|fatal|warning))?\s*: (.*)$`)
	nvccVersion sync.Map // nvcc path -> its --version
)

// parseNvccLog picks nvcc's diagnostics out of its (shortened) output.
func parseNvccLog(log string) []Diagnostic {
	var out []Diagnostic
	for line := range strings.Lines(log) {
		line = strings.TrimRight(line, "\r\n")
		if m := nvccDiagRE.FindStringSubmatch(line); m != nil {
			n, _ := strconv.Atoi(m[2])
			sev := m[3]
			if sev == "catastrophic error" {
				sev = "fatal"
			}
			out = append(out, Diagnostic{File: m[1], Line: n, Severity: sev, Message: m[4]})
		} else if m := nvccToolRE.FindStringSubmatch(line); m != nil {
			sev := m[2]
			if sev == "" {
				sev = "error"
			}
			out = append(out, Diagnostic{File: m[1], Severity: sev, Message: m[3]})
		}
	}
	return out
}

// userKey is the content hash of a program: its source, the compiler and
// the flags.
func userKey(src, version string, arch []string) string {
	h := sha256.New()
	fmt.Fprintf(h, "coalesce user kernel v1\x00%s\x00nvcc %s\x00flags %s\x00arch %s\x00", src, version, strings.Join(toolkit.BuildFlags(), " "), strings.Join(arch, " "))
	return hex.EncodeToString(h.Sum(nil))[:20]
}

// keepPrograms is how many learners' programs the cache keeps: the least
// recently used go first. Each edit of a kernel is a new program.
const keepPrograms = 64

// Compile returns k compiled for arch (nil: every architecture
// the course's learners have, toolkit.ArchFat(); a GPU's: its Harness.Arch), from
// the cache when it holds it. nvcc refusing the learner's text is a
// *CompileError.
func Compile(ctx context.Context, b cuda.Builder, k *Kernel, arch []string) (*Program, error) {
	src, err := k.Source()
	if err != nil {
		return nil, err
	}
	nv := b.Nvcc
	if nv.Path == "" {
		if nv, err = toolkit.FindNvcc(); err != nil {
			return nil, err
		}
	}
	dir := b.CacheDir
	if dir == "" {
		if dir, err = cuda.CacheDir(); err != nil {
			return nil, err
		}
	}
	if arch == nil {
		arch = toolkit.ArchFat()
	}
	timeout := b.Timeout
	if timeout == 0 {
		timeout = 5 * time.Minute
	}
	version, err := nvccVersionOf(ctx, nv)
	if err != nil {
		return nil, err
	}
	key := userKey(src, version, arch)
	p := &Program{Path: filepath.Join(dir, "kernel-"+key), Key: key, Arch: arch}
	if fi, err := os.Stat(p.Path); err == nil && fi.Mode().IsRegular() {
		now := time.Now()
		_ = os.Chtimes(p.Path, now, now) // for keepPrograms' order
		p.Cached = true
		return p, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("cuda: kernel cache: %w", err)
	}
	work, err := os.MkdirTemp(dir, "kernel-build-")
	if err != nil {
		return nil, fmt.Errorf("cuda: kernel cache: %w", err)
	}
	defer os.RemoveAll(work)
	if err := os.WriteFile(filepath.Join(work, userFile), []byte(src), 0o644); err != nil {
		return nil, fmt.Errorf("cuda: kernel cache: %w", err)
	}
	tmp := filepath.Join(work, "kernel")
	var stderr bytes.Buffer
	inv := nv.BuildCmd(work, userFile, tmp, arch, timeout)
	inv.Stderr = &stderr
	stdout, runErr := inv.Run(ctx)
	log := cleanLog(string(stdout)+stderr.String(), work)
	if runErr != nil {
		var te *toolkit.ToolError
		if errors.As(runErr, &te) && te.Timeout == 0 && te.ExitCode > 0 {
			return nil, &CompileError{Kernel: k.Name, Log: log, Diagnostics: parseNvccLog(log)}
		}
		return nil, fmt.Errorf("cuda: compiling kernel %s: %w", k.Name, runErr)
	}
	p.Log = log
	if err := os.Chmod(tmp, 0o755); err != nil {
		return nil, fmt.Errorf("cuda: kernel cache: %w", err)
	}
	if err := os.Rename(tmp, p.Path); err != nil {
		return nil, fmt.Errorf("cuda: kernel cache: %w", err)
	}
	pruneKernels(dir, keepPrograms)
	return p, nil
}

// maxLog bounds the compiler output a CompileError keeps: a body of many
// errors makes pages of them, and the first are the ones to read.
const maxLog = 32 << 10

// cleanLog cuts the build directory from nvcc's output and bounds it.
func cleanLog(s, work string) string {
	s = strings.ReplaceAll(s, work+string(filepath.Separator), "")
	s = shortenPaths(s)
	if len(s) > maxLog {
		s = s[:maxLog] + "\n... (more cut)"
	}
	return s
}

// nvccVersionOf returns nvcc --version, asked once per nvcc.
func nvccVersionOf(ctx context.Context, nv toolkit.Nvcc) (string, error) {
	if v, ok := nvccVersion.Load(nv.Path); ok {
		return v.(string), nil
	}
	out, err := nv.VersionCmd().Run(ctx)
	if err != nil {
		return "", fmt.Errorf("cuda: asking nvcc its version: %w", err)
	}
	v := strings.TrimSpace(string(out))
	nvccVersion.Store(nv.Path, v)
	return v, nil
}

// pruneKernels removes all but the keep most recently used programs.
func pruneKernels(dir string, keep int) {
	paths, err := filepath.Glob(filepath.Join(dir, "kernel-*"))
	if err != nil {
		return
	}
	type prog struct {
		path string
		used time.Time
	}
	var progs []prog
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil || !fi.Mode().IsRegular() {
			continue // a build directory, or gone
		}
		progs = append(progs, prog{p, fi.ModTime()})
	}
	if len(progs) <= keep {
		return
	}
	sort.Slice(progs, func(i, j int) bool { return progs[i].used.After(progs[j].used) })
	for _, p := range progs[keep:] {
		_ = os.Remove(p.path)
	}
}

// Options says how Run runs a kernel.
type Options struct {
	// Timeout bounds each run of the program (timed, under the
	// sanitizer, under ncu); 0 is DefaultTimeout. A kernel that
	// never returns is killed at it, with its program.
	Timeout time.Duration
	// Warmup and Reps are the untimed and the timed launches after the
	// first; 0 is 3 and 20. Reps < 0 times nothing.
	Warmup, Reps int
	// NoFlush leaves the L2 as the last launch left it before each timed
	// launch, rather than flushing it as the course's harness does.
	NoFlush bool
	// Check runs the kernel once under compute-sanitizer first ("" for
	// none); a finding stops the run with a *SanitizerError.
	Check toolkit.Check
	// Sanitizer runs the check; nil is toolkit.FindSanitizer's, looked
	// up when a check is asked.
	Sanitizer *toolkit.Sanitizer
	// Counters profiles one launch under Nsight Compute for the course's
	// metrics (metrics.Profiled).
	Counters bool
	// Lines profiles one more launch under Nsight Compute for its source
	// counters (toolkit.SourceArgs): what each line of the body cost,
	// instruction by instruction (Result.Lines). The program is built
	// with -lineinfo (toolkit.BuildFlags), which ties each SASS
	// instruction to a line of the body.
	Lines bool
}

// DefaultTimeout bounds a run of a learner's program when
// Options.Timeout is 0: far more than any course launch takes, and a
// short wait for a kernel that never returns.
const DefaultTimeout = time.Minute

// Result is what a run of a learner's kernel gave.
type Result struct {
	Kernel  string
	GPU     string // the GPU's name, as the driver gives it
	Program *Program
	// Outputs holds, for each arg marked Out, its buffer after the first
	// launch.
	Outputs map[string][]byte
	// TimesMs are the timed launches' times in milliseconds, in launch
	// order; MedianMs their median.
	TimesMs  []float64
	MedianMs float64
	// Registers is what nvcc gave the kernel a thread.
	Registers int
	// Counters are ncu's counts for one launch, by metric name, when
	// asked; CountersErr says why there are none (a *CountersDeniedError
	// when the driver refuses them, an error wrapping
	// measure.ErrNoCounters without ncu).
	Counters    metrics.Set
	CountersErr error
	// Sanitizer is the check's report when one was asked.
	Sanitizer *SanitizerReport
	// Lines are ncu's source counters of the body's lines (kernel.cu,
	// the body's own numbering), in line order, each with its SASS
	// instructions, when Options.Lines asked; LinesErr says why there
	// are none, as CountersErr does.
	Lines    []toolkit.SourceLine
	LinesErr error
}

// LaunchError is a learner's kernel that could not be launched or that
// failed while it ran, as CUDA said: CUDAError names the error
// ("cudaErrorMisalignedAddress"), Phase when it came ("launch": refused
// before running; "run": the first launch; "timed runs": a later one;
// "setup": the buffers).
type LaunchError struct {
	Kernel    string
	Phase     string
	CUDAError string
	Message   string // CUDA's words, or the program's
	Call      string // the CUDA call that returned it
}

func (e *LaunchError) Error() string {
	what := map[string]string{"launch": "could not be launched", "run": "failed while it ran", "timed runs": "failed in a timed launch", "setup": "could not be set up"}[e.Phase]
	if what == "" {
		what = "failed (" + e.Phase + ")"
	}
	msg := fmt.Sprintf("cuda: kernel %s %s: %s (%s)", e.Kernel, what, e.Message, e.CUDAError)
	if h := launchHints[e.CUDAError]; h != "" {
		msg += ": " + h
	}
	return msg
}

// launchHints says what a learner's kernel usually did to get an error.
var launchHints = map[string]string{
	"cudaErrorMisalignedAddress":    "a misaligned address: a load or store of N bytes (a float4 is 16) must be at an address that is a multiple of N, and a pointer moved by a number of floats that is not a multiple of 4 is not one for a float4",
	"cudaErrorIllegalAddress":       "an illegal address: a thread read or wrote outside every buffer, most often an index past the end (is every access guarded by the bound?); run with the memcheck check to see which line and thread",
	"cudaErrorLaunchFailure":        "run with the memcheck check to see which line and thread failed",
	"cudaErrorLaunchOutOfResources": "the block needs more registers or shared memory than an SM has for it: a smaller block, or fewer registers",
	"cudaErrorInvalidConfiguration": "this GPU does not take this grid, block or shared memory size",
	"cudaErrorInvalidValue":         "a launch value this GPU does not take (the shared memory size?)",
	"cudaErrorAssert":               "an assert in the kernel failed",
	"cudaErrorMemoryAllocation":     "the buffers do not fit in the GPU's free memory",
}

// userAnswer is the program's result.json (kernelsrc/host.cu).
type userAnswer struct {
	Status    string    `json:"status"`
	GPU       string    `json:"gpu"`
	CC        string    `json:"cc"`
	Registers int       `json:"registers"`
	Warmup    int       `json:"warmup"`
	TimesMs   []float64 `json:"times_ms"`
	Phase     string    `json:"phase"`
	CUDAError string    `json:"cuda_error"`
	Error     string    `json:"error"`
	Call      string    `json:"call"`
}

// TimeoutError is a learner's kernel that did not finish in time: its
// program (and the tool it ran under) was interrupted, then killed.
type TimeoutError struct {
	Kernel  string
	Under   string // "" for a plain run, else "compute-sanitizer" or "ncu"
	Timeout time.Duration
	Err     *toolkit.ToolError
}

func (e *TimeoutError) Error() string {
	under := ""
	if e.Under != "" {
		under = " under " + e.Under
	}
	msg := fmt.Sprintf("cuda: kernel %s did not finish within %v%s and was stopped: is there a loop whose end no thread reaches, or a __syncthreads() some threads of a block never reach?", e.Kernel, e.Timeout, under)
	if e.Err.Survived {
		msg += " Some of its processes were still running after it was killed."
	}
	return msg
}

// Unwrap returns the *ToolError, which wraps context.DeadlineExceeded.
func (e *TimeoutError) Unwrap() error { return e.Err }

// Run compiles the learner's kernel k for this GPU (or finds it
// in the cache), runs it under compute-sanitizer first when o.Check asks
// (a finding is a *SanitizerError, returned with the result holding the
// report), then launches it: once for its outputs, then o.Warmup + o.Reps
// times, the reps timed with CUDA events, every buffer restored to its
// first contents and the L2 flushed before each launch. With o.Counters
// it then profiles one launch under ncu, selecting the kernel by name.
//
// The errors a learner's kernel can meet are typed: *CompileError,
// *LaunchError (a fault: cudaErrorMisalignedAddress,
// cudaErrorIllegalAddress...), *SanitizerError, *TimeoutError; a machine
// without a GPU, a *MissingError.
func Run(ctx context.Context, g *cuda.GPU, k *Kernel, o Options) (*Result, error) {
	if err := k.Validate(); err != nil {
		return nil, err
	}
	var arch []string
	if g.Harness != nil {
		arch = g.Harness.Arch
	}
	prog, err := Compile(ctx, g.Builder, k, arch)
	if err != nil {
		return nil, err
	}
	work, err := os.MkdirTemp("", "coalesce-kernel-")
	if err != nil {
		return nil, fmt.Errorf("cuda: %w", err)
	}
	defer os.RemoveAll(work)
	if err := writeInputs(work, k); err != nil {
		return nil, err
	}
	timeout := o.Timeout
	if timeout == 0 {
		timeout = DefaultTimeout
	}
	res := &Result{Kernel: k.Name, GPU: g.Info.GPU, Program: prog}

	if o.Check != "" {
		rep, err := sanitize(ctx, o.Sanitizer, k, o.Check, prog, work, timeout)
		if rep != nil {
			res.Sanitizer = rep
		}
		if err != nil {
			return res, err
		}
	}

	if err := writePlan(work, k, o, false); err != nil {
		return nil, err
	}
	inv := toolkit.Invocation{Tool: "kernel " + k.Name, Path: prog.Path, Args: []string{work}, Timeout: timeout, Group: true}
	_, runErr := inv.Run(ctx)
	a, err := readAnswer(work, k, "", timeout, runErr)
	if err != nil {
		return res, err
	}
	res.GPU, res.Registers = a.GPU, a.Registers
	if res.Outputs, err = readOutputs(work, k); err != nil {
		return res, err
	}
	res.TimesMs = a.TimesMs
	res.MedianMs = median(a.TimesMs)

	if o.Counters {
		if err := profile(ctx, g, k, prog, work, timeout, res); err != nil {
			return res, err
		}
	}
	if o.Lines {
		if err := profileLines(ctx, g, k, prog, work, timeout, res); err != nil {
			return res, err
		}
	}
	return res, nil
}

// profileLines runs one launch of k under ncu for its source page and
// sets res's Lines, or LinesErr when there can be none.
func profileLines(ctx context.Context, g *cuda.GPU, k *Kernel, prog *Program, work string, timeout time.Duration, res *Result) error {
	stdout, none, err := underNcu(ctx, g, k, prog, work, timeout, res.GPU, toolkit.Ncu.SourceCmd)
	if none != nil || err != nil {
		res.LinesErr = none
		return err
	}
	pages, err := toolkit.ParseNcuSource(stdout)
	if err != nil {
		return err
	}
	for _, p := range pages {
		if p.Kernel == k.Name || strings.HasPrefix(p.Kernel, k.Name+"(") {
			res.Lines = p.File(userFile)
			return nil
		}
	}
	names := make([]string, len(pages))
	for i, p := range pages {
		names[i] = p.Kernel
	}
	return &toolkit.OutputError{Tool: "ncu", Msg: fmt.Sprintf("source pages of %q: want the one of %s", names, k.Name)}
}

// underNcu runs one launch of k, the program prog, under ncu's command
// cmd (toolkit.Ncu.SourceCmd or ProfileKernelCmd) and returns ncu's
// stdout. none says why ncu can read no counters (the driver refuses them
// to this user, which g then remembers, or there is no ncu), which the
// caller records; err is a run that failed otherwise, with ncu's own
// diagnostics.
func underNcu(ctx context.Context, g *cuda.GPU, k *Kernel, prog *Program, work string, timeout time.Duration, gpuName string,
	cmd func(n toolkit.Ncu, kernel, program string, args []string, timeout time.Duration) toolkit.Invocation) (stdout []byte, none, err error) {
	if d := g.CountersDenied(); d != nil {
		return nil, d, nil
	}
	if g.Ncu == nil {
		return nil, fmt.Errorf("cuda: %w: %s", measure.ErrNoCounters, g.NoNcu), nil
	}
	if err := writePlan(work, k, Options{}, true); err != nil {
		return nil, nil, err
	}
	stdout, runErr := cmd(*g.Ncu, k.Name, prog.Path, []string{work}, timeout).Run(ctx)
	var stderr string
	var te *toolkit.ToolError
	if errors.As(runErr, &te) {
		stderr = te.Stderr
	}
	if d := toolkit.CountersDeniedIn(gpuName, string(stdout), stderr); d != nil {
		g.DenyCounters(d)
		return nil, d, nil
	}
	if te != nil && te.Timeout == 0 {
		// ncu reports its own failures on stdout.
		te.Stderr = strings.TrimSpace(te.Stderr + "\n" + toolkit.NcuDiagnostics(stdout))
	}
	if _, err := readAnswer(work, k, "ncu", timeout, runErr); err != nil {
		return nil, nil, err
	}
	return stdout, nil, nil
}

// sanitize runs one launch of k under compute-sanitizer's check c.
func sanitize(ctx context.Context, san *toolkit.Sanitizer, k *Kernel, c toolkit.Check, prog *Program, work string, timeout time.Duration) (*SanitizerReport, error) {
	if c != toolkit.Memcheck && c != toolkit.Racecheck {
		return nil, fmt.Errorf("cuda: check %q: want %q or %q", c, toolkit.Memcheck, toolkit.Racecheck)
	}
	if san == nil {
		s, err := toolkit.FindSanitizer()
		if err != nil {
			return nil, err
		}
		san = &s
	}
	if err := writePlan(work, k, Options{}, true); err != nil {
		return nil, err
	}
	inv := san.CheckCmd(c, prog.Path, []string{work}, timeout)
	stdout, runErr := inv.Run(ctx)
	var stderr string
	var te *toolkit.ToolError
	if errors.As(runErr, &te) {
		stderr = te.Stderr
	}
	rep := parseSanitizer(c, string(stdout)+"\n"+stderr)
	if te != nil && te.Timeout > 0 {
		return rep, &TimeoutError{Kernel: k.Name, Under: "compute-sanitizer", Timeout: timeout, Err: te}
	}
	if !rep.Clean() {
		return rep, &SanitizerError{Kernel: k.Name, Report: rep}
	}
	if te != nil && te.ExitCode == toolkit.SanitizerExit {
		// It found errors it printed in no form read here.
		return rep, &SanitizerError{Kernel: k.Name, Report: &SanitizerReport{Check: c, Errors: 1, Text: rep.Text + "\n" + strings.TrimSpace(stderr)}}
	}
	if _, err := readAnswer(work, k, "compute-sanitizer", timeout, runErr); err != nil {
		return rep, err
	}
	return rep, nil
}

// profile runs one launch of k under ncu and sets res's
// Counters, or its CountersErr when there can be none (the driver refuses
// them, or there is no ncu); an error is a run that failed otherwise.
func profile(ctx context.Context, g *cuda.GPU, k *Kernel, prog *Program, work string, timeout time.Duration, res *Result) error {
	stdout, none, err := underNcu(ctx, g, k, prog, work, timeout, res.GPU, toolkit.Ncu.ProfileKernelCmd)
	if none != nil || err != nil {
		res.CountersErr = none
		return err
	}
	rows, err := toolkit.ParseNcuCSV(stdout, metrics.Profiled)
	if err != nil {
		return err
	}
	// An extern "C" kernel has no parameters in its name; allow them in
	// case ncu prints them anyway.
	if len(rows) != 1 || rows[0].Name != k.Name && !strings.HasPrefix(rows[0].Name, k.Name+"(") {
		names := make([]string, len(rows))
		for i, r := range rows {
			names[i] = r.Name
		}
		return &toolkit.OutputError{Tool: "ncu", Msg: fmt.Sprintf("profiled kernels %q: want the one launch of %s", names, k.Name)}
	}
	res.Counters = rows[0].Metrics
	return nil
}

// writeInputs writes each buffer's input bytes to work/inI.bin.
func writeInputs(work string, k *Kernel) error {
	for i, a := range k.Args {
		if a.Data == nil {
			continue
		}
		if err := os.WriteFile(filepath.Join(work, fmt.Sprintf("in%d.bin", i)), a.Data, 0o600); err != nil {
			return fmt.Errorf("cuda: writing arg %s: %w", a.Name, err)
		}
	}
	return nil
}

// writePlan writes work/plan.json, the launch the program reads
// (kernelsrc/host.cu), with cuda.PlanWriter, as package cuda writes the
// harness's plans; once launches the kernel only once.
func writePlan(work string, k *Kernel, o Options, once bool) error {
	warmup, reps := o.Warmup, o.Reps
	if warmup <= 0 {
		warmup = 3
	}
	switch {
	case reps == 0:
		reps = 20
	case reps < 0:
		reps = 0
	}
	g, b := k.Grid.norm(), k.Block.norm()
	var w cuda.PlanWriter
	w.Text("kernel", k.Name)
	w.Integer("grid_x", int64(g.X))
	w.Integer("grid_y", int64(g.Y))
	w.Integer("grid_z", int64(g.Z))
	w.Integer("block_x", int64(b.X))
	w.Integer("block_y", int64(b.Y))
	w.Integer("block_z", int64(b.Z))
	w.Integer("shared_bytes", int64(k.SharedBytes))
	w.Integer("warmup", int64(warmup))
	w.Integer("reps", int64(reps))
	w.Flag("flush", !o.NoFlush)
	w.Flag("once", once)
	for i, a := range k.Args {
		arg := "arg" + strconv.Itoa(i)
		switch kind, _, _ := argKind(a.CType); kind {
		case 'p':
			w.Text(arg+"_kind", "ptr")
			w.Integer(arg+"_bytes", a.Bytes)
			w.Flag(arg+"_input", a.Data != nil)
			w.Flag(arg+"_output", a.Out)
		case 'i':
			w.Text(arg+"_kind", "int")
			w.Integer(arg+"_int", a.Int)
		default:
			w.Text(arg+"_kind", "float")
			w.Text(arg+"_float", strconv.FormatFloat(a.Float, 'x', -1, 64))
		}
	}
	line, err := w.Bytes()
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(work, "plan.json"), append(line, '\n'), 0o600); err != nil {
		return fmt.Errorf("cuda: %w", err)
	}
	return nil
}

// readAnswer reads the program's result.json after a run (under the tool
// under, "" for none) that ended with runErr, and turns what went wrong
// into the error a caller branches on.
func readAnswer(work string, k *Kernel, under string, timeout time.Duration, runErr error) (*userAnswer, error) {
	var te *toolkit.ToolError
	isTool := errors.As(runErr, &te)
	if isTool && te.Timeout > 0 {
		return nil, &TimeoutError{Kernel: k.Name, Under: under, Timeout: timeout, Err: te}
	}
	if runErr != nil && !isTool {
		return nil, runErr
	}
	data, err := os.ReadFile(filepath.Join(work, "result.json"))
	if err != nil {
		if runErr != nil {
			return nil, runErr
		}
		return nil, &toolkit.OutputError{Tool: "kernel program", Msg: "no result.json: " + err.Error()}
	}
	var a userAnswer
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&a); err != nil {
		return nil, &toolkit.OutputError{Tool: "kernel program", Line: 1, Msg: fmt.Sprintf("result.json: %v: %.200q", err, data)}
	}
	switch {
	case a.Status == "error" && isTool && (te.ExitCode == cuda.ExitNoDevice || te.ExitCode == cuda.ExitNoDriver):
		return nil, cuda.AsMissing(&toolkit.ToolError{Tool: te.Tool, ExitCode: te.ExitCode, Stderr: a.Error, Err: te.Err})
	case a.Status == "error":
		return nil, &LaunchError{Kernel: k.Name, Phase: a.Phase, CUDAError: a.CUDAError, Message: a.Error, Call: a.Call}
	case a.Status != "ok":
		return nil, &toolkit.OutputError{Tool: "kernel program", Line: 1, Msg: fmt.Sprintf("result.json: status %q, want ok or error", a.Status)}
	case runErr != nil:
		// It answered, and yet failed: the tool around it failed.
		return nil, runErr
	}
	for _, t := range a.TimesMs {
		if !(t > 0) {
			return nil, &toolkit.OutputError{Tool: "kernel program", Line: 1, Msg: fmt.Sprintf("result.json: a launch of %s", units.Seconds.Format(t/1e3))}
		}
	}
	return &a, nil
}

// readOutputs reads back the buffers marked Out.
func readOutputs(work string, k *Kernel) (map[string][]byte, error) {
	out := map[string][]byte{}
	for i, a := range k.Args {
		if !a.Out {
			continue
		}
		data, err := os.ReadFile(filepath.Join(work, fmt.Sprintf("out%d.bin", i)))
		if err != nil {
			return nil, &toolkit.OutputError{Tool: "kernel program", Msg: fmt.Sprintf("output %s: %v", a.Name, err)}
		}
		if int64(len(data)) != a.Bytes {
			return nil, &toolkit.OutputError{Tool: "kernel program", Msg: fmt.Sprintf("output %s: %d bytes, want %d", a.Name, len(data), a.Bytes)}
		}
		out[a.Name] = data
	}
	return out, nil
}

// median returns the median of xs, 0 for none.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
