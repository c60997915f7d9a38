package lab

import (
	"bytes"
	"fmt"
	"testing"

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
