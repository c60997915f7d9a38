package deploy

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// learnerUID and learnerGID are the image's learner (the Dockerfile's
// NB_UID and NB_GID: jovyan, in group users).
const learnerUID, learnerGID = 1000, 100

// TestNonRootLearner runs the course as the image runs it for a learner:
// scripts/install.sh as root into a system-wide-like prefix (as the
// Dockerfile's RUN does), then, as uid 1000 with an empty home, a
// read-only module cache filled by root and a build cache of its own (the
// image's GOMODCACHE and GOCACHE), the GoNB kernel that install.sh
// installed executing a notebook headless through Jupyter's own client:
// a cell that imports the course, prints lab.Status and runs a learner's
// kernel through lab.Try. It needs root (to switch user: setpriv) and a
// checkout, venv and Go that other users may read, as the image's
// /opt/course, /opt/venv and /usr/local/go are.
func TestNonRootLearner(t *testing.T) {
	if os.Getenv(installTestEnv) != "1" {
		t.Skipf("needs the venv and tools of `make setup`: run `make test-install` (sets %s=1)", installTestEnv)
	}
	if os.Geteuid() != 0 {
		t.Skip("runs the learner as uid 1000, which takes root (CI runs as root)")
	}
	mustHaveExec(t, "bash", "go", "setpriv")
	rootAbs, err := filepath.Abs(root)
	require.NoError(t, err)
	venv := envOr("VENV", filepath.Join(rootAbs, ".venv"))
	binDir := envOr("BIN_DIR", filepath.Join(rootAbs, ".cache", "bin"))
	goroot := goEnv(t, "GOROOT")
	for _, p := range []string{rootAbs, venv, binDir, goroot} {
		if dir := closedTo(p); dir != "" {
			t.Skipf("%s is not open to other users (%s is not o+rx), as the image's /opt/course, /opt/venv and /usr/local/go are: clone the course where uid %d can read it", p, dir, learnerUID)
		}
	}

	// The image's layout: a module cache root fills and the learner only
	// reads, a build cache the learner owns, an empty home.
	// Not t.TempDir: its parent is closed to other users.
	tmp, err := os.MkdirTemp("", "coalesce-nonroot-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(tmp) })
	require.NoError(t, os.Chmod(tmp, 0o755))
	prefix := filepath.Join(tmp, "usr", "local")
	modcache := filepath.Join(tmp, "gomod")
	gocache := filepath.Join(tmp, "gocache")
	home := filepath.Join(tmp, "home")
	for _, d := range []string{gocache, home} {
		require.NoError(t, os.MkdirAll(d, 0o755))
		require.NoError(t, os.Chown(d, learnerUID, learnerGID))
	}
	fillModCache(t, rootAbs, modcache)

	env := []string{"HOME=" + home, "KERNEL_PREFIX=" + prefix, "VENV=" + venv, "BIN_DIR=" + binDir,
		"GOCACHE=" + goEnv(t, "GOCACHE"), "GOMODCACHE=" + goEnv(t, "GOMODCACHE"),
		"JUPYTER_PATH=", "JUPYTER_DATA_DIR=", "XDG_DATA_HOME=", "XDG_CONFIG_HOME=", "XDG_CACHE_HOME="}
	sout, err := runScript(t, rootAbs, env, "scripts/install.sh")
	require.NoError(t, err, "install.sh as root:\n%s", sout)

	// The learner's notebook starts with the lessons' setup cell, verbatim.
	lesson, err := os.ReadFile(filepath.Join(rootAbs, "notebooks", "01-sectors.ipynb"))
	require.NoError(t, err)
	var parsed struct {
		Cells []json.RawMessage `json:"cells"`
	}
	require.NoError(t, json.Unmarshal(lesson, &parsed))
	require.Greater(t, len(parsed.Cells), 1)
	nb := filepath.Join(tmp, "learner.ipynb")
	require.NoError(t, os.WriteFile(nb, []byte(strings.Replace(learnerNotebook, "SETUP", string(parsed.Cells[1]), 1)), 0o644))
	script := `
import sys, nbformat
from nbclient import NotebookClient
nb = nbformat.read(sys.argv[1], as_version=4)
NotebookClient(nb, kernel_name="gonb", timeout=600, allow_errors=True, resources={"metadata": {"path": sys.argv[2]}}).execute()
for c in nb.cells:
    for o in c.get("outputs", []):
        if o.get("output_type") == "error":
            print("CELL ERROR:", o.get("ename"), o.get("evalue"))
        elif o.get("output_type") == "stream":
            print(o.get("text", ""), end="")
        elif "text/plain" in o.get("data", {}):
            print(o["data"]["text/plain"])
`
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "setpriv", fmt.Sprintf("--reuid=%d", learnerUID), fmt.Sprintf("--regid=%d", learnerGID), "--clear-groups",
		filepath.Join(venv, "bin", "python"), "-c", script, nb, filepath.Join(rootAbs, "notebooks"))
	cmd.Dir = tmp
	cmd.Env = []string{"HOME=" + home, "PATH=" + binDir + ":" + filepath.Join(goroot, "bin") + ":/usr/bin:/bin",
		"JUPYTER_PATH=" + filepath.Join(prefix, "share", "jupyter"), "JUPYTER_PLATFORM_DIRS=1",
		"GOMODCACHE=" + modcache, "GOCACHE=" + gocache, "GOPROXY=off", "GOTOOLCHAIN=local", "GOFLAGS=-mod=readonly",
		"COALESCE_MEASURE=recorded", "COALESCE_LEARNER=ada"}
	cmd.WaitDelay = 10 * time.Second
	b, err := cmd.CombinedOutput()
	text := string(b)
	require.NoError(t, err, "the notebook as uid %d:\n%s", learnerUID, text)
	assert.NotContains(t, text, "CELL ERROR")
	assert.Contains(t, text, "Measurements: recorded on NVIDIA H200", "lab.Status ran")
	assert.Contains(t, text, "10-kernels/strided-copy", "lab.Try ran")
	assert.Contains(t, text, "(learner ada): passed")

	// The browser test against this install: JupyterLab and its kernels
	// as uid 1000, index and the first lesson run in Chromium.
	t.Run("browser", func(t *testing.T) {
		chromium := envOr("CHROMIUM", "/usr/bin/chromium")
		if _, err := os.Stat(chromium); err != nil {
			t.Skipf("no Chromium at %s: make test-browser installs it (make test runs it before this)", chromium)
		}
		py := filepath.Join(venv, "bin", "python")
		if err := exec.Command(py, "-c", "import playwright").Run(); err != nil {
			t.Skipf("playwright is not in %s: make test-browser installs requirements-test.txt", venv)
		}
		// Inside the course, as the browser test's own build/browser, so
		// that the copies of the notebooks find the course module.
		out := filepath.Join(rootAbs, "build", "browser-learner")
		t.Cleanup(func() { os.RemoveAll(out) })
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, py, filepath.Join(rootAbs, "scripts", "browser_test.py"))
		cmd.Dir = rootAbs
		cmd.Env = append(os.Environ(), "BROWSER_OUT="+out, fmt.Sprintf("BROWSER_LAB_USER=%d:%d", learnerUID, learnerGID),
			"HOME="+home, "JUPYTER_PATH="+filepath.Join(prefix, "share", "jupyter"),
			"PATH="+binDir+":"+filepath.Join(goroot, "bin")+":"+os.Getenv("PATH"),
			"GOMODCACHE="+modcache, "GOCACHE="+gocache, "GOPROXY=off", "GOTOOLCHAIN=local", "GOFLAGS=-mod=readonly",
			"COALESCE_MEASURE=recorded", "BROWSER_TEST_REQUIRED=1")
		cmd.WaitDelay = 10 * time.Second
		b, err := cmd.CombinedOutput()
		if err != nil {
			logTail, _ := os.ReadFile(filepath.Join(out, "jupyter.log"))
			if len(logTail) > 8000 {
				logTail = logTail[len(logTail)-8000:]
			}
			t.Fatalf("the browser test as uid %d: %v\n%s\nJupyterLab's log, the end:\n%s", learnerUID, err, b, logTail)
		}
		assert.Regexp(t, `browser: 2 passed, 0 failed`, string(b))
		fi, err := os.Stat(filepath.Join(out, "jupyter", "runtime"))
		require.NoError(t, err, "JupyterLab's runtime directory")
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			assert.Equal(t, uint32(learnerUID), st.Uid, "JupyterLab ran as the learner")
		}
	})

	// The learner wrote nothing where they may not: every file the run
	// left in the module cache is root's, as it was.
	require.NoError(t, filepath.Walk(modcache, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Uid != 0 {
			return fmt.Errorf("%s belongs to uid %d: the learner wrote into the module cache", p, st.Uid)
		}
		return nil
	}))
}

// learnerNotebook is a learner's notebook: the setup cell (SETUP), the
// course imported, the status printed, and a coalesced copy for the
// strided-copy exercise.
const learnerNotebook = `{
 "cells": [
  SETUP,
  {"cell_type": "code", "execution_count": null, "id": "a", "metadata": {}, "outputs": [],
   "source": ["import (\n", "\t\"github.com/coalescing-course/coalesce/lab\"\n", "\t\"github.com/coalescing-course/coalesce/lessons/simt\"\n", ")\n", "\n", "%%\n", "lab.Status()"]},
  {"cell_type": "code", "execution_count": null, "id": "b", "metadata": {}, "outputs": [],
   "source": ["func Copy(t *simt.Thread, in, out *simt.Global[float32], n, k int) {\n", "\tT := t.GridDim.X * t.BlockDim.X\n", "\tfor i := t.BlockIdx.X*t.BlockDim.X + t.ThreadIdx.X; i < n; i += T {\n", "\t\tout.Store(t, i, in.Load(t, i))\n", "\t}\n", "}\n", "\n", "%%\n", "lab.Try(\"10-kernels/strided-copy\", Copy)"]}
 ],
 "metadata": {"kernelspec": {"display_name": "Go (gonb)", "language": "go", "name": "gonb"}},
 "nbformat": 4, "nbformat_minor": 5
}
`

// fillModCache fills modcache with the modules the notebooks build with,
// from this machine's module cache, as the image's `go mod download` fills
// /opt/go/mod: the go command in workspace mode (GoNB's go.work) reads the
// go.mod of every module of the build list, built or not, so those first,
// then the zips of what the notebooks compile (downloaded by a build of lab
// from the machine's cache, never the network).
func fillModCache(t *testing.T, rootAbs, modcache string) {
	t.Helper()
	download := filepath.Join(goEnv(t, "GOMODCACHE"), "cache", "download")
	require.NoError(t, filepath.Walk(download, func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() || !(strings.HasSuffix(p, ".mod") || strings.HasSuffix(p, ".info")) {
			return err
		}
		rel, _ := filepath.Rel(download, p)
		dst := filepath.Join(modcache, "cache", "download", rel)
		if _, err := os.Stat(dst); err == nil {
			return nil
		}
		b, err := os.ReadFile(p)
		if err == nil {
			err = os.MkdirAll(filepath.Dir(dst), 0o755)
		}
		if err == nil {
			err = os.WriteFile(dst, b, 0o644)
		}
		return err
	}))
	dl := exec.Command("go", "build", "-o", os.DevNull, "./lab", "./lessons/simt")
	dl.Dir = rootAbs
	dl.Env = append(os.Environ(), "GOMODCACHE="+modcache, "GOFLAGS=-mod=readonly",
		"GOPROXY=file://"+download, "GOSUMDB=off")
	out, err := dl.CombinedOutput()
	require.NoError(t, err, "filling the learner's module cache:\n%s", out)
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// closedTo returns the first directory on the way to p (p included) that
// other users cannot enter and list, "" when there is none.
func closedTo(p string) string {
	for dir := p; ; dir = filepath.Dir(dir) {
		fi, err := os.Stat(dir)
		if err != nil || fi.Mode().Perm()&0o005 != 0o005 {
			return dir
		}
		if dir == "/" || !strings.Contains(dir, "/") {
			return ""
		}
	}
}
