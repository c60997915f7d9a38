package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"unsafe"
)

// helperEnv names the environment variable that makes a process started
// from this program's own binary the sandbox's helper: it sets the limits
// the variable holds, asks to be killed with its parent, and executes the
// program its arguments name. The sandbox starts go build so, and passes
// the same binary to go build as -toolexec, so that every compiler and
// linker the go command runs is started through it too; and the child.
// The limits then hold from the first instruction of each program (no
// prlimit on a process already running), and each process of a build dies
// with the one that started it: a killed grader takes its builds along.
const helperEnv = "COALESCE_SANDBOX_HELPER"

// exitLimits is the exit status of a helper, or a child, that cannot set
// its limits or execute its program: the machine's problem, not the
// kernel's.
const exitLimits = 97

// limits are the resource limits a helper sets (soft and hard alike; 0
// leaves one as it is), and whether the program it executes loses
// helperEnv from its environment (the child does; a build keeps it, for
// the tools it runs).
type limits struct {
	AS, CPU, FSize, NoFile uint64
	Strip                  bool
}

// String is the form helperEnv holds: "as=N,cpu=N,fsize=N,nofile=N,strip=1".
func (l limits) String() string {
	strip := 0
	if l.Strip {
		strip = 1
	}
	return fmt.Sprintf("as=%d,cpu=%d,fsize=%d,nofile=%d,strip=%d", l.AS, l.CPU, l.FSize, l.NoFile, strip)
}

// parseLimits reads limits' String.
func parseLimits(s string) (limits, error) {
	var l limits
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(kv, "=")
		n, err := strconv.ParseUint(v, 10, 64)
		if !ok || err != nil {
			return l, fmt.Errorf("sandbox helper: %s=%q: want key=number in %q", k, v, s)
		}
		switch k {
		case "as":
			l.AS = n
		case "cpu":
			l.CPU = n
		case "fsize":
			l.FSize = n
		case "nofile":
			l.NoFile = n
		case "strip":
			l.Strip = n == 1
		default:
			return l, fmt.Errorf("sandbox helper: unknown limit %q in %q", k, s)
		}
	}
	return l, nil
}

// The helper runs before main, in any program that links this package:
// the sandbox's builds and children start this same binary.
func init() {
	spec, ok := os.LookupEnv(helperEnv)
	if !ok || len(os.Args) < 2 {
		return
	}
	err := helper(spec, os.Args[1:])
	fmt.Fprintf(os.Stderr, "%v\n", err)
	os.Exit(exitLimits)
}

// helper sets the limits spec names and executes args; it returns only
// when it cannot.
func helper(spec string, args []string) error {
	l, err := parseLimits(spec)
	if err != nil {
		return err
	}
	ppid := os.Getppid()
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_SET_PDEATHSIG, uintptr(syscall.SIGKILL), 0); errno != 0 {
		return fmt.Errorf("sandbox helper: prctl(PR_SET_PDEATHSIG): %v", errno)
	}
	if os.Getppid() != ppid {
		return errors.New("sandbox helper: the parent died before the helper could ask to die with it")
	}
	path := args[0]
	if !strings.Contains(path, "/") {
		if path, err = exec.LookPath(path); err != nil {
			return fmt.Errorf("sandbox helper: %w", err)
		}
	}
	env := os.Environ()
	if l.Strip {
		kept := env[:0]
		for _, e := range env {
			if !strings.HasPrefix(e, helperEnv+"=") {
				kept = append(kept, e)
			}
		}
		env = kept
	}
	// Everything execve needs is made before the limits: the address
	// space limit may be below what this process has mapped already.
	argv0, err := syscall.BytePtrFromString(path)
	if err != nil {
		return fmt.Errorf("sandbox helper: %w", err)
	}
	argv, err := syscall.SlicePtrFromStrings(args)
	if err != nil {
		return fmt.Errorf("sandbox helper: %w", err)
	}
	envv, err := syscall.SlicePtrFromStrings(env)
	if err != nil {
		return fmt.Errorf("sandbox helper: %w", err)
	}
	for _, lim := range []struct {
		resource int
		value    uint64
	}{
		{syscall.RLIMIT_CPU, l.CPU}, {syscall.RLIMIT_FSIZE, l.FSize}, {syscall.RLIMIT_NOFILE, l.NoFile},
		{syscall.RLIMIT_CORE, 0}, // no core file: it would write memory where the file size limit does not reach
		{syscall.RLIMIT_AS, l.AS},
	} {
		if lim.value == 0 && lim.resource != syscall.RLIMIT_CORE {
			continue
		}
		if err := syscall.Setrlimit(lim.resource, &syscall.Rlimit{Cur: lim.value, Max: lim.value}); err != nil {
			return fmt.Errorf("sandbox helper: setrlimit(%d, %d): %w", lim.resource, lim.value, err)
		}
	}
	_, _, errno := syscall.RawSyscall(syscall.SYS_EXECVE, uintptr(unsafe.Pointer(argv0)), uintptr(unsafe.Pointer(&argv[0])), uintptr(unsafe.Pointer(&envv[0])))
	return fmt.Errorf("sandbox helper: exec %s: %v", path, errno)
}
