package cuda

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coalescing-course/coalesce/cuda/toolkit"
)

// sharedExits reads the Exit enum of src/shared.cuh: each status's name
// and value.
func sharedExits(t *testing.T) map[string]int {
	t.Helper()
	enum := regexp.MustCompile(`(?s)enum Exit \{(.*?)\};`).FindStringSubmatch(SharedHeader)
	require.NotNil(t, enum, "no enum Exit in shared.cuh")
	got := map[string]int{}
	for _, m := range regexp.MustCompile(`(\w+) = (\d+),`).FindAllStringSubmatch(enum[1], -1) {
		n, err := strconv.Atoi(m[2])
		require.NoError(t, err)
		got[m[1]] = n
	}
	return got
}

// The exit statuses are written once on each side: shared.cuh's Exit for
// both CUDA programs, the constants of gpu.go for the Go side that
// branches on them. They must be the same numbers, and neither program
// may end with a status spelled as a bare number.
func TestExitStatusesAgree(t *testing.T) {
	exits := sharedExits(t)
	assert.Equal(t, map[string]int{"ExitOK": 0, "ExitFailed": 1, "ExitUsage": 2, "ExitNoDevice": 3, "ExitNoDriver": 4}, exits,
		"shared.cuh's statuses, as its comment and the harness's doc name them")
	assert.Equal(t, exits["ExitFailed"], exitSomeLineFailed)
	assert.Equal(t, exits["ExitNoDevice"], ExitNoDevice)
	assert.Equal(t, exits["ExitNoDriver"], ExitNoDriver)

	harness, err := fs.ReadFile(sources, "src/harness.cu")
	require.NoError(t, err)
	h := string(harness)
	bare := regexp.MustCompile(`\b(?:exit\(\s*\d|return\s+[1-9]\d*\s*;|return\s+\w+\s*\?\s*\d)`)
	// The harness's functions that give the program's status: main,
	// usage, info, calibrate and device_error_exit.
	for _, fn := range []string{"usage", "info", "calibrate", "device_error_exit"} {
		body := functionBody(h, fn)
		require.NotEmpty(t, body, "no function %s in harness.cu", fn)
		assert.Empty(t, bare.FindAllString(body, -1), "harness.cu: %s gives a bare status; use shared.cuh's Exit", fn)
	}
	main := h[strings.Index(h, "int main("):]
	assert.Empty(t, bare.FindAllString(main, -1), "harness.cu: main gives a bare status; use shared.cuh's Exit")
	assert.Contains(t, main, "return all_ok ? ExitOK : ExitFailed;")
}

// The harness's source includes the shared header, and the header holds
// the one copy of what both programs share: no second flush kernel, JSON
// parser or timing loop in the harness.
func TestHarnessUsesTheSharedHeader(t *testing.T) {
	harness, err := fs.ReadFile(sources, "src/harness.cu")
	require.NoError(t, err)
	h := string(harness)
	assert.Contains(t, h, `#include "shared.cuh"`)
	for _, def := range []string{`__global__ void flush_l2\(`, `struct JParser\b`, `struct Plan\b`, `struct Failure\b`, `cudaEventRecord\(`, `std::string jstr\(`, `cudaErrorInsufficientDriver`} {
		assert.Regexp(t, def, SharedHeader)
		assert.NotRegexp(t, def, h, "harness.cu has its own %s", def)
	}
}

func TestPlanWriter(t *testing.T) {
	t.Run("keys in order, each value as JSON", func(t *testing.T) {
		var w PlanWriter
		w.Text("kernel", "copy")
		w.Integer("n", -9223372036854775808)
		w.Flag("flush", true)
		w.Flag("once", false)
		w.Text("path", "/tmp/a \"b\"\\c\n<&>")
		got, err := w.Bytes()
		require.NoError(t, err)
		// encoding/json's escapes: the quote and backslash, \n, and <, &, >
		// as \u escapes, which shared.cuh's JParser reads back.
		assert.Equal(t, `{"kernel":"copy","n":-9223372036854775808,"flush":true,"once":false,"path":"/tmp/a \"b\"\\c\n\u003c\u0026\u003e"}`, string(got))
	})
	t.Run("empty", func(t *testing.T) {
		var w PlanWriter
		got, err := w.Bytes()
		require.NoError(t, err)
		assert.Equal(t, "{}", string(got))
	})
	t.Run("a key twice", func(t *testing.T) {
		var w PlanWriter
		w.Integer("n", 1)
		w.Text("kernel", "copy")
		w.Integer("n", 2)
		_, err := w.Bytes()
		assert.EqualError(t, err, `cuda: plan: the key "n" written twice`)
	})
}

// nvccOrSkip returns nvcc, or skips the test: it builds a real program.
func nvccOrSkip(t *testing.T) toolkit.Nvcc {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: no nvcc builds")
	}
	nv, err := toolkit.FindNvcc()
	if err != nil {
		t.Skipf("no nvcc to build the harness with: %v", err)
	}
	return nv
}

// The harness built by the real nvcc (for sm_90 alone, the quickest
// build) ends with shared.cuh's statuses: ExitUsage on arguments it
// refuses, before touching a GPU; --info ExitOK on a machine with a GPU,
// ExitNoDevice or ExitNoDriver, with the reason as JSON on stderr, on one
// without.
func TestNvccHarnessStatuses(t *testing.T) {
	nv := nvccOrSkip(t)
	dir := t.TempDir()
	srcs, err := fs.Sub(sources, "src")
	require.NoError(t, err)
	arch, err := toolkit.ArchFor("9.0")
	require.NoError(t, err)
	h := &Harness{Path: filepath.Join(dir, "harness"), Arch: arch}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	require.NoError(t, Builder{}.compile(ctx, nv, srcs, dir, h, 10*time.Minute))

	run := func(args ...string) (int, string) {
		_, err := h.cmd(args, time.Minute).Run(ctx)
		var te *toolkit.ToolError
		if errors.As(err, &te) {
			return te.ExitCode, te.Stderr
		}
		require.NoError(t, err)
		return 0, ""
	}
	code, stderr := run("--warmup", "2")
	assert.Equal(t, sharedExits(t)["ExitUsage"], code)
	assert.Contains(t, stderr, "--warmup: want at least 3 warm-up launches")
	code, stderr = run("--bogus")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "unknown argument --bogus")

	code, stderr = run("--info")
	switch code {
	case 0:
		t.Log("a GPU here: --info answered")
	case ExitNoDevice, ExitNoDriver:
		assert.Regexp(t, `^\{"error":".+","cuda_error":"cudaError\w+"\}$`, strings.TrimSpace(stderr))
		var me *toolkit.MissingError
		assert.ErrorAs(t, AsMissing(&toolkit.ToolError{Tool: "harness", ExitCode: code, Stderr: stderr}), &me)
		t.Logf("no GPU here: status %d, %s", code, strings.TrimSpace(stderr))
	default:
		t.Fatalf("--info: status %d, want 0, %d or %d: %s", code, ExitNoDevice, ExitNoDriver, stderr)
	}
	// The build wrote nothing but the harness into the directory.
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 1)
}
