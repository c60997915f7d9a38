package deploy

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Fake CUDA tools for scripts/image_cuda.sh, printing what the real ones
// print (nvcc 13.0.88, ncu 2025.3.1 and the driver of the course's H200
// machine, runs/log/test-gpu.log); fake apt-get logs its arguments to
// $FAKE_APT_LOG, fails when $FAKE_APT_RC is not 0, and "installs" ncu or g++
// into $FAKE_BIN when the package it is asked for names one.
const (
	fakeNvcc = `#!/bin/sh
if [ "$1" = --version ]; then
  echo 'nvcc: NVIDIA (R) Cuda compiler driver'
  echo 'Cuda compilation tools, release 13.0, V13.0.88'
  echo 'Build cuda_13.0.r13.0/compiler.36424714_0'
  exit 0
fi
if [ -n "$FAKE_NVCC_FAIL" ]; then echo "k.cu(1): error: no host compiler" >&2; exit 1; fi
while [ $# -gt 0 ]; do if [ "$1" = -o ]; then : >"$2"; fi; shift; done
`
	fakeNcu = `#!/bin/sh
echo 'NVIDIA (R) Nsight Compute Command Line Profiler'
echo 'Version 2025.3.1.0 (build 36398880) (public-release)'
`
	fakeGxx    = "#!/bin/sh\nexit 0\n"
	fakeSmi    = "#!/bin/sh\necho 'NVIDIA H200, 580.159.04'\n"
	fakeAptGet = `#!/bin/sh
echo "$*" >>"$FAKE_APT_LOG"
[ "${FAKE_APT_RC:-0}" = 0 ] || { echo "E: Unable to locate package $*" >&2; exit "$FAKE_APT_RC"; }
case "$*" in
  *cuda-nsight-compute-*) [ -z "$FAKE_APT_NO_NCU" ] && cp "$FAKE_TOOLS/ncu" "$FAKE_BIN/ncu" ;;
  *" g++"*) cp "$FAKE_TOOLS/g++" "$FAKE_BIN/g++" ;;
esac
exit 0
`
)

// imageCUDAEnv is a PATH with only the host tools image_cuda.sh uses (so
// that no nvcc, g++ or apt-get of the machine running the test is found)
// and the fakes picked, and the script's locations in a temporary folder.
type imageCUDAEnv struct {
	dir, bin, record, aptLog, lists, cudaHome string
	env                                       []string
}

func newImageCUDAEnv(t *testing.T, fakes ...string) *imageCUDAEnv {
	t.Helper()
	dir := t.TempDir()
	e := &imageCUDAEnv{
		dir: dir, bin: filepath.Join(dir, "bin"), record: filepath.Join(dir, "lib", "cuda"),
		aptLog: filepath.Join(dir, "apt.log"), lists: filepath.Join(dir, "lists"),
		cudaHome: filepath.Join(dir, "usr-local-cuda"),
	}
	tools := filepath.Join(dir, "tools")
	for _, d := range []string{e.bin, tools, e.lists} {
		require.NoError(t, os.MkdirAll(d, 0o755))
	}
	for _, host := range []string{"mkdir", "dirname", "sed", "head", "tail", "cat", "rm", "mktemp", "cut", "find", "ln", "grep", "timeout", "cp"} {
		p, err := exec.LookPath(host)
		if err != nil {
			t.Skipf("%s not on PATH: %v", host, err)
		}
		require.NoError(t, os.Symlink(p, filepath.Join(e.bin, host)))
	}
	all := map[string]string{"nvcc": fakeNvcc, "ncu": fakeNcu, "g++": fakeGxx, "nvidia-smi": fakeSmi, "apt-get": fakeAptGet}
	for name, body := range all {
		require.NoError(t, os.WriteFile(filepath.Join(tools, name), []byte(body), 0o755))
	}
	for _, name := range fakes {
		require.Contains(t, all, name)
		require.NoError(t, os.WriteFile(filepath.Join(e.bin, name), []byte(all[name]), 0o755))
	}
	require.NoError(t, os.WriteFile(filepath.Join(e.lists, "noble_InRelease"), nil, 0o644))
	e.env = []string{
		"PATH=" + e.bin, "CUDA_VERSION=", "COALESCE_CUDA_RECORD=" + e.record,
		"COALESCE_APT_LISTS=" + e.lists, "COALESCE_CUDA_HOME=" + e.cudaHome,
		"FAKE_APT_LOG=" + e.aptLog, "FAKE_BIN=" + e.bin, "FAKE_TOOLS=" + tools,
	}
	return e
}

func (e *imageCUDAEnv) run(t *testing.T, env []string, args ...string) (string, error) {
	t.Helper()
	return runScript(t, e.dir, append(append([]string{}, e.env...), env...), "scripts/image_cuda.sh", args...)
}

func readOr(path, def string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return def
	}
	return string(b)
}

// TestImageCUDASetup is the Dockerfile's guarded CUDA step on the bases it
// meets: a CPU-only one (nothing installed, the image records that it has
// no CUDA), NVIDIA's devel images with and without ncu, and the broken CUDA
// bases that must fail the build rather than make an image that cannot
// measure.
func TestImageCUDASetup(t *testing.T) {
	mustHaveExec(t, "bash")
	const base = "example/base:1"
	const cudaRecord = "cuda=13.0\nnvcc=release 13.0, V13.0.88\nncu=Version 2025.3.1.0 (build 36398880) (public-release)\nbase=" + base + "\n"
	tests := []struct {
		name       string
		fakes      []string
		env        []string
		cudaHome   bool   // the base has /usr/local/cuda
		wantErr    string // "" for success; else in the output
		wantOut    string
		wantRecord string // "" for none written
		wantApt    string // apt-get's calls, "" for none
		listsGone  bool   // the apt lists were emptied
	}{
		{name: "no CUDA: nothing installed, the image records none", fakes: []string{"apt-get", "g++"},
			wantOut:    "no CUDA in " + base + " (no nvcc, no CUDA_VERSION",
			wantRecord: "cuda=none\nbase=" + base + "\n"},
		{name: "NVIDIA devel base: nvcc compiles, ncu runs", fakes: []string{"nvcc", "ncu", "g++", "apt-get"},
			env: []string{"CUDA_VERSION=13.0.2"}, cudaHome: true,
			wantOut: "CUDA 13.0 in " + base + ": nvcc release 13.0, V13.0.88 compiles", wantRecord: cudaRecord},
		{name: "no ncu: cuda-nsight-compute of CUDA_VERSION installed", fakes: []string{"nvcc", "g++", "apt-get"},
			env: []string{"CUDA_VERSION=13.0.2"}, cudaHome: true,
			wantOut: "installing cuda-nsight-compute-13-0", wantRecord: cudaRecord,
			wantApt: "update\ninstall -y --no-install-recommends cuda-nsight-compute-13-0\nclean\n", listsGone: true},
		{name: "no ncu, no CUDA_VERSION: the release nvcc names", fakes: []string{"nvcc", "g++", "apt-get"},
			wantOut: "installing cuda-nsight-compute-13-0", wantRecord: cudaRecord,
			wantApt: "update\ninstall -y --no-install-recommends cuda-nsight-compute-13-0\nclean\n", listsGone: true},
		{name: "no g++: installed for nvcc", fakes: []string{"nvcc", "ncu", "apt-get"},
			env: []string{"CUDA_VERSION=13.0.2"}, wantOut: "g++ is missing", wantRecord: cudaRecord,
			wantApt: "update\ninstall -y --no-install-recommends g++\nclean\n", listsGone: true},
		{name: "CUDA_VERSION but no nvcc: fails, asks for devel", fakes: []string{"apt-get"},
			env: []string{"CUDA_VERSION=13.0.2"}, wantErr: "looks like a CUDA image (CUDA_VERSION=13.0.2"},
		{name: "/usr/local/cuda but no nvcc: fails", fakes: []string{"apt-get"}, cudaHome: true,
			wantErr: "use a -devel variant"},
		{name: "ncu not installable: fails naming the package", fakes: []string{"nvcc", "g++", "apt-get"},
			env:     []string{"CUDA_VERSION=13.0.2", "FAKE_APT_RC=100"},
			wantErr: "installing cuda-nsight-compute-13-0 (ncu, for the profiling lessons) failed",
			wantApt: "update\n"},
		{name: "the package brings no ncu: fails", fakes: []string{"nvcc", "g++", "apt-get"},
			env: []string{"CUDA_VERSION=13.0.2", "FAKE_APT_NO_NCU=1"}, wantErr: "no ncu is on PATH",
			wantApt: "update\ninstall -y --no-install-recommends cuda-nsight-compute-13-0\nclean\n", listsGone: true},
		{name: "nvcc cannot compile: fails", fakes: []string{"nvcc", "ncu", "g++", "apt-get"},
			env: []string{"CUDA_VERSION=13.0.2", "FAKE_NVCC_FAIL=1"}, wantErr: "nvcc cannot compile a kernel in " + base},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newImageCUDAEnv(t, tt.fakes...)
			if tt.cudaHome {
				require.NoError(t, os.MkdirAll(e.cudaHome, 0o755))
			}
			out, err := e.run(t, tt.env, "setup", base)
			if tt.wantErr != "" {
				require.Error(t, err, out)
				assert.Contains(t, out, tt.wantErr)
			} else {
				require.NoError(t, err, out)
				assert.Contains(t, out, tt.wantOut)
			}
			assert.Equal(t, tt.wantRecord, readOr(e.record, ""), "the record")
			assert.Equal(t, tt.wantApt, readOr(e.aptLog, ""), "apt-get's calls")
			_, err = os.Stat(filepath.Join(e.lists, "noble_InRelease"))
			assert.Equal(t, tt.listsGone, os.IsNotExist(err), "apt lists emptied after an install, only then")
		})
	}
}

// TestImageCUDAStatus is what the image says about its CUDA at start
// (before the server's own lines) and in its health check.
func TestImageCUDAStatus(t *testing.T) {
	mustHaveExec(t, "bash")
	const cudaRecord = "cuda=13.0\nnvcc=release 13.0, V13.0.88\nncu=Version 2025.3.1.0\nbase=nvidia/cuda:13.0.2-devel-ubuntu24.04\n"
	tests := []struct {
		name, record string // "" for no record
		fakes        []string
		args         []string
		want         []string
		notWant      string
	}{
		{name: "no CUDA, said plainly", record: "cuda=none\nbase=localhost/coalesce-base:noble\n",
			args: []string{"status"},
			want: []string{"coalesce image: no CUDA: built on localhost/coalesce-base:noble", "no nvcc, no ncu",
				"recorded on an NVIDIA H200", "build on nvidia/cuda:13.0.2-devel-ubuntu24.04", "--gpus all"}},
		{name: "no CUDA, brief: the same", record: "cuda=none\nbase=b\n", fakes: []string{"nvidia-smi"},
			args: []string{"status", "--brief"}, want: []string{"coalesce image: no CUDA: built on b"}},
		{name: "CUDA, no GPU in the container", record: cudaRecord, args: []string{"status"},
			want: []string{"coalesce image: CUDA 13.0 (nvcc release 13.0, V13.0.88; ncu Version 2025.3.1.0)",
				"no GPU visible in this container (docker run --gpus all gives it one)"}},
		{name: "CUDA and a GPU", record: cudaRecord, fakes: []string{"nvidia-smi"}, args: []string{"status"},
			want: []string{"CUDA 13.0", "; GPU: NVIDIA H200, 580.159.04 (name, driver)"}, notWant: "no GPU"},
		{name: "brief: no GPU query", record: cudaRecord, fakes: []string{"nvidia-smi"},
			args: []string{"status", "--brief"}, want: []string{"CUDA 13.0"}, notWant: "GPU"},
		{name: "no record", args: []string{"status"}, want: []string{"coalesce image: CUDA unknown"}},
		{name: "start: the status, then the command", record: "cuda=none\nbase=b\n",
			args: []string{"start", "sh", "-c", `echo "server $1"`, "sh", "up"},
			want: []string{"coalesce image: no CUDA: built on b", "server up"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newImageCUDAEnv(t, tt.fakes...)
			if tt.record != "" {
				require.NoError(t, os.MkdirAll(filepath.Dir(e.record), 0o755))
				require.NoError(t, os.WriteFile(e.record, []byte(tt.record), 0o644))
			}
			env := []string{}
			if tt.args[0] == "start" {
				env = append(env, "PATH="+e.bin+":/bin:/usr/bin") // sh for the command
			}
			out, err := e.run(t, env, tt.args...)
			require.NoError(t, err, out)
			last := -1
			for _, w := range tt.want {
				i := strings.Index(out, w)
				assert.GreaterOrEqual(t, i, 0, "want %q in %q", w, out)
				assert.Greater(t, i, last, "%q out of order in %q", w, out)
				last = i
			}
			if tt.notWant != "" {
				assert.NotContains(t, out, tt.notWant)
			}
		})
	}
	t.Run("usage", func(t *testing.T) {
		e := newImageCUDAEnv(t)
		for _, args := range [][]string{{}, {"build"}, {"start"}} {
			out, err := e.run(t, nil, args...)
			require.Error(t, err, "%v: %s", args, out)
			assert.Contains(t, out, "usage: image_cuda.sh")
		}
	})
}
