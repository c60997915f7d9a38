package progress

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// clock is a fake time that the test moves by hand.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

type call struct {
	text  string
	final bool
}

type recorder struct {
	mu    sync.Mutex
	calls []call
	seen  chan call
}

func (r *recorder) show(text string, final bool) {
	r.mu.Lock()
	r.calls = append(r.calls, call{text, final})
	r.mu.Unlock()
	if r.seen != nil {
		select {
		case r.seen <- call{text, final}:
		default:
		}
	}
}

func TestLine(t *testing.T) {
	c := &clock{t: time.Unix(1000, 0)}
	r := &recorder{}
	l := newLine(r.show, 0, c.now)
	fmt.Fprint(l, "cuda: building the harness")
	assert.Empty(t, r.calls, "a partial line is not a status yet")
	c.add(2 * time.Second)
	fmt.Fprint(l, " with nvcc\n\n") // the blank line is no status
	c.add(9400 * time.Millisecond)
	fmt.Fprintln(l, "calibrate: 1/8 probe")
	c.add(1600 * time.Millisecond)
	require.NoError(t, l.Close())
	require.NoError(t, l.Close(), "Close twice")
	// Each status counts from when it was written; the last line the time
	// from the first: 9.4 + 1.6 = 11 s.
	assert.Equal(t, []call{
		{"cuda: building the harness with nvcc (0 s)", false},
		{"calibrate: 1/8 probe (0 s)", false},
		{"calibrate: 1/8 probe (done in 11 s)", true},
	}, r.calls)
	_, err := fmt.Fprintln(l, "late")
	assert.Error(t, err, "a closed Line takes no more lines")
}

func TestLineQuiet(t *testing.T) {
	r := &recorder{}
	l := New(r.show, time.Millisecond)
	time.Sleep(5 * time.Millisecond)
	require.NoError(t, l.Close())
	assert.Empty(t, r.calls, "a Line given no line shows nothing, not even when closed")
}

func TestLineCloseKeepsPartialLine(t *testing.T) {
	r := &recorder{}
	c := &clock{t: time.Unix(0, 0)}
	l := newLine(r.show, 0, c.now)
	fmt.Fprint(l, "sweep: 3/4")
	require.NoError(t, l.Close())
	assert.Equal(t, []call{{"sweep: 3/4 (done in 0 s)", true}}, r.calls)
}

func TestLineRefreshes(t *testing.T) {
	c := &clock{t: time.Unix(0, 0)}
	r := &recorder{seen: make(chan call, 1)}
	l := newLine(r.show, time.Millisecond, c.now)
	defer l.Close()
	fmt.Fprintln(l, "cuda: building")
	<-r.seen // the line itself
	c.add(3 * time.Second)
	deadline := time.After(10 * time.Second)
	for {
		select {
		case got := <-r.seen:
			if got.text == "cuda: building (3 s)" {
				assert.False(t, got.final)
				return
			}
		case <-deadline:
			t.Fatalf("no refresh showing 3 s; calls: %v", r.calls)
		}
	}
}

func TestTerminal(t *testing.T) {
	var b bytes.Buffer
	show := Terminal(&b)
	show("a (1 s)", false)
	show("a (2 s)", false)
	show("a (done in 2 s)", true)
	assert.Equal(t, "\ra (1 s)\x1b[K\ra (2 s)\x1b[K\ra (done in 2 s)\x1b[K\n", b.String())
}

func TestLines(t *testing.T) {
	var b bytes.Buffer
	show := Lines(&b)
	for _, c := range []call{{"a (0 s)", false}, {"a (1 s)", false}, {"b (0 s)", false}, {"b (5 s)", false}, {"b (done in 6 s)", true}} {
		show(c.text, c.final)
	}
	assert.Equal(t, []string{"a (0 s)", "b (0 s)", "b (done in 6 s)"}, strings.Split(strings.TrimSpace(b.String()), "\n"))
}
