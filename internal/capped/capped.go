// Package capped holds the writer that keeps what an untrusted process
// prints within a bound: the first Max bytes, the last TailSize bytes
// (where a runtime's fatal error or a panic ends), and a count of what it
// dropped between them. A child printing without end then neither blocks
// on its pipe nor fills its parent's memory, and the reason it died is
// still seen. lab.Try's child and grader/sandbox's children write into
// one each.
package capped

import (
	"bytes"
	"sync"
)

// Writer is an io.Writer that keeps the first Max bytes written and the
// last TailSize of those it drops. The zero Max keeps nothing at the
// start. It is safe for concurrent use (a command's stdout and stderr may
// share one).
type Writer struct {
	Max, TailSize int

	mu      sync.Mutex
	buf     bytes.Buffer
	dropped int64
	tail    []byte
}

// Write keeps what fits and counts the rest; it never fails, so that the
// writing process is never blocked or killed by its parent's bound.
func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := min(max(0, w.Max-w.buf.Len()), len(p))
	w.buf.Write(p[:n])
	rest := p[n:]
	w.dropped += int64(len(rest))
	w.tail = append(w.tail, rest[max(0, len(rest)-w.TailSize):]...)
	if len(w.tail) > w.TailSize {
		w.tail = append(w.tail[:0], w.tail[len(w.tail)-w.TailSize:]...)
	}
	return len(p), nil
}

// Bytes returns a copy of the first Max bytes written.
func (w *Writer) Bytes() []byte {
	w.mu.Lock()
	defer w.mu.Unlock()
	return bytes.Clone(w.buf.Bytes())
}

// Start is the first Max bytes written, as text.
func (w *Writer) Start() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// Dropped is how many bytes past the first Max were written.
func (w *Writer) Dropped() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.dropped
}

// Tail is a copy of the last TailSize bytes dropped (fewer when fewer
// were dropped): where a process that printed past Max said why it died.
func (w *Writer) Tail() []byte {
	w.mu.Lock()
	defer w.mu.Unlock()
	return bytes.Clone(w.tail)
}
