package cuda

import (
	"context"
	"fmt"
	"maps"
	"os/exec"
	"strings"
	"time"

	"github.com/coalescing-course/coalesce/cuda/toolkit"
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
		p.Profiling = "ncu " + strings.Join(toolkit.ProfileArgs("harness", []string{"--profile"}), " ")
	}
	if smi, err := exec.LookPath("nvidia-smi"); err == nil {
		q := "driver_version,clocks.sm,clocks.mem,clocks.max.sm,clocks.max.mem,pstate,power.draw,temperature.gpu"
		inv := toolkit.Invocation{Tool: "nvidia-smi", Path: smi, Args: []string{"--query-gpu=" + q, "--format=csv,noheader"}, Timeout: 30 * time.Second}
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
