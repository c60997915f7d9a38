package grader

import (
	"flag"
	"html"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coalescing-course/coalesce/lessons/measure"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata (verdicts, gradebook) from the code's output; review the diff")

func newGrader(t testing.TB, src measure.Measurer) *Grader {
	t.Helper()
	g, err := New(Options{Measurer: src, NoMeasurer: "none in this test"})
	require.NoError(t, err)
	return g
}

// The tests share two graders, so that each answer key (a run of the model
// over a whole launch, seconds for the large gathers) is computed once.
var (
	sharedOnce          sync.Once
	withFixture, noMeas *Grader
)

func graders(t testing.TB) (fixtureGrader, modelOnly *Grader) {
	t.Helper()
	sharedOnce.Do(func() {
		withFixture = newGrader(t, fixture(t))
		noMeas = newGrader(t, nil)
	})
	return withFixture, noMeas
}

func fixtureGrader(t testing.TB) *Grader { g, _ := graders(t); return g }
func modelGrader(t testing.TB) *Grader   { _, g := graders(t); return g }

// TestKeys checks the model's answers to the bank's questions against
// numbers worked out by hand or quoted from the seed document
// (shared/seed/global-memory-and-coalescing.txt).
func TestKeys(t *testing.T) {
	g := modelGrader(t)
	tests := []struct {
		id   string
		want float64
		why  string
	}{
		{"01-sectors/sectors-float", 4, "seed: 32 consecutive 4-byte values span exactly four 32-byte sectors"},
		{"01-sectors/sectors-double", 8, "256 bytes / 32"},
		{"01-sectors/sectors-byte", 1, "32 bytes / 32"},
		{"02-coalescing/efficiency-coalesced", 1, "seed table: coalesced 100%"},
		{"02-coalescing/sectors-reverse", 4, "the same 128 bytes, in any lane order, idx load too"},
		{"03-strided/sectors-stride-32", 32, "seed: stride 32, 32 sectors"},
		{"03-strided/efficiency-stride-2", 0.5, "two lanes per 8-byte pair: half of every sector"},
		{"04-scattered/sectors-warp-shuffle", 4, "each warp's 32 indices in one aligned 128-byte run"},
		{"05-aos-soa/sectors-aos-16", 16, "seed table: AoS 16-byte stride, 16 sectors"},
		{"05-aos-soa/efficiency-aos-24", 1.0 / 6, "128 bytes used of 24 sectors × 32 bytes, loads and stores alike"},
		{"06-vectorized/sectors-float4", 16, "32 lanes × 16 bytes = 512 bytes = 16 sectors"},
		{"06-vectorized/requests-ratio", 4, "one float4 request per four float requests"},
		{"06-vectorized/sum-fields-sector-ratio", 4, "four loads of 16 sectors against one of 16"},
		{"07-ncu-metric/ld-sectors-stride-2", 8388608, "n/2 threads = 1048576 warps × 8 sectors"},
		{"07-ncu-metric/ld-requests-coalesced", 2097152, "67108864 threads / 32"},
		{"07-ncu-metric/st-sectors-per-request-write-4", 16, "lanes 16 bytes apart: two per sector"},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			k, err := g.Key(tt.id)
			require.NoError(t, err)
			assert.InDelta(t, tt.want, k.Model, 1e-12, tt.why)
			assert.False(t, k.HasMeasured)
		})
	}
	t.Run("offset 1: five sectors but for the last warp", func(t *testing.T) {
		k, err := g.Key("02-coalescing/sectors-offset-1")
		require.NoError(t, err)
		// 2097152 warps of 5 sectors, the last one 4: its last lane is out of bounds.
		assert.Equal(t, (5*2097152-1)/2097152.0, k.Model)
		assert.True(t, Within(5, k.Model, k.Question.Tolerance.Model), "5 is right within the stated tolerance")
	})
}

func TestKeyWithMeasurement(t *testing.T) {
	g := fixtureGrader(t)
	t.Run("a measured ratio", func(t *testing.T) {
		k, err := g.Key("03-strided/slowdown-stride-32")
		require.NoError(t, err)
		require.True(t, k.HasMeasured)
		assert.InDelta(t, 16, k.Measured, 1e-9, "fixture: 150 µs and 75 µs for 32x the useful bytes")
		assert.Equal(t, "recorded on NVIDIA H200 (test fixture), 2026-01-01", k.Origin)
		assert.True(t, k.Graded())
	})
	t.Run("a spec the reference lacks", func(t *testing.T) {
		k, err := g.Key("01-sectors/sectors-double")
		require.NoError(t, err)
		assert.False(t, k.HasMeasured)
		assert.Contains(t, k.NoMeasurement, "coalesced_copy, elem 8 B, n 2^25 was not measured (recorded on NVIDIA H200 (test fixture), 2026-01-01): not among the recorded launches (a GPU measures it: coalesce run)")
		assert.True(t, k.Graded(), "graded by the model anyway")
	})
	t.Run("a spec timed, not profiled", func(t *testing.T) {
		k, err := g.Key("07-ncu-metric/st-sectors-per-request-write-4")
		require.NoError(t, err)
		assert.False(t, k.HasMeasured)
		assert.Contains(t, k.NoMeasurement, "gives no st_sectors_per_request: no ncu counters: the launch was not profiled")
	})
	t.Run("a measured question with no measurement is ungraded", func(t *testing.T) {
		g := modelGrader(t)
		k, err := g.Key("08-h200/block-32-slowdown")
		require.NoError(t, err)
		assert.False(t, k.Graded())
		v := k.Verdict(1.3)
		assert.False(t, v.Graded)
		assert.Zero(t, v.MaxPoints)
		assert.Contains(t, v.String(), "NOT GRADED")
	})
}

func TestWithin(t *testing.T) {
	tests := []struct {
		got, want, tol float64
		ok             bool
	}{
		{32, 32, 0, true},
		{0.1 + 0.2, 0.3, 0, true}, // rounding is not a wrong answer
		{31, 32, 0, false},
		{4.9999995, 5, 0.001, true},
		{0.165, 1.0 / 6, 0.01, true},
		{0.16, 1.0 / 6, 0.01, false},
		{0.05, 0, 0.1, true},
		{math.NaN(), 1, 0.5, false},
		{math.Inf(1), 1, 0.5, false},
		{-16, 16, 0.5, false},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.ok, Within(tt.got, tt.want, tt.tol), "Within(%v, %v, %v)", tt.got, tt.want, tt.tol)
	}
}

func TestHints(t *testing.T) {
	g := fixtureGrader(t)
	tests := []struct {
		id   string
		p    float64
		hint string
	}{
		{"05-aos-soa/efficiency-aos-24", 16.67, "looks like a percentage"},
		{"03-strided/slowdown-stride-32", 1.0 / 16, "upside down"},
		{"03-strided/sectors-stride-32", 1024, "counts bytes"},
		{"03-strided/sectors-stride-32", 32, ""},
		// 32 lanes of 4 bytes ask for 128 bytes, 4 sectors' worth; they
		// touch 32 sectors.
		{"03-strided/sectors-stride-32", 4, "asks for divided by 32"},
		{"03-strided/sectors-stride-32", 8, ""},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			v := g.Grade(tt.id, tt.p)
			require.NoError(t, v.Err)
			if tt.hint == "" {
				assert.Empty(t, v.Hints)
				return
			}
			require.Len(t, v.Hints, 1)
			assert.Contains(t, v.Hints[0], tt.hint)
		})
	}
}

func TestGradeUnknownExercise(t *testing.T) {
	v := modelGrader(t).Grade("03-strided/sectors-stride-31", 31)
	require.Error(t, v.Err)
	assert.ErrorIs(t, v.Err, ErrUnknownQuestion)
	assert.Contains(t, v.String(), "no verdict")
	assert.Contains(t, v.HTML(), "no verdict")
}

// TestVerdictGolden compares the text of whole verdicts, explanations
// included, with testdata/verdict/*.txt; -update rewrites them.
func TestVerdictGolden(t *testing.T) {
	g := fixtureGrader(t)
	tests := []struct {
		name string
		id   string
		p    float64
	}{
		{"stride32-right", "03-strided/sectors-stride-32", 32},
		{"aos24-percent", "05-aos-soa/efficiency-aos-24", 16.67},
		{"slowdown-seed-8x", "03-strided/slowdown-stride-32", 8},
		{"soa-speedup-model-differs", "05-aos-soa/soa-speedup", 3},
		{"dram-stride-32", "08-h200/dram-stride-32", 16},
		{"gather-random-perm", "04-scattered/sectors-random-perm", 32},
		// 32 lanes × 1 byte = 32 bytes = 1 sector per request: the unit
		// in the singular ("1 sector per request", not "1 sectors").
		{"byte-one-sector", "01-sectors/sectors-byte", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := g.Grade(tt.id, tt.p)
			require.NoError(t, v.Err)
			golden(t, filepath.Join("testdata", "verdict", tt.name+".txt"), v.String())
			h := v.HTML()
			assert.True(t, strings.HasPrefix(h, `<div class="coalesce-verdict"`))
			assert.Contains(t, h, "<pre")
			assert.NotContains(t, h, "<script")
		})
	}
}

// A count of 1 takes the singular wherever a verdict writes it: the
// answer key (32 consecutive 1-byte loads: 32 B, one 32-byte sector per
// request), the model's line, the explanation's arithmetic.
func TestVerdictSingular(t *testing.T) {
	v := fixtureGrader(t).Grade("01-sectors/sectors-byte", 1)
	require.NoError(t, v.Err)
	for _, text := range []string{v.String(), v.HTML()} {
		assert.Contains(t, text, "1 sector per request")
		assert.NotRegexp(t, `\b1 (sectors|requests|warps|blocks|threads|bytes)\b`, text)
	}
}

func TestVerdictHTMLEscapes(t *testing.T) {
	b, err := Questions()
	require.NoError(t, err)
	e := b.Questions[0]
	e.Text = `Is <b>this</b> & "that" escaped?`
	k := &Key{Question: &e, Model: 4, Explanation: []Section{{Title: "<i>T</i>", Lines: []string{"a < b", "  x <y>"}}}}
	h := k.Verdict(4).HTML()
	assert.Contains(t, h, "Is &lt;b&gt;this&lt;/b&gt; &amp; &#34;that&#34; escaped?")
	assert.Contains(t, h, "&lt;i&gt;T&lt;/i&gt;")
	assert.Contains(t, h, "<pre style=\"margin:0.2em 0\">x &lt;y&gt;\n</pre>")
}

// golden compares got with the file at path, or rewrites it under -update.
func golden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test ./grader -update to create it")
	assert.Equal(t, string(want), got, "differs from %s (go test ./grader -update rewrites it; review the diff)", path)
}

// TestUnansweredRevealsNothing: a placeholder (NaN, either infinity) gets
// a verdict that asks for a prediction and shows the question, and holds
// no digit beyond those of the id and the question: so none of the key's
// numbers. The same key's answered verdict does print the model's answer,
// so the search would find it.
func TestUnansweredRevealsNothing(t *testing.T) {
	g, _ := graders(t)
	tags := regexp.MustCompile(`<[^>]*>`)
	digit := regexp.MustCompile(`[0-9]`)
	for _, e := range g.Bank().Questions {
		t.Run(e.ID, func(t *testing.T) {
			k, err := g.Key(e.ID)
			require.NoError(t, err)
			answered := k.Verdict(k.Model + 1)
			require.Contains(t, answered.String(), withUnit(k.numbers, k.Question, k.Model, k.Question.Tolerance.Model), "an answered verdict shows the model's answer")
			for _, p := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
				for _, v := range []*Verdict{g.Grade(e.ID, p), k.Verdict(p)} {
					require.NoError(t, v.Err)
					assert.True(t, v.Unanswered)
					assert.Zero(t, v.Model.Value+v.Points+v.MaxPoints)
					assert.Nil(t, v.Measurement)
					assert.Empty(t, v.Explanation)
					text := v.String()
					assert.Contains(t, text, WritePredictionFirst)
					assert.Contains(t, text, e.Text)
					page := html.UnescapeString(tags.ReplaceAllString(v.HTML(), " "))
					assert.Contains(t, page, WritePredictionFirst)
					for _, s := range []string{text, page} {
						rest := strings.ReplaceAll(strings.ReplaceAll(strings.ReplaceAll(s, e.Text, ""), e.ID, ""), Rule(&e), "")
						assert.False(t, digit.MatchString(rest), "a digit beyond the id and the question: %q", rest)
					}
				}
			}
		})
	}
	v := g.Grade("01-sectors/no-such-exercise", math.NaN())
	assert.ErrorIs(t, v.Err, ErrUnknownQuestion)
}
