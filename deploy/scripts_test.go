package deploy

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
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

// nb is a notebook whose cells are sources (code cells), with outputs, to
// show that outputs and execution counts do not make a copy the learner's.
func nb(outputs string, sources ...string) string {
	var cells []string
	for i, src := range sources {
		cells = append(cells, fmt.Sprintf(`{"cell_type":"code","execution_count":%d,"id":"c%d","metadata":{},"outputs":[%s],"source":[%q]}`, i+1, i, outputs, src))
	}
	return `{"cells":[` + strings.Join(cells, ",") + `],"metadata":{},"nbformat":4,"nbformat_minor":5}` + "\n"
}

// TestCourseHome runs scripts/course_home.sh through a learner's life: the
// first start, a course update (an untouched lesson updated, an edited one
// kept with the new version offered beside it and a note, a new lesson, a
// package gone), a learner's folder where a link was (moved aside, the link
// back), and the failures the learner must be told about.
func TestCourseHome(t *testing.T) {
	mustHaveExec(t, "bash", "python3")
	tmp := t.TempDir()
	src := filepath.Join(tmp, "opt", "course")
	home := filepath.Join(tmp, "home", "learner")
	dest := filepath.Join(home, "course")
	v1 := map[string]string{
		"index":  nb("", "lab.Status()"),
		"01-a":   nb("", "lab.Check(\"01-a/x\", lab.YourPrediction)"),
		"02-b":   nb("", "lab.Check(\"02-b/y\", lab.YourPrediction)"),
		"03-old": nb("", "x := 1"),
	}
	writeFiles(t, src, map[string]string{
		"go.mod":                 "module example.com/course\n\ngo 1.22\n",
		"lessons/show/show.go":   "package show\n\nfunc Answer() int { return 42 }\n",
		"lab/lab.go":             "package lab\n",
		"old/gone.go":            "package old\n",
		"notebooks/index.ipynb":  v1["index"],
		"notebooks/01-a.ipynb":   v1["01-a"],
		"notebooks/02-b.ipynb":   v1["02-b"],
		"notebooks/README.md":    "readme",
		".git/HEAD":              "ref",
		".venv/bin/python":       "",
		"build/notebooks/x.html": "",
	})
	// 03-old shipped in a release before this learner's record existed:
	// only the course's list of shipped versions knows it.
	sum := func(body string) string {
		f := filepath.Join(tmp, "sum.ipynb")
		require.NoError(t, os.WriteFile(f, []byte(body), 0o644))
		out, err := exec.Command("python3", filepath.Join(root, "scripts", "course_notebooks.py"), "sum", f).Output()
		require.NoError(t, err)
		return strings.Fields(string(out))[0]
	}
	writeFiles(t, src, map[string]string{"notebooks/.shipped.sha256": "# test\n" + sum(v1["03-old"]) + "  03-old.ipynb\n"})
	env := []string{"HOME=" + home, "COURSE_ROOT=" + src}
	read := func(name string) string {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(dest, name))
		require.NoError(t, err)
		return string(b)
	}

	// First start: everything arrives.
	out, err := runScript(t, tmp, env, "scripts/course_home.sh")
	require.NoError(t, err, out)
	assert.Contains(t, out, "4 notebook(s) copied, 0 updated, 0 offered")
	for _, name := range []string{"lessons", "lab", "old"} {
		target, err := os.Readlink(filepath.Join(dest, name))
		require.NoError(t, err, "%s must be a link", name)
		assert.Equal(t, filepath.Join(src, name), target)
	}
	for _, name := range []string{".git", ".venv", "build", "go.mod", "go.sum"} {
		_, err := os.Lstat(filepath.Join(dest, name))
		assert.True(t, os.IsNotExist(err), "%s must not be in the learner's course, got %v", name, err)
	}
	assert.Contains(t, read("go.work"), "\nuse "+src+"\n", "the notebooks build the course from SRC")
	assert.Equal(t, v1["01-a"], read("notebooks/01-a.ipynb"))
	fi, err := os.Lstat(filepath.Join(dest, "notebooks", "01-a.ipynb"))
	require.NoError(t, err)
	assert.True(t, fi.Mode().IsRegular(), "notebooks are copies, not links")

	// A home made before the record: an old release's 03-old, untouched, and
	// the go.mod link course_home.sh made before DEST/go.work.
	writeFiles(t, dest, map[string]string{"notebooks/03-old.ipynb": v1["03-old"]})
	require.NoError(t, os.Symlink(filepath.Join(src, "go.mod"), filepath.Join(dest, "go.mod")))

	// The learner works: runs index (outputs only: still untouched), makes a
	// prediction in 01-a (edited), leaves 02-b alone, keeps a file of their
	// own, and puts a folder of their own where the lab link was.
	writeFiles(t, dest, map[string]string{
		"notebooks/index.ipynb": nb(`{"output_type":"stream","name":"stdout","text":["ok"]}`, "lab.Status()"),
		"notebooks/01-a.ipynb":  nb("", "lab.Check(\"01-a/x\", 32)"),
		"NOTES.md":              "mine",
	})
	require.NoError(t, os.Remove(filepath.Join(dest, "lab")))
	writeFiles(t, dest, map[string]string{"lab/my.go": "package mine\n"})

	// The course is updated: every lesson changes, one is added, a package goes.
	v2 := map[string]string{
		"index":  nb("", "lab.Status()", "lab.Index()"),
		"01-a":   nb("", "// corrected", "lab.Check(\"01-a/x\", lab.YourPrediction)"),
		"02-b":   nb("", "// corrected", "lab.Check(\"02-b/y\", lab.YourPrediction)"),
		"03-old": nb("", "x := 2"),
		"04-new": nb("", "lab.Check(\"04-new/z\", lab.YourPrediction)"),
	}
	for name, body := range v2 {
		writeFiles(t, src, map[string]string{"notebooks/" + name + ".ipynb": body})
	}
	require.NoError(t, os.RemoveAll(filepath.Join(src, "old")))

	out, err = runScript(t, tmp, env, "scripts/course_home.sh")
	require.NoError(t, err, out)
	assert.Contains(t, out, "1 notebook(s) copied, 3 updated, 1 offered")
	assert.Equal(t, map[string]string{
		"notebooks/index.ipynb":    v2["index"],                         // ran, not edited: updated
		"notebooks/01-a.ipynb":     nb("", "lab.Check(\"01-a/x\", 32)"), // the learner's work is kept
		"notebooks/01-a.new.ipynb": v2["01-a"],                          // and the new version offered beside it
		"notebooks/02-b.ipynb":     v2["02-b"],                          // untouched: updated
		"notebooks/03-old.ipynb":   v2["03-old"],                        // an old release's, untouched: updated
		"notebooks/04-new.ipynb":   v2["04-new"],                        // a new lesson arrives
		"NOTES.md":                 "mine",                              // the learner's file is left alone
		"lab.mine/my.go":           "package mine\n",                    // their folder moved aside...
	}, map[string]string{
		"notebooks/index.ipynb": read("notebooks/index.ipynb"), "notebooks/01-a.ipynb": read("notebooks/01-a.ipynb"),
		"notebooks/01-a.new.ipynb": read("notebooks/01-a.new.ipynb"), "notebooks/02-b.ipynb": read("notebooks/02-b.ipynb"),
		"notebooks/03-old.ipynb": read("notebooks/03-old.ipynb"), "notebooks/04-new.ipynb": read("notebooks/04-new.ipynb"),
		"NOTES.md": read("NOTES.md"), "lab.mine/my.go": read("lab.mine/my.go"),
	})
	target, err := os.Readlink(filepath.Join(dest, "lab"))
	require.NoError(t, err, "...and the link to the course's lab is back")
	assert.Equal(t, filepath.Join(src, "lab"), target)
	note := read("notebooks/COURSE-UPDATES.md")
	assert.Contains(t, note, "**01-a.ipynb** is yours (edited)")
	assert.Contains(t, note, "**01-a.new.ipynb**")
	assert.Contains(t, note, "lab -> lab.mine")
	_, err = os.Lstat(filepath.Join(dest, "old"))
	assert.True(t, os.IsNotExist(err), "the link to a removed directory must go, got %v", err)
	_, err = os.Lstat(filepath.Join(dest, "go.mod"))
	assert.True(t, os.IsNotExist(err), "the old go.mod link must go (go.work stands for it), got %v", err)

	// A start with nothing new changes nothing; the note of the offer stays
	// while the offer is there, the moved-aside part is gone.
	out, err = runScript(t, tmp, env, "scripts/course_home.sh")
	require.NoError(t, err, out)
	assert.Contains(t, out, "0 notebook(s) copied, 0 updated, 0 offered")
	assert.NotContains(t, read("notebooks/COURSE-UPDATES.md"), "lab.mine")
	assert.Equal(t, v2["01-a"], read("notebooks/01-a.new.ipynb"))

	// The notebooks' setup cell finds the course root with `go list -m` from
	// their folder: SRC, through DEST/go.work, so that every learner builds
	// the same files at the same path (the image's warm cache serves them).
	if _, err := exec.LookPath("go"); err == nil {
		cmd := exec.Command("go", "list", "-m", "-f", "{{.Dir}}")
		cmd.Dir = filepath.Join(dest, "notebooks")
		cmd.Env = append(os.Environ(), "GOFLAGS=-mod=readonly", "GOWORK=", "GOTOOLCHAIN=local")
		b, err := cmd.CombinedOutput()
		require.NoError(t, err, string(b))
		assert.Equal(t, src, strings.TrimSpace(string(b)))
	}

	t.Run("failures say what to do", func(t *testing.T) {
		file := filepath.Join(tmp, "home", "other", "course")
		writeFiles(t, filepath.Dir(file), map[string]string{"course": "not a folder"})
		out, err := runScript(t, tmp, env, "scripts/course_home.sh", src, file)
		require.Error(t, err)
		assert.Contains(t, out, file+" is not a folder")
		assert.Contains(t, out, "Rename it")
		assert.Contains(t, out, "restart your server")
		b, err := os.ReadFile(file)
		require.NoError(t, err)
		assert.Equal(t, "not a folder", string(b), "the learner's file is left as it was")

		out, err = runScript(t, tmp, env, "scripts/course_home.sh", filepath.Join(src, "lessons"), filepath.Join(tmp, "x"))
		require.Error(t, err)
		assert.Contains(t, out, "is not the course")
		out, err = runScript(t, tmp, env, "scripts/course_home.sh", src, src)
		require.Error(t, err)
		assert.Contains(t, out, "are the same directory")
	})
}

// TestSingleuser runs the image's start command: outside a hub it only
// runs the command; under one it sets up the course first, and when that
// fails the server starts in the learner's home on COURSE-PROBLEM.md, which
// says why; a GOCACHE the learner cannot write is copied to their own.
func TestSingleuser(t *testing.T) {
	mustHaveExec(t, "bash", "python3")
	tmp := t.TempDir()
	src := filepath.Join(tmp, "course")
	writeFiles(t, src, map[string]string{"go.mod": "module example.com/course\n\ngo 1.22\n", "notebooks/index.ipynb": nb("", "1")})
	// The command the hub would run: prints where it would serve.
	show := `echo "root=${JUPYTERHUB_ROOT_DIR:-unset} url=${JUPYTERHUB_DEFAULT_URL:-unset} gocache=${GOCACHE:-unset} args=$*"`
	run := func(t *testing.T, home string, env ...string) string {
		t.Helper()
		out, err := runScript(t, tmp, append([]string{"HOME=" + home, "COURSE_ROOT=" + src}, env...), "scripts/singleuser.sh", "bash", "-c", show, "-", "a b")
		require.NoError(t, err, out)
		return out
	}

	t.Run("not under a hub: only the command", func(t *testing.T) {
		home := filepath.Join(tmp, "h0")
		out := run(t, home, "JUPYTERHUB_API_TOKEN=")
		assert.Contains(t, out, "root=unset url=unset")
		assert.Contains(t, out, "args=a b")
		assert.NoDirExists(t, filepath.Join(home, "course"))
	})
	t.Run("under a hub: the course first", func(t *testing.T) {
		home := filepath.Join(tmp, "h1")
		out := run(t, home, "JUPYTERHUB_API_TOKEN=x", "JUPYTERHUB_ROOT_DIR="+filepath.Join(home, "course"))
		assert.Contains(t, out, "root="+filepath.Join(home, "course")+" url=unset")
		assert.FileExists(t, filepath.Join(home, "course", "notebooks", "index.ipynb"))
		assert.NoFileExists(t, filepath.Join(home, "COURSE-PROBLEM.md"))
	})
	t.Run("a failed setup is shown to the learner", func(t *testing.T) {
		home := filepath.Join(tmp, "h2")
		writeFiles(t, home, map[string]string{"course": "a file"})
		out := run(t, home, "JUPYTERHUB_API_TOKEN=x", "JUPYTERHUB_ROOT_DIR="+filepath.Join(home, "course"))
		assert.Contains(t, out, "root="+home+" url=/lab/tree/COURSE-PROBLEM.md", "the server starts in the home, on the note")
		b, err := os.ReadFile(filepath.Join(home, "COURSE-PROBLEM.md"))
		require.NoError(t, err)
		assert.Contains(t, string(b), filepath.Join(home, "course")+" is not a folder")
		assert.Contains(t, string(b), "Stop My Server")

		// Fixed, the next start removes the note and serves the course.
		require.NoError(t, os.Rename(filepath.Join(home, "course"), filepath.Join(home, "course.old")))
		out = run(t, home, "JUPYTERHUB_API_TOKEN=x", "JUPYTERHUB_ROOT_DIR="+filepath.Join(home, "course"))
		assert.Contains(t, out, "root="+filepath.Join(home, "course")+" url=unset")
		assert.NoFileExists(t, filepath.Join(home, "COURSE-PROBLEM.md"))
	})
	t.Run("a build cache the learner cannot write is copied", func(t *testing.T) {
		if os.Geteuid() == 0 {
			t.Skip("root writes everywhere: the copy is tested as a learner by TestJupyterHub")
		}
		cache := filepath.Join(tmp, "warm")
		writeFiles(t, cache, map[string]string{"00/x-a": "entry"})
		require.NoError(t, os.Chmod(cache, 0o555))
		t.Cleanup(func() { os.Chmod(cache, 0o755) })
		home := filepath.Join(tmp, "h3")
		out := run(t, home, "JUPYTERHUB_API_TOKEN=x", "GOCACHE="+cache)
		own := filepath.Join(home, ".cache", "coalesce", "go-build")
		assert.Contains(t, out, "gocache="+own)
		b, err := os.ReadFile(filepath.Join(own, "00", "x-a"))
		require.NoError(t, err)
		assert.Equal(t, "entry", string(b))
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

// TestShippedVersions: notebooks/.shipped.sha256, the versions of the
// lessons course_home.sh updates in a learner's home, is well formed and
// holds a version of every lesson (make notebook-history writes it).
func TestShippedVersions(t *testing.T) {
	text := readRepoFile(t, "notebooks/.shipped.sha256")
	line := regexp.MustCompile(`^[0-9a-f]{64}  [^/\s]+\.ipynb$`)
	names := map[string]bool{}
	for i, l := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		if strings.HasPrefix(l, "#") {
			continue
		}
		require.Regexp(t, line, l, "line %d", i+1)
		names[l[66:]] = true
	}
	lessons, err := filepath.Glob(filepath.Join(root, "notebooks", "*.ipynb"))
	require.NoError(t, err)
	for _, p := range lessons {
		assert.True(t, names[filepath.Base(p)], "%s has no shipped version: run make notebook-history", filepath.Base(p))
	}
}
