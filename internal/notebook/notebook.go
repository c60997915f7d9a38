// Package notebook reads Jupyter notebooks (nbformat 4, the .ipynb JSON) for
// the grader: the notebook's metadata, and the cells with their source as one
// string each. It never runs a cell; outputs are skipped as they stream
// past (only small JSON data is kept), so a notebook's size is bounded by
// its sources, not its plots.
//
// A notebook is a JSON object
//
//	{"nbformat": 4, "nbformat_minor": 5,
//	 "metadata": {"kernelspec": {"name": "gonb", "language": "go"},
//	              "coalesce": {"learner": "Ada Lovelace"}},
//	 "cells": [{"cell_type": "code", "source": ["%%\n", "grader.Check(\"01-sectors/sectors-float\", 4)\n"]}]}
//
// whose cell sources are a string or a list of strings (nbformat allows
// both). What is not such an object comes back as an *Error that says where
// and why, wrapping one of the Err variables.
//
// SplitGoNB takes a cell of the GoNB kernel apart: its special lines (%magic,
// !shell) and the %% line that starts the body of main.
package notebook

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Errors a caller may branch on with errors.Is.
var (
	// ErrSyntax is a file that is not valid JSON.
	ErrSyntax = errors.New("not valid JSON")
	// ErrNotNotebook is valid JSON that is not a notebook: not an object,
	// or without nbformat and a list of cells.
	ErrNotNotebook = errors.New("not a Jupyter notebook")
	// ErrVersion is a notebook of an nbformat other than 4.
	ErrVersion = errors.New("unsupported nbformat")
	// ErrTooLarge is a file over the size limit given to Read.
	ErrTooLarge = errors.New("file too large")
)

// Error is a notebook that could not be read, with where it went wrong.
type Error struct {
	// Line and Column locate a JSON syntax error, 1-based; 0 when the
	// error has no position.
	Line, Column int
	// Cell is the index of the cell at fault, or -1.
	Cell int
	// Msg says what was found and what is wanted.
	Msg string
	// Err is one of the Err variables.
	Err error
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("notebook: ")
	if e.Line > 0 {
		fmt.Fprintf(&b, "line %d, column %d: ", e.Line, e.Column)
	}
	if e.Cell >= 0 {
		fmt.Fprintf(&b, "cell %d: ", e.Cell)
	}
	b.WriteString(e.Err.Error())
	if e.Msg != "" {
		b.WriteString(": ")
		b.WriteString(e.Msg)
	}
	return b.String()
}

// Unwrap returns the sentinel the Error wraps.
func (e *Error) Unwrap() error { return e.Err }

// Notebook is what the grader needs of a notebook.
type Notebook struct {
	// Format and Minor are nbformat and nbformat_minor.
	Format, Minor int
	Metadata      Metadata
	Cells         []Cell
}

// Metadata is the part of the notebook's metadata the grader reads.
type Metadata struct {
	// KernelName and KernelLanguage are metadata.kernelspec.name and
	// .language; LanguageName is metadata.language_info.name. Each is ""
	// when absent.
	KernelName, KernelLanguage, LanguageName string
	// Coalesce is true when metadata.coalesce is present (an object).
	Coalesce bool
	// Learner is metadata.coalesce.learner, trimmed; Lesson is
	// metadata.coalesce.lesson.
	Learner, Lesson string
	// Authors are the names in metadata.authors, nbformat's own field.
	Authors []string
}

// IsGo reports whether the metadata names a Go kernel (GoNB, or any kernel
// whose language is Go) or names no kernel at all.
func (m Metadata) IsGo() bool {
	if m.KernelName == "" && m.KernelLanguage == "" && m.LanguageName == "" {
		return true
	}
	isGo := func(s string) bool { return strings.EqualFold(s, "go") || strings.EqualFold(s, "golang") }
	return strings.EqualFold(m.KernelName, "gonb") || isGo(m.KernelLanguage) || isGo(m.LanguageName)
}

// Kernel describes the kernel the metadata names, for a message:
// "python3 (python)".
func (m Metadata) Kernel() string {
	lang := m.KernelLanguage
	if lang == "" {
		lang = m.LanguageName
	}
	switch {
	case m.KernelName != "" && lang != "":
		return fmt.Sprintf("%s (%s)", m.KernelName, lang)
	case m.KernelName != "":
		return m.KernelName
	case lang != "":
		return lang
	}
	return "none named"
}

// Cell types.
const (
	Code     = "code"
	Markdown = "markdown"
	Raw      = "raw"
)

// Cell is one cell: its place in the notebook, its id (nbformat 4.5), its
// type and its source joined into one string.
type Cell struct {
	Index  int
	ID     string
	Type   string
	Source string
	// Outputs are a code cell's saved outputs that carry a data object
	// (display_data, execute_result), in order; an output that is not a
	// JSON object with a data object is left out.
	Outputs []Output
}

// Output is one saved output of a code cell: its type and the JSON values
// of its data (MIME types application/json and .../...+json, each kept when
// at most 64 KiB), MIME type to the value as saved, and its text/plain
// value while the notebook's text kept stays within 1 MiB (the grader reads
// the names a display shows). Images and HTML are skipped as the notebook
// is read: the grader reads records, not displays.
type Output struct {
	Type string                     `json:"output_type"`
	Data map[string]json.RawMessage `json:"data"`
}

// maxOutputData is the largest value of an output's data kept, in bytes:
// the records the grader reads are a few hundred bytes; a plot's PNG or a
// long text is skipped, never held.
const maxOutputData = 64 << 10

// maxTextKept bounds the text/plain values kept of one notebook, in bytes.
const maxTextKept = 1 << 20

// keepData reports whether an output's data of this MIME type is kept: JSON
// (application/json, application/...+json), the types records are saved
// as, and text/plain (within maxTextKept).
func keepData(mime string) bool {
	return strings.HasSuffix(mime, "+json") || strings.HasSuffix(mime, "/json") || mime == "text/plain"
}

// limited reads at most n bytes from r, then fails with ErrTooLarge rather
// than ending quietly, so a cut file is never read as a truncated one.
type limited struct {
	r io.Reader
	n int64
}

func (l *limited) Read(p []byte) (int, error) {
	if l.n < 0 {
		return 0, errTooLarge
	}
	if int64(len(p)) > l.n+1 {
		p = p[:l.n+1]
	}
	k, err := l.r.Read(p)
	l.n -= int64(k)
	if l.n < 0 {
		return k, errTooLarge
	}
	return k, err
}

var errTooLarge = errors.New("over the limit")

// Read reads a notebook from r as a stream, refusing more than limit bytes
// (limit <= 0: no limit) with ErrTooLarge. The cells' sources and metadata
// are kept; outputs are skipped as they are read, except the small JSON
// values of their data (see Output), so a notebook's plots and logs are
// never held in memory. When r is an io.ReadSeeker (a file), a syntax
// error's line and column are found by reading it again from the start.
func Read(r io.Reader, limit int64) (*Notebook, error) {
	in := r
	if limit > 0 {
		in = &limited{r: r, n: limit}
	}
	br := bufio.NewReader(in)
	bom := 0
	if b, _ := br.Peek(3); bytes.Equal(b, []byte("\xef\xbb\xbf")) {
		_, _ = br.Discard(3)
		bom = 3
	}
	p := &parser{dec: json.NewDecoder(br)}
	nb, err := p.notebook()
	if err == nil {
		return nb, nil
	}
	switch {
	case errors.Is(err, errTooLarge):
		return nil, &Error{Cell: -1, Err: ErrTooLarge, Msg: fmt.Sprintf("more than %d bytes", limit)}
	case errors.As(err, new(*Error)):
		return nil, err
	}
	var se *json.SyntaxError
	e := &Error{Cell: -1, Err: ErrSyntax}
	off := int64(bom) + p.dec.InputOffset()
	switch {
	case errors.As(err, &se):
		// se.Offset is not always from the start of the stream (the
		// decoder counts from the value it was reading); InputOffset is
		// where that value, or the bad token, starts.
		e.Msg = se.Error()
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		e.Msg = "unexpected end of input"
		if p.empty {
			e.Msg = "the file is empty"
		}
	default:
		return nil, fmt.Errorf("notebook: %w", err) // the reader failed
	}
	if rs, ok := r.(io.ReadSeeker); ok {
		e.Line, e.Column = position(rs, off)
	}
	return nil, e
}

// Parse reads a notebook from its JSON: Read on data, without a limit.
func Parse(data []byte) (*Notebook, error) {
	return Read(bytes.NewReader(data), 0)
}

// parser walks a notebook's JSON token by token. A value of the wrong
// shape is noted in bad (the first one) and skipped, and the walk goes on,
// so that a syntax error later in the file, or an nbformat other than 4
// after the cells, is what is reported, as it is the more basic fault.
type parser struct {
	dec   *json.Decoder
	bad   *Error
	empty bool
	// textKept counts the text/plain bytes kept so far (maxTextKept).
	textKept int
}

func (p *parser) fail(cell int, msg string) {
	if p.bad == nil {
		p.bad = &Error{Cell: cell, Err: ErrNotNotebook, Msg: msg}
	}
}

// skip is a value decoded for nothing: the decoder checks its syntax and
// moves past it without building anything.
type skip struct{}

func (*skip) UnmarshalJSON([]byte) error { return nil }

// capped keeps a value of at most maxOutputData bytes.
type capped struct{ b json.RawMessage }

func (c *capped) UnmarshalJSON(b []byte) error {
	if len(b) <= maxOutputData {
		c.b = append(json.RawMessage(nil), b...)
	}
	return nil
}

// rest consumes what is left of a value whose first token was tok.
func (p *parser) rest(tok json.Token) error {
	depth := 0
	for {
		if d, ok := tok.(json.Delim); ok {
			if d == '{' || d == '[' {
				depth++
			} else {
				depth--
			}
		}
		if depth == 0 {
			return nil
		}
		var err error
		if tok, err = p.dec.Token(); err != nil {
			return err
		}
	}
}

func (p *parser) notebook() (*Notebook, error) {
	tok, err := p.dec.Token()
	if err == io.EOF {
		p.empty = true
	}
	if err != nil {
		return nil, err
	}
	if tok != json.Delim('{') {
		kind := tokenKind(tok)
		if err := p.rest(tok); err != nil {
			return nil, err
		}
		return nil, &Error{Cell: -1, Err: ErrNotNotebook, Msg: "want a JSON object with nbformat and cells, found " + kind}
	}
	nb := &Notebook{}
	var format, minor, metadata json.RawMessage
	hasCells := false
	for p.dec.More() {
		key, err := p.dec.Token()
		if err != nil {
			return nil, err
		}
		switch key {
		case "nbformat":
			err = p.dec.Decode(&format)
		case "nbformat_minor":
			err = p.dec.Decode(&minor)
		case "metadata":
			err = p.dec.Decode(&metadata)
		case "cells":
			hasCells = true
			nb.Cells, err = p.cells()
		default:
			err = p.dec.Decode(&skip{})
		}
		if err != nil {
			return nil, err
		}
	}
	if _, err := p.dec.Token(); err != nil { // the closing }
		return nil, err
	}
	if tok, err := p.dec.Token(); err != io.EOF {
		if err != nil {
			return nil, err
		}
		return nil, &Error{Cell: -1, Err: ErrSyntax, Msg: tokenKind(tok) + " after the notebook's object"}
	}
	var v int
	if format != nil && json.Unmarshal(format, &v) == nil && v != 4 {
		return nil, &Error{Cell: -1, Err: ErrVersion, Msg: fmt.Sprintf("nbformat %d, want 4 (save it from Jupyter 4 or later)", v)}
	}
	switch {
	case format == nil && !hasCells:
		return nil, &Error{Cell: -1, Err: ErrNotNotebook, Msg: "no nbformat and cells field"}
	case format == nil:
		return nil, &Error{Cell: -1, Err: ErrNotNotebook, Msg: "no nbformat field"}
	case !hasCells:
		return nil, &Error{Cell: -1, Err: ErrNotNotebook, Msg: "no cells field"}
	case json.Unmarshal(format, &nb.Format) != nil:
		return nil, &Error{Cell: -1, Err: ErrNotNotebook, Msg: "nbformat is " + clip(string(format)) + ", want an integer"}
	case p.bad != nil:
		return nil, p.bad
	}
	_ = json.Unmarshal(minor, &nb.Minor) // informational only
	nb.Metadata = parseMetadata(metadata)
	if nb.Cells == nil {
		nb.Cells = []Cell{}
	}
	return nb, nil
}

// cells reads the list of cells.
func (p *parser) cells() ([]Cell, error) {
	tok, err := p.dec.Token()
	if err != nil {
		return nil, err
	}
	if tok != json.Delim('[') {
		p.fail(-1, "cells is "+tokenKind(tok)+", want a list of cells")
		return nil, p.rest(tok)
	}
	cells := []Cell{}
	for i := 0; p.dec.More(); i++ {
		c, err := p.cell(i)
		if err != nil {
			return nil, err
		}
		cells = append(cells, c)
	}
	_, err = p.dec.Token() // ]
	return cells, err
}

func (p *parser) cell(i int) (Cell, error) {
	c := Cell{Index: i}
	tok, err := p.dec.Token()
	if err != nil {
		return c, err
	}
	if tok != json.Delim('{') {
		p.fail(i, "want a cell object with cell_type and source, found "+tokenKind(tok))
		return c, p.rest(tok)
	}
	for p.dec.More() {
		key, err := p.dec.Token()
		if err != nil {
			return c, err
		}
		switch key {
		case "cell_type", "id":
			var v any
			if err := p.dec.Decode(&v); err != nil {
				return c, err
			}
			if key == "id" {
				c.ID = str(v) // ids are optional before nbformat 4.5
			} else {
				c.Type = str(v)
			}
		case "source":
			var raw json.RawMessage
			if err := p.dec.Decode(&raw); err != nil {
				return c, err
			}
			if c.Source, err = joinSource(raw); err != nil {
				p.fail(i, err.Error())
			}
		case "outputs":
			if c.Outputs, err = p.outputs(); err != nil {
				return c, err
			}
		default:
			if err := p.dec.Decode(&skip{}); err != nil {
				return c, err
			}
		}
	}
	_, err = p.dec.Token() // }
	return c, err
}

// outputs reads a code cell's outputs: informational, so one of the wrong
// shape is left out, never a reason to refuse the notebook.
func (p *parser) outputs() ([]Output, error) {
	tok, err := p.dec.Token()
	if err != nil || tok != json.Delim('[') {
		return nil, cmp.Or(err, p.rest(tok))
	}
	var outs []Output
	for p.dec.More() {
		tok, err := p.dec.Token()
		if err != nil {
			return nil, err
		}
		if tok != json.Delim('{') {
			if err := p.rest(tok); err != nil {
				return nil, err
			}
			continue
		}
		var o Output
		for p.dec.More() {
			key, err := p.dec.Token()
			if err != nil {
				return nil, err
			}
			switch key {
			case "output_type":
				var v any
				err = p.dec.Decode(&v)
				o.Type = str(v)
			case "data":
				o.Data, err = p.data()
			default:
				err = p.dec.Decode(&skip{})
			}
			if err != nil {
				return nil, err
			}
		}
		if _, err := p.dec.Token(); err != nil {
			return nil, err
		}
		if o.Data != nil {
			outs = append(outs, o)
		}
	}
	_, err = p.dec.Token()
	return outs, err
}

// data reads an output's data object, keeping the values keepData wants
// up to maxOutputData bytes; nil when it is not an object.
func (p *parser) data() (map[string]json.RawMessage, error) {
	tok, err := p.dec.Token()
	if err != nil || tok != json.Delim('{') {
		return nil, cmp.Or(err, p.rest(tok))
	}
	data := map[string]json.RawMessage{}
	for p.dec.More() {
		key, err := p.dec.Token()
		if err != nil {
			return nil, err
		}
		mime, _ := key.(string)
		if !keepData(mime) || mime == "text/plain" && p.textKept >= maxTextKept {
			if err := p.dec.Decode(&skip{}); err != nil {
				return nil, err
			}
			continue
		}
		var c capped
		if err := p.dec.Decode(&c); err != nil {
			return nil, err
		}
		if c.b != nil {
			data[mime] = c.b
			if mime == "text/plain" {
				p.textKept += len(c.b)
			}
		}
	}
	_, err = p.dec.Token()
	return data, err
}

// position turns a byte offset of r into the 1-based line and column (in
// bytes) of the byte there, reading r again from its start; 0, 0 when it
// cannot.
func position(r io.ReadSeeker, off int64) (line, col int) {
	if _, err := r.Seek(0, io.SeekStart); err != nil {
		return 0, 0
	}
	br := bufio.NewReader(io.LimitReader(r, max(off, 0)))
	line, col = 1, 0
	for {
		b, err := br.ReadByte()
		if err != nil {
			break
		}
		if b == '\n' {
			line, col = line+1, 0
		} else {
			col++
		}
	}
	return line, col + 1
}

func tokenKind(tok json.Token) string {
	switch t := tok.(type) {
	case json.Delim:
		if t == '{' {
			return "an object"
		}
		return "a list"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case nil:
		return "null"
	}
	return "a number"
}

func joinSource(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", fmt.Errorf("source: %v", err)
		}
		return s, nil
	}
	var parts []string
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", fmt.Errorf("source is %s, want a string or a list of strings", jsonKind(raw))
	}
	return strings.Join(parts, ""), nil
}

func parseMetadata(raw json.RawMessage) Metadata {
	var m Metadata
	var md struct {
		Kernelspec struct {
			Name     any `json:"name"`
			Language any `json:"language"`
		}
		LanguageInfo struct {
			Name any `json:"name"`
		}
		Authors []struct {
			Name any `json:"name"`
		}
	}
	// Metadata is free-form; a part of the wrong shape is left out rather
	// than failing the notebook, so decode the parts one at a time.
	var parts map[string]json.RawMessage
	if json.Unmarshal(raw, &parts) != nil {
		return m
	}
	_ = json.Unmarshal(parts["kernelspec"], &md.Kernelspec)
	_ = json.Unmarshal(parts["language_info"], &md.LanguageInfo)
	_ = json.Unmarshal(parts["authors"], &md.Authors)
	m.KernelName = str(md.Kernelspec.Name)
	m.KernelLanguage = str(md.Kernelspec.Language)
	m.LanguageName = str(md.LanguageInfo.Name)
	for _, a := range md.Authors {
		if name := strings.TrimSpace(str(a.Name)); name != "" {
			m.Authors = append(m.Authors, name)
		}
	}
	if c := bytes.TrimSpace(parts["coalesce"]); len(c) > 0 && c[0] == '{' {
		m.Coalesce = true
		var co struct {
			Learner any `json:"learner"`
			Lesson  any `json:"lesson"`
		}
		_ = json.Unmarshal(c, &co)
		m.Learner = strings.TrimSpace(str(co.Learner))
		m.Lesson = strings.TrimSpace(str(co.Lesson))
	}
	return m
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

func jsonKind(b []byte) string {
	if len(b) == 0 {
		return "nothing"
	}
	switch b[0] {
	case '{':
		return "an object"
	case '[':
		return "a list"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}
