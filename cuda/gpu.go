package cuda

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/coalescing-course/coalesce/lessons/metrics"
	"github.com/coalescing-course/coalesce/lessons/spec"
)

// Result is one spec measured on a GPU: its time, its bandwidths and, when
// profiled, the course's metrics as Nsight Compute read them. A spec that
// could not be measured has Error set and nothing else but Spec and Line.
type Result struct {
	Line int       `json:"line,omitempty"` // the spec's line in its input, when it came from one
	Spec spec.Spec `json:"spec"`
	// Error says why the spec was not measured: refused before the launch
	// (it does not fit in memory, its index file is bad) or a wrong result.
	Error string `json:"error,omitempty"`

	// TimeMs is the median of TimedLaunches launches, each timed alone with
	// a CUDA event pair after MinWarmups warm-up launches, with the L2
	// flushed before each one.
	TimeMs        float64 `json:"time_ms,omitempty"`
	TimeMsMin     float64 `json:"time_ms_min,omitempty"`
	TimeMsMax     float64 `json:"time_ms_max,omitempty"`
	TimedLaunches int     `json:"timed_launches,omitempty"`
	// UsefulBytes is spec.UsefulBytes; UsefulGBps, it over TimeMs.
	UsefulBytes int64   `json:"useful_bytes,omitempty"`
	UsefulGBps  float64 `json:"useful_gbps,omitempty"`
	// MemcpyMs is the median time of a cudaMemcpy device to device of the
	// kernel's data buffer (MemcpyBytes), timed the same way in the same
	// run; MemcpyGBps counts its bytes read and written: the ceiling.
	MemcpyMs    float64 `json:"memcpy_ms,omitempty"`
	MemcpyGBps  float64 `json:"memcpy_gbps,omitempty"`
	MemcpyBytes int64   `json:"memcpy_bytes,omitempty"`
	// OfMemcpy is UsefulGBps / MemcpyGBps.
	OfMemcpy float64 `json:"of_memcpy,omitempty"`

	Threads    int64 `json:"threads,omitempty"`
	GridBlocks int64 `json:"grid_blocks,omitempty"`
	// L2Fetch is cudaLimitMaxL2FetchGranularity as read back after setting it.
	L2Fetch  int  `json:"l2_fetch_granularity,omitempty"`
	Verified bool `json:"verified,omitempty"`

	// Metrics are ncu's counts for the launch, keyed by metric name.
	Metrics metrics.Set `json:"metrics,omitempty"`
	// MovedGBps is the DRAM bytes read and written (ncu) over TimeMs.
	MovedGBps float64 `json:"moved_gbps,omitempty"`
}

// Failed reports whether the spec was not measured.
func (r Result) Failed() bool { return r.Error != "" }

// GPU measures specs on this machine's GPU with a harness built for it.
type GPU struct {
	Harness *Harness
	Info    DeviceInfo
	// Timeout bounds each harness or ncu run; 0 is 30 minutes.
	Timeout time.Duration
	// Warmup and Reps set the harness's warm-up and timed launches per
	// spec; 0 leaves its defaults (3 and 20).
	Warmup, Reps int
	// NoFlush leaves the L2 warm between timed launches.
	NoFlush bool
}

// Open builds (or finds in the cache) the harness and asks it what GPU this
// machine has. Without nvcc, a driver or a GPU it returns a *MissingError.
func Open(ctx context.Context, b Builder) (*GPU, error) {
	h, err := b.Build(ctx)
	if err != nil {
		return nil, err
	}
	info, err := h.DeviceInfo(ctx)
	if err != nil {
		return nil, err
	}
	return &GPU{Harness: h, Info: info}, nil
}

// DeviceInfo is what the harness's --info reports about the device.
type DeviceInfo struct {
	GPU               string `json:"gpu"`
	ComputeCapability string `json:"compute_capability"`
	SMs               int    `json:"sms"`
	L2Bytes           int64  `json:"l2_bytes"`
	MaxThreadsPerSM   int    `json:"max_threads_per_sm"`
	MemoryClockKHz    int    `json:"memory_clock_khz"`
	SMClockKHz        int    `json:"sm_clock_khz"`
	MemoryBusBits     int    `json:"memory_bus_bits"`
	// DriverVersion and RuntimeVersion are CUDA versions as the runtime
	// encodes them: 13000 is 13.0.
	DriverVersion  int   `json:"driver_version"`
	RuntimeVersion int   `json:"runtime_version"`
	FreeBytes      int64 `json:"free_bytes"`
	TotalBytes     int64 `json:"total_bytes"`
	// DefaultL2Fetch is cudaLimitMaxL2FetchGranularity before the harness set it.
	DefaultL2Fetch int `json:"default_l2_fetch_granularity"`
}

// DeviceInfo runs the harness's --info.
func (h *Harness) DeviceInfo(ctx context.Context) (DeviceInfo, error) {
	out, err := h.cmd([]string{"--info"}, time.Minute).Run(ctx)
	if err != nil {
		return DeviceInfo{}, harnessError(err)
	}
	var info DeviceInfo
	dec := json.NewDecoder(bytes.NewReader(out))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&info); err != nil {
		return DeviceInfo{}, &OutputError{Source: "harness", Line: 1, Msg: fmt.Sprintf("--info: %v: %.200q", err, out)}
	}
	return info, nil
}

func (h *Harness) cmd(args []string, timeout time.Duration) Invocation {
	return Invocation{Tool: "harness", Path: h.Path, Args: args, Timeout: timeout}
}

// Exit statuses of the harness (src/harness.cu).
const (
	exitSomeLineFailed = 1
	exitNoDevice       = 3
	exitNoDriver       = 4
)

// harnessError turns the harness's "no device" and "no driver" exits into
// the *MissingError callers branch on.
func harnessError(err error) error {
	var te *ToolError
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
	case exitNoDevice:
		return &MissingError{Err: ErrNoGPU, Detail: detail, Hint: "run on a machine with an NVIDIA GPU, or " + fallbackHint}
	case exitNoDriver:
		return &MissingError{Err: ErrNoDriver, Detail: detail, Hint: "install the NVIDIA driver (on a machine with an NVIDIA GPU), or " + fallbackHint}
	}
	return err
}

// Prepared is a list of specs made ready for the harness: gather specs with
// an index_pattern turned into index files, written to a temporary
// directory that Close removes.
type Prepared struct {
	Specs []spec.Spec // as given
	Lines [][]byte    // the harness's input, one per valid spec
	Index []int       // Lines[i] is Specs[Index[i]]
	Errs  []error     // Errs[i] is why Specs[i] is not sent, or nil
	dir   string
}

// Prepare validates every spec and writes the index files of the gathers.
// dir is where the index files go: "" makes (and Close removes) a
// temporary directory.
func Prepare(specs []spec.Spec, dir string) (*Prepared, error) {
	p := &Prepared{Specs: specs, Errs: make([]error, len(specs))}
	for i, s := range specs {
		if err := s.Validate(); err != nil {
			p.Errs[i] = err
			continue
		}
		if s.Kernel == spec.GatherCopy {
			idx, err := s.Indices()
			if err != nil {
				p.Errs[i] = err
				continue
			}
			if s.IndexFile == "" {
				if dir == "" {
					d, err := os.MkdirTemp("", "coalesce-idx-")
					if err != nil {
						p.Close()
						return nil, fmt.Errorf("cuda: index files: %w", err)
					}
					dir, p.dir = d, d
				}
				path, err := filepath.Abs(filepath.Join(dir, "idx-"+strconv.Itoa(i+1)+".bin"))
				if err == nil {
					err = spec.WriteIndexFile(path, idx)
				}
				if err != nil {
					p.Close()
					return nil, fmt.Errorf("cuda: index files: %w", err)
				}
				s.IndexFile, s.IndexPattern, s.Seed = path, "", 0
			}
		}
		line, err := json.Marshal(s)
		if err != nil {
			p.Errs[i] = err
			continue
		}
		p.Lines = append(p.Lines, line)
		p.Index = append(p.Index, i)
	}
	return p, nil
}

// Input returns the harness's input: the lines, one per line.
func (p *Prepared) Input() []byte {
	var b bytes.Buffer
	for _, l := range p.Lines {
		b.Write(l)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// Close removes the index files Prepare wrote into a directory of its own.
func (p *Prepared) Close() error {
	if p.dir == "" {
		return nil
	}
	return os.RemoveAll(p.dir)
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

// Run times every spec. Specs that fail validation, do not fit or compute
// the wrong result come back with Error set; the error returned is for a
// run that failed as a whole.
func (g *GPU) Run(ctx context.Context, specs []spec.Spec) ([]Result, error) {
	p, err := Prepare(specs, "")
	if err != nil {
		return nil, err
	}
	defer p.Close()
	results, _, err := g.run(ctx, p, nil, nil)
	return results, err
}

// ProfileOptions adjusts Profile.
type ProfileOptions struct {
	Ncu Ncu       // zero: FindNcu
	Raw io.Writer // receives ncu's standard output as it was, CSV and all
}

// Profile runs each spec's kernel once under ncu and returns the results
// with Metrics set (and no times). The i-th kernel ncu reports belongs to
// the i-th spec that the harness launched; a different count is an error.
func (g *GPU) Profile(ctx context.Context, specs []spec.Spec, opt ProfileOptions) ([]Result, error) {
	p, err := Prepare(specs, "")
	if err != nil {
		return nil, err
	}
	defer p.Close()
	if opt.Ncu.Path == "" {
		if opt.Ncu, err = FindNcu(); err != nil {
			return nil, err
		}
	}
	results, _, err := g.run(ctx, p, &opt.Ncu, opt.Raw)
	return results, err
}

// Measure times every spec and, with ncu set, profiles them too, merging
// the metrics into the timed results (a spec that failed either run
// fails).
func (g *GPU) Measure(ctx context.Context, specs []spec.Spec, ncu *ProfileOptions) ([]Result, error) {
	p, err := Prepare(specs, "")
	if err != nil {
		return nil, err
	}
	defer p.Close()
	results, _, err := g.run(ctx, p, nil, nil)
	if err != nil || ncu == nil {
		return results, err
	}
	if ncu.Ncu.Path == "" {
		if ncu.Ncu, err = FindNcu(); err != nil {
			return nil, err
		}
	}
	prof, _, err := g.run(ctx, p, &ncu.Ncu, ncu.Raw)
	if err != nil {
		return nil, err
	}
	for i := range results {
		switch {
		case results[i].Failed():
		case prof[i].Failed():
			results[i] = Result{Spec: results[i].Spec, Error: "profiling: " + prof[i].Error}
		default:
			results[i].Metrics = prof[i].Metrics
			results[i].setMoved()
		}
	}
	return results, nil
}

func (r *Result) setMoved() {
	rd, ok1 := r.Metrics[metrics.DRAMRead]
	wr, ok2 := r.Metrics[metrics.DRAMWrite]
	if ok1 && ok2 && r.TimeMs > 0 {
		r.MovedGBps = (rd + wr) / (r.TimeMs * 1e-3) / 1e9
	}
}

// run sends the prepared lines through the harness, under ncu when ncu is
// set, and pairs the answers (and ncu's rows) with the specs.
func (g *GPU) run(ctx context.Context, p *Prepared, ncu *Ncu, raw io.Writer) ([]Result, []harnessLine, error) {
	results := make([]Result, len(p.Specs))
	for i, s := range p.Specs {
		results[i].Spec = s
		if p.Errs[i] != nil {
			results[i].Error = p.Errs[i].Error()
		}
	}
	if len(p.Lines) == 0 {
		return results, nil, nil
	}
	work, err := os.MkdirTemp("", "coalesce-run-")
	if err != nil {
		return nil, nil, fmt.Errorf("cuda: %w", err)
	}
	defer os.RemoveAll(work)
	input, output := filepath.Join(work, "specs.jsonl"), filepath.Join(work, "results.jsonl")
	if err := os.WriteFile(input, p.Input(), 0o644); err != nil {
		return nil, nil, fmt.Errorf("cuda: %w", err)
	}
	profile := ncu != nil
	args := g.harnessArgs(input, output, profile)
	var inv Invocation
	if profile {
		inv = ncu.ProfileCmd(g.Harness.Path, args, g.timeout())
	} else {
		inv = g.Harness.cmd(args, g.timeout())
	}
	stdout, runErr := inv.Run(ctx)
	if raw != nil && len(stdout) > 0 {
		if _, err := raw.Write(stdout); err != nil {
			return nil, nil, fmt.Errorf("cuda: saving ncu output: %w", err)
		}
	}
	if runErr != nil {
		// Status 1 only says some spec got an error line: the answers
		// still tell which. Anything else failed the run as a whole.
		var te *ToolError
		if !errors.As(runErr, &te) || te.ExitCode != exitSomeLineFailed {
			return nil, nil, harnessError(runErr)
		}
	}
	data, err := os.ReadFile(output)
	if err != nil {
		return nil, nil, fmt.Errorf("cuda: reading the harness's answers: %w (after %v)", err, runErr)
	}
	answers, err := parseHarnessOutput(data, len(p.Lines), !profile)
	if err != nil {
		return nil, nil, err
	}
	var rows []KernelMetrics
	if profile {
		if rows, err = ParseNcuCSV(stdout, metrics.All); err != nil {
			return nil, nil, err
		}
		launched := 0
		for _, a := range answers {
			if a.Launched {
				launched++
			}
		}
		if len(rows) != launched {
			return nil, nil, &OutputError{Source: "ncu", Msg: fmt.Sprintf("%d profiled kernels for %d launched specs: cannot tell which counts belong to which spec", len(rows), launched)}
		}
	}
	k := 0
	for j, a := range answers {
		i := p.Index[j]
		r := &results[i]
		var km *KernelMetrics
		if profile && a.Launched {
			km = &rows[k]
			k++
		}
		if a.Error != "" {
			r.Error = a.Error
			continue
		}
		r.fill(a)
		if err := r.crossCheck(); err != nil {
			*r = Result{Spec: r.Spec, Error: err.Error()}
			continue
		}
		if km != nil {
			r.Metrics = km.Metrics
		}
	}
	return results, answers, nil
}

func (r *Result) fill(a harnessLine) {
	f := func(p *float64) float64 {
		if p == nil {
			return 0
		}
		return *p
	}
	r.TimeMs, r.TimeMsMin, r.TimeMsMax = f(a.TimeMs), f(a.TimeMsMin), f(a.TimeMsMax)
	r.TimedLaunches = a.TimedLaunches
	r.UsefulBytes, r.UsefulGBps = a.UsefulBytes, f(a.UsefulGBps)
	r.MemcpyMs, r.MemcpyGBps, r.MemcpyBytes = f(a.MemcpyMs), f(a.MemcpyGBps), a.MemcpyBytes
	if r.MemcpyGBps > 0 {
		r.OfMemcpy = r.UsefulGBps / r.MemcpyGBps
	}
	r.Threads, r.GridBlocks, r.L2Fetch, r.Verified = a.Threads, a.GridBlocks, a.L2Fetch, a.Verified
}

// crossCheck holds the harness to the spec package: the same useful bytes,
// the same launch shape, the L2 fetch granularity the spec asked for.
func (r *Result) crossCheck() error {
	s := r.Spec
	if want := s.UsefulBytes(); r.UsefulBytes != want {
		return fmt.Errorf("cuda: the harness counted %d useful bytes, lessons/spec %d: harness and spec disagree", r.UsefulBytes, want)
	}
	// A grid_stride_copy with grid 0 takes one wave of the GPU at hand,
	// which the spec can only guess from the device profile.
	if !(s.Kernel == spec.GridStrideCopy && s.Grid == 0) {
		if r.Threads != s.Threads() || r.GridBlocks != s.GridBlocks() {
			return fmt.Errorf("cuda: the harness launched %d threads in %d blocks, lessons/spec says %d in %d", r.Threads, r.GridBlocks, s.Threads(), s.GridBlocks())
		}
	}
	if r.L2Fetch != s.L2Fetch {
		return fmt.Errorf("cuda: cudaLimitMaxL2FetchGranularity read back as %d after setting %d: the driver did not take the spec's value", r.L2Fetch, s.L2Fetch)
	}
	return nil
}
