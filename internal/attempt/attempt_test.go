package attempt

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var t0 = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

func TestLocate(t *testing.T) {
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i+1 < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	for _, tt := range []struct {
		name       string
		getenv     func(string) string
		inNotebook bool
		want       string
	}{
		{"notebook path from Jupyter Server", env(SessionEnv, "/c/notebooks/03-strided.ipynb"), true, "/c/notebooks/.coalesce/attempts/03-strided.json"},
		// A relative session path is the server's, the folder the cell's.
		{"relative session path", env(SessionEnv, "notebooks/03-strided.ipynb"), true, "/cwd/.coalesce/attempts/03-strided.json"},
		{"no session: the working directory and the fallback name", env(), true, "/cwd/.coalesce/attempts/notebook.json"},
		{"directory from the environment", env(DirEnv, "/tmp/a", SessionEnv, "/c/n/01-sectors.ipynb"), true, "/tmp/a/01-sectors.json"},
		{"directory from the environment outside a notebook", env(DirEnv, "/tmp/a"), false, "/tmp/a/notebook.json"},
		{"off", env(DirEnv, "off", SessionEnv, "/c/n/01-sectors.ipynb"), true, ""},
		{"outside a notebook, nothing configured", env(SessionEnv, "/c/n/01-sectors.ipynb"), false, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, Locate(tt.getenv, "/cwd", tt.inNotebook))
		})
	}
}

func TestStoreAdd(t *testing.T) {
	s := Store{Path: filepath.Join(t.TempDir(), "sub", "nb.json")}
	_, ok, err := s.Get("a")
	require.NoError(t, err, "a missing file holds no records")
	assert.False(t, ok)
	// Three attempts at a, one at b: a keeps its first value (0, the
	// guess) and time, counts 3 and ends at the last (32).
	for i, c := range []struct {
		id string
		v  float64
	}{{"a", 0}, {"b", 7}, {"a", 4}, {"a", 32}} {
		_, err := s.Add(c.id, c.v, t0.Add(time.Duration(i)*time.Minute))
		require.NoError(t, err)
	}
	for _, tt := range []struct {
		id   string
		want Record
	}{
		{"a", Record{ID: "a", First: Value{0, t0}, Attempts: 3, Last: Value{32, t0.Add(3 * time.Minute)}}},
		{"b", Record{ID: "b", First: Value{7, t0.Add(time.Minute)}, Attempts: 1, Last: Value{7, t0.Add(time.Minute)}}},
	} {
		t.Run(tt.id, func(t *testing.T) {
			got, ok, err := s.Get(tt.id)
			require.NoError(t, err)
			require.True(t, ok)
			assert.True(t, got.First.Time.Equal(tt.want.First.Time) && got.Last.Time.Equal(tt.want.Last.Time), "times %v", got)
			got.First.Time, got.Last.Time, tt.want.First.Time, tt.want.Last.Time = time.Time{}, time.Time{}, time.Time{}, time.Time{}
			assert.Equal(t, tt.want, got)
		})
	}
	leftovers, _ := filepath.Glob(filepath.Join(filepath.Dir(s.Path), "*"))
	assert.Equal(t, []string{s.Path}, leftovers, "no temporary or lock file is left behind")
}

// TestStoreConcurrent: 4 writers × 10 attempts each, at once, count 40
// (a lost update would count fewer).
func TestStoreConcurrent(t *testing.T) {
	s := Store{Path: filepath.Join(t.TempDir(), "nb.json")}
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 10 {
				_, err := s.Add("x", float64(w*10+i), t0)
				assert.NoError(t, err)
			}
		}()
	}
	wg.Wait()
	r, ok, err := s.Get("x")
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, 40, r.Attempts)
}

func TestStoreCorrupt(t *testing.T) {
	for _, tt := range []struct{ name, content string }{
		{"not JSON", "{\"version\": 1, \"rec"},
		{"another version", `{"version": 9, "records": {}}`},
		{"a record under another id", `{"version": 1, "records": {"a": {"id": "b", "first": {"value": 1, "time": "2026-12-01T10:00:00Z"}, "attempts": 1, "last": {"value": 1, "time": "2026-12-01T10:00:00Z"}}}}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			s := Store{Path: filepath.Join(dir, "nb.json")}
			require.NoError(t, os.WriteFile(s.Path, []byte(tt.content), 0o644))
			_, _, err := s.Get("a")
			assert.ErrorIs(t, err, ErrCorrupt)
			r, err := s.Add("a", 5, t0)
			assert.ErrorIs(t, err, ErrCorrupt, "the corrupt file is reported")
			assert.Equal(t, 1, r.Attempts, "and the attempt recorded in a new file")
			aside, _ := filepath.Glob(s.Path + ".corrupt-*")
			require.Len(t, aside, 1, "the corrupt file is set aside, not overwritten")
			assert.Contains(t, err.Error(), aside[0])
			kept, _ := os.ReadFile(aside[0])
			assert.Equal(t, tt.content, string(kept))
		})
	}
}

func TestParse(t *testing.T) {
	good := Record{ID: "03-strided/sectors-stride-32", First: Value{0, t0}, Attempts: 2, Last: Value{32, t0.Add(time.Minute)}}
	js, err := json.Marshal(good)
	require.NoError(t, err)
	quoted, err := json.Marshal(string(js))
	require.NoError(t, err)
	for _, tt := range []struct {
		name string
		in   string
		ok   bool
	}{
		{"an object", string(js), true},
		{"a JSON string holding one (as a notebook keeps it)", string(quoted), true},
		{"no id", `{"first":{"value":1,"time":"2026-12-01T10:00:00Z"},"attempts":1,"last":{"value":1,"time":"2026-12-01T10:00:00Z"}}`, false},
		{"no attempts", `{"id":"a","first":{"value":1,"time":"2026-12-01T10:00:00Z"},"attempts":0,"last":{"value":1,"time":"2026-12-01T10:00:00Z"}}`, false},
		{"no time", `{"id":"a","first":{"value":1},"attempts":1,"last":{"value":1,"time":"2026-12-01T10:00:00Z"}}`, false},
		{"last before first", `{"id":"a","first":{"value":1,"time":"2026-12-01T10:00:00Z"},"attempts":2,"last":{"value":1,"time":"2026-11-01T10:00:00Z"}}`, false},
		{"an unknown field", `{"id":"a","first":{"value":1,"time":"2026-12-01T10:00:00Z"},"attempts":1,"last":{"value":1,"time":"2026-12-01T10:00:00Z"},"x":1}`, false},
		{"trailing data", string(js) + "{}", false},
		{"not JSON", `{"id":`, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Parse([]byte(tt.in))
			if !tt.ok {
				assert.ErrorIs(t, err, ErrRecord)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, good.ID, r.ID)
			assert.Equal(t, 2, r.Attempts)
			assert.Equal(t, 0.0, r.First.Value)
			assert.Equal(t, 32.0, r.Last.Value)
		})
	}
}

// FuzzParse: Parse never panics, and a record it accepts survives a
// round trip through JSON.
func FuzzParse(f *testing.F) {
	f.Add(`{"id":"a","first":{"value":0,"time":"2026-12-01T10:00:00Z"},"attempts":3,"last":{"value":32,"time":"2026-12-01T10:03:00Z"}}`)
	f.Add(`"{\"id\":\"a\",\"first\":{\"value\":1,\"time\":\"2026-12-01T10:00:00Z\"},\"attempts\":1,\"last\":{\"value\":1,\"time\":\"2026-12-01T10:00:00Z\"}}"`)
	f.Fuzz(func(t *testing.T, in string) {
		r, err := Parse([]byte(in))
		if err != nil {
			if !errors.Is(err, ErrRecord) {
				t.Fatalf("error %v does not wrap ErrRecord", err)
			}
			return
		}
		js, err := json.Marshal(r)
		if err != nil {
			t.Fatalf("accepted %+v does not marshal: %v", r, err)
		}
		back, err := Parse(js)
		if err != nil || back.ID != r.ID || back.Attempts != r.Attempts || back.First.Value != r.First.Value {
			t.Fatalf("round trip of %s: %+v, %v", js, back, err)
		}
	})
}

func TestAnswered(t *testing.T) {
	dir := t.TempDir()
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	_, err := Store{Path: filepath.Join(dir, "03-strided.json")}.Add("03-strided/sectors-stride-32", 32, at)
	require.NoError(t, err)
	_, err = Store{Path: filepath.Join(dir, "08-h200.json")}.Add("08-h200/dram-stride-32", 16, at)
	require.NoError(t, err)
	got, err := Answered(dir)
	require.NoError(t, err)
	assert.Equal(t, map[string]bool{"03-strided/sectors-stride-32": true, "08-h200/dram-stride-32": true}, got, "every notebook's file counts")

	require.NoError(t, os.WriteFile(filepath.Join(dir, "05-aos-soa.json"), []byte("{not json"), 0o644))
	got, err = Answered(dir)
	assert.ErrorIs(t, err, ErrCorrupt)
	assert.Len(t, got, 2, "the other files still count")

	none, err := Answered(filepath.Join(dir, "missing"))
	require.NoError(t, err)
	assert.Empty(t, none)
}
