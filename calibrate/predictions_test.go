package calibrate

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/coalescing-course/coalesce/cuda/reference"
	"github.com/coalescing-course/coalesce/lessons/measure"
	"github.com/coalescing-course/coalesce/lessons/sectors"
	"github.com/coalescing-course/coalesce/lessons/sectors/sectorstest"
	"github.com/coalescing-course/coalesce/lessons/spec"
)

// predictionsFile holds the model's predictions of every timed launch the
// tests fit or score the time model on: the time files' (fitFiles,
// heldFiles) and the recording's that Fit reads (recordedSet).
const predictionsFile = "testdata/predictions.jsonl"

// TestMain serves the time fit's predictions from predictionsFile, where
// its fingerprint is the model's source's (sectorstest.Load): predicting
// the recordings again took most of a minute of every run, and gives the
// same launches.
func TestMain(m *testing.M) {
	modelAll = served
	os.Exit(m.Run())
}

var (
	servedOnce  sync.Once
	servedPreds map[spec.Spec]sectors.Launch
	servedErr   error
)

// served is sectors.ModelAll with the launches of predictionsFile from
// the file: the first call loads them all; a spec it does not hold is
// predicted.
func served(specs ...spec.Spec) ([]sectors.Launch, error) {
	servedOnce.Do(func() {
		all, err := timedSpecs()
		if err != nil {
			servedErr = err
			return
		}
		preds, log, err := sectorstest.Load(predictionsFile, all)
		for _, line := range log {
			fmt.Fprintln(os.Stderr, line)
		}
		if err != nil {
			servedErr = err
			return
		}
		servedPreds = map[spec.Spec]sectors.Launch{}
		for i, s := range all {
			servedPreds[s] = preds[i]
		}
	})
	if servedErr != nil {
		return nil, servedErr
	}
	out := make([]sectors.Launch, len(specs))
	var missing []int
	for i, s := range specs {
		p, ok := servedPreds[s]
		if !ok {
			missing = append(missing, i)
			continue
		}
		out[i] = p
	}
	if len(missing) > 0 {
		more := make([]spec.Spec, len(missing))
		for k, i := range missing {
			more[k] = specs[i]
		}
		preds, err := sectors.ModelAll(more...)
		if err != nil {
			return nil, err
		}
		for k, i := range missing {
			out[i] = preds[k]
		}
	}
	return out, nil
}

// timedSpecs returns the specs of every timed launch of the time files
// and of the recording Fit reads, each once, in the files' order.
func timedSpecs() ([]spec.Spec, error) {
	var sets []*measure.Set
	for _, f := range slices.Concat(fitFiles, heldFiles, []string{"cuda/testdata/probe_metrics.jsonl"}) {
		set, err := measure.ReadFile(filepath.Join("..", f))
		if err != nil {
			return nil, err
		}
		sets = append(sets, set)
	}
	rec, err := reference.Recorded()
	if err != nil {
		return nil, err
	}
	sets = append(sets, rec)
	var out []spec.Spec
	seen := map[spec.Spec]bool{}
	for _, set := range sets {
		for _, l := range set.Measured() {
			if l.Timed() && !l.Failed() && !seen[l.Spec] {
				seen[l.Spec] = true
				out = append(out, l.Spec)
			}
		}
	}
	return out, nil
}
