package measure

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// MaxLineBytes is the longest line Reader reads: a launch is well under a
// kilobyte, a provenance a few.
const MaxLineBytes = 1 << 20

// SyntaxError is a line of a run file that is not what the format says.
type SyntaxError struct {
	File string // "" when not read from a named file
	Line int
	Err  error
}

func (e *SyntaxError) Error() string {
	if e.File == "" {
		return fmt.Sprintf("measure: line %d: %v", e.Line, e.Err)
	}
	return fmt.Sprintf("measure: %s:%d: %v", e.File, e.Line, e.Err)
}

// Unwrap returns the error of the line.
func (e *SyntaxError) Unwrap() error { return e.Err }

// record is a launch line as the file holds it: a Launch, and the derived
// fields the course's first build wrote, accepted and dropped.
type record struct {
	Launch
	UsefulBytes json.RawMessage `json:"useful_bytes,omitempty"`
	UsefulGBps  json.RawMessage `json:"useful_gbps,omitempty"`
	MemcpyGBps  json.RawMessage `json:"memcpy_gbps,omitempty"`
	OfMemcpy    json.RawMessage `json:"of_memcpy,omitempty"`
	MovedGBps   json.RawMessage `json:"moved_gbps,omitempty"`
}

// Reader reads a run file (see the package documentation).
type Reader struct {
	file string
	sc   *bufio.Scanner
	line int
	prov *Provenance
	// pending holds the records of the legacy whole-document form.
	pending []record
	legacy  bool
}

// NewReader returns a Reader of r; file names it in errors ("" for none).
func NewReader(r io.Reader, file string) *Reader {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), MaxLineBytes)
	return &Reader{file: file, sc: sc}
}

// Provenance returns the run's provenance, once Next has read past it;
// nil when the file has none.
func (r *Reader) Provenance() *Provenance { return r.prov }

func (r *Reader) errorf(format string, args ...any) error {
	return &SyntaxError{File: r.file, Line: r.line, Err: fmt.Errorf(format, args...)}
}

// Next returns the next launch, or io.EOF after the last.
func (r *Reader) Next() (Launch, error) {
	for {
		if len(r.pending) > 0 {
			rec := r.pending[0]
			r.pending = r.pending[1:]
			return rec.Launch, nil
		}
		if r.legacy {
			return Launch{}, io.EOF
		}
		if !r.sc.Scan() {
			if err := r.sc.Err(); err != nil {
				r.line++
				return Launch{}, r.errorf("%v", err)
			}
			return Launch{}, io.EOF
		}
		r.line++
		text := bytes.TrimSpace(r.sc.Bytes())
		if len(text) == 0 {
			continue
		}
		var keys map[string]json.RawMessage
		if err := json.Unmarshal(text, &keys); err != nil {
			if r.line == 1 && text[0] == '{' {
				return r.readLegacy(text)
			}
			return Launch{}, r.errorf("not a JSON object: %v", err)
		}
		if _, ok := keys["records"]; ok {
			return r.readLegacy(text)
		}
		if raw, ok := keys["provenance"]; ok {
			if r.prov != nil || r.line != 1 {
				return Launch{}, r.errorf("a provenance line after the first line")
			}
			if len(keys) != 1 {
				return Launch{}, r.errorf("a provenance line holds the provenance alone")
			}
			p, err := decodeProvenance(raw)
			if err != nil {
				return Launch{}, r.errorf("%v", err)
			}
			r.prov = p
			continue
		}
		rec, err := decodeRecord(text)
		if err != nil {
			return Launch{}, r.errorf("%v", err)
		}
		return rec.Launch, nil
	}
}

// readLegacy reads the whole-document form {"provenance":..,"records":[..]},
// which spans the rest of the input.
func (r *Reader) readLegacy(first []byte) (Launch, error) {
	var doc bytes.Buffer
	doc.Write(first)
	for r.sc.Scan() {
		doc.WriteByte('\n')
		doc.Write(r.sc.Bytes())
	}
	if err := r.sc.Err(); err != nil {
		return Launch{}, r.errorf("%v", err)
	}
	var raw struct {
		Provenance json.RawMessage   `json:"provenance"`
		Records    []json.RawMessage `json:"records"`
	}
	dec := json.NewDecoder(&doc)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&raw); err != nil {
		return Launch{}, r.errorf("not a run file (JSON lines) nor a recorded reference ({\"provenance\":...,\"records\":[...]}): %v", err)
	}
	if raw.Provenance == nil {
		return Launch{}, r.errorf("a recorded reference without provenance")
	}
	p, err := decodeProvenance(raw.Provenance)
	if err != nil {
		return Launch{}, r.errorf("%v", err)
	}
	r.prov, r.legacy = p, true
	for i, rr := range raw.Records {
		rec, err := decodeRecord(rr)
		if err != nil {
			return Launch{}, r.errorf("record %d: %v", i+1, err)
		}
		r.pending = append(r.pending, rec)
	}
	return r.Next()
}

func decodeProvenance(raw json.RawMessage) (*Provenance, error) {
	var p Provenance
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("provenance: %v", err)
	}
	if err := p.check(); err != nil {
		return nil, err
	}
	return &p, nil
}

func decodeRecord(raw []byte) (record, error) {
	var rec record
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rec); err != nil {
		return record{}, fmt.Errorf("not a launch: %w", err)
	}
	if rec.Spec.Kernel == "" && rec.Error == "" {
		return record{}, errors.New(`a launch without "spec" (only the answer to a bad input line, with "error", has none)`)
	}
	if rec.CUDAError != "" && rec.Error == "" {
		return record{}, errors.New(`"cuda_error" without "error": a CUDA error is why a launch failed`)
	}
	if rec.Counters != "" && rec.Metrics == nil {
		return record{}, fmt.Errorf(`"counters" %q without "metrics": it says where the metrics come from`, rec.Counters)
	}
	return rec, nil
}

// Writer writes a run file.
type Writer struct {
	w     *bufio.Writer
	lines int
}

// NewWriter returns a Writer to w. Call Flush when done.
func NewWriter(w io.Writer) *Writer { return &Writer{w: bufio.NewWriter(w)} }

// WriteProvenance writes the provenance line, which must come first.
func (w *Writer) WriteProvenance(p Provenance) error {
	if w.lines > 0 {
		return errors.New("measure: the provenance must be the first line")
	}
	if err := p.check(); err != nil {
		return fmt.Errorf("measure: %w", err)
	}
	return w.put(struct {
		Provenance Provenance `json:"provenance"`
	}{p})
}

// Write writes one launch.
func (w *Writer) Write(l Launch) error { return w.put(l) }

func (w *Writer) put(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("measure: %w", err)
	}
	w.lines++
	w.w.Write(b)
	return w.w.WriteByte('\n')
}

// Flush writes what is buffered.
func (w *Writer) Flush() error { return w.w.Flush() }

// ReadSet reads a whole run file. origin is where it comes from; its GPU
// and When are filled from the provenance when the file has one.
func ReadSet(r io.Reader, file string, origin Origin) (*Set, error) {
	rd := NewReader(r, file)
	s := &Set{Origin: origin}
	for {
		l, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		s.Launches = append(s.Launches, l)
	}
	if p := rd.Provenance(); p != nil {
		s.Provenance = p
		s.Origin.GPU, s.Origin.When = p.Device.GPU, p.when()
	}
	return s, nil
}

// ReadFile reads the run file at path: a Set whose origin is the file
// (FromFile), labelled with the GPU and date of its provenance when it
// has one.
func ReadFile(path string) (*Set, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("measure: %w", err)
	}
	defer f.Close()
	return ReadSet(f, path, Origin{Kind: FromFile, File: filepath.Base(path)})
}

// WriteSet writes s as a run file: its provenance first, when it has one.
func WriteSet(w io.Writer, s *Set) error {
	mw := NewWriter(w)
	if s.Provenance != nil {
		if err := mw.WriteProvenance(*s.Provenance); err != nil {
			return err
		}
	}
	for _, l := range s.Launches {
		if err := mw.Write(l); err != nil {
			return err
		}
	}
	return mw.Flush()
}
