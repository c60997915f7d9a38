package rlimit

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParse(t *testing.T) {
	tests := []struct {
		in   string
		want Limits
		err  string
	}{
		{"as=1,cpu=2,fsize=3,nofile=4", Limits{1, 2, 3, 4}, ""},
		{"cpu=10", Limits{CPU: 10}, ""},
		{"as=18446744073709551615", Limits{AS: 1<<64 - 1}, ""},
		{"", Limits{}, `"" in "": want key=number`},
		{"as=1,as=2", Limits{}, "as twice"},
		{"as=-1", Limits{}, `"as=-1" in "as=-1": want key=number`},
		{"mem=5", Limits{}, `unknown limit "mem"`},
		{"as", Limits{}, "want key=number"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := Parse(tt.in)
			if tt.err != "" {
				assert.ErrorContains(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
			back, err := Parse(got.String())
			require.NoError(t, err)
			assert.Equal(t, got, back, "String and Parse agree")
		})
	}
}

func FuzzParse(f *testing.F) {
	f.Add("as=1,cpu=2,fsize=3,nofile=4")
	f.Add("cpu=1,cpu=1")
	f.Fuzz(func(t *testing.T, s string) {
		l, err := Parse(s)
		if err != nil {
			return
		}
		back, err := Parse(l.String())
		require.NoError(t, err)
		assert.Equal(t, l, back)
	})
}

// childEnv makes the test binary, started again, the child TestApply
// limits: it applies the limits in the variable, then does what
// childAction says and prints what happened.
const childEnv, childAction = "RLIMIT_TEST_CHILD", "RLIMIT_TEST_ACTION"

func TestMain(m *testing.M) {
	if spec, ok := os.LookupEnv(childEnv); ok {
		os.Exit(child(spec, os.Getenv(childAction)))
	}
	os.Exit(m.Run())
}

func child(spec, action string) int {
	l, err := Parse(spec)
	if err == nil && l.AS > 0 {
		var m uint64
		if m, err = Mapped(); err == nil {
			l.AS += m
		}
	}
	if err == nil {
		err = l.Apply()
	}
	if err != nil {
		fmt.Println("apply:", err)
		return 3
	}
	switch action {
	case "limits":
		data, _ := os.ReadFile("/proc/self/limits")
		fmt.Print(string(data))
	case "write":
		err := os.WriteFile(filepath.Join(os.TempDir(), fmt.Sprintf("rlimit-test-%d", os.Getpid())), make([]byte, 8192), 0o600)
		fmt.Println("write:", err)
	case "allocate":
		var keep [][]byte
		for range 64 {
			keep = append(keep, make([]byte, 16<<20))
			for i := range keep[len(keep)-1] {
				keep[len(keep)-1][i] = 1
			}
		}
		fmt.Println("allocated", len(keep))
	case "raise":
		err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: 1 << 30, Max: 1 << 30})
		fmt.Println("raise:", err)
	}
	return 0
}

// runChild starts the test binary as a child with limits l and action,
// and returns its output and its error.
func runChild(t *testing.T, l Limits, action string) (string, error) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+l.String(), childAction+"="+action, "TMPDIR="+t.TempDir())
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// The limits hold in the process that applied them: /proc/self/limits
// shows them soft and hard, a file past the size limit is refused
// (EFBIG), allocation past the address space kills the process with the
// runtime's "out of memory", and the limits cannot be raised again.
func TestApply(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("rlimit sets limits on Linux only")
	}
	l := Limits{CPU: 7, FSize: 4096, NoFile: 32}
	out, err := runChild(t, l, "limits")
	require.NoError(t, err, out)
	for _, want := range [][]string{
		{"Max cpu time", "7", "7"}, {"Max file size", "4096", "4096"}, {"Max open files", "32", "32"}, {"Max core file size", "0", "0"},
	} {
		found := false
		for _, line := range strings.Split(out, "\n") {
			if strings.HasPrefix(line, want[0]) {
				f := strings.Fields(strings.TrimPrefix(line, want[0]))
				assert.Equal(t, want[1:], f[:2], "%s", line)
				found = true
			}
		}
		assert.True(t, found, "%s in\n%s", want[0], out)
	}
	out, err = runChild(t, l, "write")
	require.NoError(t, err, out)
	assert.Contains(t, out, "file too large", "a write past RLIMIT_FSIZE fails")
	out, err = runChild(t, l, "raise")
	require.NoError(t, err, out)
	assert.Contains(t, out, "raise: operation not permitted", "the hard limit holds")

	out, err = runChild(t, Limits{AS: 256 << 20}, "allocate")
	require.Error(t, err, "a gigabyte in a 256 MiB budget")
	assert.Contains(t, out, "out of memory")
	assert.NotContains(t, out, "allocated")
}

// Set limits another process, which shows them in its /proc/PID/limits.
func TestSet(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("rlimit sets limits on Linux only")
	}
	cmd := exec.Command("sleep", "30")
	require.NoError(t, cmd.Start())
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	require.NoError(t, Limits{FSize: 12345, NoFile: 20}.Set(cmd.Process.Pid))
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/limits", cmd.Process.Pid))
	require.NoError(t, err)
	assert.Regexp(t, `Max file size\s+12345\s+12345`, string(data))
	assert.Regexp(t, `Max open files\s+20\s+20`, string(data))
}

// Mapped is what /proc/self/statm says, and grows with a mapping.
func TestMapped(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("Linux only")
	}
	before, err := Mapped()
	require.NoError(t, err)
	m, err := syscall.Mmap(-1, 0, 64<<20, syscall.PROT_READ, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	require.NoError(t, err)
	defer syscall.Munmap(m)
	after, err := Mapped()
	require.NoError(t, err)
	assert.GreaterOrEqual(t, after-before, uint64(64<<20))
}
