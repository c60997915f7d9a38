// Package progress keeps one status line up to date while something slow
// runs: the first build of the CUDA harness (about ten seconds of nvcc),
// a calibration, a sweep of launches. Whoever does the work writes plain
// lines to a Line, as it would to a log; the Line shows the newest with
// how long it has been running, refreshed every second, in place: on a
// terminal by rewriting the line, in a notebook by updating one output.
//
//	l := progress.New(progress.Terminal(os.Stderr), time.Second)
//	fmt.Fprintln(l, "cuda: building the harness with nvcc")
//	// ... "cuda: building the harness with nvcc (7 s)", ticking
//	l.Close() // the last status, with the total time, stays
//
// A Line writes nothing until it is given a line, so a step that turns
// out quick (the harness found in the cache) leaves no trace.
package progress

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/coalescing-course/coalesce/units"
)

// Show displays text as the current status; final is true for the last
// call, after which the status stays as it is.
type Show func(text string, final bool)

// Line is an io.Writer whose newest complete line is the status Show
// displays. It is safe for use by several goroutines; Close stops it.
type Line struct {
	show Show
	now  func() time.Time

	mu      sync.Mutex
	partial []byte
	status  string
	since   time.Time // when status was written
	start   time.Time // when the first line was written
	closed  bool
	stop    chan struct{}
	stopped chan struct{}
}

// New returns a Line that displays through show, refreshing the elapsed
// time every tick while a status is up (no refresh when tick <= 0).
func New(show Show, tick time.Duration) *Line {
	return newLine(show, tick, time.Now)
}

func newLine(show Show, tick time.Duration, now func() time.Time) *Line {
	l := &Line{show: show, now: now, stop: make(chan struct{}), stopped: make(chan struct{})}
	if tick <= 0 {
		close(l.stopped)
		return l
	}
	go func() {
		defer close(l.stopped)
		t := time.NewTicker(tick)
		defer t.Stop()
		for {
			select {
			case <-l.stop:
				return
			case <-t.C:
				l.mu.Lock()
				if !l.closed && l.status != "" {
					l.show(l.text(), false)
				}
				l.mu.Unlock()
			}
		}
	}()
	return l
}

// Write takes lines of text; each complete one becomes the status.
func (l *Line) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return 0, io.ErrClosedPipe
	}
	l.partial = append(l.partial, p...)
	for {
		i := bytes.IndexByte(l.partial, '\n')
		if i < 0 {
			break
		}
		line := strings.TrimSpace(string(l.partial[:i]))
		l.partial = l.partial[i+1:]
		if line == "" {
			continue
		}
		now := l.now()
		if l.status == "" {
			l.start = now
		}
		l.status, l.since = line, now
		l.show(l.text(), false)
	}
	return len(p), nil
}

// text is the status with its step's elapsed time, whole seconds.
func (l *Line) text() string {
	return fmt.Sprintf("%s (%s)", l.status, seconds(l.now().Sub(l.since)))
}

// Close stops the refreshing and leaves the last status up, with the time
// since the first line ("done in 12 s"). A Line that was given no line
// shows nothing. Close is idempotent.
func (l *Line) Close() error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return nil
	}
	l.closed = true
	close(l.stop)
	if rest := strings.TrimSpace(string(l.partial)); rest != "" {
		l.status, l.since = rest, l.now()
		if l.start.IsZero() {
			l.start = l.since
		}
	}
	if l.status != "" {
		l.show(fmt.Sprintf("%s (done in %s)", l.status, seconds(l.now().Sub(l.start))), true)
	}
	l.mu.Unlock()
	<-l.stopped
	return nil
}

// seconds writes an elapsed time in whole seconds, as units
// writes a time: a status line that ticks once a second.
func seconds(d time.Duration) string {
	return units.Seconds.Scale(1).Format(d.Round(time.Second).Seconds())
}

// Terminal returns a Show that rewrites one line of a terminal: a carriage
// return, the text, and an erase to the end of the line; the final call
// ends the line.
func Terminal(w io.Writer) Show {
	return func(text string, final bool) {
		end := ""
		if final {
			end = "\n"
		}
		fmt.Fprintf(w, "\r%s\x1b[K%s", text, end)
	}
}

// Lines returns a Show for a log or a pipe, where a line cannot be
// rewritten: it writes each new status once, on a line of its own, and
// the final one; the refreshes of the same status are dropped.
func Lines(w io.Writer) Show {
	var last string
	return func(text string, final bool) {
		status := text
		if i := strings.LastIndex(text, " ("); i >= 0 {
			status = text[:i]
		}
		if status == last && !final {
			return
		}
		last = status
		fmt.Fprintln(w, text)
	}
}
