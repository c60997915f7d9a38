// Package notebook reads Jupyter notebooks (nbformat 4, the .ipynb JSON) for
// the grader: the notebook's metadata, and the cells with their source as one
// string each. It never runs a cell; outputs are skipped, not trusted.
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
	"bytes"
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
	// Outputs are a code cell's saved outputs that carry data
	// (display_data, execute_result), in order; an output that is not a
	// JSON object with a data object is left out.
	Outputs []Output
}

// Output is one saved output of a code cell: its type and its data, MIME
// type to the JSON value as saved.
type Output struct {
	Type string                     `json:"output_type"`
	Data map[string]json.RawMessage `json:"data"`
}

// outputs keeps the outputs of raw that carry data, skipping any that do
// not decode: outputs are informational, never a reason to refuse a
// notebook.
func outputs(raw []json.RawMessage) []Output {
	var out []Output
	for _, r := range raw {
		var o Output
		if json.Unmarshal(r, &o) == nil && len(o.Data) > 0 {
			out = append(out, o)
		}
	}
	return out
}

// Read reads a notebook from r, refusing more than limit bytes (limit <= 0:
// no limit) with ErrTooLarge before parsing anything.
func Read(r io.Reader, limit int64) (*Notebook, error) {
	if limit > 0 {
		r = io.LimitReader(r, limit+1)
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("notebook: %w", err)
	}
	if limit > 0 && int64(len(data)) > limit {
		return nil, &Error{Cell: -1, Err: ErrTooLarge, Msg: fmt.Sprintf("more than %d bytes", limit)}
	}
	return Parse(data)
}

// rawNotebook is the JSON of a notebook, its parts left raw so that each can
// be checked and reported on its own.
type rawNotebook struct {
	Format   *json.RawMessage `json:"nbformat"`
	Minor    json.RawMessage  `json:"nbformat_minor"`
	Metadata json.RawMessage  `json:"metadata"`
	Cells    *json.RawMessage `json:"cells"`
}

type rawCell struct {
	Type    string          `json:"cell_type"`
	ID      json.RawMessage `json:"id"`
	Source  json.RawMessage `json:"source"`
	Outputs json.RawMessage `json:"outputs"`
}

// fastNotebook decodes a well-formed notebook in one call; anything it
// does not fit goes to the careful path, which says what is wrong.
type fastNotebook struct {
	Format   *int            `json:"nbformat"`
	Minor    int             `json:"nbformat_minor"`
	Metadata json.RawMessage `json:"metadata"`
	Cells    *[]fastCell     `json:"cells"`
}

type fastCell struct {
	Type    string            `json:"cell_type"`
	ID      string            `json:"id"`
	Source  json.RawMessage   `json:"source"`
	Outputs []json.RawMessage `json:"outputs"`
}

// Parse reads a notebook from its JSON.
func Parse(data []byte) (*Notebook, error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")) // a UTF-8 byte order mark
	var fast fastNotebook
	err := json.Unmarshal(data, &fast)
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return nil, syntaxError(data, se)
	}
	if err == nil && fast.Format != nil && *fast.Format == 4 && fast.Cells != nil {
		nb := &Notebook{Format: 4, Minor: fast.Minor, Metadata: parseMetadata(fast.Metadata), Cells: make([]Cell, len(*fast.Cells))}
		ok := true
		for i, c := range *fast.Cells {
			src, err := joinSource(c.Source)
			if err != nil {
				ok = false
				break
			}
			nb.Cells[i] = Cell{Index: i, ID: c.ID, Type: c.Type, Source: src, Outputs: outputs(c.Outputs)}
		}
		if ok {
			return nb, nil
		}
	}
	return parseCarefully(data)
}

func syntaxError(data []byte, se *json.SyntaxError) error {
	line, col := position(data, se.Offset)
	return &Error{Line: line, Column: col, Cell: -1, Err: ErrSyntax, Msg: se.Error()}
}

// parseCarefully reads a notebook part by part, so that what is wrong with
// it is reported precisely.
func parseCarefully(data []byte) (*Notebook, error) {
	if err := checkSyntax(data); err != nil {
		return nil, err
	}
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return nil, &Error{Cell: -1, Err: ErrNotNotebook, Msg: "want a JSON object with nbformat and cells, found " + jsonKind(trimmed)}
	}
	var raw rawNotebook
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, &Error{Cell: -1, Err: ErrNotNotebook, Msg: err.Error()}
	}
	if raw.Format != nil {
		var v int
		if json.Unmarshal(*raw.Format, &v) == nil && v != 4 {
			return nil, &Error{Cell: -1, Err: ErrVersion, Msg: fmt.Sprintf("nbformat %d, want 4 (save it from Jupyter 4 or later)", v)}
		}
	}
	if raw.Format == nil || raw.Cells == nil {
		missing := "nbformat"
		if raw.Format != nil {
			missing = "cells"
		} else if raw.Cells == nil {
			missing = "nbformat and cells"
		}
		return nil, &Error{Cell: -1, Err: ErrNotNotebook, Msg: "no " + missing + " field"}
	}
	nb := &Notebook{}
	if err := json.Unmarshal(*raw.Format, &nb.Format); err != nil {
		return nil, &Error{Cell: -1, Err: ErrNotNotebook, Msg: "nbformat is " + clip(string(*raw.Format)) + ", want an integer"}
	}
	if nb.Format != 4 {
		return nil, &Error{Cell: -1, Err: ErrVersion, Msg: fmt.Sprintf("nbformat %d, want 4 (save it from Jupyter 4 or later)", nb.Format)}
	}
	if len(raw.Minor) > 0 {
		_ = json.Unmarshal(raw.Minor, &nb.Minor) // informational only
	}
	nb.Metadata = parseMetadata(raw.Metadata)
	var cells []json.RawMessage
	if err := json.Unmarshal(*raw.Cells, &cells); err != nil {
		return nil, &Error{Cell: -1, Err: ErrNotNotebook, Msg: "cells is " + jsonKind(bytes.TrimSpace(*raw.Cells)) + ", want a list of cells"}
	}
	nb.Cells = make([]Cell, 0, len(cells))
	for i, c := range cells {
		var rc rawCell
		if err := json.Unmarshal(c, &rc); err != nil {
			return nil, &Error{Cell: i, Err: ErrNotNotebook, Msg: "want a cell object with cell_type and source, found " + jsonKind(bytes.TrimSpace(c))}
		}
		src, err := joinSource(rc.Source)
		if err != nil {
			return nil, &Error{Cell: i, Err: ErrNotNotebook, Msg: err.Error()}
		}
		var id string
		_ = json.Unmarshal(rc.ID, &id) // ids are optional before nbformat 4.5
		var outs []json.RawMessage
		_ = json.Unmarshal(rc.Outputs, &outs) // outputs are informational
		nb.Cells = append(nb.Cells, Cell{Index: i, ID: id, Type: rc.Type, Source: src, Outputs: outputs(outs)})
	}
	return nb, nil
}

// checkSyntax reports a JSON syntax error with its line and column.
func checkSyntax(data []byte) error {
	if json.Valid(data) {
		return nil
	}
	var v any
	err := json.Unmarshal(data, &v)
	var se *json.SyntaxError
	if !errors.As(err, &se) {
		msg := "unexpected end of input"
		if err != nil {
			msg = err.Error()
		}
		line, col := position(data, int64(len(data)))
		return &Error{Line: line, Column: col, Cell: -1, Err: ErrSyntax, Msg: msg}
	}
	line, col := position(data, se.Offset)
	return &Error{Line: line, Column: col, Cell: -1, Err: ErrSyntax, Msg: se.Error()}
}

// position turns a byte offset into a 1-based line and column (in bytes).
func position(data []byte, off int64) (line, col int) {
	off = min(max(off, 0), int64(len(data)))
	before := data[:off]
	line = 1 + bytes.Count(before, []byte("\n"))
	col = int(off) - (bytes.LastIndexByte(before, '\n') + 1)
	if col == 0 {
		col = 1
	}
	return line, col
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
