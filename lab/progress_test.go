package lab

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// Outside a notebook a slow step's status goes to Stderr a line at a
// time, with the final one: no terminal control codes in a log.
func TestStatusLineOutsideNotebook(t *testing.T) {
	var b bytes.Buffer
	Stderr = &b
	defer func() { Stderr = nil }()
	l := statusLine()
	fmt.Fprintln(l, "cuda: building the harness with nvcc")
	fmt.Fprintln(l, "cuda: timing: 0 of 2 launches")
	l.Close()
	assert.Equal(t, "cuda: building the harness with nvcc (0 s)\ncuda: timing: 0 of 2 launches (0 s)\ncuda: timing: 0 of 2 launches (done in 0 s)\n", b.String())
	assert.NotContains(t, b.String(), "\x1b")
}

// A step that takes longer than a second says so on the status line
// while it runs, and clears it; a quick one leaves nothing.
func TestWorking(t *testing.T) {
	var b bytes.Buffer
	old := Stderr
	Stderr = &b
	t.Cleanup(func() { Stderr = old })
	done := working("quick")
	done()
	assert.Empty(t, b.String(), "a quick step writes nothing")
	done = working("model: replaying every warp of 9 launches")
	time.Sleep(1200 * time.Millisecond)
	done()
	assert.Contains(t, b.String(), "model: replaying every warp of 9 launches")
}
