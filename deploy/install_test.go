package deploy

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// installTestEnv is set by `make test-install`, which runs `make setup` first.
const installTestEnv = "COALESCE_INSTALL_TEST"

// goEnv returns `go env NAME`.
func goEnv(t *testing.T, name string) string {
	t.Helper()
	out, err := exec.Command("go", "env", name).Output()
	require.NoError(t, err)
	return strings.TrimSpace(string(out))
}

// TestInstallIntoPrefix runs scripts/install.sh the way the Dockerfile does:
// KERNEL_PREFIX a system-wide-like prefix (here a temporary directory), HOME
// empty, reusing the venv and Go tools `make setup` built (VENV, BIN_DIR, as
// the Makefile exports them) so that only the kernel step runs. It checks
// the kernelspec lands in the prefix with the argv and env the image needs,
// that Jupyter finds it there with an empty home, and that nothing is written
// to HOME.
func TestInstallIntoPrefix(t *testing.T) {
	if os.Getenv(installTestEnv) != "1" {
		t.Skipf("needs the venv and tools of `make setup`: run `make test-install` (sets %s=1)", installTestEnv)
	}
	mustHaveExec(t, "bash", "go")
	rootAbs, err := filepath.Abs(root)
	require.NoError(t, err)
	venv := envOr("VENV", filepath.Join(rootAbs, ".venv"))
	binDir := envOr("BIN_DIR", filepath.Join(rootAbs, ".cache", "bin"))
	require.FileExists(t, filepath.Join(venv, "bin", "python"), "run `make setup` first")
	require.FileExists(t, filepath.Join(binDir, "gonb"), "run `make setup` first")

	tmp := t.TempDir()
	prefix := filepath.Join(tmp, "usr", "local")
	home := filepath.Join(tmp, "home")
	require.NoError(t, os.MkdirAll(home, 0o755))
	// The Go caches stay where they are (HOME moves, and their defaults with it).
	env := []string{
		"HOME=" + home, "KERNEL_PREFIX=" + prefix, "VENV=" + venv, "BIN_DIR=" + binDir,
		"GOCACHE=" + goEnv(t, "GOCACHE"), "GOMODCACHE=" + goEnv(t, "GOMODCACHE"),
		"JUPYTER_PATH=", "JUPYTER_DATA_DIR=", "XDG_DATA_HOME=", "XDG_CONFIG_HOME=", "XDG_CACHE_HOME=",
	}
	out, err := runScript(t, rootAbs, env, "scripts/install.sh")
	require.NoError(t, err, "install.sh:\n%s", out)
	kdir := filepath.Join(prefix, "share", "jupyter", "kernels", "gonb")
	assert.Contains(t, out, "installing the GoNB kernelspec into "+kdir)

	b, err := os.ReadFile(filepath.Join(kdir, "kernel.json"))
	require.NoError(t, err)
	var spec struct {
		Argv        []string          `json:"argv"`
		DisplayName string            `json:"display_name"`
		Language    string            `json:"language"`
		Env         map[string]string `json:"env"`
	}
	require.NoError(t, json.Unmarshal(b, &spec))
	require.NotEmpty(t, spec.Argv)
	wantGonb := filepath.Join(binDir, "gonb")
	if strings.HasPrefix(binDir, "/tmp/") {
		// gonb --install copies a binary that lives under /tmp into the
		// kernelspec's directory (GoNB's own rule), e.g. in a checkout in /tmp.
		wantGonb = filepath.Join(kdir, "gonb")
	}
	assert.Equal(t, wantGonb, spec.Argv[0], "the kernel runs the gonb install.sh built")
	assert.Equal(t, []string{"--kernel", "{connection_file}"}, spec.Argv[1:3])
	assert.Equal(t, "Go (gonb)", spec.DisplayName)
	assert.Equal(t, "go", spec.Language)
	goBin := filepath.Join(goEnv(t, "GOROOT"), "bin")
	assert.Equal(t, binDir+":"+goBin+":${PATH}", spec.Env["PATH"],
		"PATH: the tools, then Go, then whatever Jupyter was started with")
	assert.Equal(t, "-buildvcs=false", spec.Env["GOFLAGS"])

	// A second run is a no-op: the image runs install.sh twice.
	out, err = runScript(t, rootAbs, env, "scripts/install.sh")
	require.NoError(t, err, out)
	assert.Empty(t, strings.TrimSpace(out), "a second install.sh must do nothing")

	// Nothing landed in HOME but the go command's own telemetry counters
	// (~/.config/go/telemetry, which every go command writes).
	var inHome []string
	require.NoError(t, filepath.Walk(home, func(p string, fi os.FileInfo, err error) error {
		if err != nil || p == home {
			return err
		}
		rel, _ := filepath.Rel(home, p)
		switch {
		case rel == ".config", rel == filepath.Join(".config", "go"),
			strings.HasPrefix(rel, filepath.Join(".config", "go", "telemetry")):
		default:
			inHome = append(inHome, rel)
		}
		return nil
	}))
	assert.Empty(t, inHome, "install.sh must not write to HOME")

	// Jupyter finds the kernel in the prefix with an empty home, the way the
	// image's /usr/local/share/jupyter is found (there without JUPYTER_PATH:
	// it is a default system path, which the last check shows).
	jupyter := filepath.Join(venv, "bin", "jupyter")
	cmd := exec.Command(jupyter, "kernelspec", "list", "--json")
	cmd.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "JUPYTER_PLATFORM_DIRS=1",
		"JUPYTER_PATH=" + filepath.Join(prefix, "share", "jupyter")}
	b, err = cmd.Output()
	require.NoError(t, err)
	var list struct {
		Kernelspecs map[string]struct {
			ResourceDir string `json:"resource_dir"`
		} `json:"kernelspecs"`
	}
	require.NoError(t, json.Unmarshal(b, &list))
	assert.Equal(t, kdir, list.Kernelspecs["gonb"].ResourceDir)

	cmd = exec.Command(jupyter, "--paths", "--json")
	cmd.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "JUPYTER_PLATFORM_DIRS=1"}
	b, err = cmd.Output()
	require.NoError(t, err)
	var paths struct {
		Data []string `json:"data"`
	}
	require.NoError(t, json.Unmarshal(b, &paths))
	assert.Contains(t, paths.Data, "/usr/local/share/jupyter", "Jupyter must search /usr/local/share/jupyter by default")

	// New notebooks open in Go: the server's default kernel, from the config
	// install.sh wrote beside the kernelspec (the image's /usr/local/etc/jupyter,
	// a default config path), whatever command starts the server.
	cmd = exec.Command(filepath.Join(venv, "bin", "python"), "-c",
		`from jupyter_server.serverapp import ServerApp as S; a = S(); a.initialize(argv=["--port=0", "--allow-root"]); print(a.kernel_manager.default_kernel_name)`)
	cmd.Dir = home
	cmd.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "JUPYTER_PLATFORM_DIRS=1",
		"JUPYTER_PATH=" + filepath.Join(prefix, "share", "jupyter"), "JUPYTER_CONFIG_PATH=" + filepath.Join(prefix, "etc", "jupyter")}
	b, err = cmd.Output()
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	assert.Equal(t, "gonb", lines[len(lines)-1], "the server's default kernel")

	// jupyterhub-singleuser is in the venv and runs.
	b, err = exec.Command(filepath.Join(venv, "bin", "jupyterhub-singleuser"), "--version").CombinedOutput()
	require.NoError(t, err, string(b))
	assert.Regexp(t, `^\d+\.\d+\.\d+`, strings.TrimSpace(string(b)))

}

// TestGoplsBuildList checks the pin that lets install.sh build gopls from
// go.mod's build list: golang.org/x/tools is the version gopls requires.
func TestGoplsBuildList(t *testing.T) {
	mustHaveExec(t, "go")
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Path}} {{.Version}}", "golang.org/x/tools", "golang.org/x/tools/gopls")
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, string(out))
	selected := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		require.Len(t, f, 2, "go list -m: %q", line)
		selected[f[0]] = f[1]
	}
	cmd = exec.Command("go", "mod", "download", "-json", "golang.org/x/tools/gopls@"+selected["golang.org/x/tools/gopls"])
	cmd.Dir = root
	out, err = cmd.Output()
	require.NoError(t, err)
	var dl struct{ GoMod string }
	require.NoError(t, json.Unmarshal(out, &dl))
	gomod, err := os.ReadFile(dl.GoMod)
	require.NoError(t, err)
	m := regexp.MustCompile(`(?m)^\s*golang\.org/x/tools (v\S+)`).FindSubmatch(gomod)
	require.NotNil(t, m, "gopls's go.mod requires no golang.org/x/tools")
	assert.Equal(t, string(m[1]), selected["golang.org/x/tools"],
		"go.mod selects golang.org/x/tools %s, gopls %s requires %s: gopls will not compile (install.sh builds it from go.mod)",
		selected["golang.org/x/tools"], selected["golang.org/x/tools/gopls"], m[1])
}
