// Command numbers checks executed notebooks: every number a markdown cell
// states must be written in a code cell (an input: a stride, an n), printed
// by one (a measured or modelled result, rounded as units rounds),
// or be one of the few definitions of notebook.Definitions (32 lanes,
// 32-byte sectors, 128-byte lines, ...); and every equation a code cell
// prints must hold as printed (notebook.CheckEquations: its terms worked
// out round to its result). scripts/run_notebooks.py runs it on each
// notebook it executed.
//
//	numbers build/notebooks/03-strided.ipynb ...
//
// It prints one line per unsupported number, naming the notebook, the
// cell, the number and its sentence, and one per false equation, and
// exits 1 when there is one; 2 when a notebook cannot be read.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/coalescing-course/coalesce/internal/notebook"
)

// maxNotebook bounds a notebook read: executed lessons with their charts
// are a few MB.
const maxNotebook = 256 << 20

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	flags := flag.NewFlagSet("numbers", flag.ContinueOnError)
	flags.SetOutput(stderr)
	all := flags.Bool("v", false, "print every stated number with what backs it, not only the unbacked ones")
	flags.Usage = func() {
		fmt.Fprintln(stderr, "usage: numbers [-v] NOTEBOOK.ipynb ...")
		flags.PrintDefaults()
	}
	if err := flags.Parse(args); err != nil {
		return 2
	}
	paths := flags.Args()
	if len(paths) == 0 {
		flags.Usage()
		return 2
	}
	code := 0
	for _, path := range paths {
		found, wrong, err := check(path)
		if err != nil {
			fmt.Fprintf(stderr, "numbers: %s: %v\n", path, err)
			code = 2
			continue
		}
		for _, f := range wrong {
			fmt.Fprintf(stdout, "%s: %s\n", path, f)
			if code == 0 {
				code = 1
			}
		}
		for _, f := range found {
			if f.By == "" || *all {
				fmt.Fprintf(stdout, "%s: %s\n", path, f)
			}
			if f.By == "" && code == 0 {
				code = 1
			}
		}
	}
	return code
}

func check(path string) ([]notebook.Finding, []notebook.FalseEquation, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	if len(data) > maxNotebook {
		return nil, nil, fmt.Errorf("%d bytes, more than the %d allowed", len(data), maxNotebook)
	}
	nb, err := notebook.Parse(data)
	if err != nil {
		return nil, nil, err
	}
	outputs, err := notebook.OutputTexts(data)
	if err != nil {
		return nil, nil, err
	}
	return notebook.Findings(nb, outputs), notebook.CheckEquations(outputs), nil
}
