package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/coalescing-course/coalesce/calibrate"
	"github.com/coalescing-course/coalesce/cuda"
	"github.com/coalescing-course/coalesce/cuda/toolkit"
)

func init() {
	commands["calibrate"] = command{
		summary: "fit the model's profile to this machine's GPU: [-force] [-out FILE] [-no-ncu] [-timeout D]",
		run:     calibrateCmd,
	}
}

const calibrateUsage = `usage: coalesce calibrate [-force] [-out FILE] [-no-ncu] [-timeout D]

Measures what the model needs to describe this machine's GPU, in about a
minute: its geometry, its cudaMemcpy bandwidth, the load latency of DRAM
and of the L2 (a pointer chase), the times of copies across the bytes in
flight, a sparse read and a footprint sweep across the L2 (with Nsight
Compute's DRAM bytes where counters are readable). It fits a profile to
them (go doc calibrate), caches it for this GPU, where the notebooks and
the grader find it, and prints it as JSON, each field with its source.

A GPU calibrated before is not measured again: its cached profile is
printed, unless -force is given.
`

type calibrateFlags struct {
	force, noNcu bool
	out          string
	timeout      time.Duration
}

func parseCalibrateFlags(args []string, stdout io.Writer) (*calibrateFlags, error) {
	f := &calibrateFlags{}
	fs := flag.NewFlagSet("calibrate", flag.ContinueOnError)
	fs.BoolVar(&f.force, "force", false, "measure again even when this GPU's calibration is cached")
	fs.StringVar(&f.out, "out", "", "also write the profile to this file")
	fs.BoolVar(&f.noNcu, "no-ncu", false, "read no counters: the DRAM level is estimated from the H200's")
	fs.DurationVar(&f.timeout, "timeout", 10*time.Minute, "limit for the whole calibration")
	if err := parseFlags(fs, calibrateUsage, args, stdout); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, usagef("calibrate: takes no arguments, got %q", fs.Args())
	}
	if f.timeout <= 0 {
		return nil, usagef("calibrate: -timeout %v: want a positive duration, such as 5m", f.timeout)
	}
	return f, nil
}

func calibrateCmd(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) error {
	f, err := parseCalibrateFlags(args, stdout)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	st, done := statusLine(stderr)
	defer done()
	g, err := cuda.OpenGPU(ctx, cuda.Builder{Log: st})
	if err != nil {
		var missing *toolkit.MissingError
		if errors.As(err, &missing) {
			return fmt.Errorf("calibrate measures this machine's GPU: %w", err)
		}
		return err
	}
	g.Timeout = f.timeout
	g.Progress = st
	if f.noNcu {
		g.Ncu, g.NoNcu = nil, "-no-ncu"
	}
	cal, ok, err := calibrate.Cached(g.Info.GPU)
	if err != nil {
		// A corrupt cache entry is set aside: measure again.
		fmt.Fprintf(stderr, "coalesce: %v\n", err)
	}
	path, perr := calibrate.CachePath(g.Info.GPU)
	if perr != nil {
		return perr
	}
	if ok && !f.force {
		fmt.Fprintf(stderr, "calibrate: %s was calibrated on %s (%s); -force measures it again\n", g.Info.GPU, cal.Calibrated, path)
	} else {
		start := time.Now()
		var rep calibrate.Report
		cal, rep, err = calibrate.Calibrator{GPU: g, Progress: st}.Run(ctx)
		if err != nil {
			return err
		}
		for _, n := range rep.Notes {
			fmt.Fprintf(stderr, "calibrate: note: %s\n", n)
		}
		if path, err = calibrate.Save(cal); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "calibrate: done in %.0f s; cached in %s\n", time.Since(start).Seconds(), path)
	}
	data, err := json.MarshalIndent(cal, "", "  ")
	if err != nil {
		return err
	}
	data = append(data, '\n')
	if f.out != "" {
		if err := os.WriteFile(f.out, data, 0o644); err != nil {
			return fmt.Errorf("calibrate: %w", err)
		}
	}
	_, err = stdout.Write(data)
	return err
}
