package lab

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coalescing-course/coalesce/cuda"
	"github.com/coalescing-course/coalesce/cuda/toolkit"
	"github.com/coalescing-course/coalesce/cuda/usercuda"
	"github.com/coalescing-course/coalesce/lessons/exercises"
	"github.com/coalescing-course/coalesce/lessons/measure"
	"github.com/coalescing-course/coalesce/lessons/metrics"
	"github.com/coalescing-course/coalesce/lessons/sectors"
	"github.com/coalescing-course/coalesce/lessons/spec"
)

// LiveTestEnv names the variable that turns on the tests that run the
// course's kernels on this machine's GPU (they need nvcc, and ncu for the
// counters): COALESCE_LIVE_TEST=1 go test -run GPU ./lab
const LiveTestEnv = "COALESCE_LIVE_TEST"

// useLiveGPU makes this machine's GPU the lab's source for the rest of
// the test, or skips the test unless LiveTestEnv asks for a GPU.
func useLiveGPU(t *testing.T) measure.Measurer {
	t.Helper()
	if os.Getenv(LiveTestEnv) == "" {
		t.Skipf("set %s=1 on a machine with an NVIDIA GPU and the CUDA toolkit", LiveTestEnv)
	}
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	src, err := cuda.OpenMeasurer(ctx, cuda.LiveMode, cuda.Builder{})
	require.NoError(t, err)
	useMeasurer(src, nil)
	t.Cleanup(resetMeasurer)
	return src
}

func TestGPULive(t *testing.T) {
	src := useLiveGPU(t)
	label := src.Origin().String()
	assert.Regexp(t, `^live: \S.*, \d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC$`, label)
	t.Log(label)

	// Launches the reference does not hold: live, they are measured all the same.
	s1 := Spec(`{"kernel":"strided_copy","n":4194304,"stride":1}`)
	s32 := Spec(`{"kernel":"strided_copy","n":4194304,"stride":32}`)
	m, err := Measure(s1, s32)
	require.NoError(t, err)
	assert.Equal(t, label, m.Label())
	for _, l := range m.Launches {
		assert.True(t, l.Verified, "%s", l.Spec)
		assert.Greater(t, l.TimeMs, 0.0)
	}
	t.Log("\n" + m.Table().String())

	if gpu := src.(*cuda.GPU); gpu.Ncu == nil {
		t.Logf("no ncu (%s): the counters are not checked live", gpu.NoNcu)
		return
	}
	l, _ := m.Lookup(s32)
	assert.Equal(t, 32.0, l.Metrics[metrics.LdSectors]/l.Metrics[metrics.LdRequests], "stride 32: a sector per lane")

	tb, err := Counters([]Case{{"stride 2", Spec(`{"kernel":"strided_copy","n":4194304,"stride":2}`)}})
	require.NoError(t, err)
	for _, row := range tb.Rows {
		if row[4] == "exact" {
			assert.Equal(t, row[2], row[3], "%s: model and ncu", row[1])
		}
	}
	t.Log("\n" + tb.String())

	vs, err := Versus(Case{"stride 1", s1}, Case{"stride 32", s32})
	require.NoError(t, err)
	assert.Equal(t, []string{"L1 sector bytes per useful byte", "1", "8", "8×", "1", "8", "8×"}, vs.Rows[0])
	t.Log("\n" + vs.String())

	p, err := Profile(Spec(`{"kernel":"vectorized_copy","n":4194304,"width":4}`))
	require.NoError(t, err)
	assert.Contains(t, p.Profiling(), "ncu --clock-control none")
	t.Log("\n" + p.Counters().String())
}

// TestGPUNotebookSpecs measures, live and in one batch, every launch the
// notebooks measure or profile (testdata/notebook-specs.jsonl): each must
// run verified, and where ncu ran, its L1 counts must equal the model's,
// which has them exactly (metrics.L1).
func TestGPUNotebookSpecs(t *testing.T) {
	src := useLiveGPU(t)
	// A launch the model says faults (lesson 6's misaligned float4) must
	// fault on the GPU too, with CUDA's own error; the others must run.
	var specs, faults []spec.Spec
	for _, s := range notebookSpecs(t) {
		if sectors.Faults(s) != nil {
			faults = append(faults, s)
		} else {
			specs = append(specs, s)
		}
	}
	m, err := Measure(specs...)
	require.NoError(t, err)
	preds, err := Model(specs...)
	require.NoError(t, err)
	require.Len(t, m.Launches, len(specs))
	profiled := 0
	for i, l := range m.Launches {
		assert.True(t, l.Verified, "%s did not run verified", l.Spec)
		if !l.Profiled() {
			continue
		}
		profiled++
		for _, name := range metrics.L1 {
			assert.Equal(t, preds[i].Metrics[name], l.Metrics[name], "%s: %s, model against ncu", l.Spec, name)
		}
	}
	for _, f := range faults {
		_, err := Measure(f)
		var ge *measure.GPUError
		if assert.ErrorAs(t, err, &ge, "%s must fault", f) {
			assert.Equal(t, "cudaErrorMisalignedAddress", ge.Name, "%s", f)
			assert.False(t, ge.Recorded(), "it ran live")
		}
	}
	for _, f := range faults {
		_, err := Measure(f)
		var ge *measure.GPUError
		if assert.ErrorAs(t, err, &ge, "%s must fault", f) {
			assert.Equal(t, "cudaErrorMisalignedAddress", ge.Name, "%s", f)
			assert.False(t, ge.Recorded(), "it ran live")
		}
	}
	if gpu := src.(*cuda.GPU); gpu.Ncu == nil {
		t.Logf("no ncu (%s): the L1 counts are not checked", gpu.NoNcu)
	}
	t.Logf("%s: %d launches verified, %d profiled, %d faulted as the model says", m.Label(), len(specs), profiled, len(faults))
}

// TestGPUExerciseKernels runs each kernel exercise's CUDA bodies on this
// machine's GPU, for the learner "ada": the starter (right output, the
// targets missed; the aligned-vector starter faults as the GPU refuses a
// misaligned float4), the solution (right, every target met by ncu's own
// count) and a wrong one (the output check fails). The starter's counts
// are held to the model's for the Go starter: the exact L1 counts must
// agree, as they do for the course's kernels.
//
// COALESCE_EXERCISE_LEARNERS (a comma-separated list, default "ada") runs
// the variants of other learners too.
func TestGPUExerciseKernels(t *testing.T) {
	src := useLiveGPU(t)
	g := src.(*cuda.GPU)
	learners := strings.Split(os.Getenv("COALESCE_EXERCISE_LEARNERS"), ",")
	if len(learners) == 1 && learners[0] == "" {
		learners = []string{"ada"}
	}
	for _, id := range exercises.IDs() {
		for _, learner := range learners {
			t.Run(id+"/"+learner, func(t *testing.T) { exerciseOnGPU(t, g, id, learner) })
		}
	}
}

func exerciseOnGPU(t *testing.T, g *cuda.GPU, id, learner string) {
	e, err := exercises.Lookup(id)
	require.NoError(t, err)
	v := e.Variant(learner)
	model, err := e.Run(v, e.Starter)
	require.NoError(t, err)
	p, err := e.CUDA(v)
	require.NoError(t, err)
	sorted := p
	if id == "10-kernels/gather" {
		sorted, err = p.Ordered(func(k []int32) []int32 { slices.Sort(k); return k })
		require.NoError(t, err)
	}
	run := func(name string, p exercises.Problem, body string, check toolkit.Check) (*usercuda.Result, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		r, err := usercuda.Run(ctx, g, userKernel(p, body), usercuda.Options{Counters: check == "", Check: check})
		if err != nil {
			t.Logf("%s %s (%s): %v", id, name, v, err)
			return nil, err
		}
		t.Logf("%s %s (%s) on %s: %.4g ms median of %d; check: %v", id, name, v, r.GPU, r.MedianMs, len(r.TimesMs), p.Check(r.Outputs))
		for _, m := range e.Metrics {
			t.Logf("  %s: ncu %v", m, r.Counters[m])
		}
		return r, nil
	}

	st, err := run("starter", p, p.Starter, "")
	if id == "10-kernels/aligned-vector" {
		var le *usercuda.LaunchError
		require.ErrorAs(t, err, &le)
		assert.Equal(t, "cudaErrorMisalignedAddress", le.CUDAError)
		assert.NotNil(t, model.Fault, "simt faults on it too")
	} else {
		require.NoError(t, err)
		assert.NoError(t, p.Check(st.Outputs))
		require.Nil(t, st.CountersErr)
		for _, tg := range model.Targets {
			t.Logf("  %s: model %v for the Go starter, target %v", tg.Metric, tg.Got, tg.Want)
			if strings.HasPrefix(tg.Metric, "l1tex__t_") {
				assert.Equal(t, tg.Got, st.Counters[tg.Metric], "%s: ncu against the model of the Go starter", tg.Metric)
			}
		}
		assert.False(t, model.Pass)
	}

	sol, err := run("solution", sorted, p.Solution, "")
	require.NoError(t, err)
	assert.NoError(t, sorted.Check(sol.Outputs))
	require.Nil(t, sol.CountersErr)
	for _, tg := range model.Targets {
		assert.LessOrEqual(t, sol.Counters[tg.Metric], tg.Want, "%s: ncu's count of the solution within the target", tg.Metric)
	}

	wr, err := run("wrong", p, p.Wrong, "")
	if err == nil {
		assert.ErrorIs(t, p.Check(wr.Outputs), exercises.ErrWrong)
	}

	if learner != "ada" {
		return // the sanitizer once per exercise is enough
	}
	mc, err := run("solution under memcheck", sorted, p.Solution, toolkit.Memcheck)
	if assert.NoError(t, err) && assert.NotNil(t, mc.Sanitizer) {
		assert.Zero(t, mc.Sanitizer.Errors, mc.Sanitizer.Text)
	}
}
