package deploy

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// bundlePieces are what scripts/gpu_bundle.sh writes and
// scripts/gpu_unpack.sh waits for, each a tar of one folder, its name's
// stem.
var bundlePieces = []string{"go.tar.xz", "gomod.tar.xz", "tools.tar.xz", "wheels.tar"}

// maxPieceMiB is gpu_bundle.sh's default MAX_MIB: the device machine takes
// 64 MiB a call, the repository's files included.
const maxPieceMiB = 48

// manifest is a piece's MANIFEST as gpu_bundle.sh writes it for this
// checkout: sha256sum's lines for the files the pieces follow from.
func manifest(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("commit test\ngo go1.0\npythons 3.12\n")
	for _, f := range []string{"go.mod", "go.sum", "requirements.txt", "scripts/install.sh"} {
		data, err := os.ReadFile(filepath.Join(root, f))
		require.NoError(t, err)
		sum := sha256.Sum256(data)
		fmt.Fprintf(&b, "%s  %s\n", hex.EncodeToString(sum[:]), f)
	}
	return b.String()
}

// tarPiece writes dir/name, a tar.xz of one folder, top, holding files.
func tarPiece(t *testing.T, dir, name, top string, files map[string]string) {
	t.Helper()
	src := t.TempDir()
	for f, body := range files {
		writeFiles(t, filepath.Join(src, top), map[string]string{f: body})
	}
	out, err := exec.Command("tar", "-C", src, "-cJf", filepath.Join(dir, name), top).CombinedOutput()
	require.NoError(t, err, string(out))
}

// gpu_unpack.sh unpacks the pieces that are there, once each, refuses one
// built from other files, and stops, naming them, while any is missing.
func TestGPUUnpack(t *testing.T) {
	mustHaveExec(t, "bash", "tar", "xz", "sha256sum")
	bundle, run := t.TempDir(), t.TempDir()
	env := []string{"BUNDLE=" + bundle, "RUN_DIR=" + run}

	out, err := runScript(t, t.TempDir(), env, "scripts/gpu_unpack.sh")
	require.Error(t, err)
	assert.Equal(t, 3, exitCode(err), out)
	assert.Contains(t, out, "still to come: go.tar.xz gomod.tar.xz tools.tar.xz wheels.tar")

	// A piece of this checkout unpacks, and is not unpacked again.
	tarPiece(t, bundle, "tools.tar.xz", "tools", map[string]string{"MANIFEST": manifest(t), "bin/gonb": "#!/bin/sh\n"})
	for round, want := range []bool{true, false} {
		out, err = runScript(t, t.TempDir(), env, "scripts/gpu_unpack.sh")
		assert.Equal(t, 3, exitCode(err), out)
		assert.Equal(t, want, strings.Contains(out, "unpacking tools.tar.xz"), "round %d: %s", round, out)
		assert.Contains(t, out, "still to come: go.tar.xz gomod.tar.xz wheels.tar")
		assert.FileExists(t, filepath.Join(run, "tools", "bin", "gonb"))
	}

	// A piece built from another go.sum is refused, and not left unpacked.
	other := strings.Replace(manifest(t), "  go.sum", "  go.mod", 1)
	tarPiece(t, bundle, "wheels.tar", "wheels", map[string]string{"MANIFEST": other})
	out, err = runScript(t, t.TempDir(), env, "scripts/gpu_unpack.sh")
	assert.Equal(t, 1, exitCode(err), out)
	assert.Contains(t, out, "wheels.tar was built from other files than this checkout's")
	assert.NoDirExists(t, filepath.Join(run, "wheels"))

	out, err = runScript(t, t.TempDir(), env, "scripts/gpu_unpack.sh", "--bogus")
	assert.Equal(t, 2, exitCode(err), out)
	assert.Contains(t, out, "usage:")
}

// exitCode is a finished script's exit status; 0 for no error.
func exitCode(err error) int {
	if err == nil {
		return 0
	}
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	return -1
}

// make test-gpu first looks for the GPU's tools, and names each one
// missing, before it installs or runs anything.
func TestTestGPUNeedsTheTools(t *testing.T) {
	mustHaveExec(t, "bash")
	bash, err := exec.LookPath("bash")
	require.NoError(t, err)
	tests := []struct {
		have    []string
		missing string // "" when all are there
	}{
		{nil, "not on PATH: nvidia-smi nvcc ncu."},
		{[]string{"nvidia-smi", "nvcc"}, "not on PATH: ncu."},
		{[]string{"ncu"}, "not on PATH: nvidia-smi nvcc."},
		{[]string{"nvidia-smi", "nvcc", "ncu"}, ""},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.have, ",")+"/", func(t *testing.T) {
			bin := t.TempDir()
			for _, tool := range tt.have {
				writeFiles(t, bin, map[string]string{tool: "#!/bin/sh\n"})
				require.NoError(t, os.Chmod(filepath.Join(bin, tool), 0o755))
			}
			// dirname, the only other program the check runs, with bash
			// itself; nothing else of the machine's PATH.
			for _, p := range []string{"dirname"} {
				path, err := exec.LookPath(p)
				require.NoError(t, err)
				require.NoError(t, os.Symlink(path, filepath.Join(bin, p)))
			}
			cmd := exec.Command(bash, filepath.Join(root, "scripts", "test_gpu.sh"), "--check")
			cmd.Env = []string{"PATH=" + bin}
			out, err := cmd.CombinedOutput()
			if tt.missing == "" {
				assert.NoError(t, err, string(out))
				return
			}
			assert.Equal(t, 2, exitCode(err), string(out))
			assert.Contains(t, string(out), tt.missing)
			assert.Contains(t, string(out), "make test-notebooks runs them on the recording")
		})
	}
}

// The pieces of a bundle built here (make gpu-bundle) are each small
// enough for one call to the device machine, and were built from this
// checkout. It skips when there is no bundle: building one takes minutes
// and the network, which `make test` must not need.
func TestGPUBundle(t *testing.T) {
	dir := filepath.Join(root, ".gpubundle")
	if m, _ := filepath.Glob(filepath.Join(dir, "*.tar*")); len(m) == 0 {
		t.Skipf("no bundle in %s (make gpu-bundle builds one)", dir)
	}
	mustHaveExec(t, "tar", "xz")
	var total int64
	for _, p := range bundlePieces {
		t.Run(p, func(t *testing.T) {
			fi, err := os.Stat(filepath.Join(dir, p))
			require.NoError(t, err, "make gpu-bundle writes every piece")
			total += fi.Size()
			assert.LessOrEqual(t, fi.Size(), int64(maxPieceMiB)<<20, "%s is %.1f MiB", p, float64(fi.Size())/(1<<20))
			top := strings.SplitN(p, ".", 2)[0]
			got, err := exec.Command("tar", "-xOf", filepath.Join(dir, p), top+"/MANIFEST").Output()
			require.NoError(t, err, "%s holds %s/MANIFEST", p, top)
			_, sums, _ := strings.Cut(manifest(t), "pythons 3.12\n")
			assert.Contains(t, string(got), sums, "%s was built from this checkout's files (make gpu-bundle again)", p)
		})
	}
	t.Logf("bundle: %.1f MiB in %d pieces", float64(total)/(1<<20), len(bundlePieces))
}
