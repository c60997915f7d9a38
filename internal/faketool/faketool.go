// Package faketool writes stand-ins for external tools (nvcc, ncu,
// compute-sanitizer, a compiled program) for tests: a shell script that
// does what the test needs of the tool, so that the code that finds, runs
// and reads the tool is tested on a machine without it.
//
//	faketool.NeedSh(t)
//	nvcc := faketool.Script(t, t.TempDir(), "nvcc", `echo "release 13.0"`)
package faketool

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Script writes body, after a #!/bin/sh line, into an executable file
// name in dir and returns its path. It fails the test when it cannot.
func Script(t testing.TB, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatalf("faketool: %v", err)
	}
	return p
}

// NeedSh skips the test where there is no sh to run the scripts with.
func NeedSh(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh to run fake tools with")
	}
}

// NcuDenied is what ncu prints, once per kernel it tries to profile, when
// the driver keeps the counters to administrators; the harness it runs
// still runs to the end.
const NcuDenied = `==PROF== Connected to process 4242 (/tmp/harness)
==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU Performance Counters on the target device 0. For instructions on enabling permissions and to get more information see https://developer.nvidia.com/ERR_NVGPUCTRPERM
==PROF== Disconnected from process 4242
==WARNING== No kernels were profiled.
`
