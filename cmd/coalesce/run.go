package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/coalescing-course/coalesce/cuda"
	"github.com/coalescing-course/coalesce/internal/atomicfile"
	"github.com/coalescing-course/coalesce/internal/words"
	"github.com/coalescing-course/coalesce/lessons/measure"
	"github.com/coalescing-course/coalesce/lessons/spec"
)

func init() {
	commands["run"] = command{
		summary: "measure specs on this machine's GPU: [-ncu] [-record FILE] [FILE]",
		run:     runCmd,
	}
}

// runFlags are coalesce run's flags.
type runFlags struct {
	ncu     bool
	record  string
	ncuCSV  string
	emit    string
	harness bool
	timeout time.Duration
	reps    int
}

const runUsage = `usage: coalesce run [-ncu [-ncu-csv FILE]] [-record FILE] [-reps N] [-timeout D] [FILE]
       coalesce run -emit DIR [FILE]
       coalesce run -harness

Measures experiment specs, one JSON object per line (FILE, or standard
input), on this machine's GPU: the harness is built with nvcc (once per
source and compiler, cached), times every launch with CUDA events (median
after warm-up) and, with -ncu, reads the course's counters with Nsight
Compute. Writes a run file to standard output: the provenance (GPU, driver,
CUDA, harness, command) first, then one launch a line, a bad spec answered
in its place with its line number and error.
`

func parseRunFlags(args []string, stdout io.Writer) (*runFlags, []string, error) {
	f := &runFlags{}
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.BoolVar(&f.ncu, "ncu", false, "also read the course's metrics with Nsight Compute")
	fs.StringVar(&f.record, "record", "", "also write the measured launches, with their provenance, to this run file (cuda/reference/h200.jsonl is one)")
	fs.StringVar(&f.ncuCSV, "ncu-csv", "", "save ncu's raw output (the CSV) in this file")
	fs.StringVar(&f.emit, "emit", "", "write the launch plans as the harness reads them, index files in this directory, and stop")
	fs.BoolVar(&f.harness, "harness", false, "build the harness (or find it in the cache), print its path and stop")
	fs.DurationVar(&f.timeout, "timeout", 30*time.Minute, "limit for each harness or ncu run")
	fs.IntVar(&f.reps, "reps", 0, "timed launches per spec (at least 9; 0: the harness's 20)")
	if err := parseFlags(fs, runUsage, args, stdout); err != nil {
		return nil, nil, err
	}
	if f.ncuCSV != "" && !f.ncu {
		return nil, nil, usagef("run: -ncu-csv needs -ncu")
	}
	if f.reps != 0 && f.reps < cuda.MinTimedLaunches {
		return nil, nil, usagef("run: -reps %d: want at least %d", f.reps, cuda.MinTimedLaunches)
	}
	return f, fs.Args(), nil
}

// readSpecs reads every line of the input; bad lines come back with Err set.
func readSpecs(args []string, stdin io.Reader) ([]spec.Line, error) {
	in, closeIn, err := openInput(args, stdin)
	if err != nil {
		return nil, err
	}
	defer closeIn()
	return spec.ReadAll(in)
}

func runCmd(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	f, rest, err := parseRunFlags(args, stdout)
	if err != nil {
		return err
	}
	st, done := statusLine(stderr)
	defer done()
	b := cuda.Builder{Log: st}
	if f.harness {
		h, err := b.Build(ctx)
		if err != nil {
			return err
		}
		fmt.Fprintln(stdout, h.Path)
		return nil
	}
	lines, err := readSpecs(rest, stdin)
	if err != nil {
		return err
	}
	var specs []spec.Spec
	for _, l := range lines {
		if l.Err == nil {
			specs = append(specs, l.Spec)
		}
	}
	if f.emit != "" {
		return emitPlans(f.emit, lines, specs, stdout, stderr)
	}

	// The run file: the provenance first when a GPU measured anything, then
	// one launch per input line, bad lines answered in place.
	set := &measure.Set{}
	var launches []measure.Launch
	if len(specs) > 0 {
		gpu, err := cuda.OpenGPU(ctx, b)
		if err != nil {
			return err
		}
		gpu.Timeout, gpu.Reps, gpu.Progress = f.timeout, f.reps, st
		want := measure.Times
		if f.ncu {
			if gpu.Ncu == nil {
				return fmt.Errorf("run -ncu: %s", gpu.NoNcu)
			}
			want |= measure.Counters
			if f.ncuCSV != "" {
				csvFile, err := os.Create(f.ncuCSV)
				if err != nil {
					return err
				}
				defer csvFile.Close()
				gpu.NcuOutput = csvFile
			}
		} else {
			gpu.Ncu = nil // -ncu not asked: no profile, and no ncu in the provenance
		}
		fmt.Fprintf(st, "coalesce: measuring %s on %s\n", words.Plural(len(specs), "launch"), gpu.Info.GPU)
		measured, err := gpu.Measure(ctx, specs, want)
		if err != nil {
			return err
		}
		launches = measured.Launches
		if measured.CountersErr != nil {
			fmt.Fprintf(stderr, "coalesce: %v\ncoalesce: the times are live; each launch's \"counters\" says whose its counters are\n", measured.CountersErr)
		}
		prov := gpu.Provenance(ctx, "coalesce run "+strings.Join(args, " "))
		set.Provenance = &prov
	}
	bad, k := 0, 0
	for _, l := range lines {
		var out measure.Launch
		if l.Err != nil {
			out = measure.Launch{Error: lineErrorOf(l.Num, l.Err).Error}
		} else {
			out = launches[k]
			k++
		}
		out.Line = l.Num
		if out.Failed() {
			bad++
		}
		set.Launches = append(set.Launches, out)
	}
	if err := measure.WriteSet(stdout, set); err != nil {
		return err
	}
	if f.record != "" && set.Provenance != nil {
		if err := writeRunFile(f.record, set); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "coalesce: %s written to %s\n", words.Plural(recorded(set), "launch"), f.record)
	}
	if bad > 0 {
		fmt.Fprintf(stderr, "coalesce run: %s not measured, answered in place\n", words.Plural(bad, "line"))
		return errReported
	}
	return nil
}

// writeRunFile writes the measured launches of set, with its provenance,
// to path, replacing it only once the whole file is written; a fault is
// kept with its CUDA error (recordable).
func writeRunFile(path string, set *measure.Set) error {
	rec := &measure.Set{Provenance: set.Provenance}
	for _, l := range set.Launches {
		if recordable(l) {
			l.Line = 0
			// A recording holds what the GPU measured: counters ncu did
			// not read are left out, not handed on as the recording's.
			if l.CountersBorrowed() {
				l.Metrics, l.Counters = nil, ""
			}
			rec.Launches = append(rec.Launches, l)
		}
	}
	return atomicfile.Write(path, 0o644, func(w io.Writer) error { return measure.WriteSet(w, rec) })
}

// emitPlans writes the launch plans as the harness reads them, for
// running the harness by hand (under compute-sanitizer, say): gathers get
// index files in dir, which stay there. Without a GPU to ask, a grid of
// one full wave is the spec's device's.
func emitPlans(dir string, lines []spec.Line, specs []spec.Spec, stdout, stderr io.Writer) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	bad := false
	for _, l := range lines {
		if l.Err != nil {
			fmt.Fprintf(stderr, "coalesce: %v\n", l.Err)
			bad = true
		}
	}
	p, err := cuda.Prepare(specs, nil, dir)
	if err != nil {
		return err
	}
	for _, e := range p.Errs {
		if e != nil {
			fmt.Fprintf(stderr, "coalesce: %v\n", e)
			bad = true
		}
	}
	if _, err := stdout.Write(p.Input()); err != nil {
		return err
	}
	if bad {
		return errReported
	}
	return nil
}

// recorded counts the launches writeRunFile keeps.
func recorded(set *measure.Set) int {
	n := 0
	for _, l := range set.Launches {
		if recordable(l) {
			n++
		}
	}
	return n
}

// recordable reports whether a recording keeps l: a measurement, or a
// fault, which is what the GPU did with the launch; not a launch that
// failed for another reason (a refused spec, a wrong result).
func recordable(l measure.Launch) bool { return !l.Failed() || l.CUDAError != "" }
