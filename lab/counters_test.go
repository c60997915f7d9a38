package lab

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coalescing-course/coalesce/cuda"
	"github.com/coalescing-course/coalesce/cuda/toolkit"
	"github.com/coalescing-course/coalesce/lessons/measure"
	"github.com/coalescing-course/coalesce/lessons/sectors"
	"github.com/coalescing-course/coalesce/lessons/spec"
)

// deniedGPU is a live GPU as cuda.GPU is when its driver refuses ncu the
// counters: live times, the model's counters, the denial on the Set.
type deniedGPU struct{ probes int }

var errDenied = &toolkit.CountersDeniedError{GPU: "NVIDIA GeForce RTX 4090",
	Detail: "==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU Performance Counters on the target device 0."}

func (d *deniedGPU) Origin() measure.Origin {
	return measure.Origin{Kind: measure.Live, GPU: errDenied.GPU, When: time.Date(2026, 12, 1, 14, 3, 0, 0, time.UTC)}
}

func (d *deniedGPU) Measure(_ context.Context, specs []spec.Spec, _ measure.Want) (*measure.Set, error) {
	set := &measure.Set{Origin: d.Origin(), CountersErr: errDenied, Note: "Nsight Compute may not read this GPU's counters"}
	for _, s := range specs {
		p, err := sectors.Model(s)
		if err != nil {
			return nil, err
		}
		set.Launches = append(set.Launches, measure.Launch{Spec: s, TimeMs: 0.01, Metrics: p.Metrics, Counters: measure.CountersModel})
	}
	return set, nil
}

func (d *deniedGPU) ProbeCounters(context.Context) error {
	d.probes++
	return errDenied
}

// Status says the counters are refused, and what to do, before any cell
// measures; the first cell that gets borrowed counters says it once more,
// and no later one; tables mark the values the model's counters give.
func TestCountersDeniedNotice(t *testing.T) {
	deniedNotice.said = false
	t.Cleanup(func() { deniedNotice.said = false })
	out := capture(t)
	gpu := &deniedGPU{}
	useMeasurer(logSpecs(gpu, t.TempDir()+"/specs.jsonl"), nil) // through the spec log, as the notebook checks run it
	t.Cleanup(resetMeasurer)

	Status()
	assert.Equal(t, 1, gpu.probes)
	assert.Equal(t, 1, strings.Count(out.String(), toolkit.CountersRemedy), out.String())
	assert.Contains(t, out.String(), "Counters: cuda: the driver does not let this user read the NVIDIA GeForce RTX 4090's performance counters")

	s := Spec(`{"kernel":"coalesced_copy","n":1024}`)
	out.Reset()
	m, err := Measure(s)
	require.NoError(t, err)
	assert.Equal(t, 1, strings.Count(out.String(), toolkit.CountersRemedy), "the first cell says it")
	assert.Contains(t, out.String(), "marked (model) the sector model's")
	out.Reset()
	m, err = Measure(s)
	require.NoError(t, err)
	assert.Empty(t, out.String(), "later cells do not")

	// 1024 threads: 32 load requests of 4 sectors each (the model's);
	// the time is the GPU's, unmarked.
	table := m.Table().String()
	assert.Regexp(t, `(?m)^coalesced_copy, n 2\^10 +10\.0 +1 +— +4 \(model\) +4 \(model\) +[0-9.]+ \(model\)$`, table)
	assert.Contains(t, table, "Nsight Compute may not read this GPU's counters", "the caption says why")
}

// strictDeniedGPU answers as a strict cuda.GPU does when ncu is refused
// the counters: an error that wraps ErrStandIn and the denial, itself a
// measure.ErrNoCounters.
type strictDeniedGPU struct{ deniedGPU }

func (d *strictDeniedGPU) Measure(context.Context, []spec.Spec, measure.Want) (*measure.Set, error) {
	return nil, fmt.Errorf("cuda: %w: %w", cuda.ErrStandIn, errDenied)
}

// Profile takes the recording for a GPU without counters, but not for a
// strict one: its refusal ends the cell.
func TestProfileStrictDenied(t *testing.T) {
	useMeasurer(&strictDeniedGPU{}, nil)
	t.Cleanup(resetMeasurer)
	m, err := Profile(Spec(`{"kernel":"coalesced_copy","n":67108864}`))
	require.Error(t, err)
	assert.Nil(t, m, "not the recording's counters")
	assert.ErrorIs(t, err, cuda.ErrStandIn)
	assert.ErrorIs(t, err, toolkit.ErrCountersDenied)
	assert.ErrorContains(t, err, "lab: measuring on live: NVIDIA GeForce RTX 4090")
}
