package sandbox

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// marked returns the live processes whose environment holds mark (a
// sandbox directory of the test's own: each build's GOCACHE is in it),
// by pid, with their command names.
func marked(mark string) map[int]string {
	out := map[int]string{}
	envs, _ := filepath.Glob("/proc/[0-9]*/environ")
	for _, p := range envs {
		env, err := os.ReadFile(p)
		if err != nil || !bytes.Contains(env, []byte(mark)) {
			continue
		}
		dir := filepath.Dir(p)
		stat, err := os.ReadFile(filepath.Join(dir, "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ...: a zombie has ended.
		if i := bytes.LastIndexByte(stat, ')'); i < 0 || i+2 >= len(stat) || stat[i+2] == 'Z' {
			continue
		}
		comm, _ := os.ReadFile(filepath.Join(dir, "comm"))
		pid, _ := strconv.Atoi(filepath.Base(dir))
		out[pid] = strings.TrimSpace(string(comm))
	}
	return out
}

// limitsOf reads a process's limits (/proc/PID/limits): name to soft
// value, "unlimited" as -1.
func limitsOf(t *testing.T, pid int) map[string]int64 {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/limits")
	require.NoError(t, err)
	out := map[string]int64{}
	for _, l := range strings.Split(string(data), "\n")[1:] {
		if len(l) < 26 {
			continue
		}
		name := strings.TrimSpace(l[:26])
		f := strings.Fields(l[26:])
		if len(f) == 0 {
			continue
		}
		v, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			v = -1
		}
		out[name] = v
	}
	return out
}

// waitFor polls cond every 20 ms until it holds or within passes.
func waitFor(within time.Duration, cond func() bool) bool {
	for end := time.Now().Add(within); ; time.Sleep(20 * time.Millisecond) {
		if cond() {
			return true
		}
		if time.Now().After(end) {
			return false
		}
	}
}

// compileOf waits for a compiler to run under mark and returns its pid.
func compileOf(t *testing.T, mark string) int {
	var pid int
	ok := waitFor(3*time.Minute, func() bool {
		for p, comm := range marked(mark) {
			if comm == "compile" {
				pid = p
				return true
			}
		}
		return false
	})
	require.True(t, ok, "no compiler started under %s", mark)
	return pid
}

// TestHelperLimitsBeforeExec: a program started through the helper has
// its limits from its first instruction, and none of the helper's
// variable when it is stripped.
func TestHelperLimitsBeforeExec(t *testing.T) {
	self, err := os.Executable()
	require.NoError(t, err)
	lim := limits{AS: 3 << 30, CPU: 7, FSize: 5 << 20, NoFile: 32, Strip: true}
	cmd := exec.Command(self, "/bin/sh", "-c", `cat /proc/self/limits; echo "env:$`+helperEnv+`"`)
	cmd.Env = []string{helperEnv + "=" + lim.String(), "PATH=/usr/bin:/bin"}
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	text := string(out)
	for _, want := range []string{"Max address space         3221225472           3221225472           bytes",
		"Max cpu time              7                    7                    seconds",
		"Max file size             5242880              5242880              bytes",
		"Max open files            32                   32                   files",
		"Max core file size        0                    0                    bytes", "env:\n"} {
		assert.Contains(t, text, want)
	}
	_, err = parseLimits("as=1,cpu=x")
	assert.ErrorContains(t, err, `cpu="x": want key=number`)
}

// TestKilledGraderLeavesNoProcess kills a grader while it builds: the test
// binary as a grader (graderMain) opens a batch on a cold cache, so that
// the go command is compiling the standard library when the grader dies
// by SIGKILL, which no code of its can catch. The compiler runs under the
// build's limits, set before it started; every process of the build (the
// go command, each compiler), stopped so that none ends on its own, dies
// with the grader; the dead grader's batch directory is swept by the next
// batch.
func TestKilledGraderLeavesNoProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the standard library for a few seconds: run without -short")
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), graderEnv+"="+dir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	defer cmd.Process.Kill()
	pid := compileOf(t, dir)
	lim := limitsOf(t, pid)
	c := testConfig().filled()
	assert.Equal(t, c.BuildMemory, lim["Max address space"], "the compiler's address space")
	assert.Equal(t, c.BuildFileSize, lim["Max file size"], "the compiler's file size")
	assert.Equal(t, int64(max(c.BuildTimeout, 10*time.Minute)/time.Second), lim["Max cpu time"], "the compiler's CPU time")
	assert.Zero(t, lim["Max core file size"])
	// Stopped, the build's processes cannot end on their own: only a
	// signal (SIGKILL, which a stopped process takes) ends them now.
	before := marked(dir)
	for p := range before {
		if p != cmd.Process.Pid {
			_ = syscall.Kill(p, syscall.SIGSTOP)
			defer syscall.Kill(p, syscall.SIGKILL)
		}
	}
	require.NoError(t, cmd.Process.Kill())
	_ = cmd.Wait()
	t.Logf("before %v after-kill %v", before, marked(dir))
	gone := waitFor(10*time.Second, func() bool { return len(marked(dir)) == 0 })
	assert.True(t, gone, "processes of the build outlived the grader: %v (of %v); grader: %s", marked(dir), before, stderr.String())
	batches, _ := filepath.Glob(filepath.Join(dir, batchGlob))
	require.Len(t, batches, 1, "the dead grader's batch directory")
	sweepBatches(dir)
	assert.NoDirExists(t, batches[0], "swept once its grader is dead")
}

// TestCancelledBatchLeavesNoProcess: a batch whose context ends while it
// builds stops at once, its processes killed and its directory removed.
func TestCancelledBatchLeavesNoProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the standard library for a few seconds: run without -short")
	}
	dir := t.TempDir()
	c := testConfig()
	c.CacheDir = dir
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		b, err := NewBatch(ctx, c)
		if b != nil {
			b.Close()
		}
		done <- err
	}()
	compileOf(t, dir)
	cancel()
	select {
	case err := <-done:
		assert.ErrorIs(t, err, context.Canceled)
	case <-time.After(30 * time.Second):
		t.Fatal("NewBatch did not return after its context ended")
	}
	assert.True(t, waitFor(5*time.Second, func() bool { return len(marked(dir)) == 0 }), "left running: %v", marked(dir))
	batches, _ := filepath.Glob(filepath.Join(dir, batchGlob))
	assert.Empty(t, batches)
}

// TestEvictKeepsHalfOfMaxBinaries: the batch's children beyond half of
// MaxBinaries go, the least recently used first, never one in use.
func TestEvictKeepsHalfOfMaxBinaries(t *testing.T) {
	dir := t.TempDir()
	b := &Batch{cfg: Config{MaxBinaries: 40}, builds: map[string]*build{}}
	now := time.Now()
	for i, name := range []string{"a", "b", "c", "d"} {
		bl := &build{done: make(chan struct{}), bin: filepath.Join(dir, name), size: 10, used: now.Add(time.Duration(i) * time.Second)}
		close(bl.done)
		require.NoError(t, os.WriteFile(bl.bin, make([]byte, 10), 0o755))
		b.builds[name] = bl
		b.binBytes += 10
	}
	b.builds["a"].users = 1 // the oldest, in use
	b.evict()
	assert.Equal(t, int64(20), b.binBytes)
	for name, want := range map[string]bool{"a": true, "b": false, "c": false, "d": true} {
		_, kept := b.builds[name]
		assert.Equal(t, want, kept, name)
		_, err := os.Stat(filepath.Join(dir, name))
		assert.Equal(t, want, err == nil, name)
	}
}
