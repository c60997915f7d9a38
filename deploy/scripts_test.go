package deploy

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// mustHaveExec skips the test unless every program is on PATH.
func mustHaveExec(t *testing.T, progs ...string) {
	t.Helper()
	for _, p := range progs {
		if _, err := exec.LookPath(p); err != nil {
			t.Skipf("%s not found on PATH: %v", p, err)
		}
	}
}

// runScript runs a repository script with bash, env added to the test's
// environment, and returns its combined output and error.
func runScript(t *testing.T, dir string, env []string, script string, args ...string) (string, error) {
	t.Helper()
	abs, err := filepath.Abs(filepath.Join(root, script))
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", append([]string{abs}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// fakeToolchain writes a module zip shaped like golang.org/toolchain's:
// files under golang.org/toolchain@VERSION/, bin/go a script printing
// goVersion, go.mod files stored as _go.mod. It returns the zip's SHA-256.
func fakeToolchain(t *testing.T, proxy, version, goVersion string, withGo bool) string {
	t.Helper()
	dir := filepath.Join(proxy, "golang.org", "toolchain", "@v")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	prefix := "golang.org/toolchain@" + version + "/"
	files := map[string]string{
		"VERSION":                      goVersion + "\n",
		"pkg/tool/linux_amd64/compile": "compiler\n",
		"lib/wasm/go_js_wasm_exec":     "#!/bin/sh\n",
		"lib/time/zoneinfo.zip":        "zones\n",
		"src/_go.mod":                  "module std\n",
		"src/cmd/_go.mod":              "module cmd\n",
		"src/fmt/print.go":             "package fmt\n",
	}
	if withGo {
		files["bin/go"] = "#!/bin/sh\necho " + goVersion + "\n"
		files["bin/gofmt"] = "#!/bin/sh\n"
	}
	for name, body := range files {
		w, err := zw.Create(prefix + name)
		require.NoError(t, err)
		_, err = w.Write([]byte(body))
		require.NoError(t, err)
	}
	require.NoError(t, zw.Close())
	require.NoError(t, os.WriteFile(filepath.Join(dir, version+".zip"), buf.Bytes(), 0o644))
	sum := sha256.Sum256(buf.Bytes())
	return hex.EncodeToString(sum[:])
}

func TestInstallGo(t *testing.T) {
	mustHaveExec(t, "bash", "curl", "python3", "sha256sum")
	const goVersion = "1.99.1"
	const version = "v0.0.1-go1.99.1.linux-amd64"
	tests := []struct {
		name    string
		withGo  bool   // the zip has bin/go
		prints  string // what the fake bin/go prints
		badSum  bool   // pass a wrong checksum
		exists  bool   // DEST exists already
		wantErr string // "" for success
	}{
		{name: "installs, fixing modes and go.mod files", withGo: true, prints: "go1.99.1"},
		{name: "wrong checksum", withGo: true, prints: "go1.99.1", badSum: true, wantErr: "checksum mismatch"},
		{name: "destination exists", withGo: true, prints: "go1.99.1", exists: true, wantErr: "already exists"},
		{name: "zip without bin/go", withGo: false, wantErr: "holds no golang.org/toolchain@" + version + "/bin/go"},
		{name: "toolchain of another version", withGo: true, prints: "go1.98.0", wantErr: "is go1.98.0, want go1.99.1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tmp := t.TempDir()
			proxy := filepath.Join(tmp, "proxy")
			sum := fakeToolchain(t, proxy, version, tt.prints, tt.withGo)
			if tt.badSum {
				sum = strings.Repeat("0", 64)
			}
			dest := filepath.Join(tmp, "usr", "local", "go")
			if tt.exists {
				require.NoError(t, os.MkdirAll(dest, 0o755))
			}
			out, err := runScript(t, tmp, []string{
				"GO_VERSION=" + goVersion, "GO_ZIP_SHA256=" + sum, "GOPROXY_URL=file://" + proxy,
				"GO_OS=linux", "GO_ARCH=amd64",
			}, "scripts/install_go.sh", dest)
			if tt.wantErr != "" {
				require.Error(t, err, "output:\n%s", out)
				assert.Contains(t, out, tt.wantErr)
				if !tt.exists {
					assert.NoDirExists(t, dest, "a failed install must leave nothing behind")
				}
				return
			}
			require.NoError(t, err, "output:\n%s", out)
			assert.Contains(t, out, "installed go1.99.1 (linux/amd64) in "+dest)
			for _, f := range []string{"bin/go", "bin/gofmt", "pkg/tool/linux_amd64/compile", "lib/wasm/go_js_wasm_exec"} {
				fi, err := os.Stat(filepath.Join(dest, f))
				require.NoError(t, err)
				assert.NotZero(t, fi.Mode()&0o111, "%s must be executable, mode %v", f, fi.Mode())
			}
			for _, f := range []string{"lib/time/zoneinfo.zip", "src/fmt/print.go", "VERSION"} {
				fi, err := os.Stat(filepath.Join(dest, f))
				require.NoError(t, err)
				assert.Zero(t, fi.Mode()&0o111, "%s must not be executable, mode %v", f, fi.Mode())
			}
			for f, want := range map[string]string{"src/go.mod": "module std\n", "src/cmd/go.mod": "module cmd\n"} {
				b, err := os.ReadFile(filepath.Join(dest, f))
				require.NoError(t, err, "%s must be restored from _go.mod", f)
				assert.Equal(t, want, string(b))
			}
		})
	}
}

// writeFiles creates files (relative path -> content) under dir.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
	}
}

func TestCourseHome(t *testing.T) {
	mustHaveExec(t, "bash")
	tmp := t.TempDir()
	src := filepath.Join(tmp, "opt", "course")
	home := filepath.Join(tmp, "home", "learner")
	dest := filepath.Join(home, "course")
	writeFiles(t, src, map[string]string{
		"go.mod":                 "module example.com/course\n\ngo 1.22\n",
		"lessons/show/show.go":   "package show\n\nfunc Answer() int { return 42 }\n",
		"old/gone.go":            "package old\n",
		"notebooks/index.ipynb":  "index v1",
		"notebooks/01-a.ipynb":   "lesson a v1",
		"notebooks/README.md":    "readme",
		".git/HEAD":              "ref",
		".venv/bin/python":       "",
		"build/notebooks/x.html": "",
	})
	env := []string{"HOME=" + home, "COURSE_ROOT=" + src}

	// First start: everything arrives.
	out, err := runScript(t, tmp, env, "scripts/course_home.sh")
	require.NoError(t, err, out)
	assert.Contains(t, out, "3 notebook(s) copied")
	for _, name := range []string{"go.mod", "lessons", "old"} {
		target, err := os.Readlink(filepath.Join(dest, name))
		require.NoError(t, err, "%s must be a link", name)
		assert.Equal(t, filepath.Join(src, name), target)
	}
	for _, name := range []string{".git", ".venv", "build"} {
		assert.NoFileExists(t, filepath.Join(dest, name))
		assert.NoDirExists(t, filepath.Join(dest, name))
	}
	b, err := os.ReadFile(filepath.Join(dest, "notebooks", "01-a.ipynb"))
	require.NoError(t, err)
	assert.Equal(t, "lesson a v1", string(b))
	fi, err := os.Lstat(filepath.Join(dest, "notebooks", "01-a.ipynb"))
	require.NoError(t, err)
	assert.True(t, fi.Mode().IsRegular(), "notebooks are copies, not links")

	// The learner works; the image is updated: a notebook changes, one is
	// added, a package goes away. The learner also has a file of their own
	// where the course now has one.
	writeFiles(t, dest, map[string]string{"notebooks/01-a.ipynb": "lesson a, my answers"})
	writeFiles(t, home, map[string]string{"course/NOTES.md": "mine"})
	writeFiles(t, src, map[string]string{
		"notebooks/01-a.ipynb": "lesson a v2",
		"notebooks/02-b.ipynb": "lesson b v1",
		"NOTES.md":             "course notes",
	})
	require.NoError(t, os.RemoveAll(filepath.Join(src, "old")))

	out, err = runScript(t, tmp, env, "scripts/course_home.sh")
	require.NoError(t, err, out)
	assert.Contains(t, out, "1 notebook(s) copied")
	assert.Contains(t, out, "warning: "+filepath.Join(dest, "NOTES.md")+" is not a link")
	got := map[string]string{}
	for _, name := range []string{"notebooks/01-a.ipynb", "notebooks/02-b.ipynb", "NOTES.md"} {
		b, err := os.ReadFile(filepath.Join(dest, name))
		require.NoError(t, err)
		got[name] = string(b)
	}
	assert.Equal(t, map[string]string{
		"notebooks/01-a.ipynb": "lesson a, my answers", // the learner's work is kept
		"notebooks/02-b.ipynb": "lesson b v1",          // a new lesson arrives
		"NOTES.md":             "mine",                 // the learner's file is left alone
	}, got)
	_, err = os.Lstat(filepath.Join(dest, "old"))
	assert.True(t, os.IsNotExist(err), "the link to a removed directory must go, got %v", err)

	// The notebooks' setup cell finds the course root with `go list -m` from
	// their folder, and cells import the course's packages through the links.
	if _, err := exec.LookPath("go"); err == nil {
		cmd := exec.Command("go", "list", "-m", "-f", "{{.Dir}}")
		cmd.Dir = filepath.Join(dest, "notebooks")
		cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off", "GOTOOLCHAIN=local")
		b, err := cmd.CombinedOutput()
		require.NoError(t, err, string(b))
		assert.Equal(t, dest, strings.TrimSpace(string(b)))
		cmd = exec.Command("go", "build", "./lessons/...")
		cmd.Dir = dest
		cmd.Env = cmd.Env[:0]
		cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off", "GOTOOLCHAIN=local")
		b, err = cmd.CombinedOutput()
		require.NoError(t, err, "go build ./lessons/... through the link: %s", b)
	}

	t.Run("refuses what is not the course", func(t *testing.T) {
		out, err := runScript(t, tmp, env, "scripts/course_home.sh", filepath.Join(src, "lessons"), filepath.Join(tmp, "x"))
		require.Error(t, err)
		assert.Contains(t, out, "is not the course")
		out, err = runScript(t, tmp, env, "scripts/course_home.sh", src, src)
		require.Error(t, err)
		assert.Contains(t, out, "are the same directory")
	})
}

// Every shell script of the repository parses (bash -n): most run only in
// the image or on the GPU machine, where a syntax error would cost a run.
func TestScriptsParse(t *testing.T) {
	mustHaveExec(t, "bash")
	var scripts []string
	for _, pat := range []string{"scripts/*.sh", "runs/*.sh"} {
		m, err := filepath.Glob(filepath.Join(root, pat))
		require.NoError(t, err)
		scripts = append(scripts, m...)
	}
	// The scripts make and the GPU run call, at least.
	for _, want := range []string{"install.sh", "gpu_bundle.sh", "gpu_unpack.sh", "test_gpu.sh"} {
		assert.Contains(t, scripts, filepath.Join(root, "scripts", want))
	}
	for _, s := range scripts {
		t.Run(filepath.Base(s), func(t *testing.T) {
			out, err := exec.Command("bash", "-n", s).CombinedOutput()
			assert.NoError(t, err, "%s", out)
		})
	}
}
