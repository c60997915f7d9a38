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

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coalescing-course/coalesce/internal/dockerfile"
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

// globalArgs returns the defaults of the ARGs before the first FROM.
func globalArgs(d *dockerfile.Dockerfile) map[string]string {
	args := map[string]string{}
	for _, in := range d.Instructions {
		if in.Cmd == "FROM" {
			break
		}
		if in.Cmd == "ARG" {
			k, v, _ := strings.Cut(in.Args, "=")
			args[strings.TrimSpace(k)] = strings.Trim(strings.TrimSpace(v), `"'`)
		}
	}
	return args
}

// workdir is the WORKDIR in effect at instruction i of s ("/" before any).
func workdir(s dockerfile.Stage, i int) string {
	dir := "/"
	for _, in := range s.Instructions[:i] {
		if in.Cmd == "WORKDIR" {
			if w := expandArgs(strings.TrimSpace(in.Args), s); strings.HasPrefix(w, "/") {
				dir = w
			} else {
				dir = filepath.Join(dir, w)
			}
		}
	}
	return dir
}

// goDirs returns the repository's top-level entries the image's Go code
// lives in: the directories with a .go file anywhere below, and "*.go" for
// the root's own files; hidden and .dockerignore'd entries excluded.
func goDirs(t *testing.T) []string {
	t.Helper()
	ignore := dockerignore(t)
	entries, err := os.ReadDir(root)
	require.NoError(t, err)
	var dirs []string
	rootGo := false
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") || ignored(ignore, name) {
			continue
		}
		if !e.IsDir() {
			rootGo = rootGo || strings.HasSuffix(name, ".go")
			continue
		}
		found := false
		require.NoError(t, filepath.WalkDir(filepath.Join(root, name), func(p string, de os.DirEntry, err error) error {
			if err != nil || found {
				return err
			}
			if !de.IsDir() && strings.HasSuffix(p, ".go") {
				found = true
				return filepath.SkipAll
			}
			return nil
		}))
		if found {
			dirs = append(dirs, name)
		}
	}
	if rootGo {
		dirs = append(dirs, "*.go")
	}
	require.NotEmpty(t, dirs)
	return dirs
}

// goModVersion is the go directive of go.mod.
func goModVersion(t *testing.T) string {
	t.Helper()
	m := regexp.MustCompile(`(?m)^go (\d+\.\d+(?:\.\d+)?)\s*$`).FindStringSubmatch(readRepoFile(t, "go.mod"))
	require.NotNil(t, m, "go.mod has no go directive")
	return m[1]
}

// TestDockerfile checks the image's recipe, for every `go test` (building
// the image takes podman, root and minutes: make test-image does that):
// each case is one promise of docs/running.md.
func TestDockerfile(t *testing.T) {
	d, final := repoDockerfile(t)
	cmdIdx := index(final, func(in dockerfile.Instruction) bool { return in.Cmd == "CMD" })

	tests := []struct {
		name  string
		check func(t *testing.T)
	}{
		{"the base is ARG BASE_IMAGE, by default nvidia/cuda devel pinned to an exact version", func(t *testing.T) {
			require.Len(t, d.Stages(), 1, "one stage: the CUDA and the CPU-only image differ in their base only")
			assert.Contains(t, []string{"${BASE_IMAGE}", "$BASE_IMAGE"}, final.Image, "FROM must take the base from ARG BASE_IMAGE")
			def, ok := globalArgs(d)["BASE_IMAGE"]
			require.True(t, ok, "want ARG BASE_IMAGE=... before FROM")
			ref := dockerfile.ParseImageRef(def)
			assert.Equal(t, "nvidia/cuda", ref.Repository)
			assert.Regexp(t, `^\d+\.\d+\.\d+-devel-ubuntu\d+\.\d+$`, ref.Tag,
				"want an exact CUDA version (X.Y.Z) of the devel variant")
			// An ARG declared before FROM is empty inside the stage unless
			// declared again there (Docker's scoping): the stage's uses of
			// ${BASE_IMAGE} need that.
			uses := index(final, func(in dockerfile.Instruction) bool {
				return strings.Contains(in.Args, "BASE_IMAGE") && in.Cmd != "ARG"
			})
			if uses >= 0 {
				decl := index(final, func(in dockerfile.Instruction) bool {
					return in.Cmd == "ARG" && strings.TrimSpace(in.Args) == "BASE_IMAGE"
				})
				assert.True(t, decl >= 0 && decl < uses, "line %d uses BASE_IMAGE: want a bare ARG BASE_IMAGE in the stage before it", final.Instructions[uses].Line)
			}
		}},
		{"CUDA is one guarded step, scripts/image_cuda.sh's, given the base", func(t *testing.T) {
			cudaRe := regexp.MustCompile(`\b(nvcc|ncu|nvidia-smi|cuda-[a-z-]+|/usr/local/cuda)\b`)
			setup := -1
			for i, in := range final.Instructions {
				if in.Cmd != "RUN" {
					continue
				}
				if w := dockerfile.Words(in.Args); len(w) >= 3 && w[0] == "coalesce-image" && w[1] == "setup" {
					assert.Equal(t, -1, setup, "line %d: a second CUDA setup", in.Line)
					assert.Equal(t, "${BASE_IMAGE}", w[2], "line %d: setup must be told the base, to name it", in.Line)
					setup = i
					continue
				}
				assert.False(t, cudaRe.MatchString(in.Args), "line %d: a RUN needs CUDA (%s) outside the guarded step: a CPU-only base would fail it", in.Line, cudaRe.FindString(in.Args))
			}
			require.GreaterOrEqual(t, setup, 0, `want RUN coalesce-image setup "${BASE_IMAGE}"`)
			cp := index(final, func(in dockerfile.Instruction) bool {
				w := dockerfile.Words(in.Args)
				return in.Cmd == "COPY" && len(w) == 2 && w[0] == "scripts/image_cuda.sh" && w[1] == "/usr/local/bin/coalesce-image"
			})
			assert.True(t, cp >= 0 && cp < setup, "want COPY scripts/image_cuda.sh /usr/local/bin/coalesce-image before the setup")
			user := index(final, func(in dockerfile.Instruction) bool { return in.Cmd == "USER" })
			assert.True(t, user < 0 || setup < user, "the setup installs packages: it must run as root, before USER")
			// The package it installs is the base's CUDA release's (its
			// behaviour: TestImageCUDASetup).
			script := readRepoFile(t, "scripts/image_cuda.sh")
			for _, want := range []string{"cuda-nsight-compute-", "CUDA_VERSION", "nvcc --version", "ncu --version"} {
				assert.Contains(t, script, want)
			}
		}},
		{"a notebook edit rebuilds only the last COPY; the Go code is copied before the builds", func(t *testing.T) {
			lastCopy := -1
			for i, in := range final.Instructions {
				if in.Cmd == "COPY" || in.Cmd == "ADD" {
					lastCopy = i
				}
			}
			require.GreaterOrEqual(t, lastCopy, 0)
			last := final.Instructions[lastCopy]
			assert.Equal(t, []string{".", "/opt/course"}, dockerfile.Words(last.Args), "line %d: the last COPY must be the whole course", last.Line)
			for _, in := range final.Instructions[lastCopy+1:] {
				assert.NotEqual(t, "RUN", in.Cmd, "line %d: a RUN after the last COPY reruns at every notebook edit", in.Line)
			}
			warm := index(final, func(in dockerfile.Instruction) bool {
				return in.Cmd == "RUN" && strings.Contains(in.Args, "go build ./...")
			})
			require.GreaterOrEqual(t, warm, 0, "want the RUN that warms the learner's build cache (go build ./...)")
			copied := map[string]int{} // COPY source -> instruction index
			for i, in := range final.Instructions[:lastCopy] {
				if in.Cmd != "COPY" && in.Cmd != "ADD" {
					continue
				}
				w := dockerfile.Words(in.Args)
				for _, src := range w[:len(w)-1] {
					copied[strings.TrimSuffix(src, "/")] = i
					assert.NotContains(t, []string{".", "notebooks", "docs"}, strings.TrimSuffix(src, "/"),
						"line %d copies %s before the builds: a lesson edit would rebuild everything", in.Line, src)
				}
			}
			for _, dir := range goDirs(t) {
				i, ok := copied[dir]
				if assert.True(t, ok, "%s holds Go code: copy it before the cache is warmed (line %d)", dir, final.Instructions[warm].Line) {
					assert.Less(t, i, warm, "%s is copied after the cache is warmed", dir)
				}
			}
		}},
		{"the learner owns every file COPY puts in /opt/course", func(t *testing.T) {
			args := argDefaults(final)
			want := args["NB_UID"] + ":" + args["NB_GID"]
			assert.Equal(t, "1000:100", want)
			for i, in := range final.Instructions {
				if in.Cmd != "COPY" && in.Cmd != "ADD" {
					continue
				}
				w := dockerfile.Words(in.Args)
				dest := w[len(w)-1]
				if !strings.HasPrefix(dest, "/") {
					dest = filepath.Join(workdir(final, i), dest)
				}
				if dest != "/opt/course" && !strings.HasPrefix(dest, "/opt/course/") {
					continue
				}
				chown, _ := in.Flag("chown")
				assert.Equal(t, want, expandArgs(chown, final), "line %d: COPY into %s without --chown=${NB_UID}:${NB_GID}: the learner could not save there", in.Line, dest)
			}
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
		{"HEALTHCHECK asks the server's /api on port 8888 and says the image's CUDA", func(t *testing.T) {
			hc, ok := d.Last("HEALTHCHECK")
			require.True(t, ok, "no HEALTHCHECK")
			assert.True(t, strings.HasPrefix(hc.Args, "CMD "), "HEALTHCHECK %s: want CMD ...", hc.Args)
			assert.Contains(t, hc.Args, "127.0.0.1:8888")
			assert.Contains(t, hc.Args, "api")
			assert.Contains(t, hc.Args, "coalesce-image status --brief", "the health check's output must say whether the image has CUDA")
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
					m, err := filepath.Glob(filepath.Join(root, src)) // COPY takes patterns (*.go)
					assert.NoError(t, err, "line %d: COPY source %s", in.Line, src)
					assert.NotEmpty(t, m, "line %d: COPY source %s matches nothing", in.Line, src)
					assert.False(t, ignored(ignore, src), "line %d: %s is excluded by .dockerignore", in.Line, src)
				}
			}
		}},
		{"tini is PID 1, the CUDA status is said at start, and CMD is not run by a shell", func(t *testing.T) {
			ep, ok := d.Last("ENTRYPOINT")
			require.True(t, ok)
			args, ok := ep.Exec()
			require.True(t, ok)
			// JupyterHub replaces CMD, never ENTRYPOINT: the status line is
			// in every server's log, and the learner's course is set up by
			// the start command, before the server (a postStart hook may
			// run after it).
			assert.Equal(t, []string{"tini", "-g", "--", "coalesce-image", "start", "/opt/course/scripts/singleuser.sh"}, args)
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
