package deploy

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hubTestEnv is set by `make test-hub`, which installs the proxy first
// (HUB_PROXY: configurable-http-proxy from npm, deploy/testdata/hub's lock).
const hubTestEnv = "COALESCE_HUB_TEST"

// cannotRun skips a test that cannot run here, saying why; under CI=true
// (where everything it needs is installed) it fails instead.
func cannotRun(t *testing.T, format string, args ...any) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("cannot run under CI=true: "+format, args...)
	}
	t.Skipf("SKIPPED: "+format, args...)
}

// TestJupyterHub runs a class on a real JupyterHub, as docs/running.md
// sets one up, and checks every point of issue 26 on it: JupyterHub at
// requirements.txt's pin behind configurable-http-proxy from npm, on
// loopback; three local Unix learners (made here with useradd, removed
// after) whose servers run the image's start command (scripts/singleuser.sh,
// then jupyterhub-singleuser) as themselves, with the course installed as
// the image installs it (scripts/install.sh into a prefix, the modules in a
// cache root owns, a warm build cache no learner may write). The learners
// log in through the login form and work over HTTP as JupyterLab does
// (deploy/testdata/hub/learner.py): run a lesson through the kernel
// websocket, save predictions, make a scratch notebook, restart, receive an
// updated lesson; one finds a file where ~/course should be and is told how
// to fix it; one copies another's notebook. Then the instructor collects
// with coalesce collect and grades with coalesce grade.
func TestJupyterHub(t *testing.T) {
	if os.Getenv(hubTestEnv) != "1" {
		t.Skipf("needs a proxy from npm and root: run `make test-hub` (sets %s=1)", hubTestEnv)
	}
	if os.Geteuid() != 0 {
		cannotRun(t, "the learners are local Unix users made with useradd, which takes root (CI runs as root)")
	}
	proxy := os.Getenv("HUB_PROXY")
	if fi, err := os.Stat(proxy); proxy == "" || err != nil || fi.Mode()&0o111 == 0 {
		cannotRun(t, "no configurable-http-proxy at HUB_PROXY=%q: make test-hub installs it with npm (is npm on PATH?)", proxy)
	}
	for _, p := range []string{"bash", "go", "useradd", "userdel", "chown", "cp"} {
		if _, err := exec.LookPath(p); err != nil {
			cannotRun(t, "%s not on PATH", p)
		}
	}
	started := time.Now()
	rootAbs, err := filepath.Abs(root)
	require.NoError(t, err)
	venv := envOr("VENV", filepath.Join(rootAbs, ".venv"))
	binDir := envOr("BIN_DIR", filepath.Join(rootAbs, ".cache", "bin"))
	goroot := goEnv(t, "GOROOT")
	require.FileExists(t, filepath.Join(venv, "bin", "jupyterhub"), "run `make setup` first")
	for _, p := range []string{rootAbs, venv, binDir, goroot} {
		if dir := closedTo(p); dir != "" {
			cannotRun(t, "%s is not open to other users (%s is not o+rx), as the image's /opt/course, /opt/venv and /usr/local/go are", p, dir)
		}
	}

	// Everything under .cache/hub-test of this checkout (a dot folder: the
	// go command must not take the module cache there for packages of the
	// module): the warm build cache and the module cache are kept between
	// runs (their paths must not change for the cache to stay warm); the
	// hub's state and the homes are anew.
	work := filepath.Join(rootAbs, ".cache", "hub-test")
	run := filepath.Join(work, "run")
	h := &hubClass{t: t, work: work, run: run, venv: venv}
	h.removeStaleUsers()
	require.NoError(t, os.RemoveAll(run))
	for _, d := range []string{work, run} {
		require.NoError(t, os.MkdirAll(d, 0o755))
		require.NoError(t, os.Chmod(d, 0o755))
	}

	// The course as the image has it at /opt/course: a copy (the test
	// updates its lessons), installed by its own install.sh into a prefix
	// (the image's /usr/local), the modules in a cache root filled, a build
	// cache warmed from the course's path that learners may read, not write.
	course := filepath.Join(work, "course")
	copyCourse(t, rootAbs, course)
	prefix := filepath.Join(run, "usr", "local")
	modcache := filepath.Join(work, "gomod")
	fillModCache(t, rootAbs, modcache)
	home := filepath.Join(run, "roothome")
	require.NoError(t, os.MkdirAll(home, 0o755))
	out, err := runScript(t, course, []string{"HOME=" + home, "KERNEL_PREFIX=" + prefix, "VENV=" + venv, "BIN_DIR=" + binDir,
		"GOCACHE=" + goEnv(t, "GOCACHE"), "GOMODCACHE=" + goEnv(t, "GOMODCACHE"),
		"JUPYTER_PATH=", "JUPYTER_DATA_DIR=", "XDG_DATA_HOME=", "XDG_CONFIG_HOME=", "XDG_CACHE_HOME="}, "scripts/install.sh")
	require.NoError(t, err, "install.sh:\n%s", out)
	gocache := filepath.Join(work, "gocache")
	warmStart := time.Now()
	h.goBuild(course, gocache, modcache, "./lab", "github.com/janpfeifer/gonb/gonbui")
	warm := time.Since(warmStart)
	require.NoError(t, exec.Command("chmod", "-R", "u+rwX,go+rX,go-w", gocache, modcache).Run())
	coalesce := filepath.Join(work, "coalesce")
	h.goBuild(rootAbs, "", "", "-o", coalesce, "./cmd/coalesce")
	t.Logf("figure: the course's packages warmed into an empty-or-kept build cache in %.1f s (%s)", warm.Seconds(), humanBytes(duSize(t, gocache)))

	// The learners, with names of this checkout's own (two checkouts may
	// run the test at once), homes 0700 under run/home.
	homes := filepath.Join(run, "home")
	require.NoError(t, os.MkdirAll(homes, 0o755))
	sum := sha256.Sum256([]byte(rootAbs))
	tag := hex.EncodeToString(sum[:2])
	ada, bob, cy := "ada-"+tag, "bob-"+tag, "cy-"+tag
	// Cleanups run last first: this one after every user is deleted.
	t.Cleanup(func() { os.Remove(filepath.Join(work, "users.txt")) })
	for _, u := range []string{ada, bob, cy} {
		h.addUser(u, filepath.Join(homes, u))
	}
	// cy has a file where ~/course goes (issue 26, 8).
	h.writeAs(cy, filepath.Join(homes, cy, "course"), "my notes, saved under an unlucky name\n")

	var pw [12]byte
	_, _ = rand.Read(pw[:])
	password := hex.EncodeToString(pw[:])
	var tok [24]byte
	_, _ = rand.Read(tok[:])
	token := hex.EncodeToString(tok[:])
	tokenFile := filepath.Join(run, "token")
	require.NoError(t, os.WriteFile(tokenFile, []byte(token+"\n"), 0o600))
	ports := freePorts(t, 3)
	env := map[string]string{
		"PATH":                  filepath.Join(venv, "bin") + ":" + binDir + ":" + filepath.Join(goroot, "bin") + ":/usr/bin:/bin",
		"COURSE_ROOT":           course,
		"JUPYTER_PATH":          filepath.Join(prefix, "share", "jupyter"),
		"JUPYTER_CONFIG_PATH":   filepath.Join(prefix, "etc", "jupyter"),
		"JUPYTER_PLATFORM_DIRS": "1",
		"GOMODCACHE":            modcache,
		"GOCACHE":               gocache,
		"GOPROXY":               "off",
		"GOTOOLCHAIN":           "local",
		"GOFLAGS":               "-mod=readonly",
		"COALESCE_MEASURE":      "recorded",
	}
	lpy := learnerPython(t, work, venv)
	env["PATH"] = filepath.Join(lpy.venv, "bin") + ":" + env["PATH"]
	if lpy.libDir != "" {
		env["LD_LIBRARY_PATH"] = lpy.libDir
	}
	settings, err := json.Marshal(map[string]any{
		"port": ports[0], "hub_port": ports[1], "proxy_api_port": ports[2], "proxy": proxy, "dir": run,
		"password": password, "learners": []string{ada, bob, cy}, "homes": homes, "token": token, "env": env,
		"cmd": []string{filepath.Join(course, "scripts", "singleuser.sh"), filepath.Join(lpy.venv, "bin", "jupyterhub-singleuser")},
	})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(run, "settings.json"), settings, 0o600))
	hubURL := fmt.Sprintf("http://127.0.0.1:%d", ports[0])
	h.url, h.password = hubURL, password
	h.startHub(filepath.Join(rootAbs, "deploy", "testdata", "hub", "jupyterhub_config.py"), filepath.Join(run, "settings.json"))
	t.Logf("figure: the hub up at %s after %.1f s of the test", hubURL, time.Since(started).Seconds())

	// Phase 1: ada and bob run lesson 01 with their predictions; ada makes a
	// scratch notebook and tries bob's server and files; cy is shown why
	// her course is not there, fixes it, restarts, and works.
	lesson := "notebooks/01-sectors.ipynb"
	placeholder := func(id string) string { return `lab.Check("01-sectors/` + id + `", lab.YourPrediction)` }
	predict := func(f, d, b string) map[string]string {
		return map[string]string{placeholder("sectors-float"): `lab.Check("01-sectors/sectors-float", ` + f + `)`,
			placeholder("sectors-double"): `lab.Check("01-sectors/sectors-double", ` + d + `)`,
			placeholder("sectors-byte"):   `lab.Check("01-sectors/sectors-byte", ` + b + `)`}
	}
	scratch := fmt.Sprintf(`{"cells": [{"cell_type": "code", "execution_count": null, "id": "s1", "metadata": {}, "outputs": [],
  "source": "import \"fmt\"\n\n%%%%\nfmt.Println(\"scratch\", 6*7)\n!touch %s/course/notebooks/from-ada.txt 2>&1 || echo blocked\n!ls %s 2>&1 || echo blocked"}],
 "metadata": {"kernelspec": {"display_name": "Go (gonb)", "language": "go", "name": "gonb"}}, "nbformat": 4, "nbformat_minor": 5}`,
		filepath.Join(homes, bob), filepath.Join(homes, bob))
	var p1 [3][]map[string]any
	var wg sync.WaitGroup
	for i, steps := range [][]map[string]any{
		{{"do": "start"}, {"do": "kernelspecs"}, {"do": "run", "path": lesson, "replace": predict("4", "8", "1")},
			{"do": "new"}, {"do": "put", "path": "notebooks/Untitled.ipynb", "text": scratch},
			{"do": "run", "path": "notebooks/Untitled.ipynb"}, {"do": "get_other", "user": bob}, {"do": "read", "path": lesson}},
		// bob runs the setup, the status and his predictions only: the
		// lesson's other cells are ada's to run (the test stays lean).
		{{"do": "start"}, {"do": "run", "path": lesson, "replace": predict("32", "8", "32"), "cells": []int{0, 1, 2, 5}}},
		{{"do": "start"}, {"do": "read", "path": "COURSE-PROBLEM.md"}, {"do": "rename", "path": "course", "to": "course.txt"},
			{"do": "stop"}, {"do": "start"}, {"do": "list", "path": "notebooks"}, {"do": "kernelspecs"}},
	} {
		wg.Add(1)
		go func(i int, user string, steps []map[string]any) {
			defer wg.Done()
			p1[i] = h.learner(user, steps)
		}(i, []string{ada, bob, cy}[i], steps)
	}
	wg.Wait()
	a1, b1, c1 := p1[0], p1[1], p1[2]
	for _, r := range [][]map[string]any{a1, b1, c1} {
		for _, step := range r {
			require.NotContains(t, step, "error", "a learner's step failed: %v\nhub log: %s", step["error"], h.logTail())
		}
	}
	t.Run("logins, spawns and the default kernel", func(t *testing.T) {
		for _, r := range []map[string]any{a1[0], b1[0], c1[0], c1[4]} {
			assert.True(t, r["default_url_ok"].(bool), "the browser lands in JupyterLab: %v", r["lab_url"])
			t.Logf("figure: a spawn took %.1f s", r["spawn_s"].(float64))
		}
		assert.Equal(t, "gonb", a1[1]["default"], "the server's default kernel (issue 26, 2)")
		assert.Equal(t, "gonb", a1[2]["kernel"], "lesson 01 opened with the default kernel")
		assert.Equal(t, "gonb", a1[3]["kernel"], "New Notebook opens in Go, not Python (issue 26, 2)")
		assert.Equal(t, "notebooks/Untitled.ipynb", a1[3]["path"])
	})
	t.Run("the lesson runs through each learner's server", func(t *testing.T) {
		for i, r := range []map[string]any{a1[2], b1[1]} {
			assert.EqualValues(t, []int{11, 4}[i], r["ran"], "the code cells of lesson 01 run")
			assert.Empty(t, r["errors"])
			assert.Contains(t, r["text"], "Measurements: recorded on NVIDIA H200")
			t.Logf("figure: %v code cells of lesson 01 ran in %.1f s through the websocket", r["ran"], r["run_s"].(float64))
		}
		assert.Contains(t, a1[2]["text"], "right", "ada's predictions are judged")
		saved := a1[7]["text"].(string)
		assert.Contains(t, saved, `lab.Check(\"01-sectors/sectors-float\", 4)`, "ada's prediction is saved in the notebook")
		assert.Contains(t, saved, "application/vnd.coalesce.attempt+json", "with its attempt record in the outputs")
	})
	t.Run("learners cannot reach each other", func(t *testing.T) {
		assert.Contains(t, a1[5]["text"], "scratch 42", "the scratch notebook ran")
		assert.Contains(t, a1[5]["text"], "Permission denied", "ada's kernel cannot write into or list bob's home")
		assert.NoFileExists(t, filepath.Join(homes, bob, "course", "notebooks", "from-ada.txt"))
		st := int(a1[6]["status"].(float64))
		assert.True(t, st == http.StatusForbidden || st == http.StatusFound || st == http.StatusNotFound,
			"ada's cookie on bob's server: %d %v", st, a1[6]["location"])
		assert.NotContains(t, a1[6]["location"], "/user/"+bob+"/api", "never let through")
	})
	t.Run("a failed setup is shown to the learner, who fixes it (issue 26, 8)", func(t *testing.T) {
		note := c1[1]["text"].(string)
		assert.Contains(t, note, "The course could not be set up")
		assert.Contains(t, note, filepath.Join(homes, cy, "course")+" is not a folder")
		assert.Contains(t, note, "Stop My Server")
		assert.Contains(t, c1[5]["names"], "01-sectors.ipynb", "after the rename and a restart, the course is there")
		b, err := os.ReadFile(filepath.Join(homes, cy, "course.txt"))
		require.NoError(t, err)
		assert.Equal(t, "my notes, saved under an unlucky name\n", string(b), "her file kept")
		assert.NoFileExists(t, filepath.Join(homes, cy, "COURSE-PROBLEM.md"), "the note goes once fixed")
	})

	// Phase 2: the course is updated: lessons 01 and 02 corrected. ada (who
	// edited 01 and never opened 02) has, meanwhile, put a folder of her
	// own where the lab link was (issue 26, 6). Both restart.
	for _, nb := range []string{"01-sectors.ipynb", "02-coalescing.ipynb"} {
		correctLesson(t, filepath.Join(course, "notebooks", nb))
	}
	require.NoError(t, os.Remove(filepath.Join(homes, ada, "course", "lab")))
	h.writeAs(ada, filepath.Join(homes, ada, "course", "lab", "mine.go"), "package mine\n")
	// Meanwhile cy copies ada's saved lesson (ada sent it to her) and runs
	// lesson 02's first cells with a prediction of her own.
	var c2 []map[string]any
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		c2 = h.learner(cy, []map[string]any{
			{"do": "put", "path": lesson, "text": a1[7]["text"]},
			{"do": "run", "path": "notebooks/02-coalescing.ipynb", "cells": []int{0, 1, 2},
				"replace": map[string]string{`lab.Check("02-coalescing/efficiency-coalesced", lab.YourPrediction)`: `lab.Check("02-coalescing/efficiency-coalesced", 1)`}},
		})
	}()
	upd := h.learner(ada, []map[string]any{
		{"do": "stop"}, {"do": "start"},
		{"do": "list", "path": "notebooks"}, {"do": "read", "path": lesson}, {"do": "read", "path": "notebooks/01-sectors.new.ipynb"},
		{"do": "read", "path": "notebooks/02-coalescing.ipynb"}, {"do": "read", "path": "notebooks/COURSE-UPDATES.md"},
		{"do": "list", "path": ""},
		{"do": "run", "path": "notebooks/01-sectors.new.ipynb", "cells": []int{0, 1}, "save": false},
	})
	<-copied
	for _, step := range append(upd, c2...) {
		require.NotContains(t, step, "error", "after the update: %v\nhub log: %s", step["error"], h.logTail())
	}
	t.Run("a restart keeps the work; the update reaches untouched lessons (issue 26, 3)", func(t *testing.T) {
		assert.Equal(t, a1[7]["text"], upd[3]["text"], "ada's edited lesson 01 is byte for byte hers")
		assert.Contains(t, upd[4]["text"], "Corrected in this release", "the new version is offered beside it")
		assert.Contains(t, upd[5]["text"], "Corrected in this release", "lesson 02, never touched, is updated")
		note := upd[6]["text"].(string)
		assert.Contains(t, note, "**01-sectors.ipynb** is yours (edited)")
		assert.Contains(t, note, "**01-sectors.new.ipynb**")
		assert.Contains(t, note, "lab -> lab.mine", "the folder moved aside is in the note")
		// Jupyter's contents API hides dot folders: the file is looked at directly.
		assert.FileExists(t, filepath.Join(homes, ada, "course", "notebooks", ".coalesce", "attempts", "01-sectors.json"), "the attempt file survives the restart")
		assert.Contains(t, upd[7]["names"], "lab.mine", "her folder is kept, renamed")
		assert.Contains(t, upd[7]["names"], "lab")
		assert.Empty(t, upd[8]["errors"], "the lesson runs after the repair")
		assert.Contains(t, upd[8]["text"], "Measurements: recorded")
	})

	// The warm cache served every learner: each has its own copy (they may
	// not write root's), and the lesson's cells did not rebuild the course.
	for _, u := range []string{ada, bob, cy} {
		assert.DirExists(t, filepath.Join(homes, u, ".cache", "coalesce", "go-build"), "%s's copy of the warm build cache", u)
	}
	h.figures([]string{ada, bob, cy}, homes)

	// Phase 3: the instructor. bob's server is stopped (an idle culler's
	// work): collect starts it, reads it, stops it again.
	require.NotContains(t, h.learner(bob, []map[string]any{{"do": "stop"}})[0], "error")
	subs := filepath.Join(run, "submissions")
	collectStart := time.Now()
	cmd := exec.Command(coalesce, "collect", "-hub", hubURL, "-token-file", tokenFile, "-out", subs)
	cmd.Dir = run
	b, err := cmd.CombinedOutput()
	require.NoError(t, err, "coalesce collect:\n%s", b)
	t.Logf("figure: coalesce collect of 3 learners (one server started and stopped) took %.1f s", time.Since(collectStart).Seconds())
	text := string(b)
	assert.Contains(t, text, bob+": starting the server")
	assert.Contains(t, text, bob+": stopped the server this run started")
	assert.Contains(t, text, "collected ")
	roster, err := os.ReadFile(filepath.Join(run, "roster.txt"))
	require.NoError(t, err)
	for _, u := range []string{ada, bob, cy} {
		assert.Contains(t, string(roster), "\n"+u+"\n", "the roster is the hub's users")
	}
	got, err := os.ReadFile(filepath.Join(subs, ada, "01-sectors.ipynb"))
	require.NoError(t, err)
	assert.Equal(t, a1[7]["text"], string(got), "collected byte for byte")
	assert.FileExists(t, filepath.Join(subs, ada, "Untitled.ipynb"))
	assert.FileExists(t, filepath.Join(subs, ada, "01-sectors.new.ipynb"))
	assert.False(t, h.serverRunning(token, bob), "the server collect started is stopped again")
	assert.True(t, h.serverRunning(token, ada), "a server collect did not start is left running")

	grades := filepath.Join(run, "grades")
	cmd = exec.Command(coalesce, "grade", "-roster", filepath.Join(run, "roster.txt"), "-out", grades, subs)
	cmd.Dir = run
	b, err = cmd.CombinedOutput()
	require.NoError(t, err, "coalesce grade: a scratch notebook or an offered lesson must not fail it (issue 26, 1):\n%s", b)
	totals := readTotals(t, filepath.Join(grades, "totals.csv"))
	t.Run("graded: scratch notebooks ignored, the copy flagged (issue 26, 1, 5, 9)", func(t *testing.T) {
		assert.Equal(t, "3", totals[ada]["points"], "ada: 3 of lesson 01's 3 (%v)", totals[ada])
		assert.Equal(t, "1", totals[bob]["points"], "bob: the double right only (%v)", totals[bob])
		assert.NotEqual(t, "unreadable", totals[ada]["status"], "ada's Untitled.ipynb is no failed learner")
		assert.Equal(t, "flagged", totals[cy]["status"], "cy handed in ada's lesson (%v)", totals[cy])
		assert.Contains(t, totals[cy]["flags"], "possible copy: 01-sectors.ipynb holds the attempt record of "+ada+"'s 01-sectors.ipynb")
		assert.Contains(t, totals[ada]["flags"], "attempt record of "+cy+"'s 01-sectors.ipynb", "the record cannot say who copied: both are named")
		assert.NotContains(t, totals[ada]["flags"], "duplicate", "the offered 01-sectors.new.ipynb, untouched, is no second answer")
		csvText, err := os.ReadFile(filepath.Join(grades, "gradebook.csv"))
		require.NoError(t, err)
		assert.Regexp(t, `(?m)^`+ada+`,[^\n]*Untitled\.ipynb,[^\n]*,ignored,`, string(csvText), "the scratch notebook is listed, ignored")
		fb, err := os.ReadFile(filepath.Join(grades, "feedback", cy+".md"))
		require.NoError(t, err)
		head := strings.Join(strings.SplitN(string(fb), "\n", 8)[:7], "\n")
		assert.Contains(t, head, "flagged", "the status is at the top of the feedback")
	})
	t.Logf("figure: TestJupyterHub took %.1f s in all", time.Since(started).Seconds())
}

// learnerPy is the Python the learners' servers run: the venv's packages
// on an interpreter every user may exec.
type learnerPy struct {
	venv   string // a venv whose site-packages lead to the course's venv's
	libDir string // for LD_LIBRARY_PATH: the copied interpreter's libpython; "" none
}

// learnerPython returns the venv the learners' servers run. The course's
// venv serves when its interpreter is open to other users, as the image's
// /usr/bin/python3 is. Where it is not (a pyenv Python below /root, mode
// 0700, on the machines the course is tested on), the interpreter's
// installation is copied as hard links (no space, same files) into
// work/python, and a venv made from that copy reads the course venv's
// site-packages through a .pth file: the same Python and the same
// packages, reachable by the learners.
func learnerPython(t *testing.T, work, venv string) learnerPy {
	t.Helper()
	py := filepath.Join(venv, "bin", "python")
	real, err := filepath.EvalSymlinks(py)
	require.NoError(t, err)
	if closedTo(real) == "" {
		return learnerPy{venv: venv}
	}
	out, err := exec.Command(py, "-c", "import sys, sysconfig; print(sys.base_prefix); print(sysconfig.get_paths()['purelib']); print('%d.%d' % sys.version_info[:2])").Output()
	require.NoError(t, err)
	f := strings.Fields(string(out))
	require.Len(t, f, 3)
	base, site, ver := f[0], f[1], f[2]
	copyDir := filepath.Join(work, "python")
	if _, err := os.Stat(filepath.Join(copyDir, "bin", "python"+ver)); err != nil {
		os.RemoveAll(copyDir)
		b, err := exec.Command("cp", "-al", base, copyDir).CombinedOutput()
		if err != nil {
			// Another file system: a real copy, once (it is kept).
			t.Logf("hard links from %s failed (%v %s): copying it", base, err, b)
			os.RemoveAll(copyDir)
			if b, err := exec.Command("cp", "-a", base, copyDir).CombinedOutput(); err != nil {
				cannotRun(t, "the venv's Python (%s) is closed to other users and cannot be copied into %s: %v %s", real, copyDir, err, b)
			}
		}
		require.NoError(t, exec.Command("chmod", "-R", "go+rX", copyDir).Run())
	}
	lvenv := filepath.Join(work, "learner-venv")
	lib := filepath.Join(copyDir, "lib")
	if _, err := os.Stat(filepath.Join(lvenv, "bin", "python")); err != nil {
		cmd := exec.Command(filepath.Join(copyDir, "bin", "python"+ver), "-m", "venv", "--without-pip", lvenv)
		cmd.Env = append(os.Environ(), "LD_LIBRARY_PATH="+lib)
		b, err := cmd.CombinedOutput()
		require.NoError(t, err, "the learners' venv: %s", b)
	}
	// Jupyter finds its config (the server extensions: JupyterLab's) and its
	// data (JupyterLab's app) below sys.prefix: the course venv's.
	for _, d := range []string{"etc", "share"} {
		os.RemoveAll(filepath.Join(lvenv, d))
		require.NoError(t, os.Symlink(filepath.Join(venv, d), filepath.Join(lvenv, d)))
	}
	lsite := filepath.Join(lvenv, "lib", "python"+ver, "site-packages")
	require.NoError(t, os.WriteFile(filepath.Join(lsite, "coalesce-course-venv.pth"), []byte("import site; site.addsitedir("+strconv.Quote(site)+")\n"), 0o644))
	script := "#!" + filepath.Join(lvenv, "bin", "python") + "\nimport sys\nfrom jupyterhub.singleuser import main\nsys.exit(main())\n"
	require.NoError(t, os.WriteFile(filepath.Join(lvenv, "bin", "jupyterhub-singleuser"), []byte(script), 0o755))
	require.NoError(t, exec.Command("chmod", "-R", "go+rX", lvenv).Run())
	return learnerPy{venv: lvenv, libDir: lib}
}

// hubClass is the running class of TestJupyterHub: its users, its hub.
type hubClass struct {
	t             *testing.T
	work, run     string
	venv          string
	url, password string
	users         []string
	hub           *exec.Cmd
}

// removeStaleUsers deletes the users a previous run of this checkout made
// and could not remove (it was killed).
func (h *hubClass) removeStaleUsers() {
	b, err := os.ReadFile(filepath.Join(h.work, "users.txt"))
	if err != nil {
		return
	}
	for _, u := range strings.Fields(string(b)) {
		h.killUserProcesses(u)
		_ = exec.Command("userdel", "--remove", u).Run()
	}
	os.Remove(filepath.Join(h.work, "users.txt"))
}

func (h *hubClass) addUser(name, home string) {
	t := h.t
	if _, err := exec.Command("id", "-u", name).Output(); err == nil {
		t.Fatalf("a user %s exists already and is not this test's: remove it (userdel) or run from another checkout", name)
	}
	out, err := exec.Command("useradd", "--create-home", "--home-dir", home, "--gid", "users", "--shell", "/bin/bash", name).CombinedOutput()
	require.NoError(t, err, "useradd %s: %s", name, out)
	h.users = append(h.users, name)
	f, err := os.OpenFile(filepath.Join(h.work, "users.txt"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	require.NoError(t, err)
	fmt.Fprintln(f, name)
	f.Close()
	require.NoError(t, os.Chmod(home, 0o700))
	t.Cleanup(func() {
		h.killUserProcesses(name)
		if out, err := exec.Command("userdel", "--remove", name).CombinedOutput(); err != nil {
			t.Logf("userdel %s: %v %s", name, err, out)
		}
	})
}

// learnerProcesses returns the pids of the processes this test's hub
// started for a learner (their server, its kernels and builds): those
// whose environment names this learner's hub user and this test's course,
// never another process that happens to run under the same uid.
func (h *hubClass) learnerProcesses(name string) []int {
	mark := []string{"JUPYTERHUB_USER=" + name, "COURSE_ROOT=" + filepath.Join(h.work, "course")}
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil {
			continue
		}
		vars := strings.Split(string(env), "\x00")
		if slices.Contains(vars, mark[0]) && slices.Contains(vars, mark[1]) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// killUserProcesses ends, by pid, what is left of a learner's processes
// (the hub's cleanup should have stopped them).
func (h *hubClass) killUserProcesses(name string) {
	for _, pid := range h.learnerProcesses(name) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}

// writeAs writes a file into a learner's home as the learner would have.
func (h *hubClass) writeAs(user, path, body string) {
	t := h.t
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte(body), 0o644))
	for p := path; strings.HasPrefix(p, filepath.Join(h.run, "home", user)+"/"); p = filepath.Dir(p) {
		require.NoError(t, exec.Command("chown", user+":users", p).Run())
	}
}

// goBuild runs go build in dir with the given caches ("": the machine's).
func (h *hubClass) goBuild(dir, gocache, modcache string, args ...string) {
	t := h.t
	cmd := exec.Command("go", append([]string{"build", "-o", os.DevNull}, args...)...)
	if len(args) > 0 && args[0] == "-o" {
		cmd = exec.Command("go", append([]string{"build"}, args...)...)
	}
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=readonly -buildvcs=false", "GOTOOLCHAIN=local")
	if gocache != "" {
		cmd.Env = append(cmd.Env, "GOCACHE="+gocache, "GOMODCACHE="+modcache, "GOPROXY=off")
	}
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "go build %v in %s: %s", args, dir, out)
}

// startHub starts JupyterHub and waits for its API; the cleanup stops it
// (and with it the servers: cleanup_servers).
func (h *hubClass) startHub(config, settings string) {
	t := h.t
	logf, err := os.Create(filepath.Join(h.run, "hub.log"))
	require.NoError(t, err)
	cmd := exec.Command(filepath.Join(h.venv, "bin", "jupyterhub"), "-f", config)
	cmd.Dir = h.run
	cmd.Env = append(os.Environ(), "COALESCE_HUB_SETTINGS="+settings, "PATH="+filepath.Join(h.venv, "bin")+":"+os.Getenv("PATH"))
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	require.NoError(t, cmd.Start())
	h.hub = cmd
	done := make(chan error, 1)
	go func() { done <- cmd.Wait(); logf.Close() }()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
		if t.Failed() {
			t.Logf("hub log, the end:\n%s", h.logTail())
		}
	})
	deadline := time.Now().Add(90 * time.Second)
	for {
		select {
		case err := <-done:
			t.Fatalf("jupyterhub exited: %v\n%s", err, h.logTail())
		default:
		}
		resp, err := http.Get(h.url + "/hub/api")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the hub did not answer at %s within 90 s:\n%s", h.url, h.logTail())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func (h *hubClass) logTail() string {
	b, _ := os.ReadFile(filepath.Join(h.run, "hub.log"))
	if len(b) > 6000 {
		b = b[len(b)-6000:]
	}
	return string(b)
}

// learner runs deploy/testdata/hub/learner.py's steps as user.
func (h *hubClass) learner(user string, steps []map[string]any) []map[string]any {
	t := h.t
	in, err := json.Marshal(steps)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(h.venv, "bin", "python"), filepath.Join(root, "deploy", "testdata", "hub", "learner.py"), h.url, user, h.password)
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.WaitDelay = 5 * time.Second
	out, _ := cmd.Output()
	var res []map[string]any
	if err := json.Unmarshal(out, &res); err != nil {
		return []map[string]any{{"error": fmt.Sprintf("learner.py %s: %v\n%s\n%s", user, err, out, stderr.String())}}
	}
	return res
}

// serverRunning asks the hub, with the instructor's token, whether user's
// server is running.
func (h *hubClass) serverRunning(token, user string) bool {
	req, _ := http.NewRequest(http.MethodGet, h.url+"/hub/api/users/"+user, nil)
	req.Header.Set("Authorization", "token "+token)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(h.t, err)
	defer resp.Body.Close()
	var m struct {
		Servers map[string]any `json:"servers"`
	}
	require.NoError(h.t, json.NewDecoder(resp.Body).Decode(&m))
	_, ok := m.Servers[""]
	return ok
}

// figures logs what a learner costs: the home (without the build cache),
// the build cache, the memory of the idle server and kernels.
func (h *hubClass) figures(users []string, homes string) {
	t := h.t
	for _, u := range users {
		home := filepath.Join(homes, u)
		cache := filepath.Join(home, ".cache", "coalesce", "go-build")
		all, c := duSize(t, home), duSize(t, cache)
		server, kernels := h.rssOf(u)
		t.Logf("figure: learner %s: home %s without the build cache, build cache %s, idle server %s RSS, kernels %s RSS",
			u, humanBytes(all-c), humanBytes(c), humanBytes(server), humanBytes(kernels))
	}
}

// rssOf sums the resident memory of a learner's processes: the
// single-user server (python) and the rest (kernels: gonb, go, ...).
func (h *hubClass) rssOf(name string) (server, other int64) {
	for _, pid := range h.learnerProcesses(name) {
		st, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
		if err != nil {
			continue
		}
		var rss int64
		var comm string
		for _, line := range strings.Split(string(st), "\n") {
			f := strings.Fields(line)
			switch {
			case len(f) > 1 && f[0] == "VmRSS:":
				kb, _ := strconv.ParseInt(f[1], 10, 64)
				rss = kb << 10
			case len(f) > 1 && f[0] == "Name:":
				comm = f[1]
			}
		}
		if strings.HasPrefix(comm, "python") || strings.HasPrefix(comm, "jupyter") {
			server += rss
		} else {
			other += rss
		}
	}
	return server, other
}

func duSize(t *testing.T, dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

func humanBytes(n int64) string {
	return fmt.Sprintf("%.1f MB", float64(n)/1e6)
}

func freePorts(t *testing.T, n int) []int {
	var ports []int
	var ls []net.Listener
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	for _, l := range ls {
		l.Close()
	}
	return ports
}

// copyCourse copies the checkout's course (no .git, venv, caches, build)
// to dst, as the image's COPY . /opt/course does; world-readable.
func copyCourse(t *testing.T, src, dst string) {
	require.NoError(t, os.RemoveAll(dst))
	require.NoError(t, filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			switch rel {
			case ".git", ".venv", ".cache", ".devbin", ".whl", "build", ".gpubundle", ".gpurun":
				return filepath.SkipDir
			}
			if d.Name() == ".ipynb_checkpoints" || d.Name() == "node_modules" {
				return filepath.SkipDir
			}
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, fi.Mode().Perm()|0o444)
	}))
}

// correctLesson adds a markdown cell at the top of a lesson: the course's
// next release corrects it.
func correctLesson(t *testing.T, path string) {
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var nb map[string]any
	require.NoError(t, json.Unmarshal(b, &nb))
	cells := nb["cells"].([]any)
	note := map[string]any{"cell_type": "markdown", "id": "corrected", "metadata": map[string]any{}, "source": "Corrected in this release."}
	nb["cells"] = append([]any{note}, cells...)
	b, err = json.MarshalIndent(nb, "", " ")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, append(b, '\n'), 0o644))
}

// readTotals reads totals.csv: learner -> column -> value.
func readTotals(t *testing.T, path string) map[string]map[string]string {
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	require.NoError(t, err)
	require.NotEmpty(t, rows)
	out := map[string]map[string]string{}
	for _, r := range rows[1:] {
		m := map[string]string{}
		for i, col := range rows[0] {
			if i < len(r) {
				m[col] = r[i]
			}
		}
		out[r[0]] = m
	}
	return out
}
