package grader

import (
	"bytes"
	"encoding/json"
	"os"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coalescing-course/coalesce/lessons/figures"
	"github.com/coalescing-course/coalesce/lessons/measure"
	"github.com/coalescing-course/coalesce/lessons/metrics"
	"github.com/coalescing-course/coalesce/lessons/sectors"
	"github.com/coalescing-course/coalesce/lessons/spec"
)

const tellsNote = "Made by go test ./grader -run TestTellsTable -update from the sector model: per question, each launch's counts and warp 0's instructions, which the gate compares shown values with (tells.go). Do not edit."

// TestTellsTable holds tells.json to the model: every question of the bank
// has its launches' counts and warp 0's shapes there, as the model gives
// them now. With -update it rewrites the file.
func TestTellsTable(t *testing.T) {
	g := recordingGrader(t)
	f := tellsFile{Note: tellsNote, Questions: map[string]questionTells{}}
	var mu sync.Mutex
	var wg sync.WaitGroup
	errs := make(chan error, len(g.Bank().Questions))
	for _, q := range g.Bank().Questions {
		wg.Go(func() {
			k, err := g.Key(q.ID)
			if err != nil {
				errs <- err
				return
			}
			e := questionTells{Model: k.Model}
			if k.HasMeasured {
				e.Recorded = &k.Measured
			}
			for _, p := range k.Parts {
				pt, err := makePartTells(p)
				if err != nil {
					errs <- err
					return
				}
				pt.Model = p.Model
				if p.HasMeasured {
					pt.Recorded = &p.Measured
				}
				e.Parts = append(e.Parts, pt)
			}
			mu.Lock()
			f.Questions[q.ID] = e
			mu.Unlock()
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", " ")
	require.NoError(t, enc.Encode(f))
	if *update {
		require.NoError(t, os.WriteFile("tells.json", b.Bytes(), 0o644))
		return
	}
	assert.JSONEq(t, b.String(), string(tellsJSON), "tells.json is stale: go test ./grader -run TestTellsTable -update")
}

// recordingGrader grades against the course's recording
// (cuda/reference/h200.jsonl), whose answers tells.json holds; the tests
// share it, so that each key is worked out once.
func recordingGrader(t *testing.T) *Grader {
	t.Helper()
	recordingOnce.Do(func() {
		const path = "../cuda/reference/h200.jsonl"
		f, err := os.Open(path)
		require.NoError(t, err)
		defer f.Close()
		set, err := measure.ReadSet(f, path, measure.Origin{Kind: measure.Recorded})
		require.NoError(t, err)
		recording = newGrader(t, measure.FromSet(set))
	})
	require.NotNil(t, recording)
	return recording
}

var (
	recordingOnce sync.Once
	recording     *Grader
)

// tell returns the model's value of figure f for the launch js, with its
// counts, as a table cell shows it.
func tell(t *testing.T, js string, f figures.Figure) Tell {
	t.Helper()
	s, err := spec.Parse([]byte(js))
	require.NoError(t, err)
	p, err := sectors.Model(s)
	require.NoError(t, err)
	v := figures.Model(p)
	x, err := f.Of(v)
	require.NoError(t, err)
	return Tell{Spec: s, Figure: f.Name, Judge: Model, Value: x, Counts: CountsOf(v)}
}

// handWarp is the tell of Explain or a warp diagram of lab.Lanes(base, step, size).
func handWarp(t *testing.T, base, step uint64, size int) Tell {
	t.Helper()
	w := sectors.Warp{Size: size, Active: sectors.AllLanes}
	for l := range sectors.WarpSize {
		w.Addr[l] = base + uint64(l)*step
	}
	sh, err := ShapeOf(w, "")
	require.NoError(t, err)
	return Tell{Figure: figures.LdSectorsPerRequest.Name, Value: float64(sh.Sectors), Warp: &sh}
}

// TestTells holds the relation to cases worked out by hand: which shown
// values tell which questions (each want is the full list, in bank order).
func TestTells(t *testing.T) {
	b, err := Questions()
	require.NoError(t, err)
	var all []*Question
	for i := range b.Questions {
		all = append(all, &b.Questions[i])
	}
	tests := []struct {
		name string
		tell Tell
		want []string
	}{
		{"the question's launch at another size tells it",
			tell(t, `{"kernel":"strided_copy","n":1048576,"stride":32}`, figures.LdSectorsPerRequest),
			[]string{"03-strided/sectors-stride-32"}},
		{"stride 64 has stride 32's counts: a sector a lane, 32 a request",
			tell(t, `{"kernel":"strided_copy","n":1048576,"stride":64}`, figures.LdSectorsPerRequest),
			[]string{"03-strided/sectors-stride-32"}},
		{"sector bytes per useful byte turn into sectors per request",
			tell(t, `{"kernel":"strided_copy","n":1048576,"stride":32}`, figures.SectorBytesPerUsefulByte),
			[]string{"03-strided/sectors-stride-32"}},
		{"the coalesced copy's 4 sectors tell its efficiency, and no gather: a gather issues two loads a warp",
			tell(t, `{"kernel":"coalesced_copy","n":1048576}`, figures.LdSectorsPerRequest),
			[]string{"01-sectors/sectors-float", "02-coalescing/efficiency-coalesced"}},
		{"the identity gather has the reversed and the shuffled gathers' counts",
			tell(t, `{"kernel":"gather_copy","n":1048576,"index_pattern":"identity"}`, figures.LdSectorsPerRequest),
			[]string{"02-coalescing/sectors-reverse", "04-scattered/sectors-warp-shuffle"}},
		{"stride 4 over floats is the 16-byte struct's load of x, and has the float4 copy's counts: a request, 16 sectors",
			tell(t, `{"kernel":"strided_copy","n":1048576,"stride":4}`, figures.LdSectorsPerRequest),
			[]string{"05-aos-soa/sectors-aos-16", "06-vectorized/sectors-float4"}},
		{"16-byte elements side by side are the float4 copy",
			tell(t, `{"kernel":"strided_copy","n":1048576,"elem_bytes":16,"stride":1}`, figures.LdSectorsPerRequest),
			[]string{"05-aos-soa/sectors-aos-16", "06-vectorized/sectors-float4"}},
		{"the stride-2 efficiency of a smaller launch tells lesson 3's, and the doubles' 8 sectors a request, not lesson 7's total",
			tell(t, `{"kernel":"strided_copy","n":1048576,"stride":2}`, figures.Efficiency),
			[]string{"01-sectors/sectors-double", "03-strided/efficiency-stride-2"}},
		{"the stride-2 launch's sectors per request are half of lesson 7's total: the requests are the other",
			tell(t, `{"kernel":"strided_copy","n":67108864,"stride":2}`, figures.LdSectorsPerRequest),
			[]string{"01-sectors/sectors-double", "03-strided/efficiency-stride-2"}},
		{"the stride-2 launch's total of load sectors is lesson 7's answer, and beside its requests the sectors per request",
			tell(t, `{"kernel":"strided_copy","n":67108864,"stride":2}`, figures.Metric(metrics.LdSectors)),
			[]string{"01-sectors/sectors-double", "03-strided/efficiency-stride-2", "07-ncu-metric/ld-sectors-stride-2"}},
		{"a ratio of totals is the same at any size: the coalesced copy's requests at 2^20 are half of lesson 6's ratio, not lesson 7's total",
			tell(t, `{"kernel":"coalesced_copy","n":1048576}`, figures.Metric(metrics.LdRequests)),
			[]string{"06-vectorized/requests-ratio"}},
		{"the coalesced copy's bandwidth tells lesson 8's memcpy share and the block-256 half of its ratio",
			tell(t, `{"kernel":"coalesced_copy","n":67108864}`, figures.UsefulBandwidth),
			[]string{"08-h200/one-float-copy-of-memcpy", "08-h200/block-32-slowdown"}},
		{"a time tells only its own launch: stride 1 of strided_copy is not the coalesced copy",
			tell(t, `{"kernel":"coalesced_copy","n":1048576}`, figures.TimeSeconds),
			nil},
		{"the padded tile at another size",
			tell(t, `{"kernel":"transpose_tiled","rows":1024,"cols":1024,"pad":1}`, figures.ShLdConflictsPerRequest),
			[]string{"09-matrix/wavefronts-pad-1"}},
		{"the lesson-1 warp of floats is the coalesced copy's load and store",
			handWarp(t, 0, 4, 4),
			[]string{"01-sectors/sectors-float", "02-coalescing/efficiency-coalesced"}},
		{"the warp one float late is offset_copy's load (lesson 2)",
			handWarp(t, 4, 4, 4),
			[]string{"02-coalescing/sectors-offset-1"}},
		{"a warp of float2s is the copy of doubles",
			handWarp(t, 0, 8, 8),
			[]string{"01-sectors/sectors-double"}},
		{"12-byte steps tell nothing",
			handWarp(t, 0, 12, 4),
			nil},
		{"the L2's fetch granularity",
			Tell{Fact: FactL2Fetch, Value: 64},
			[]string{"08-h200/fetch-granularity-ratio", "08-h200/dram-stride-32"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := TellsAny(all, tt.tell)
			require.NoError(t, err)
			var ids []string
			for _, q := range got {
				ids = append(ids, q.ID)
			}
			assert.Equal(t, tt.want, ids)
		})
	}
}

// TestEveryFigureHasAFamily: a figure added to lessons/figures must say
// what tells it before a question can ask it, or a table can show it.
func TestEveryFigureHasAFamily(t *testing.T) {
	for _, f := range figures.All() {
		fam, ok := familyOf(f.Name)
		if assert.True(t, ok, "%s has no family in tells.go", f.Name) {
			assert.Contains(t, fam.tellers, f.Name, "%s does not tell itself", f.Name)
		}
	}
}

func TestGateAndWait(t *testing.T) {
	b, err := Questions()
	require.NoError(t, err)
	answered := func(id string) bool { return id == "03-strided/sectors-stride-32" }
	g := NewGate(b, "03-strided", answered)
	for _, q := range g.Guarded() {
		assert.GreaterOrEqual(t, q.Lesson, "03-strided", "an earlier lesson's question is the learner's past")
		assert.NotEqual(t, "03-strided/sectors-stride-32", q.ID, "answered")
	}
	assert.Empty(t, NewGate(b, "10-kernels", answered).Guarded(), "no lesson after 10 asks anything")
	assert.Len(t, NewGate(b, "index", func(string) bool { return false }).Guarded(), len(b.Questions))
	got, err := g.Withheld(tell(t, `{"kernel":"strided_copy","n":67108864,"stride":2}`, figures.LdSectorsPerRequest))
	require.NoError(t, err)
	assert.Equal(t, "answer 03-strided/efficiency-stride-2 in this notebook first", Wait("03-strided", got))
	got, err = g.Withheld(Tell{Fact: FactL2Fetch, Value: 64})
	require.NoError(t, err)
	assert.Equal(t, "lesson 8 asks 08-h200/fetch-granularity-ratio and 08-h200/dram-stride-32: answer them there first", Wait("03-strided", got))
	none, err := OpenGate().Withheld(Tell{Fact: FactL2Fetch})
	require.NoError(t, err)
	assert.Empty(t, none)
}

// A tell read back from a notebook's record is the tell that was shown,
// counts and all: the leak test judges it as the gate did.
func TestTellJSON(t *testing.T) {
	in := tell(t, `{"kernel":"strided_copy","n":1048576,"elem_bytes":16,"stride":1}`, figures.LdSectorsPerRequest)
	data, err := json.Marshal(in)
	require.NoError(t, err)
	var out Tell
	require.NoError(t, json.Unmarshal(data, &out))
	assert.Equal(t, in.Spec, out.Spec)
	assert.Equal(t, *in.Counts, *out.Counts)
	q := question(t, "06-vectorized/sectors-float4")
	ok, err := Tells(q, out)
	require.NoError(t, err)
	assert.True(t, ok, "16-byte elements side by side tell the float4 question from the record too")

	in.Counts.UsefulKnown = false
	data, err = json.Marshal(in)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &out))
	assert.False(t, out.Counts.UsefulKnown)
}
