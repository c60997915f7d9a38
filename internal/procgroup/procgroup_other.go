//go:build !unix

package cuda

import (
	"os/exec"
	"time"
)

// setGroup does nothing where there are no process groups: the timeout
// interrupts the program alone.
func setGroup(*exec.Cmd) {}

// killGroup cannot see a group here; the program itself was killed.
func killGroup(int, time.Duration) bool { return true }
