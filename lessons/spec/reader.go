package spec

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// Line is one line of a spec stream: its 1-based number, and either the
// parsed Spec or the error that line has.
type Line struct {
	Num  int
	Spec Spec
	Err  error
}

// LineError is an error positioned at a line of a spec stream.
type LineError struct {
	Line int
	Err  error
}

func (e *LineError) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }

// Unwrap returns the error of the line.
func (e *LineError) Unwrap() error { return e.Err }

// Reader reads a stream of specs, one JSON object per line. Blank lines and
// lines whose first non-space character is # are skipped, so a sweep file
// can carry comments. A bad line does not stop the stream: it comes back as a
// Line with Err set and reading goes on.
type Reader struct {
	br  *bufio.Reader
	num int
}

// NewReader returns a Reader reading from r.
func NewReader(r io.Reader) *Reader {
	return &Reader{br: bufio.NewReaderSize(r, 64<<10)}
}

// Next returns the next spec line. At the end of the stream it returns
// io.EOF; any other error is the underlying reader's and ends the stream.
func (r *Reader) Next() (Line, error) {
	for {
		text, tooLong, err := r.readLine()
		if err != nil && (err != io.EOF || len(text) == 0 && !tooLong) {
			return Line{}, err
		}
		r.num++
		if tooLong {
			return Line{Num: r.num, Err: &LineError{Line: r.num, Err: fmt.Errorf("spec: %w: line longer than %d bytes", ErrSyntax, MaxLineBytes)}}, nil
		}
		trimmed := bytes.TrimSpace(text)
		if len(trimmed) == 0 || trimmed[0] == '#' {
			if err == io.EOF {
				return Line{}, io.EOF
			}
			continue
		}
		s, perr := Parse(trimmed)
		if perr != nil {
			return Line{Num: r.num, Err: &LineError{Line: r.num, Err: perr}}, nil
		}
		return Line{Num: r.num, Spec: s}, nil
	}
}

// readLine returns one line without its newline. A line over MaxLineBytes is
// consumed to its end and reported as tooLong rather than held in memory.
func (r *Reader) readLine() (line []byte, tooLong bool, err error) {
	var buf []byte
	for {
		chunk, err := r.br.ReadSlice('\n')
		if !tooLong {
			buf = append(buf, chunk...)
			if len(buf) > MaxLineBytes+1 {
				tooLong, buf = true, nil
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err == nil {
			buf = bytes.TrimSuffix(buf, []byte("\n"))
		}
		return buf, tooLong, err
	}
}

// ReadAll reads every line of r. It fails only on an I/O error; bad specs
// come back as Lines with Err set.
func ReadAll(r io.Reader) ([]Line, error) {
	rd := NewReader(r)
	var lines []Line
	for {
		l, err := rd.Next()
		if err == io.EOF {
			return lines, nil
		}
		if err != nil {
			return lines, fmt.Errorf("spec: reading: %w", err)
		}
		lines = append(lines, l)
	}
}
