//go:build unix

package procgroup

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// Own makes cmd, once started, the leader of a new process group, whose id
// is its pid, and makes the end of cmd's context send sig to the whole
// group (a sig that is not a syscall.Signal sends SIGKILL). What else
// cmd.SysProcAttr sets is kept.
func Own(cmd *exec.Cmd, sig os.Signal) {
	s, ok := sig.(syscall.Signal)
	if !ok {
		s = syscall.SIGKILL
	}
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, s) }
}

// Kill kills every process of group pgid and waits up to within for them
// to be gone; it reports whether they are.
func Kill(pgid int, within time.Duration) bool {
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	deadline := time.Now().Add(within)
	for {
		if !Alive(pgid) {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Alive reports whether a process of group pgid still runs. A zombie
// does not: it has ended, and waits only for its parent (which, for an
// orphan, a container's first process may never be) to collect it. Where
// /proc cannot tell, any process of the group counts.
func Alive(pgid int) bool {
	stats, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil || len(stats) == 0 {
		return syscall.Kill(-pgid, 0) == nil
	}
	for _, p := range stats {
		data, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp ...: comm may hold spaces and
		// parentheses, so the fields are counted from its last ')'.
		i := bytes.LastIndexByte(data, ')')
		if i < 0 {
			continue
		}
		f := bytes.Fields(data[i+1:])
		if len(f) < 3 {
			continue
		}
		if g, err := strconv.Atoi(string(f[2])); err == nil && g == pgid && f[0][0] != 'Z' && f[0][0] != 'X' {
			return true
		}
	}
	return false
}
