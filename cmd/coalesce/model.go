package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/coalescing-course/coalesce/internal/words"
	"github.com/coalescing-course/coalesce/lessons/figures"
	"github.com/coalescing-course/coalesce/lessons/metrics"
	"github.com/coalescing-course/coalesce/lessons/sectors"
	"github.com/coalescing-course/coalesce/lessons/spec"
)

func init() {
	commands["model"] = command{summary: "predict specs (JSON lines from FILE or stdin) with the sector model", run: runModel}
}

const modelUsage = `usage: coalesce model [FILE]

Reads experiment specs, one JSON object per line (FILE, or standard input),
and writes one JSON line per spec: the spec with its defaults, the ncu
metrics the model predicts and the figures derived from them. A bad line is
answered in its place with {"line":N,"error":"..."}; the others are still
answered, and the exit status is 1.
`

// lineError is the answer to a bad input line, written in its place.
type lineError struct {
	Line  int    `json:"line"`
	Error string `json:"error"`
}

// lineErrorOf builds the in-place answer for a spec line that failed,
// without repeating the line number inside the message.
func lineErrorOf(num int, err error) lineError {
	var le *spec.LineError
	if errors.As(err, &le) {
		err = le.Err
	}
	return lineError{Line: num, Error: err.Error()}
}

func runModel(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("model", flag.ContinueOnError)
	if err := parseFlags(fs, modelUsage, args, stdout); err != nil {
		return err
	}
	in, done, err := openInput(fs.Args(), stdin)
	if err != nil {
		return err
	}
	defer done()
	enc := json.NewEncoder(stdout)
	rd := spec.NewReader(in)
	bad := 0
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		line, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("reading specs: %w", err)
		}
		var out any
		if line.Err != nil {
			out, bad = lineErrorOf(line.Num, line.Err), bad+1
		} else if p, err := sectors.Model(line.Spec); err != nil {
			out, bad = lineErrorOf(line.Num, err), bad+1
		} else {
			out = withFigures(p)
		}
		if err := enc.Encode(out); err != nil {
			return fmt.Errorf("writing: %w", err)
		}
	}
	if bad > 0 {
		fmt.Fprintf(stderr, "coalesce model: %s, answered in place\n", words.Plural(bad, "bad line"))
		return errReported
	}
	return nil
}

// modelLine is one answer of coalesce model: the prediction, and every
// figure of lessons/figures the model gives for it, by name.
type modelLine struct {
	sectors.Launch
	Figures map[string]float64 `json:"figures"`
}

func withFigures(p sectors.Launch) modelLine {
	out := modelLine{Launch: p, Figures: map[string]float64{}}
	v := figures.Model(p)
	for _, f := range figures.All() {
		if x, err := f.Of(v); err == nil && !metrics.Known(f.Name) {
			out.Figures[f.Name] = x
		}
	}
	return out
}
