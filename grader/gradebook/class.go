package gradebook

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/coalescing-course/coalesce/grader"
	"github.com/coalescing-course/coalesce/grader/gradebook/csvsafe"
	"github.com/coalescing-course/coalesce/grader/gradebook/intake"
	"github.com/coalescing-course/coalesce/internal/words"
)

// LearnerStatus is the status column of totals.csv: whether a learner's
// total can be taken as it is, so that a failure is never a silent zero.
type LearnerStatus string

// The statuses of a learner, from the one that most needs the instructor.
const (
	// StatusMissing: on the roster, no notebook found.
	StatusMissing LearnerStatus = "missing"
	// StatusUnreadable: some notebook of the learner could not be read
	// (its bad-notebook row says why); the total may lack its points.
	StatusUnreadable LearnerStatus = "unreadable"
	// StatusFlagged: graded, with something to check by hand (not on the
	// roster; the flags say what).
	StatusFlagged LearnerStatus = "flagged"
	// StatusPartial: graded, with some exercise of the assignment missing,
	// unreadable or naming an unknown id.
	StatusPartial LearnerStatus = "partial"
	// StatusGraded: every exercise of the assignment has a prediction.
	StatusGraded LearnerStatus = "graded"
)

// learnerStatus is the one place a learner's status is decided, from
// their rows, their submissions and the flags the caller found (not on
// the roster): the first of missing, unreadable, flagged, partial,
// graded that applies; flags lists every reason.
func learnerStatus(rows []Row, subs []*intake.Submission, flags []string) (LearnerStatus, []string) {
	flags = slices.Clip(flags)
	for _, s := range subs {
		flags = append(flags, intakeFlags(s)...)
	}
	var ignored []string
	for _, s := range subs {
		if s.Ignored != "" {
			ignored = append(ignored, filepath.Base(s.Path))
		}
	}
	if len(subs) == 0 {
		return StatusMissing, append(flags, "no notebook submitted")
	}
	if len(ignored) == len(subs) {
		return StatusMissing, append(flags, fmt.Sprintf("no notebook of the course submitted (not the course's, ignored: %s)", strings.Join(ignored, ", ")))
	}
	bad := 0
	for _, s := range subs {
		if s.Problem != "" {
			bad++
		}
	}
	count := map[Status]int{}
	for _, r := range rows {
		count[r.Status]++
	}
	var gaps []string
	for _, st := range []Status{Missing, Unreadable, UnknownQuestion} {
		if n := count[st]; n > 0 {
			gaps = append(gaps, fmt.Sprintf("%d %s", n, st))
		}
	}
	all := flags
	if len(gaps) > 0 {
		all = append(slices.Clip(all), "exercises: "+strings.Join(gaps, ", "))
	}
	switch {
	case bad > 0:
		return StatusUnreadable, append([]string{fmt.Sprintf("%d of %s could not be read", bad, words.Plural(len(subs), "notebook"))}, all...)
	case len(flags) > 0:
		return StatusFlagged, all
	case len(gaps) > 0:
		return StatusPartial, all
	}
	return StatusGraded, all
}

// intakeFlags returns what reading the submission found suspicious, one
// sentence each (its Notes): a possible copy, a duplicate notebook. Any
// makes the learner flagged. A file that could not be read at all (too
// large, not a regular file, not read in time) has its Problem set and
// counts as unreadable instead.
func intakeFlags(s *intake.Submission) []string {
	var out []string
	for i, f := range s.Flags {
		switch f {
		case intake.FlagPossibleCopy, intake.FlagDuplicate:
			out = append(out, s.Notes[i])
		}
	}
	return out
}

// times returns the newest modification time of subs' files and the latest
// time their attempt records hold, RFC 3339 in UTC, "" when unknown.
func times(subs []*intake.Submission, modTime func(string) (time.Time, bool)) (submitted, lastRun string) {
	var mod, run time.Time
	for _, s := range subs {
		if t, ok := modTime(s.Path); ok && t.After(mod) {
			mod = t
		}
		for _, a := range s.Found.Attempts {
			if a.Record.Last.Time.After(run) {
				run = a.Record.Last.Time
			}
		}
	}
	return rfc3339(mod), rfc3339(run)
}

func rfc3339(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

// fileModTime is the file system's modification time of path (the link's
// own for a symbolic link: when the learner's file was put there).
func fileModTime(path string) (time.Time, bool) {
	info, err := os.Lstat(path)
	if err != nil {
		return time.Time{}, false
	}
	return info.ModTime(), true
}

// maxListBytes bounds a roster or override file: far above any class.
const maxListBytes = 16 << 20

// ReadRoster reads a class list: one learner id a line, or a CSV file
// whose header has an id column (named id, learner, username or login,
// in that preference, any case). Blank lines and lines starting with #
// are skipped, spaces around an id trimmed, repeats dropped. name names
// the file in errors.
func ReadRoster(r io.Reader, name string) ([]string, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxListBytes+1))
	if err != nil {
		return nil, fmt.Errorf("gradebook: roster %s: %w", name, err)
	}
	if len(data) > maxListBytes {
		return nil, fmt.Errorf("gradebook: roster %s: over %d MiB: want one learner id a line", name, maxListBytes>>20)
	}
	if !utf8.Valid(data) {
		return nil, fmt.Errorf("gradebook: roster %s: not UTF-8 text: want one learner id a line", name)
	}
	text := strings.TrimPrefix(string(data), "\uFEFF")
	var lines []string
	var lineNo []int
	for i, l := range strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n") {
		if t := strings.TrimSpace(l); t != "" && !strings.HasPrefix(t, "#") {
			lines, lineNo = append(lines, l), append(lineNo, i+1)
		}
	}
	var ids []string
	seen := map[string]bool{}
	add := func(id string) {
		if id = strings.TrimSpace(id); id != "" && !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	if len(lines) == 0 || !strings.Contains(lines[0], ",") {
		for _, l := range lines {
			add(l)
		}
		return ids, nil
	}
	cr := csv.NewReader(strings.NewReader(strings.Join(lines, "\n")))
	cr.FieldsPerRecord = -1
	recs, err := cr.ReadAll()
	if err != nil {
		var pe *csv.ParseError
		if errors.As(err, &pe) && pe.Line-1 < len(lineNo) {
			return nil, fmt.Errorf("gradebook: roster %s line %d: %v", name, lineNo[pe.Line-1], pe.Err)
		}
		return nil, fmt.Errorf("gradebook: roster %s: %w", name, err)
	}
	col := -1
	for _, want := range []string{"id", "learner", "username", "login"} {
		if col = slices.IndexFunc(recs[0], func(h string) bool { return strings.EqualFold(strings.TrimSpace(h), want) }); col >= 0 {
			break
		}
	}
	if col < 0 {
		return nil, fmt.Errorf("gradebook: roster %s line %d: header %q has no id column: want one named id, learner, username or login",
			name, lineNo[0], strings.Join(recs[0], ","))
	}
	for _, rec := range recs[1:] {
		if col < len(rec) {
			add(rec[col])
		}
	}
	return ids, nil
}

// Override sets the points of one learner's question or kernel exercise
// by hand.
type Override struct {
	Learner string `json:"learner"`
	// ID is the question's or kernel exercise's id (the overrides file's
	// "exercise" column).
	ID     string  `json:"exercise"`
	Points float64 `json:"points"`
	Reason string  `json:"reason"`
	// File and Line are where the override was read, for errors.
	File string `json:"-"`
	Line int    `json:"line"`
}

// ReadOverrides reads an override file: CSV records learner, exercise,
// points, reason (the reason may be left out), an optional header row
// starting with learner, and comment lines starting with #. It checks
// the form; Grade checks the learners, exercises and points against the
// class and the bank. name names the file in errors.
func ReadOverrides(r io.Reader, name string) ([]Override, error) {
	cr := csv.NewReader(bufio.NewReader(io.LimitReader(r, maxListBytes)))
	cr.Comment = '#'
	cr.FieldsPerRecord = -1
	cr.TrimLeadingSpace = true
	var out []Override
	for first := true; ; first = false {
		rec, err := cr.Read()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				return nil, fmt.Errorf("gradebook: overrides %s line %d: %v", name, pe.Line, pe.Err)
			}
			return nil, fmt.Errorf("gradebook: overrides %s: %w", name, err)
		}
		line, _ := cr.FieldPos(0)
		if first && strings.EqualFold(strings.TrimSpace(strings.TrimPrefix(rec[0], "\uFEFF")), "learner") {
			continue
		}
		if len(rec) < 3 || len(rec) > 4 {
			return nil, fmt.Errorf("gradebook: overrides %s line %d: %d fields: want learner, exercise, points, reason", name, line, len(rec))
		}
		o := Override{Learner: strings.TrimSpace(rec[0]), ID: strings.TrimSpace(rec[1]), File: name, Line: line}
		if len(rec) == 4 {
			o.Reason = strings.TrimSpace(rec[3])
		}
		p, err := strconv.ParseFloat(strings.TrimSpace(rec[2]), 64)
		if err != nil || math.IsNaN(p) || math.IsInf(p, 0) {
			return nil, fmt.Errorf("gradebook: overrides %s line %d: points %q: want a number", name, line, rec[2])
		}
		o.Points = p
		if o.Learner == "" || o.ID == "" {
			return nil, fmt.Errorf("gradebook: overrides %s line %d: want a learner and an exercise id", name, line)
		}
		out = append(out, o)
	}
}

// checkOverrides checks every override against the class's learners and
// the assignment's exercises, and returns them by learner. A learner
// written as the CSV shows an escaped name ('=x for =x) is the learner.
func checkOverrides(os []Override, learners []string, exercises []QuestionInfo) (map[string][]Override, error) {
	out := map[string][]Override{}
	byID := map[string]*QuestionInfo{}
	for i := range exercises {
		byID[exercises[i].ID] = &exercises[i]
	}
	seen := map[[2]string]int{}
	for _, o := range os {
		if !slices.Contains(learners, o.Learner) {
			if u, ok := strings.CutPrefix(o.Learner, "'"); ok && slices.Contains(learners, u) && csvsafe.IsFormula(u) {
				o.Learner = u
			} else {
				return nil, fmt.Errorf("gradebook: overrides %s line %d: learner %q is not in the class: want one of the learners graded (totals.csv)", o.File, o.Line, o.Learner)
			}
		}
		e := byID[o.ID]
		if e == nil {
			return nil, fmt.Errorf("gradebook: overrides %s line %d: exercise %q is not an exercise of the lessons graded", o.File, o.Line, o.ID)
		}
		if !e.Graded {
			return nil, fmt.Errorf("gradebook: overrides %s line %d: %s is not graded in this run (graded by the measurement, and there is none): no points to set", o.File, o.Line, o.ID)
		}
		if o.Points < 0 || o.Points > e.Points {
			return nil, fmt.Errorf("gradebook: overrides %s line %d: points %s for %s: want 0 to %s", o.File, o.Line, grader.Number(o.Points), o.ID, grader.Number(e.Points))
		}
		key := [2]string{o.Learner, o.ID}
		if l, dup := seen[key]; dup {
			return nil, fmt.Errorf("gradebook: overrides %s line %d: %s's %s is already set on line %d: want one override each", o.File, o.Line, o.Learner, o.ID, l)
		}
		seen[key] = o.Line
		out[o.Learner] = append(out[o.Learner], o)
	}
	return out, nil
}

// applyOverrides sets the points of the rows the overrides name (checked
// by checkOverrides: graded exercises, points within the row's maximum).
func applyOverrides(rows []Row, os []Override) {
	for _, o := range os {
		for i := range rows {
			r := &rows[i]
			if r.ID != o.ID || r.Status == UnknownQuestion {
				continue
			}
			r.Override = &o
			r.Points = o.Points
			r.Note = strings.TrimPrefix(r.Note+"; "+OverrideNote(o, r.MaxPoints), "; ")
			break
		}
	}
}

// OverrideNote is what a row's note and the feedback say of an override.
func OverrideNote(o Override, maxPoints float64) string {
	n := "points set by the instructor: " + grader.Number(o.Points) + " of " + grader.Number(maxPoints)
	if o.Reason != "" {
		n += " — " + o.Reason
	}
	return n
}
