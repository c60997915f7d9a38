package lab

import (
	"context"
	"fmt"
	"os"
	"sync"

	"github.com/coalescing-course/coalesce/lessons/measure"
	"github.com/coalescing-course/coalesce/lessons/spec"
)

// SpecLogEnv names the variable that makes lab write down every launch a
// notebook measures or profiles: set to a file, each spec asked of the
// notebook's source (lab.Measure, Profile, Compare, Versus, Counters and
// the grader's measured exercises all ask it) is appended to it once, as
// its canonical JSON line (spec.Spec.String). scripts/run_notebooks.py
// sets it, so that lab/testdata/notebook-specs.jsonl lists what the
// notebooks measure and TestGPUNotebookSpecs can measure it all live.
const SpecLogEnv = "COALESCE_SPEC_LOG"

// specLog is a Measurer that writes down the specs asked of it before
// asking its inner source.
type specLog struct {
	measure.Measurer
	path string

	mu     sync.Mutex
	logged map[string]bool
}

// logSpecs wraps src in a specLog when path is set.
func logSpecs(src measure.Measurer, path string) measure.Measurer {
	if path == "" {
		return src
	}
	return &specLog{Measurer: src, path: path, logged: map[string]bool{}}
}

// Measure appends the specs not yet written to the log, then measures. A
// log that cannot be written fails the measurement: a run that should
// list what it measures must not list less silently.
func (l *specLog) Measure(ctx context.Context, specs []spec.Spec, want measure.Want) (*measure.Set, error) {
	if err := l.write(specs); err != nil {
		return nil, err
	}
	return l.Measurer.Measure(ctx, specs, want)
}

func (l *specLog) write(specs []spec.Spec) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	var lines []byte
	for _, s := range specs {
		line := s.String()
		if l.logged[line] {
			continue
		}
		l.logged[line] = true
		lines = append(append(lines, line...), '\n')
	}
	if len(lines) == 0 {
		return nil
	}
	f, err := os.OpenFile(l.path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("lab: %s: %w", SpecLogEnv, err)
	}
	if _, err := f.Write(lines); err != nil {
		f.Close()
		return fmt.Errorf("lab: %s: %w", SpecLogEnv, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("lab: %s: %w", SpecLogEnv, err)
	}
	return nil
}

// ProbeCounters asks the inner source, when it can tell (a live GPU),
// whether ncu may read its counters; nil when it cannot tell.
func (l *specLog) ProbeCounters(ctx context.Context) error {
	if p, ok := l.Measurer.(counterProber); ok {
		return p.ProbeCounters(ctx)
	}
	return nil
}
