//go:build unix

package procgroup

import (
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

// A program that leaves a grandchild ignoring interrupts behind: the
// context's end interrupts the group, and Kill takes the grandchild too,
// which a kill of the program alone would have left running.
func TestKillTakesTheGrandchild(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh to start a process group with")
	}
	pidFile := filepath.Join(t.TempDir(), "pid")
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", `trap '' INT; sleep 60 & echo $! > "$1"; wait`, "sh", pidFile)
	Own(cmd, os.Interrupt)
	cmd.WaitDelay = 100 * time.Millisecond
	require.NoError(t, cmd.Start())
	_ = cmd.Wait()
	require.Error(t, ctx.Err(), "the program ran until its context ended")
	data, err := os.ReadFile(pidFile)
	require.NoError(t, err)
	grandchild, err := strconv.Atoi(strings.TrimSpace(string(data)))
	require.NoError(t, err)
	assert.True(t, Alive(cmd.Process.Pid), "the grandchild ignores the interrupt and still runs")
	assert.True(t, Kill(cmd.Process.Pid, 5*time.Second), "Kill waits until the group is gone")
	assert.False(t, Alive(cmd.Process.Pid), "grandchild %d is gone (or a zombie no one collects)", grandchild)
}

// Own keeps what the caller set in SysProcAttr besides the group.
func TestOwnKeepsTheAttributes(t *testing.T) {
	cmd := exec.Command("true")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: false, Noctty: true}
	Own(cmd, syscall.SIGKILL)
	assert.True(t, cmd.SysProcAttr.Setpgid)
	assert.True(t, cmd.SysProcAttr.Noctty)
	assert.NotNil(t, cmd.Cancel)
}
