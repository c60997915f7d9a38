package grader

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coalescing-course/coalesce/lessons/measure"
	"github.com/coalescing-course/coalesce/lessons/spec"
)

// borrowing is the fixture as a GPU that refuses ncu its counters gives
// it: every profiled launch's counters marked as from, and why on the Set.
type borrowing struct {
	measure.Measurer
	from string
	why  error
}

func (b borrowing) Measure(ctx context.Context, specs []spec.Spec, want measure.Want) (*measure.Set, error) {
	set, err := b.Measurer.Measure(ctx, specs, want)
	if err != nil {
		return nil, err
	}
	out := *set
	out.Launches = slices.Clone(set.Launches)
	for i := range out.Launches {
		if out.Launches[i].Profiled() {
			out.Launches[i].Counters = b.from
		}
	}
	out.CountersErr = b.why
	return &out, nil
}

// A question graded by a measured figure that needs counters is not
// graded against the model's counters under the measurement's name: it
// goes ungraded, saying why and what to do. The recording's counters of
// the same launch grade, labelled. A figure that needs no counter (a
// time) grades whoever's counters the launches carry.
func TestGradingWithBorrowedCounters(t *testing.T) {
	const recorded = "recorded on NVIDIA H200, 2026-11-29"
	denied := errors.New("cuda: the driver does not let this user read the NVIDIA H200's performance counters. To let Nsight Compute read them: ...")
	const dram, time = "08-h200/dram-stride-32", "08-h200/block-32-slowdown"
	ncuKey, err := fixtureGrader(t).Key(dram)
	require.NoError(t, err)
	require.True(t, ncuKey.HasMeasured)
	timeKey, err := fixtureGrader(t).Key(time)
	require.NoError(t, err)
	require.True(t, timeKey.HasMeasured)

	t.Run("model", func(t *testing.T) {
		g := newGrader(t, borrowing{fixture(t), measure.CountersModel, denied})
		k, err := g.Key(dram)
		require.NoError(t, err)
		assert.False(t, k.HasMeasured)
		assert.False(t, k.Graded())
		assert.Contains(t, k.NoMeasurement, "are the sector model's, not a measurement, so they give no measured dram_bytes_per_useful_byte")
		assert.Contains(t, k.NoMeasurement, denied.Error(), "with why, and the remedy")
		// Any prediction: ungraded, no points, the measurement "none".
		v := g.Grade(dram, ncuKey.Measured)
		assert.False(t, v.Graded)
		assert.Nil(t, v.Measurement)
		assert.Zero(t, v.MaxPoints)
		assert.Contains(t, v.String(), "NOT GRADED")
		assert.Contains(t, v.String(), "measured         none: the counters of")

		k, err = g.Key(time)
		require.NoError(t, err)
		assert.True(t, k.Graded(), "a time needs no counter")
		assert.Equal(t, timeKey.Measured, k.Measured)
		assert.NotContains(t, k.Origin, "counters")
	})
	t.Run("recorded", func(t *testing.T) {
		g := newGrader(t, borrowing{fixture(t), recorded, denied})
		k, err := g.Key(dram)
		require.NoError(t, err)
		require.True(t, k.Graded())
		assert.Equal(t, ncuKey.Measured, k.Measured, "the recording's counts")
		assert.Equal(t, ncuKey.Origin+"; counters "+recorded, k.Origin)
		v := g.Grade(dram, ncuKey.Measured)
		assert.True(t, v.Right)
		assert.Contains(t, v.String(), "["+ncuKey.Origin+"; counters "+recorded+"]")
	})
}
