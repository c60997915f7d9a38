//go:build !unix

package procgroup

import (
	"os"
	"os/exec"
	"time"
)

// Own leaves cmd as it is where there are no process groups: the end of
// its context stops the program alone.
func Own(*exec.Cmd, os.Signal) {}

// Kill cannot see a group here; the program itself was stopped.
func Kill(int, time.Duration) bool { return true }

// Alive cannot see a group here.
func Alive(int) bool { return false }
