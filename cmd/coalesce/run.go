package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/coalescing-course/coalesce/cuda"
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

func parseRunFlags(name string, args []string, stderr io.Writer) (*runFlags, []string, error) {
	f := &runFlags{}
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.BoolVar(&f.ncu, "ncu", false, "also read the course's metrics with Nsight Compute")
	fs.StringVar(&f.record, "record", "", "also write the results, with their provenance, as a reference file")
	fs.StringVar(&f.ncuCSV, "ncu-csv", "", "save ncu's raw output (the CSV) in this file")
	fs.StringVar(&f.emit, "emit", "", "write the specs as the harness reads them, index files in this directory, and stop")
	fs.BoolVar(&f.harness, "harness", false, "build the harness (or find it in the cache), print its path and stop")
	fs.DurationVar(&f.timeout, "timeout", 30*time.Minute, "limit for each harness or ncu run")
	fs.IntVar(&f.reps, "reps", 0, "timed launches per spec (at least 9; 0: the harness's 20)")
	if err := fs.Parse(args); err != nil {
		return nil, nil, usagef("%s: %v", name, err)
	}
	if f.ncuCSV != "" && !f.ncu {
		return nil, nil, usagef("%s: -ncu-csv needs -ncu", name)
	}
	if f.reps != 0 && f.reps < cuda.MinTimedLaunches {
		return nil, nil, usagef("%s: -reps %d: want at least %d", name, f.reps, cuda.MinTimedLaunches)
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

// errorLine is the answer to a line that could not be measured.
type errorLine struct {
	Line  int        `json:"line"`
	Spec  *spec.Spec `json:"spec,omitempty"`
	Error string     `json:"error"`
}

func runCmd(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	f, rest, err := parseRunFlags("run", args, stderr)
	if err != nil {
		return err
	}
	b := cuda.Builder{Log: stderr}
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
	var nums []int
	for _, l := range lines {
		if l.Err == nil {
			specs = append(specs, l.Spec)
			nums = append(nums, l.Num)
		}
	}
	if f.emit != "" {
		return emitSpecs(f.emit, lines, specs, stdout, stderr)
	}

	var results []cuda.Result
	var gpu *cuda.GPU
	var ncu *cuda.Ncu
	if len(specs) > 0 {
		if gpu, err = cuda.Open(ctx, b); err != nil {
			return err
		}
		gpu.Timeout, gpu.Reps = f.timeout, f.reps
		var prof *cuda.ProfileOptions
		if f.ncu {
			n, err := cuda.FindNcu()
			if err != nil {
				return err
			}
			ncu = &n
			prof = &cuda.ProfileOptions{Ncu: n}
			if f.ncuCSV != "" {
				csvFile, err := os.Create(f.ncuCSV)
				if err != nil {
					return err
				}
				defer csvFile.Close()
				prof.Raw = csvFile
			}
		}
		fmt.Fprintf(stderr, "coalesce: measuring %d specs on %s\n", len(specs), gpu.Info.GPU)
		if results, err = gpu.Measure(ctx, specs, prof); err != nil {
			return err
		}
	}

	w := bufio.NewWriter(stdout)
	defer w.Flush()
	enc := json.NewEncoder(w)
	bad := 0
	var records []cuda.Result
	k := 0
	for _, l := range lines {
		if l.Err != nil {
			bad++
			if err := enc.Encode(errorLine{Line: l.Num, Error: lineErrorOf(l.Num, l.Err).Error}); err != nil {
				return err
			}
			continue
		}
		r := results[k]
		r.Line = nums[k]
		k++
		if r.Failed() {
			bad++
			s := r.Spec
			if err := enc.Encode(errorLine{Line: r.Line, Spec: &s, Error: r.Error}); err != nil {
				return err
			}
			continue
		}
		if err := enc.Encode(r); err != nil {
			return err
		}
		r.Line = 0
		records = append(records, r)
	}
	if f.record != "" && gpu != nil {
		ref := cuda.Reference{
			Provenance: gpu.CollectProvenance(ctx, ncu, "coalesce run "+strings.Join(args, " ")),
			Records:    records,
		}
		if err := writeReference(f.record, &ref); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "coalesce: %d records written to %s\n", len(records), f.record)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if bad > 0 {
		fmt.Fprintf(stderr, "coalesce run: %d line(s) not measured, answered in place\n", bad)
		return errReported
	}
	return nil
}

func writeReference(path string, ref *cuda.Reference) error {
	tmp := path + ".tmp"
	out, err := os.Create(tmp)
	if err != nil {
		return err
	}
	if _, err := ref.WriteTo(out); err != nil {
		out.Close()
		os.Remove(tmp)
		return err
	}
	if err := out.Close(); err != nil {
		os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, path)
}

// emitSpecs writes the specs as the harness reads them, for running the
// harness by hand (under compute-sanitizer, say): gathers get index files
// in dir, which stay there.
func emitSpecs(dir string, lines []spec.Line, specs []spec.Spec, stdout, stderr io.Writer) error {
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
	p, err := cuda.Prepare(specs, dir)
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
