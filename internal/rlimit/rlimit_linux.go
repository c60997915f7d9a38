package rlimit

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"unsafe"
)

// resources pairs each limit with its resource, core files last-but-one
// and the address space last: once it is set, little more may be mapped.
func (l Limits) resources() []struct {
	name     string
	resource int
	value    uint64
} {
	return []struct {
		name     string
		resource int
		value    uint64
	}{
		{"RLIMIT_CPU", syscall.RLIMIT_CPU, l.CPU},
		{"RLIMIT_FSIZE", syscall.RLIMIT_FSIZE, l.FSize},
		{"RLIMIT_NOFILE", syscall.RLIMIT_NOFILE, l.NoFile},
		{"RLIMIT_CORE", syscall.RLIMIT_CORE, 0},
		{"RLIMIT_AS", syscall.RLIMIT_AS, l.AS},
	}
}

// Apply sets l on this process (setrlimit(2)).
func (l Limits) Apply() error {
	for _, r := range l.resources() {
		if r.value == 0 && r.resource != syscall.RLIMIT_CORE {
			continue
		}
		if err := syscall.Setrlimit(r.resource, &syscall.Rlimit{Cur: r.value, Max: r.value}); err != nil {
			return fmt.Errorf("rlimit: setrlimit(%s, %d): %w", r.name, r.value, err)
		}
	}
	return nil
}

// Set sets l on process pid (prlimit(2)): for a process already running,
// which may have done something before the limits hold.
func (l Limits) Set(pid int) error {
	for _, r := range l.resources() {
		if r.value == 0 && r.resource != syscall.RLIMIT_CORE {
			continue
		}
		lim := syscall.Rlimit{Cur: r.value, Max: r.value}
		_, _, errno := syscall.RawSyscall6(syscall.SYS_PRLIMIT64, uintptr(pid), uintptr(r.resource), uintptr(unsafe.Pointer(&lim)), 0, 0, 0)
		if errno != 0 {
			return fmt.Errorf("rlimit: prlimit(%d, %s, %d): %w", pid, r.name, r.value, errno)
		}
	}
	return nil
}

// Mapped returns the bytes of address space this process has mapped now
// (/proc/self/statm's first field, in pages): what RLIMIT_AS counts.
func Mapped() (uint64, error) {
	data, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0, fmt.Errorf("rlimit: %w", err)
	}
	f := strings.Fields(string(data))
	if len(f) == 0 {
		return 0, errors.New("rlimit: /proc/self/statm is empty")
	}
	pages, err := strconv.ParseUint(f[0], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("rlimit: /proc/self/statm: %w", err)
	}
	return pages * uint64(os.Getpagesize()), nil
}

// DieWithParent asks the kernel to SIGKILL this process when its parent
// dies (prctl PR_SET_PDEATHSIG), and fails if the parent died before it
// asked: its new parent would never be the one that meant to wait for it.
func DieWithParent() error {
	ppid := os.Getppid()
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_SET_PDEATHSIG, uintptr(syscall.SIGKILL), 0); errno != 0 {
		return fmt.Errorf("rlimit: prctl(PR_SET_PDEATHSIG): %w", errno)
	}
	if os.Getppid() != ppid {
		return errors.New("rlimit: the parent died before this process could ask to die with it")
	}
	return nil
}
