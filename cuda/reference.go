package cuda

import (
	"bytes"
	"context"
	"embed"
	"errors"
	"fmt"
	"maps"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/coalescing-course/coalesce/lessons/measure"
)

// Provenance gathers what is known about the GPU, its driver and the
// tools, for a run file's first line, with command as the command that
// made the run; nvidia-smi is optional. It asks the tools once per GPU.
func (g *GPU) Provenance(ctx context.Context, command string) measure.Provenance {
	g.provOnce.Do(func() { g.prov = g.collect(ctx) })
	p := g.prov
	p.Command = command
	p.Clocks = maps.Clone(g.prov.Clocks)
	return p
}

func (g *GPU) collect(ctx context.Context) measure.Provenance {
	p := measure.Provenance{
		Device:      g.Info,
		CUDA:        measure.CUDAVersion(g.Info.RuntimeVersion),
		Nvcc:        g.Harness.Nvcc,
		HarnessArch: strings.Join(g.Harness.Arch, " "),
		HarnessKey:  g.Harness.Key,
		Date:        g.Opened.UTC().Format(time.RFC3339),
	}
	reps, warm := g.Reps, g.Warmup
	if reps == 0 {
		reps = 20
	}
	if warm == 0 {
		warm = minWarmups
	}
	p.Timing = fmt.Sprintf("median of %d launches, each between a CUDA event pair, after %d warm-up launches", reps, warm)
	if !g.NoFlush {
		p.Timing += "; the L2 flushed (a read of twice its size) before every launch"
	}
	if g.Ncu != nil {
		if out, err := g.Ncu.VersionCmd().Run(ctx); err == nil {
			p.Ncu = versionLine(string(out))
		}
		p.Profiling = "ncu " + strings.Join(profileArgs("harness", []string{"--profile"}), " ")
	}
	if smi, err := exec.LookPath("nvidia-smi"); err == nil {
		q := "driver_version,clocks.sm,clocks.mem,clocks.max.sm,clocks.max.mem,pstate,power.draw,temperature.gpu"
		inv := Invocation{Tool: "nvidia-smi", Path: smi, Args: []string{"--query-gpu=" + q, "--format=csv,noheader"}, Timeout: 30 * time.Second}
		if out, err := inv.Run(ctx); err == nil {
			vals := strings.Split(strings.TrimSpace(lastLine(string(out))), ",")
			keys := strings.Split(q, ",")
			if len(vals) == len(keys) {
				p.Clocks = map[string]string{}
				for i, k := range keys {
					v := strings.TrimSpace(vals[i])
					if k == "driver_version" {
						p.Driver = v
						continue
					}
					p.Clocks[k] = v
				}
			}
		}
	}
	return p
}

// referenceFile is the recording built into the course, made on its H200
// from the sweep the lessons use (reference/sweep.jsonl) with
//
//	coalesce run -ncu -record cuda/reference/h200.jsonl cuda/reference/sweep.jsonl
//
// on a machine with an H200, nvcc and ncu (make reference). It is never
// edited by hand.
const referenceFile = "reference/h200.jsonl"

//go:embed reference
var referenceFS embed.FS

// Recorded returns the recording built into the course: launches measured
// on its H200, whose origin is Recorded. A build without it gives an
// error wrapping ErrNoReference.
var Recorded = sync.OnceValues(func() (*measure.Set, error) {
	data, err := referenceFS.ReadFile(referenceFile)
	if err != nil {
		return nil, fmt.Errorf("cuda: %w: %s is not in this build", ErrNoReference, referenceFile)
	}
	set, err := measure.ReadSet(bytes.NewReader(data), referenceFile, measure.Origin{Kind: measure.Recorded})
	if err != nil {
		return nil, err
	}
	if set.Provenance == nil {
		return nil, fmt.Errorf("cuda: %s has no provenance", referenceFile)
	}
	return set, nil
})

// RecordedMeasurer returns the recording built into the course as a Measurer;
// why, when not "", says why it stands in for a live GPU.
func RecordedMeasurer(why string) (measure.Measurer, error) {
	set, err := Recorded()
	if err != nil {
		return nil, err
	}
	with := *set
	with.Origin.Why = why
	return measure.FromSet(&with), nil
}

// ModeEnv names the environment variable that picks where the notebooks'
// and the grader's measurements come from (OpenMeasurer).
const ModeEnv = "COALESCE_MEASURE"

// Modes of OpenMeasurer.
const (
	// Auto is live when this machine can measure, else recorded.
	Auto = "auto"
	// LiveMode insists on this machine's GPU.
	LiveMode = "live"
	// StrictMode is LiveMode that also insists on ncu's counters of this
	// GPU (GPU.Strict): no stand-in from the recording or the model. It
	// is for testing the course on a GPU machine (make test-gpu).
	StrictMode = "strict"
	// RecordedMode takes the recording built into the course.
	RecordedMode = "recorded"
	// NoneMode measures nothing.
	NoneMode = "none"
)

// ErrNoMeasurer is a mode that gives no measurements: none, or live on a
// machine that cannot measure, or recorded in a build without the
// recording.
var ErrNoMeasurer = errors.New("no measurement source")

// OpenMeasurer opens where measurements come from: mode "live" (this
// machine's GPU, or an error), "strict" (live, and an error wherever live
// would borrow counters), "recorded" (the recording built into the
// course), "none" (an error wrapping ErrNoMeasurer), or "" and "auto": live
// when this machine can measure, else recorded, with the Origin's Why
// saying what it lacks.
func OpenMeasurer(ctx context.Context, mode string, b Builder) (measure.Measurer, error) {
	recorded := func(why string) (measure.Measurer, error) {
		src, err := RecordedMeasurer(why)
		if err != nil {
			return nil, fmt.Errorf("cuda: %w: %s, and %v", ErrNoMeasurer, why, err)
		}
		return src, nil
	}
	switch m := strings.ToLower(strings.TrimSpace(mode)); m {
	case RecordedMode:
		return recorded(ModeEnv + "=recorded")
	case NoneMode:
		return nil, fmt.Errorf("cuda: %w: %s=none", ErrNoMeasurer, ModeEnv)
	case LiveMode, StrictMode, "", Auto:
		g, err := OpenGPU(ctx, b)
		if err == nil {
			g.Strict = m == StrictMode
			return g, nil
		}
		if m == LiveMode || m == StrictMode {
			return nil, fmt.Errorf("cuda: %w: %s=%s, but %v", ErrNoMeasurer, ModeEnv, m, err)
		}
		var missing *MissingError
		if errors.As(err, &missing) {
			return recorded("no GPU here: " + missing.Detail)
		}
		return recorded(fmt.Sprintf("the GPU could not be used: %v", err))
	}
	return nil, fmt.Errorf("cuda: %w: %s=%q: want live, strict, recorded, auto or none", ErrNoMeasurer, ModeEnv, mode)
}
