package sectorstest

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coalescing-course/coalesce/lessons/metrics"
	"github.com/coalescing-course/coalesce/lessons/sectors"
	"github.com/coalescing-course/coalesce/lessons/spec"
)

// recorder is a testing.TB that keeps what Predict says; its Fatalf
// stops Predict as a test's would, by a panic that run recovers.
type recorder struct {
	testing.TB
	logs, errors []string
	fatal        string
}

type stopped struct{}

func (r *recorder) Helper()           {}
func (r *recorder) Log(args ...any)   { r.logs = append(r.logs, fmt.Sprint(args...)) }
func (r *recorder) Error(args ...any) { r.errors = append(r.errors, fmt.Sprint(args...)) }
func (r *recorder) Fatal(args ...any) { r.fatal = fmt.Sprint(args...); panic(stopped{}) }

// run calls Predict as a test would, and returns what it said.
func run(t *testing.T, path string, specs []spec.Spec) (preds []sectors.Launch, r *recorder) {
	t.Helper()
	r = &recorder{TB: t}
	func() {
		defer func() {
			if v := recover(); v != nil {
				if _, ok := v.(stopped); !ok {
					panic(v)
				}
			}
		}()
		preds = Predict(r, path, specs)
	}()
	return preds, r
}

func specs(t *testing.T, texts ...string) []spec.Spec {
	t.Helper()
	var out []spec.Spec
	for _, text := range texts {
		s, err := spec.Parse([]byte(text))
		require.NoError(t, err)
		out = append(out, s)
	}
	return out
}

// small is three launches the model predicts in milliseconds: two of
// them small enough to be checked on every use, one (2^19 threads) the
// smallest of its kernel.
var small = []string{
	`{"kernel":"coalesced_copy","n":4096}`,
	`{"kernel":"strided_copy","n":8192,"stride":4}`,
	`{"kernel":"offset_copy","n":524288,"offset":1}`,
}

func TestPredictUpdateThenUse(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.jsonl")
	ss := specs(t, small...)
	want, err := sectors.ModelAll(ss...)
	require.NoError(t, err)

	t.Setenv(Env, "update")
	got, r := run(t, path, ss)
	require.Empty(t, r.fatal)
	assert.Equal(t, want, got, "update predicts")
	lines, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, 1+len(ss), strings.Count(string(lines), "\n"), "a header and a line a spec")

	t.Setenv(Env, "")
	_, r = run(t, path, ss)
	require.Contains(t, r.fatal, "asked for twice", "one call a path a process")
}

func TestPredictFromFile(t *testing.T) {
	dir := t.TempDir()
	ss := specs(t, small...)
	want, err := sectors.ModelAll(ss...)
	require.NoError(t, err)
	fp, err := Fingerprint()
	require.NoError(t, err)

	t.Run("current: the file's, checked", func(t *testing.T) {
		path := filepath.Join(dir, "current.jsonl")
		require.NoError(t, write(path, fp, ss, want))
		got, r := run(t, path, ss)
		require.Empty(t, r.fatal)
		assert.Empty(t, r.errors)
		assert.Equal(t, want, got)
		assert.Contains(t, strings.Join(r.logs, "\n"), "3 predictions from "+path+", 3 of them checked")
	})
	t.Run("a tampered small launch fails", func(t *testing.T) {
		path := filepath.Join(dir, "tampered.jsonl")
		bad := append([]sectors.Launch(nil), want...)
		bad[1].Metrics = maps.Clone(bad[1].Metrics)
		bad[1].Metrics[metrics.LdSectors]++
		require.NoError(t, write(path, fp, ss, bad))
		got, r := run(t, path, ss)
		assert.Equal(t, want, got, "the model's prediction in place of the file's")
		require.Len(t, r.errors, 1)
		assert.Contains(t, r.errors[0], "strided_copy")
		assert.Contains(t, r.errors[0], "make predictions")
	})
	t.Run("stale: everything predicted again", func(t *testing.T) {
		path := filepath.Join(dir, "stale.jsonl")
		bad := append([]sectors.Launch(nil), want...)
		bad[2].TimeSeconds *= 2 // what a change of the model would do
		require.NoError(t, write(path, "another-fingerprint", ss, bad))
		got, r := run(t, path, ss)
		require.Empty(t, r.fatal)
		assert.Equal(t, want, got, "the model's, not the stale file's")
		assert.Contains(t, strings.Join(r.logs, "\n"), "another version of the model")
	})
	t.Run("missing launches are predicted", func(t *testing.T) {
		path := filepath.Join(dir, "part.jsonl")
		require.NoError(t, write(path, fp, ss[:1], want[:1]))
		got, r := run(t, path, ss)
		require.Empty(t, r.fatal)
		assert.Equal(t, want, got)
		assert.Contains(t, strings.Join(r.logs, "\n"), "2 of 3 launches are not in")
	})
	t.Run("no file: predicted", func(t *testing.T) {
		got, r := run(t, filepath.Join(dir, "none.jsonl"), ss)
		require.Empty(t, r.fatal)
		assert.Equal(t, want, got)
	})
	t.Run("a gather from an index file is never kept", func(t *testing.T) {
		// The fingerprint covers the model's source, not the index
		// file's bytes: the file must not answer for it.
		idxPath := filepath.Join(dir, "idx.bin")
		require.NoError(t, os.WriteFile(idxPath, make([]byte, 4*64), 0o644)) // 64 zero indices
		withFile := specs(t, `{"kernel":"gather_copy","n":64,"index_file":"`+idxPath+`"}`)
		path := filepath.Join(dir, "indexfile.jsonl")
		t.Setenv(Env, "update")
		want, r := run(t, path, withFile)
		require.Empty(t, r.fatal)
		lines, err := os.ReadFile(path)
		require.NoError(t, err)
		assert.Equal(t, 1, strings.Count(string(lines), "\n"), "the header alone")
		assert.Len(t, want, 1)
	})
	t.Run("off ignores a current file", func(t *testing.T) {
		path := filepath.Join(dir, "off.jsonl")
		bad := append([]sectors.Launch(nil), want...)
		bad[0].Warps++
		require.NoError(t, write(path, fp, ss, bad))
		t.Setenv(Env, "off")
		got, r := run(t, path, ss)
		require.Empty(t, r.fatal)
		assert.Equal(t, want, got)
	})
	t.Run("an unknown mode is refused", func(t *testing.T) {
		t.Setenv(Env, "yes")
		_, r := run(t, filepath.Join(dir, "mode.jsonl"), ss)
		assert.Contains(t, r.fatal, `want unset, "update" or "off"`)
	})
	t.Run("a broken file is refused with its line", func(t *testing.T) {
		path := filepath.Join(dir, "broken.jsonl")
		require.NoError(t, os.WriteFile(path, []byte(`{"fingerprint":"`+fp+`"}`+"\n{\"spec\":1}\n"), 0o644))
		_, r := run(t, path, ss)
		assert.Contains(t, r.fatal, path+":2:")
	})
}

// TestFingerprintIsTheSource: the fingerprint is stable, and names the
// model's source (a hex SHA-256).
func TestFingerprintIsTheSource(t *testing.T) {
	a, err := Fingerprint()
	require.NoError(t, err)
	assert.Regexp(t, `^[0-9a-f]{64}$`, a)
}

// FuzzRead: no file makes read panic; what it accepts it can write back.
func FuzzRead(f *testing.F) {
	f.Add([]byte("{\"fingerprint\":\"x\"}\n"))
	f.Add([]byte("{\"fingerprint\":\"x\"}\n{\"spec\":{\"kernel\":\"coalesced_copy\",\"n\":32},\"launch\":{},\"traffic\":{}}\n"))
	f.Add([]byte("{\"fingerprint\":\"y\"}\n"))
	f.Add([]byte("not json"))
	f.Fuzz(func(t *testing.T, b []byte) {
		path := filepath.Join(t.TempDir(), "f.jsonl")
		require.NoError(t, os.WriteFile(path, b, 0o644))
		held, err := read(path, "x")
		if err != nil {
			return
		}
		var ss []spec.Spec
		var ps []sectors.Launch
		for _, r := range held {
			ss = append(ss, r.Spec)
			ps = append(ps, r.Launch)
		}
		if write(path, "x", ss, ps) != nil {
			return // a record whose launch names no kernel: read takes it, the model never writes it
		}
		again, err := read(path, "x")
		require.NoError(t, err)
		assert.Len(t, again, len(held))
	})
}
