package cuda

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/coalescing-course/coalesce/cuda/reference"
	"github.com/coalescing-course/coalesce/cuda/toolkit"
	"github.com/coalescing-course/coalesce/lessons/measure"
	"github.com/coalescing-course/coalesce/lessons/metrics"
	"github.com/coalescing-course/coalesce/lessons/sectors"
	"github.com/coalescing-course/coalesce/lessons/spec"
	"github.com/coalescing-course/coalesce/units"
)

// GPU measures launches on this machine's GPU with a harness built for it.
// It is the live measure.Measurer: Measure times the launches, and reads
// their counters with Nsight Compute when Ncu is set.
type GPU struct {
	Harness *Harness
	Info    measure.DeviceInfo
	// Ncu profiles the launches; nil when this machine has no ncu, and
	// NoNcu then says why.
	Ncu   *toolkit.Ncu
	NoNcu string
	// Builder compiles learners' kernels (usercuda.Run): OpenGPU keeps
	// the one it built the harness with.
	Builder Builder
	// NcuOutput, when set, receives ncu's standard output as it was, CSV
	// and all.
	NcuOutput io.Writer
	// Opened is when the GPU was opened: the time its measurements are
	// labelled with.
	Opened time.Time
	// Timeout bounds each harness or ncu run; 0 is 30 minutes.
	Timeout time.Duration
	// Warmup and Reps set the harness's warm-up and timed launches per
	// launch; 0 leaves its defaults (3 and 20).
	Warmup, Reps int
	// NoFlush leaves the L2 warm between timed launches.
	NoFlush bool
	// Progress, when set, receives a line whenever the harness settles
	// another launch of a Measure ("cuda: timing: 12 of 84 launches"),
	// for a status line (internal/progress) while a sweep runs.
	Progress io.Writer
	// Strict makes Measure fail, with an error wrapping ErrStandIn, where
	// it would stand something else in for ncu's counters of this GPU:
	// times only without ncu, or counters borrowed when ncu is refused
	// them. make test-gpu runs the notebooks so (StrictMode), for a
	// cell that falls back to fail.
	Strict bool

	provOnce sync.Once
	prov     measure.Provenance

	probeOnce sync.Once
	probeErr  error

	// denied is set once ncu has been refused the GPU's counters: the
	// driver's setting does not change while the GPU is open, so ncu is
	// not run on it again.
	deniedMu sync.Mutex
	denied   *toolkit.CountersDeniedError
}

var _ measure.Measurer = (*GPU)(nil)

// OpenGPU builds (or finds in the cache) the harness, asks it what GPU this
// machine has and looks for ncu. Without nvcc, a driver or a GPU it
// returns a *MissingError; without ncu the GPU still times launches.
func OpenGPU(ctx context.Context, b Builder) (*GPU, error) {
	h, err := b.Build(ctx)
	if err != nil {
		return nil, err
	}
	info, err := h.DeviceInfo(ctx)
	if err != nil {
		return nil, err
	}
	g := &GPU{Harness: h, Info: info, Opened: time.Now(), Builder: b}
	if ncu, err := toolkit.FindNcu(); err == nil {
		g.Ncu = &ncu
	} else {
		g.NoNcu = err.Error()
	}
	return g, nil
}

// Origin says the measurements are live, on this GPU.
func (g *GPU) Origin() measure.Origin {
	return measure.Origin{Kind: measure.Live, GPU: g.Info.GPU, When: g.Opened}
}

// DeviceInfo runs the harness's --info.
func (h *Harness) DeviceInfo(ctx context.Context) (measure.DeviceInfo, error) {
	out, err := h.cmd([]string{"--info"}, time.Minute).Run(ctx)
	if err != nil {
		return measure.DeviceInfo{}, AsMissing(err)
	}
	var info measure.DeviceInfo
	dec := json.NewDecoder(bytes.NewReader(out))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&info); err != nil {
		return measure.DeviceInfo{}, &toolkit.OutputError{Tool: "harness", Line: 1, Msg: fmt.Sprintf("--info: %v: %.200q", err, out)}
	}
	return info, nil
}

// Latencies is what the harness's --calibrate measures: the time of one
// load that waits for the one before it (a pointer chase, one thread), when
// it misses the L2 and when it hits it. No launch of a course kernel shows
// it alone: a kernel keeps many loads in flight, and the time model's
// latency is what each of them waits.
type Latencies struct {
	// DRAMLatencyNs is the median time of one load over a random cycle
	// through DRAMChaseBytes, far more than the L2 holds, flushed first.
	DRAMLatencyNs float64 `json:"dram_latency_ns"`
	// L2LatencyNs is the same over L2ChaseBytes, a quarter of the L2,
	// walked once before it is timed.
	L2LatencyNs    float64 `json:"l2_latency_ns"`
	DRAMChaseBytes int64   `json:"dram_chase_bytes"`
	L2ChaseBytes   int64   `json:"l2_chase_bytes"`
	// ChaseSteps are the loads of one timed chase, TimedChases how many
	// chases the medians are of.
	ChaseSteps  int64 `json:"chase_steps"`
	TimedChases int   `json:"timed_chases"`
}

// Latencies runs the harness's --calibrate: two pointer chases, about a
// second on a GPU.
func (h *Harness) Latencies(ctx context.Context) (Latencies, error) {
	out, err := h.cmd([]string{"--calibrate"}, 2*time.Minute).Run(ctx)
	if err != nil {
		return Latencies{}, AsMissing(err)
	}
	return parseLatencies(out)
}

// parseLatencies reads --calibrate's line, refusing what it does not know
// and latencies that cannot be (a chase of no time, or an L2 hit slower
// than a miss means the chase did not measure what it says).
func parseLatencies(out []byte) (Latencies, error) {
	var l Latencies
	dec := json.NewDecoder(bytes.NewReader(out))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&l); err != nil {
		return Latencies{}, &toolkit.OutputError{Tool: "harness", Line: 1, Msg: fmt.Sprintf("--calibrate: %v: %.200q", err, out)}
	}
	if !(l.L2LatencyNs > 0 && l.DRAMLatencyNs >= l.L2LatencyNs && l.DRAMLatencyNs < 1e6) {
		return Latencies{}, &toolkit.OutputError{Tool: "harness", Line: 1, Msg: fmt.Sprintf("--calibrate: latencies DRAM %s, L2 %s: want 0 < L2 <= DRAM < 1 ms", latencies(l)...)}
	}
	return l, nil
}

// latencies writes the pointer chase's two latencies with the digits that
// tell them apart.
func latencies(l Latencies) []any {
	dram, l2 := units.Apart(units.Seconds, l.DRAMLatencyNs*1e-9, l.L2LatencyNs*1e-9)
	return []any{dram, l2}
}

func (h *Harness) cmd(args []string, timeout time.Duration) toolkit.Invocation {
	return toolkit.Invocation{Tool: "harness", Path: h.Path, Args: args, Timeout: timeout}
}

// Exit statuses of the course's CUDA programs, the harness and a
// learner's kernel's program (package usercuda): the ones the Go side
// branches on, as src/shared.cuh's Exit defines them for both
// (TestExitStatusesAgree holds the two lists together).
const (
	// exitSomeLineFailed is shared.cuh's ExitFailed: the harness
	// answered some line with an error.
	exitSomeLineFailed = 1
	// ExitNoDevice is a program that found no CUDA device.
	ExitNoDevice = 3
	// ExitNoDriver is a program that found no usable driver.
	ExitNoDriver = 4
)

// AsMissing turns a *toolkit.ToolError of a program that exited
// ExitNoDevice or ExitNoDriver into the *toolkit.MissingError callers
// branch on (ErrNoGPU, ErrNoDriver); any other error it returns as it is.
func AsMissing(err error) error {
	var te *toolkit.ToolError
	if !errors.As(err, &te) {
		return err
	}
	detail := strings.TrimSpace(te.Stderr)
	var msg struct {
		Error string `json:"error"`
	}
	if json.Unmarshal([]byte(lastLine(detail)), &msg) == nil && msg.Error != "" {
		detail = msg.Error
	}
	switch te.ExitCode {
	case ExitNoDevice:
		return &toolkit.MissingError{Err: toolkit.ErrNoGPU, Detail: detail, Hint: "run on a machine with an NVIDIA GPU, or " + toolkit.FallbackHint}
	case ExitNoDriver:
		return &toolkit.MissingError{Err: toolkit.ErrNoDriver, Detail: detail, Hint: "install the NVIDIA driver (on a machine with an NVIDIA GPU), or " + toolkit.FallbackHint}
	}
	return err
}

func (g *GPU) timeout() time.Duration {
	if g.Timeout > 0 {
		return g.Timeout
	}
	return 30 * time.Minute
}

func (g *GPU) harnessArgs(input, output string, profile bool) []string {
	args := []string{"--input", input, "--output", output}
	if profile {
		return append(args, "--profile")
	}
	if g.Warmup > 0 {
		args = append(args, "--warmup", strconv.Itoa(g.Warmup))
	}
	if g.Reps > 0 {
		args = append(args, "--reps", strconv.Itoa(g.Reps))
	}
	if g.NoFlush {
		args = append(args, "--no-flush")
	}
	return args
}

// Measure measures the launches of specs on this GPU: it times them for
// Times and profiles them under ncu for Counters, each launch once per
// run. Asked for Times|Counters without ncu it times them and says so in
// the Set's Note; asked for Counters alone, it fails with an error
// wrapping measure.ErrNoCounters. A spec that fails validation, does not
// fit or computes the wrong result has its Launch's Error set.
//
// A GPU whose driver refuses ncu its counters (ERR_NVGPUCTRPERM, found on
// the first profiled run and not tried again) still gives live times, and
// counters from elsewhere (borrowCounters), each launch's Counters saying
// whose, and the Set's CountersErr the *CountersDeniedError. A Strict GPU
// asked for counters fails instead, in both cases.
func (g *GPU) Measure(ctx context.Context, specs []spec.Spec, want measure.Want) (*measure.Set, error) {
	prov := g.Provenance(ctx, "a live measurement")
	set := &measure.Set{Origin: g.Origin(), Provenance: &prov}
	counters := want&measure.Counters != 0
	if counters && g.Ncu == nil {
		if g.Strict {
			return nil, fmt.Errorf("cuda: %w: counters asked for, but %s", ErrStandIn, g.NoNcu)
		}
		if want&measure.Times == 0 {
			return nil, fmt.Errorf("cuda: %w: %s", measure.ErrNoCounters, g.NoNcu)
		}
		set.Note = "no ncu on this machine, so times only: " + g.NoNcu
		counters = false
	}
	p, err := Prepare(specs, &g.Info, "")
	if err != nil {
		return nil, err
	}
	defer p.Close()
	var timed, profiled []measure.Launch
	if want&measure.Times != 0 {
		if timed, err = g.run(ctx, p, false); err != nil {
			return nil, err
		}
	}
	denied := g.deniedErr()
	if counters && denied == nil {
		profiled, err = g.run(ctx, p, true)
		if errors.As(err, &denied) {
			g.DenyCounters(denied)
		} else if err != nil {
			return nil, err
		}
	}
	if counters && denied != nil && g.Strict {
		return nil, fmt.Errorf("cuda: %w: %w", ErrStandIn, denied)
	}
	set.Launches = merge(timed, profiled)
	if counters && denied != nil {
		if set.Launches == nil {
			set.Launches = p.launches()
		}
		g.borrowCounters(set.Launches)
		set.CountersErr = denied
		set.Note = "Nsight Compute may not read this GPU's counters (ERR_NVGPUCTRPERM): the times are live, the counters the course's recording's (marked recorded) or the sector model's (marked model)"
	}
	return set, nil
}

// deniedErr returns the GPU's *CountersDeniedError, nil while ncu has not
// been refused.
func (g *GPU) deniedErr() *toolkit.CountersDeniedError {
	g.deniedMu.Lock()
	defer g.deniedMu.Unlock()
	return g.denied
}

// DenyCounters records that ncu was refused the GPU's counters: a run of
// a learner's kernel under ncu (usercuda) found it, and no later run asks
// again while the GPU is open. Measure records it itself.
func (g *GPU) DenyCounters(e *toolkit.CountersDeniedError) {
	g.deniedMu.Lock()
	defer g.deniedMu.Unlock()
	g.denied = e
}

// CountersDenied returns the *CountersDeniedError ncu got on this GPU, or
// nil when it has not been refused its counters (or not yet asked: see
// ProbeCounters).
func (g *GPU) CountersDenied() error {
	if e := g.deniedErr(); e != nil {
		return e
	}
	return nil
}

// probeSpec is the launch ProbeCounters profiles: a copy of one block.
const probeSpec = `{"kernel":"coalesced_copy","n":256}`

// ProbeCounters finds out, once, whether ncu may read this GPU's counters,
// by profiling one small launch, for a caller that must say so before any
// measurement (lab.Status). It returns nil when they are readable, the
// *CountersDeniedError when the driver refuses them, an error wrapping
// measure.ErrNoCounters without ncu, or why the probe failed.
func (g *GPU) ProbeCounters(ctx context.Context) error {
	if e := g.CountersDenied(); e != nil {
		return e
	}
	g.probeOnce.Do(func() {
		s, err := spec.Parse([]byte(probeSpec))
		if err == nil {
			_, err = g.Measure(ctx, []spec.Spec{s}, measure.Counters)
		}
		g.probeErr = err
	})
	if e := g.CountersDenied(); e != nil {
		return e
	}
	return g.probeErr
}

// borrowCounters fills in the counters of the measured launches of ls
// that have none, for a GPU that refuses ncu its own: the recording's,
// where the recording was made on a GPU of this name and holds the same
// launch, for those are ncu's counts of it; else the sector model's,
// exact at the L1, an estimate of DRAM. Launch.Counters says which.
func (g *GPU) borrowCounters(ls []measure.Launch) {
	rec, err := reference.Recorded()
	sameGPU := err == nil && rec.Origin.GPU == g.Info.GPU
	for i := range ls {
		l := &ls[i]
		if l.Failed() || l.Metrics != nil {
			continue
		}
		if sameGPU {
			if r, ok := rec.Lookup(l.Spec); ok && r.Profiled() && !r.CountersBorrowed() {
				l.Metrics, l.Counters = maps.Clone(r.Metrics), rec.Label()
				continue
			}
		}
		if err := sectors.Faults(l.Spec); err != nil {
			// The timed run shows CUDA's error for it; asked for counters
			// alone, nothing ran, and the model must not stand in for a
			// launch the GPU would refuse.
			if l.TimeMs == 0 {
				l.Error = "not profiled, since the kernel faults: " + err.Error()
			}
			continue
		}
		if p, err := sectors.Model(l.Spec); err == nil {
			l.Metrics, l.Counters = p.Metrics, measure.CountersModel
		}
	}
}

// merge lays the profiled launches' counters over the timed ones; either
// may be nil. A launch that failed either run fails.
func merge(timed, profiled []measure.Launch) []measure.Launch {
	switch {
	case timed == nil:
		return profiled
	case profiled == nil:
		return timed
	}
	for i := range timed {
		switch {
		case timed[i].Failed():
		case profiled[i].Failed():
			timed[i] = measure.Launch{Spec: timed[i].Spec, Error: "profiling: " + profiled[i].Error, CUDAError: profiled[i].CUDAError}
		default:
			timed[i].Metrics = profiled[i].Metrics
		}
	}
	return timed
}

// run sends the prepared plans through the harness, under ncu when
// profile is set, and pairs the answers (and ncu's rows) with the specs.
//
// A kernel that faults loses the harness its CUDA context, and every later
// plan of that process is answered "not run". So that one faulting spec
// costs no other its result, the plans after a fault go to a fresh
// harness, as many times as there are faults; each round settles at least
// the faulting plan, so the rounds end.
func (g *GPU) run(ctx context.Context, p *Prepared, profile bool) ([]measure.Launch, error) {
	launches := p.launches()
	if len(p.Lines) == 0 {
		return launches, nil
	}
	work, err := os.MkdirTemp("", "coalesce-run-")
	if err != nil {
		return nil, fmt.Errorf("cuda: %w", err)
	}
	defer os.RemoveAll(work)
	// todo holds the runs of plans (indices into p.Lines) still to send.
	// A launch the model knows faults is never profiled: ncu ends the
	// whole profiled process at the fault (==ERROR== LaunchFailed) before
	// the harness can answer, losing every later plan of the batch. The
	// timed run shows CUDA's own error for it.
	todo := [][]int{nil}
	for j := range p.Lines {
		if profile {
			if err := sectors.Faults(p.Specs[p.Index[j]]); err != nil {
				launches[p.Index[j]].Error = "not profiled, since ncu cannot profile a kernel that faults: " + err.Error()
				continue
			}
		}
		todo[0] = append(todo[0], j)
	}
	if len(todo[0]) == 0 {
		return launches, nil
	}
	for len(todo) > 0 {
		res, err := g.runBatch(ctx, work, p, todo[0], profile)
		todo = todo[1:]
		if err != nil {
			return nil, err
		}
		for j, a := range res.answers {
			l := &launches[p.Index[res.plans[j]]]
			if a.Error != "" {
				l.Error, l.CUDAError = a.Error, a.CUDAError
				if a.CUDAError == "cudaErrorMemoryAllocation" {
					l.Error += "; " + g.memoryHint(p.Lines[res.plans[j]])
				}
				continue
			}
			fill(l, a)
			if !l.Failed() && res.metrics != nil {
				l.Metrics = res.metrics[j]
			}
		}
		todo = append(res.again, todo...)
	}
	return launches, nil
}

// batchResult is what one harness process settled: answers for some of
// its plans (those through the fault, when one faulted), their counters
// when profiled, and the runs of plans to send again.
type batchResult struct {
	plans   []int // answers[j] is the answer to p.Lines[plans[j]]
	answers []harnessLine
	metrics []metrics.Set // metrics[j] are answers[j]'s counters; nil when not profiled
	again   [][]int
}

// runBatch runs the plans p.Lines[i], i in batch, in one harness process.
func (g *GPU) runBatch(ctx context.Context, work string, p *Prepared, batch []int, profile bool) (batchResult, error) {
	var res batchResult
	var input bytes.Buffer
	for _, i := range batch {
		input.Write(p.Lines[i])
		input.WriteByte('\n')
	}
	in, output := filepath.Join(work, "plans.jsonl"), filepath.Join(work, "results.jsonl")
	// A missing answer file must not be read as the last round's.
	if err := os.Remove(output); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return res, fmt.Errorf("cuda: %w", err)
	}
	if err := os.WriteFile(in, input.Bytes(), 0o644); err != nil {
		return res, fmt.Errorf("cuda: %w", err)
	}
	args := g.harnessArgs(in, output, profile)
	var inv toolkit.Invocation
	if profile {
		inv = g.Ncu.ProfileCmd(g.Harness.Path, args, g.timeout())
	} else {
		inv = g.Harness.cmd(args, g.timeout())
	}
	stop := g.watch(output, len(batch), profile)
	stdout, runErr := inv.Run(ctx)
	stop()
	if profile && g.NcuOutput != nil && len(stdout) > 0 {
		if _, err := g.NcuOutput.Write(stdout); err != nil {
			return res, fmt.Errorf("cuda: saving ncu output: %w", err)
		}
	}
	if profile {
		// ncu refused the counters: whatever its status (it exits
		// non-zero, and the harness's answers may still be there), this
		// run has no counters, and no later one will.
		var stderr string
		if te := (*toolkit.ToolError)(nil); errors.As(runErr, &te) {
			stderr = te.Stderr
		}
		if d := toolkit.CountersDeniedIn(g.Info.GPU, string(stdout), stderr); d != nil {
			return res, d
		}
	}
	// Status 1 only says some launch got an error line: the answers still
	// tell which. Anything else failed the run as a whole, unless a kernel
	// faulted: a profiler may end the run there, and the answers up to the
	// fault still stand.
	var failed error
	if runErr != nil {
		var te *toolkit.ToolError
		isTool := errors.As(runErr, &te)
		if isTool && profile {
			// ncu reports its own failures on stdout, not stderr.
			te.Stderr = strings.TrimSpace(te.Stderr + "\n" + toolkit.NcuDiagnostics(stdout))
		}
		if !isTool || te.ExitCode != exitSomeLineFailed {
			failed = AsMissing(runErr)
		}
	}
	data, err := os.ReadFile(output)
	if err != nil {
		if failed != nil {
			return res, failed
		}
		return res, fmt.Errorf("cuda: reading the harness's answers: %w (after %v)", err, runErr)
	}
	answers, err := parseHarnessOutput(data, len(batch), !profile)
	if err != nil {
		if failed != nil {
			return res, failed
		}
		return res, err
	}
	fault := faultAt(answers)
	if failed != nil && fault < 0 {
		return res, failed
	}
	if fault >= 0 {
		answers = answers[:fault+1]
		if rest := batch[fault+1:]; len(rest) > 0 {
			res.again = append(res.again, rest)
		}
	}
	res.plans, res.answers = batch[:len(answers)], answers
	if !profile {
		return res, nil
	}
	rows, err := toolkit.ParseNcuCSV(stdout, metrics.Profiled)
	launched := 0
	for _, a := range answers {
		if a.Launched {
			launched++
		}
	}
	// ncu may or may not keep a row for the kernel that faulted: it is the
	// last launched, so the rows before it pair with the launches before it.
	pairs := err == nil && (len(rows) == launched || fault >= 0 && len(rows) == launched-1)
	if !pairs {
		if fault < 0 {
			if err != nil {
				return res, err
			}
			return res, &toolkit.OutputError{Tool: "ncu", Msg: fmt.Sprintf("%d profiled kernels for %d launched plans: cannot tell which counts belong to which launch", len(rows), launched)}
		}
		// ncu's output is of no use past a fault (it may have ended with
		// the harness): the fault is settled, the plans before it go
		// again, without it.
		res.plans, res.answers = batch[fault:fault+1], answers[fault:]
		if fault > 0 {
			res.again = append([][]int{batch[:fault]}, res.again...)
		}
		return res, nil
	}
	res.metrics = make([]metrics.Set, len(answers))
	k := 0
	for j, a := range answers {
		if a.Launched && k < len(rows) {
			res.metrics[j] = rows[k].Metrics
			k++
		}
	}
	return res, nil
}

// fill sets a launch from the harness's answer. The L2 fetch granularity
// is a hint the driver may decline: a launch that ran with another than
// its spec's is not the launch asked for.
func fill(l *measure.Launch, a harnessLine) {
	if a.L2Fetch != l.Spec.L2Fetch {
		l.Error = fmt.Sprintf("cudaLimitMaxL2FetchGranularity read back as %d after setting %d: the driver did not take the spec's value", a.L2Fetch, l.Spec.L2Fetch)
		return
	}
	f := func(p *float64) float64 {
		if p == nil {
			return 0
		}
		return *p
	}
	l.TimeMs, l.TimeMsMin, l.TimeMsMax = f(a.TimeMs), f(a.TimeMsMin), f(a.TimeMsMax)
	l.TimedLaunches = a.TimedLaunches
	l.MemcpyMs, l.MemcpyBytes = f(a.MemcpyMs), a.MemcpyBytes
	l.Threads, l.GridBlocks, l.L2Fetch, l.Verified = a.Threads, a.GridBlocks, a.L2Fetch, a.Verified
}

// watchEvery is how often watch looks at the harness's answers.
const watchEvery = 250 * time.Millisecond

// watch tells g.Progress how many of the n launches of a harness run have
// an answer in the file output, which the harness writes a line at a
// time, flushed; the function it returns stops it, having said the last
// count. Without g.Progress it does nothing.
func (g *GPU) watch(output string, n int, profile bool) (stop func()) {
	if g.Progress == nil {
		return func() {}
	}
	verb := "timing"
	if profile {
		verb = "profiling with ncu"
	}
	said := -1
	say := func() {
		data, _ := os.ReadFile(output) // absent until the harness starts
		if done := bytes.Count(data, []byte{'\n'}); done != said {
			said = done
			fmt.Fprintf(g.Progress, "cuda: %s: %d of %d launches\n", verb, done, n)
		}
	}
	say()
	quit, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(watchEvery)
		defer t.Stop()
		for {
			select {
			case <-quit:
				say()
				return
			case <-t.C:
				say()
			}
		}
	}()
	return func() {
		close(quit)
		<-finished
	}
}

// memoryHint explains a launch the GPU had no memory for: what the launch
// needs, what the harness keeps beside it, what the GPU had free when it
// was opened, and that on a GPU shared by several learners the others'
// notebooks hold the rest.
func (g *GPU) memoryHint(plan []byte) string {
	var need struct {
		In  int64 `json:"bytes_in"`
		Out int64 `json:"bytes_out"`
	}
	_ = json.Unmarshal(plan, &need) // a plan the Go side wrote: it decodes
	flush := 2 * max(g.Info.L2Bytes, 1<<20)
	return fmt.Sprintf("the GPU's memory is full: this launch's buffers take %s (in %s, out %s), and the harness keeps "+
		"%s beside them to flush the L2 between timed launches; %s of %s was free when this GPU was opened. "+
		"Other processes hold the rest (nvidia-smi lists them): on a GPU shared by a class, other learners' notebooks. "+
		"Try again when they are done, or measure a smaller n", memSize(need.In+need.Out), memSize(need.In), memSize(need.Out), memSize(flush), memSize(g.Info.FreeBytes), memSize(g.Info.TotalBytes))
}

// memSize writes a size of GPU memory: 80 GiB, 512 MiB.
func memSize(b int64) string { return units.BinaryBytes.Format(float64(b)) }
