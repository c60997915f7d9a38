package deploy

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/coalescing-course/coalesce/internal/dockerfile"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// root is the repository root, seen from this package's directory.
const root = ".."

func readRepoFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, name))
	require.NoError(t, err)
	return string(b)
}

func repoDockerfile(t *testing.T) (*dockerfile.Dockerfile, dockerfile.Stage) {
	t.Helper()
	f, err := os.Open(filepath.Join(root, "Dockerfile"))
	require.NoError(t, err)
	defer f.Close()
	d, err := dockerfile.Parse(f)
	require.NoError(t, err)
	stages := d.Stages()
	require.NotEmpty(t, stages, "the Dockerfile has no FROM")
	return d, stages[len(stages)-1]
}

// argDefaults returns the ARG defaults of the stage, for expanding ${NAME}.
func argDefaults(s dockerfile.Stage) map[string]string {
	args := map[string]string{}
	for _, in := range s.Instructions {
		if in.Cmd == "ARG" {
			k, v, _ := strings.Cut(in.Args, "=")
			args[strings.TrimSpace(k)] = strings.Trim(strings.TrimSpace(v), `"'`)
		}
	}
	return args
}

func expandArgs(s string, st dockerfile.Stage) string {
	args := argDefaults(st)
	return dockerfile.Expand(s, func(k string) string { return args[k] })
}

// index returns the position in s.Instructions of the first instruction
// for which match is true, or -1.
func index(s dockerfile.Stage, match func(dockerfile.Instruction) bool) int {
	return slices.IndexFunc(s.Instructions, match)
}

// goModVersion is the go directive of go.mod.
func goModVersion(t *testing.T) string {
	t.Helper()
	m := regexp.MustCompile(`(?m)^go (\d+\.\d+(?:\.\d+)?)\s*$`).FindStringSubmatch(readRepoFile(t, "go.mod"))
	require.NotNil(t, m, "go.mod has no go directive")
	return m[1]
}

// TestDockerfile checks the image's recipe, since the image itself cannot be
// built where the tests run (no Docker engine): each case is one promise of
// docs/running.md.
func TestDockerfile(t *testing.T) {
	d, final := repoDockerfile(t)
	cmdIdx := index(final, func(in dockerfile.Instruction) bool { return in.Cmd == "CMD" })

	tests := []struct {
		name  string
		check func(t *testing.T)
	}{
		{"base image is nvidia/cuda devel, pinned to an exact version", func(t *testing.T) {
			assert.NotContains(t, final.Image, "$", "the base image must be written out, not taken from an ARG")
			ref := dockerfile.ParseImageRef(final.Image)
			assert.Equal(t, "nvidia/cuda", ref.Repository)
			assert.NotEqual(t, "latest", ref.Tag)
			assert.Regexp(t, `^\d+\.\d+\.\d+-devel-ubuntu\d+\.\d+$`, ref.Tag,
				"want an exact CUDA version (X.Y.Z) of the devel variant")
		}},
		{"ncu: checked, else installed from the base image's CUDA release", func(t *testing.T) {
			m := regexp.MustCompile(`^(\d+)\.(\d+)\.`).FindStringSubmatch(dockerfile.ParseImageRef(final.Image).Tag)
			require.NotNil(t, m)
			pkg := "cuda-nsight-compute-" + m[1] + "-" + m[2]
			i := index(final, func(in dockerfile.Instruction) bool {
				return in.Cmd == "RUN" && strings.Contains(in.Args, pkg) && strings.Contains(in.Args, "ncu --version")
			})
			assert.GreaterOrEqual(t, i, 0, "want a RUN that installs %s when ncu is missing and runs ncu --version", pkg)
			assert.True(t, index(final, func(in dockerfile.Instruction) bool {
				return in.Cmd == "RUN" && strings.Contains(in.Args, "nvcc --version")
			}) >= 0, "want a RUN that checks nvcc")
		}},
		{"a non-root user (uid 1000) is set before CMD", func(t *testing.T) {
			require.GreaterOrEqual(t, cmdIdx, 0, "no CMD")
			users := []dockerfile.Instruction{}
			for _, in := range final.Instructions[:cmdIdx] {
				if in.Cmd == "USER" {
					users = append(users, in)
				}
			}
			require.NotEmpty(t, users, "no USER before CMD: the server would run as root")
			user, _, _ := strings.Cut(expandArgs(users[len(users)-1].Args, final), ":")
			uid, err := strconv.Atoi(user)
			require.NoError(t, err, "USER %q: want a numeric uid, so that Kubernetes' runAsNonRoot can check it", user)
			assert.Equal(t, 1000, uid)
			// The uid has a passwd entry with a home directory.
			i := index(final, func(in dockerfile.Instruction) bool {
				w := dockerfile.Words(expandArgs(in.Args, final))
				j := slices.Index(w, "--uid")
				return in.Cmd == "RUN" && slices.Contains(w, "useradd") && slices.Contains(w, "--create-home") &&
					j >= 0 && j+1 < len(w) && w[j+1] == "1000"
			})
			assert.GreaterOrEqual(t, i, 0, "want a RUN useradd --create-home --uid 1000")
		}},
		{"scripts/install.sh runs, as root, with the kernelspec installed system-wide", func(t *testing.T) {
			runs := 0
			for i, in := range final.Instructions {
				if in.Cmd != "RUN" || !strings.Contains(in.Args, "scripts/install.sh") {
					continue
				}
				runs++
				env := final.Env(i)
				for _, w := range dockerfile.Words(in.Args) { // inline NAME=value before the command
					if k, v, ok := strings.Cut(w, "="); ok && k == "KERNEL_PREFIX" {
						env[k] = v
					}
				}
				// Jupyter's system-wide data directories (jupyter --paths, Linux).
				assert.Contains(t, []string{"/usr/local", "/usr"}, env["KERNEL_PREFIX"],
					"line %d: install.sh must install the kernelspec under a system-wide prefix", in.Line)
				assert.NotEmpty(t, env["VENV"], "line %d: VENV must be set (outside the course tree)", in.Line)
				assert.Equal(t, -1, index(dockerfile.Stage{Instructions: final.Instructions[:i]}, func(in dockerfile.Instruction) bool { return in.Cmd == "USER" }),
					"line %d: install.sh writes under /usr/local and must run as root, before USER", in.Line)
			}
			assert.Positive(t, runs, "no RUN of scripts/install.sh")
			assert.True(t, index(final, func(in dockerfile.Instruction) bool {
				return in.Cmd == "RUN" && strings.Contains(in.Args, "kernelspec list") && strings.Contains(in.Args, "/usr/local/share/jupyter/")
			}) >= 0, "want a RUN that checks Jupyter finds the gonb kernelspec under /usr/local/share/jupyter with an empty HOME")
		}},
		{"jupyterhub-singleuser is installed and runs", func(t *testing.T) {
			req := readRepoFile(t, "requirements.txt")
			assert.Regexp(t, `(?m)^jupyterhub==\d+\.\d+\.\d+$`, req, "requirements.txt must pin jupyterhub exactly")
			assert.True(t, index(final, func(in dockerfile.Instruction) bool {
				return in.Cmd == "RUN" && strings.Contains(in.Args, "jupyterhub-singleuser --version")
			}) >= 0, "want a RUN that runs jupyterhub-singleuser --version")
		}},
		{"EXPOSE 8888", func(t *testing.T) {
			var ports []string
			for _, in := range final.Instructions {
				if in.Cmd == "EXPOSE" {
					ports = append(ports, strings.Fields(in.Args)...)
				}
			}
			assert.Contains(t, ports, "8888")
		}},
		{"HEALTHCHECK asks the server's /api on port 8888", func(t *testing.T) {
			hc, ok := d.Last("HEALTHCHECK")
			require.True(t, ok, "no HEALTHCHECK")
			assert.True(t, strings.HasPrefix(hc.Args, "CMD "), "HEALTHCHECK %s: want CMD ...", hc.Args)
			assert.Contains(t, hc.Args, "127.0.0.1:8888")
			assert.Contains(t, hc.Args, "api")
		}},
		{"CMD starts JupyterLab on 0.0.0.0:8888 at notebooks/index.ipynb", func(t *testing.T) {
			require.GreaterOrEqual(t, cmdIdx, 0, "no CMD")
			args, ok := final.Instructions[cmdIdx].Exec()
			require.True(t, ok, "CMD must be in exec form (JSON array), so that signals reach the server")
			require.GreaterOrEqual(t, len(args), 2)
			assert.Equal(t, []string{"jupyter", "lab"}, args[:2])
			assert.Contains(t, args, "--ServerApp.ip=0.0.0.0")
			assert.Contains(t, args, "--ServerApp.port=8888")
			assert.Contains(t, args, "--ServerApp.root_dir=/opt/course")
			// LabApp's default_url: the URL printed at start and / lead there.
			const url = "--LabApp.default_url=/lab/tree/"
			i := slices.IndexFunc(args, func(a string) bool { return strings.HasPrefix(a, url) })
			require.GreaterOrEqual(t, i, 0, "want %s...", url)
			assert.Equal(t, "notebooks/index.ipynb", strings.TrimPrefix(args[i], url))
			assert.FileExists(t, filepath.Join(root, "notebooks", "index.ipynb"))
		}},
		{"Go is the version go.mod names, checksum pinned", func(t *testing.T) {
			args := argDefaults(final)
			assert.Equal(t, goModVersion(t), args["GO_VERSION"], "ARG GO_VERSION must equal go.mod's go directive")
			assert.Regexp(t, `^[0-9a-f]{64}$`, args["GO_ZIP_SHA256"])
			assert.True(t, index(final, func(in dockerfile.Instruction) bool {
				return in.Cmd == "RUN" && strings.Contains(in.Args, "install_go.sh") && strings.Contains(in.Args, "GO_ZIP_SHA256")
			}) >= 0, "want a RUN of install_go.sh with GO_ZIP_SHA256")
			env := final.Env(len(final.Instructions))
			assert.Equal(t, "local", env["GOTOOLCHAIN"], "the image must never download another Go")
		}},
		{"COPY sources exist and are not excluded by .dockerignore", func(t *testing.T) {
			ignore := dockerignore(t)
			for _, in := range final.Instructions {
				if in.Cmd != "COPY" && in.Cmd != "ADD" {
					continue
				}
				if _, ok := in.Flag("from"); ok {
					continue
				}
				w := dockerfile.Words(in.Args)
				require.GreaterOrEqual(t, len(w), 2, "line %d", in.Line)
				for _, src := range w[:len(w)-1] {
					if src == "." {
						continue
					}
					_, err := os.Stat(filepath.Join(root, src))
					assert.NoError(t, err, "line %d: COPY source %s", in.Line, src)
					assert.False(t, ignored(ignore, src), "line %d: %s is excluded by .dockerignore", in.Line, src)
				}
			}
		}},
		{"tini is PID 1 and CMD is not run by a shell", func(t *testing.T) {
			ep, ok := d.Last("ENTRYPOINT")
			require.True(t, ok)
			args, ok := ep.Exec()
			require.True(t, ok)
			assert.Equal(t, "tini", args[0])
			// Under a hub, the learner's course is set up by the start
			// command, before the server: a postStart hook may run after it.
			assert.Equal(t, "/opt/course/scripts/singleuser.sh", args[len(args)-1], "ENTRYPOINT must end in the start command")
			assert.FileExists(t, filepath.Join(root, "scripts", "singleuser.sh"))
		}},
		{"the default kernel is in Jupyter's config, not on a command line a hub replaces", func(t *testing.T) {
			for _, in := range final.Instructions {
				if in.Cmd == "CMD" || in.Cmd == "ENTRYPOINT" {
					assert.NotContains(t, in.Args, "default_kernel_name", "line %d: JupyterHub replaces CMD; install.sh writes the config", in.Line)
				}
			}
			assert.Contains(t, readRepoFile(t, "scripts/install.sh"), `"default_kernel_name"] = "gonb"`)
			assert.True(t, index(final, func(in dockerfile.Instruction) bool {
				return in.Cmd == "RUN" && strings.Contains(in.Args, "default_kernel_name") && strings.Contains(in.Args, `"gonb"`)
			}) >= 0, "want a RUN that checks the server's default kernel is gonb")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, tt.check)
	}
}

// dockerignore returns the patterns of .dockerignore (no negations).
func dockerignore(t *testing.T) []string {
	t.Helper()
	var pats []string
	sc := bufio.NewScanner(strings.NewReader(readRepoFile(t, ".dockerignore")))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		require.False(t, strings.HasPrefix(line, "!"), "negated .dockerignore pattern %q: ignored() does not handle it", line)
		pats = append(pats, strings.TrimSuffix(strings.TrimPrefix(line, "/"), "/"))
	}
	return pats
}

// ignored reports whether path (relative to the root) or a directory above
// it matches one of the patterns (filepath.Match, and ** at the front).
func ignored(pats []string, path string) bool {
	path = filepath.Clean(path)
	for p := path; p != "." && p != "/"; p = filepath.Dir(p) {
		for _, pat := range pats {
			if ok, _ := filepath.Match(pat, p); ok {
				return true
			}
			if rest, ok := strings.CutPrefix(pat, "**/"); ok {
				if m, _ := filepath.Match(rest, filepath.Base(p)); m {
					return true
				}
			}
		}
	}
	return false
}

func TestDockerignore(t *testing.T) {
	pats := dockerignore(t)
	tests := []struct {
		path string
		want bool
	}{
		// Local state that must not reach the image (the image builds its own).
		{".venv", true},
		{".cache/bin/gonb", true},
		{"build/browser/index-1-top.png", true},
		{".git/HEAD", true},
		{"notebooks/.ipynb_checkpoints/index-checkpoint.ipynb", true},
		// What the image needs.
		{"go.mod", false},
		{"scripts/install.sh", false},
		{"notebooks/index.ipynb", false},
		{"lab/show.go", false},
		{"grader/questions.json", false},
		{"cuda/reference/h200.jsonl", false},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			assert.Equal(t, tt.want, ignored(pats, tt.path), "got ignored=%v, want %v", ignored(pats, tt.path), tt.want)
		})
	}
}
