package cuda

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coalescing-course/coalesce/cuda/toolkit"
	"github.com/coalescing-course/coalesce/internal/faketool"
)

// fakeNvcc is a shell script standing in for nvcc: --version prints
// $FAKE_NVCC_VERSION; a build appends its arguments to $FAKE_NVCC_LOG and
// writes a tiny executable to its -o path, unless the arguments contain
// $FAKE_NVCC_FAIL (then it fails like nvcc, on stderr) or $FAKE_NVCC_WARN
// (then it warns as nvcc -arch=native does without a GPU).
const fakeNvcc = `
if [ "$1" = "--version" ]; then printf 'nvcc: NVIDIA (R) Cuda compiler driver\nCuda compilation tools, release %s\n' "$FAKE_NVCC_VERSION"; exit 0; fi
echo "$*" >> "$FAKE_NVCC_LOG"
case "$*" in *"$FAKE_NVCC_FAIL"*) if [ -n "$FAKE_NVCC_FAIL" ]; then echo "nvcc fatal   : Unsupported gpu architecture '$FAKE_NVCC_FAIL'" >&2; exit 1; fi;; esac
case "$*" in *"$FAKE_NVCC_WARN"*) if [ -n "$FAKE_NVCC_WARN" ]; then echo "nvcc warning : Cannot find valid GPU for '-arch=native', default arch is used" >&2; fi;; esac
test -f harness.cu || { echo "no harness.cu in $(pwd)" >&2; exit 1; }
out=""; while [ $# -gt 0 ]; do if [ "$1" = "-o" ]; then out="$2"; fi; shift; done
printf '#!/bin/sh\necho built\n' > "$out"
`

// fakeSmi stands in for nvidia-smi: it prints $FAKE_SMI_CC, or fails as
// nvidia-smi does without a driver when that is empty.
const fakeSmi = `
if [ -z "$FAKE_SMI_CC" ]; then echo "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver." >&2; exit 9; fi
printf '%s\n' "$FAKE_SMI_CC"
`

type fakeBuild struct {
	b   Builder
	log string
}

func newFakeBuild(t *testing.T) *fakeBuild {
	t.Helper()
	faketool.NeedSh(t)
	dir := t.TempDir()
	log := filepath.Join(dir, "nvcc.log")
	t.Setenv("FAKE_NVCC_LOG", log)
	t.Setenv("FAKE_NVCC_VERSION", "13.0, V13.0.88")
	t.Setenv("FAKE_NVCC_FAIL", "")
	t.Setenv("FAKE_NVCC_WARN", "")
	t.Setenv("FAKE_SMI_CC", "")
	return &fakeBuild{
		b: Builder{
			Nvcc:     toolkit.Nvcc{Path: faketool.Script(t, dir, "nvcc", fakeNvcc)},
			Smi:      toolkit.Smi{Path: faketool.Script(t, dir, "nvidia-smi", fakeSmi)},
			CacheDir: filepath.Join(dir, "cache"),
			Sources:  fstest.MapFS{"harness.cu": {Data: []byte("int main() {}\n")}, "kernels.cuh": {Data: []byte("// kernels\n")}},
		},
		log: log,
	}
}

// builds returns the argument lists nvcc was called with to build.
func (f *fakeBuild) builds(t *testing.T) []string {
	data, err := os.ReadFile(f.log)
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(t, err)
	return strings.Split(strings.TrimSpace(string(data)), "\n")
}

func TestBuildCache(t *testing.T) {
	f := newFakeBuild(t)
	ctx := context.Background()

	h1, err := f.b.Build(ctx)
	require.NoError(t, err)
	assert.Len(t, f.builds(t), 1, "a miss builds")
	assert.Equal(t, toolkit.ArchNative(), h1.Arch)
	assert.Equal(t, "Cuda compilation tools, release 13.0, V13.0.88", h1.Nvcc)
	assert.Equal(t, filepath.Join(f.b.CacheDir, "harness-"+h1.Key), h1.Path)
	fi, err := os.Stat(h1.Path)
	require.NoError(t, err)
	assert.NotZero(t, fi.Mode()&0o100, "the harness is executable")

	h2, err := f.b.Build(ctx)
	require.NoError(t, err)
	assert.Equal(t, h1.Path, h2.Path)
	assert.Len(t, f.builds(t), 1, "a hit does not call nvcc to build")

	f.b.Sources.(fstest.MapFS)["kernels.cuh"] = &fstest.MapFile{Data: []byte("// kernels, changed\n")}
	h3, err := f.b.Build(ctx)
	require.NoError(t, err)
	assert.NotEqual(t, h1.Key, h3.Key, "new sources, new key")
	assert.Len(t, f.builds(t), 2)

	t.Setenv("FAKE_NVCC_VERSION", "13.1, V13.1.1")
	h4, err := f.b.Build(ctx)
	require.NoError(t, err)
	assert.NotEqual(t, h3.Key, h4.Key, "a new nvcc, a new key")
	assert.Len(t, f.builds(t), 3)

	entries, err := os.ReadDir(f.b.CacheDir)
	require.NoError(t, err)
	for _, e := range entries {
		assert.True(t, strings.HasPrefix(e.Name(), "harness-"), "no temporary left behind: %s", e.Name())
	}
}

func TestBuildFallsBack(t *testing.T) {
	tests := []struct {
		name, fail, warn, cc string
		want                 []string
		second               string // the flags of the second build, the first after native
	}{
		// Without nvidia-smi's answer: the fat build, Turing to Hopper.
		{"native fails", "-arch=native", "", "", toolkit.ArchFat(), "-gencode arch=compute_75,code=sm_75"},
		{"native finds no GPU", "", "-arch=native", "", toolkit.ArchFat(), "-gencode arch=compute_75,code=sm_75"},
		// nvidia-smi names an Ada GPU (an L4, an RTX 4090): 8.9 is sm_89.
		{"nvidia-smi names it", "-arch=native", "", "8.9\n8.9", []string{"-gencode", "arch=compute_89,code=[sm_89,compute_89]"}, "arch=compute_89,code=[sm_89,compute_89]"},
		{"nvidia-smi makes no sense", "-arch=native", "", "N/A", toolkit.ArchFat(), "-gencode arch=compute_75,code=sm_75"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeBuild(t)
			t.Setenv("FAKE_NVCC_FAIL", tt.fail)
			t.Setenv("FAKE_NVCC_WARN", tt.warn)
			t.Setenv("FAKE_SMI_CC", tt.cc)
			h, err := f.b.Build(context.Background())
			require.NoError(t, err)
			assert.Equal(t, tt.want, h.Arch)
			builds := f.builds(t)
			require.Len(t, builds, 2)
			assert.Contains(t, builds[0], "-arch=native")
			assert.Contains(t, builds[1], tt.second)
			// The fallback is cached like any build.
			_, err = f.b.Build(context.Background())
			require.NoError(t, err)
			assert.Len(t, f.builds(t), 3, "native is tried again (a GPU may have appeared), the fallback is a hit")
		})
	}
}

func TestBuildFailsWithStderr(t *testing.T) {
	f := newFakeBuild(t)
	t.Setenv("FAKE_NVCC_FAIL", "-")
	_, err := f.b.Build(context.Background())
	require.Error(t, err)
	var te *toolkit.ToolError
	require.ErrorAs(t, err, &te)
	assert.Equal(t, 1, te.ExitCode)
	assert.Contains(t, err.Error(), "Unsupported gpu architecture")
	assert.Contains(t, err.Error(), "failed for every architecture")
}

func TestBuildWithoutNvcc(t *testing.T) {
	f := newFakeBuild(t)
	f.b.Nvcc = toolkit.Nvcc{Path: filepath.Join(t.TempDir(), "nvcc")}
	_, err := f.b.Build(context.Background())
	var se *toolkit.StartError
	require.ErrorAs(t, err, &se)
}

func TestHarnessKey(t *testing.T) {
	srcs := fstest.MapFS{"harness.cu": {Data: []byte("a")}}
	k1, err := harnessKey(srcs, "v1", toolkit.ArchNative())
	require.NoError(t, err)
	k2, _ := harnessKey(srcs, "v1", toolkit.ArchNative())
	assert.Equal(t, k1, k2, "the key is a pure function of its inputs")
	k3, _ := harnessKey(srcs, "v1", toolkit.ArchFat())
	k4, _ := harnessKey(srcs, "v2", toolkit.ArchNative())
	k5, _ := harnessKey(fstest.MapFS{"harness.cu": {Data: []byte("b")}}, "v1", toolkit.ArchNative())
	k6, _ := harnessKey(fstest.MapFS{"harness2.cu": {Data: []byte("a")}}, "v1", toolkit.ArchNative())
	assert.Len(t, map[string]bool{k1: true, k3: true, k4: true, k5: true, k6: true}, 5)
}

func TestEmbeddedSources(t *testing.T) {
	for _, name := range []string{"src/harness.cu", "src/kernels.cuh"} {
		data, err := sources.ReadFile(name)
		require.NoError(t, err)
		assert.NotEmpty(t, data)
	}
}

func TestCacheDir(t *testing.T) {
	t.Setenv(CacheEnv, "/somewhere/else")
	d, err := CacheDir()
	require.NoError(t, err)
	assert.Equal(t, "/somewhere/else", d)
	t.Setenv(CacheEnv, "")
	t.Setenv("XDG_CACHE_HOME", "/xdg")
	t.Setenv("HOME", "/home/learner")
	d, err = CacheDir()
	require.NoError(t, err)
	assert.Equal(t, "/xdg/coalesce", d)
}
