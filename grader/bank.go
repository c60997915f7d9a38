package grader

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/coalescing-course/coalesce/lessons/figures"
	"github.com/coalescing-course/coalesce/lessons/spec"
	"github.com/coalescing-course/coalesce/units"
)

// Lesson is one lesson of the course: its notebook id and its title.
type Lesson struct {
	ID    string `json:"id"`
	Title string `json:"title"`
}

// Judge names which answer a prediction is held against: the sector
// model's or a measurement's.
type Judge string

// The two judges.
const (
	Model       Judge = "model"
	Measurement Judge = "measurement"
)

// Tolerance says how close a prediction must be to count as right: a
// relative tolerance against the model's answer and one against the
// measured answer. 0 means exact (up to floating-point rounding).
type Tolerance struct {
	Model    float64 `json:"model"`
	Measured float64 `json:"measured"`
}

// Question is one question of the bank. Its answer is never stored: it is
// Quantity of Specs, computed by the model or read from a measurement.
type Question struct {
	// ID is stable once published: "LESSON/NAME".
	ID     string `json:"id"`
	Lesson string `json:"lesson"`
	// Text is what the notebook asks, with the unit it wants.
	Text string `json:"text"`
	// Unit names the answer's unit in a verdict: "sectors per request".
	Unit string `json:"unit"`
	// Specs are the launches the answer is computed from: one, or two
	// when Combine is "ratio".
	Specs []spec.Spec `json:"specs"`
	// Quantity is what is computed of each spec: the name of a figure of
	// lessons/figures (an ncu metric name, or one such as
	// "ld_sectors_per_request").
	Quantity string `json:"quantity"`
	// Combine is "" for one spec, or "ratio": Quantity of Specs[0]
	// divided by Quantity of Specs[1].
	Combine string `json:"combine,omitempty"`
	// GradedBy says which answer the points come from. A measured
	// question falls back on the model when no measurement is at hand,
	// and its verdict says so.
	GradedBy  Judge     `json:"graded_by"`
	Tolerance Tolerance `json:"tolerance"`
	Points    float64   `json:"points"`
	// ToldBy lists what gives the answer away besides the question's own
	// launches and their equivalents (Tells works those out): a device
	// fact, or a figure of another launch that makes the answer
	// near-trivial. Displays withhold them until the question is answered.
	ToldBy []Giveaway `json:"told_by,omitempty"`
}

// Giveaway is a value that makes a question's answer near-trivial: a
// device fact (one of Facts), or the figure Quantity of the launch Spec.
// Why says how, for the reader of questions.json.
type Giveaway struct {
	Fact     string     `json:"fact,omitempty"`
	Spec     *spec.Spec `json:"spec,omitempty"`
	Quantity string     `json:"quantity,omitempty"`
	Why      string     `json:"why"`
}

// Ratio is the only value Combine takes besides "".
const Ratio = "ratio"

// Tol returns the relative tolerance of the answer of judge j.
func (e *Question) Tol(j Judge) float64 {
	if j == Measurement {
		return e.Tolerance.Measured
	}
	return e.Tolerance.Model
}

// Bank is the question bank: the lessons and their questions, in order.
type Bank struct {
	Course    string     `json:"course"`
	Lessons   []Lesson   `json:"lessons"`
	Questions []Question `json:"questions"`

	byID map[string]int
}

// Errors of a bank, for errors.Is.
var (
	// ErrBank is a bank that does not validate; a *BankError wraps it.
	ErrBank = errors.New("invalid question bank")
	// ErrUnknownQuestion is a question id the bank does not have.
	ErrUnknownQuestion = errors.New("unknown exercise")
)

// BankError says which question of a bank is wrong, in which field, and why.
type BankError struct {
	Question string // the question's id, or its index "#3" when the id is the fault
	Field    string // the JSON field at fault
	Msg      string
}

func (e *BankError) Error() string {
	if e.Question == "" {
		return fmt.Sprintf("grader: %v: %s: %s", ErrBank, e.Field, e.Msg)
	}
	return fmt.Sprintf("grader: %v: question %s: %s: %s", ErrBank, e.Question, e.Field, e.Msg)
}

// Unwrap returns ErrBank.
func (e *BankError) Unwrap() error { return ErrBank }

//go:embed questions.json
var bankJSON []byte

// Questions returns the course's bank, embedded from questions.json and
// validated once.
var Questions = sync.OnceValues(func() (*Bank, error) { return ParseBank(bankJSON) })

var idPattern = regexp.MustCompile(`^[0-9]{2}-[a-z0-9-]+/[a-z0-9][a-z0-9-]*$`)
var lessonPattern = regexp.MustCompile(`^[0-9]{2}-[a-z0-9-]+$`)

// ParseBank reads and validates a bank: unknown fields, bad specs, unknown
// quantities, a ratio without two specs, an exact tolerance on an estimated
// quantity, duplicate ids... are a *BankError naming the question.
func ParseBank(data []byte) (*Bank, error) {
	var raw struct {
		Course    string            `json:"course"`
		Lessons   []Lesson          `json:"lessons"`
		Questions []json.RawMessage `json:"questions"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&raw); err != nil {
		return nil, &BankError{Field: "bank", Msg: err.Error()}
	}
	b := &Bank{Course: raw.Course, Lessons: raw.Lessons, byID: map[string]int{}}
	if b.Course == "" {
		return nil, &BankError{Field: "course", Msg: "want the course's name"}
	}
	if len(b.Lessons) == 0 {
		return nil, &BankError{Field: "lessons", Msg: "want at least one lesson"}
	}
	seen := map[string]bool{}
	for i, l := range b.Lessons {
		if !lessonPattern.MatchString(l.ID) || seen[l.ID] {
			return nil, &BankError{Field: fmt.Sprintf("lessons[%d].id", i), Msg: fmt.Sprintf("%q: want a unique id like 03-strided", l.ID)}
		}
		seen[l.ID] = true
	}
	for i, r := range raw.Questions {
		e, err := parseQuestion(r, i)
		if err != nil {
			return nil, err
		}
		if err := b.validate(&e, i); err != nil {
			return nil, err
		}
		b.byID[e.ID] = len(b.Questions)
		b.Questions = append(b.Questions, e)
	}
	return b, nil
}

func parseQuestion(r json.RawMessage, i int) (Question, error) {
	// The specs are decoded apart so that a bad one names its question.
	var e struct {
		Question
		Specs []json.RawMessage `json:"specs"`
	}
	dec := json.NewDecoder(bytes.NewReader(r))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil {
		// A bad spec inside would be reported here without its index;
		// the error still names the question.
		return Question{}, &BankError{Question: nameOf(r, i), Field: "question", Msg: err.Error()}
	}
	ex := e.Question
	ex.Specs = nil
	for j, sr := range e.Specs {
		s, err := spec.Parse(sr)
		if err != nil {
			return Question{}, &BankError{Question: nameOf(r, i), Field: fmt.Sprintf("specs[%d]", j), Msg: err.Error()}
		}
		ex.Specs = append(ex.Specs, s)
	}
	return ex, nil
}

// nameOf returns a question's id for an error message, or its index.
func nameOf(r json.RawMessage, i int) string {
	var v struct {
		ID string `json:"id"`
	}
	if json.Unmarshal(r, &v) == nil && v.ID != "" {
		return v.ID
	}
	return fmt.Sprintf("#%d", i)
}

func (b *Bank) validate(e *Question, i int) error {
	bad := func(field, format string, args ...any) error {
		name := e.ID
		if field == "id" || name == "" {
			name = fmt.Sprintf("#%d", i)
		}
		return &BankError{Question: name, Field: field, Msg: fmt.Sprintf(format, args...)}
	}
	switch {
	case !idPattern.MatchString(e.ID):
		return bad("id", "%q: want LESSON/NAME in lower case, like 03-strided/sectors-stride-32", e.ID)
	case b.Lesson(e.Lesson) == nil:
		return bad("lesson", "%q is not among the bank's lessons", e.Lesson)
	case !strings.HasPrefix(e.ID, e.Lesson+"/"):
		return bad("id", "%q: want it to start with its lesson, %s/", e.ID, e.Lesson)
	}
	if _, dup := b.byID[e.ID]; dup {
		return bad("id", "%q appears twice: ids are unique and stable", e.ID)
	}
	if strings.TrimSpace(e.Text) == "" {
		return bad("text", "empty")
	}
	if strings.TrimSpace(e.Unit) == "" {
		return bad("unit", "empty: say what the answer counts, e.g. \"sectors per request\"")
	}
	fig, ok := figures.Lookup(e.Quantity)
	if !ok {
		return bad("quantity", "%q: want a figure of lessons/figures: %s", e.Quantity, strings.Join(figures.Names(), ", "))
	}
	switch e.Combine {
	case "":
		if len(e.Specs) != 1 {
			return bad("specs", "%d specs: want one (or two with \"combine\": \"ratio\")", len(e.Specs))
		}
	case Ratio:
		if len(e.Specs) != 2 {
			return bad("specs", "%d specs: a ratio wants two, the numerator first", len(e.Specs))
		}
	default:
		return bad("combine", "%q: want \"\" or \"ratio\"", e.Combine)
	}
	for j, s := range e.Specs {
		if s.Kernel == spec.GatherCopy && s.IndexFile != "" {
			return bad(fmt.Sprintf("specs[%d]", j), "index_file: a question must not depend on a file outside the bank; use an index_pattern")
		}
		if err := fig.Applies(s); err != nil {
			return bad(fmt.Sprintf("specs[%d]", j), "%v", err)
		}
	}
	switch e.GradedBy {
	case Model, Measurement:
	default:
		return bad("graded_by", "%q: want \"model\" or \"measurement\"", e.GradedBy)
	}
	t := e.Tolerance
	if t.Model < 0 || t.Measured < 0 || t.Model >= 1 || t.Measured >= 1 {
		return bad("tolerance", "want relative tolerances from 0 (exact) to below 1, got model %s, measured %s", units.AsWritten(t.Model), units.AsWritten(t.Measured))
	}
	if t.Model == 0 && !fig.Exact {
		return bad("tolerance.model", "0 (exact), but the model only estimates %s: state a relative tolerance", e.Quantity)
	}
	if t.Measured == 0 {
		return bad("tolerance.measured", "0: a measurement is never exact; state a relative tolerance")
	}
	if !(e.Points > 0) {
		return bad("points", "%s: want more than 0", units.AsWritten(e.Points))
	}
	for j, g := range e.ToldBy {
		field := fmt.Sprintf("told_by[%d]", j)
		switch {
		case strings.TrimSpace(g.Why) == "":
			return bad(field, "no why: say how it gives the answer away")
		case g.Fact != "" && (g.Spec != nil || g.Quantity != ""):
			return bad(field, "a fact, or a spec and a quantity, not both")
		case g.Fact != "":
			if !slices.Contains(Facts, g.Fact) {
				return bad(field, "fact %q: want one of %s", g.Fact, strings.Join(Facts, ", "))
			}
		case g.Spec == nil || g.Quantity == "":
			return bad(field, "want a fact, or a spec and the quantity of it that gives the answer away")
		default:
			f, ok := figures.Lookup(g.Quantity)
			if !ok {
				return bad(field, "quantity %q: want a figure of lessons/figures: %s", g.Quantity, strings.Join(figures.Names(), ", "))
			}
			if err := f.Applies(*g.Spec); err != nil {
				return bad(field, "%v", err)
			}
		}
	}
	return nil
}

// Lesson returns the lesson with id, or nil.
func (b *Bank) Lesson(id string) *Lesson {
	for i := range b.Lessons {
		if b.Lessons[i].ID == id {
			return &b.Lessons[i]
		}
	}
	return nil
}

// Question returns the question with id, or an error wrapping
// ErrUnknownQuestion that lists the ids of the same lesson.
func (b *Bank) Question(id string) (*Question, error) {
	if i, ok := b.byID[id]; ok {
		return &b.Questions[i], nil
	}
	lesson, _, _ := strings.Cut(id, "/")
	var near []string
	for _, e := range b.Questions {
		if e.Lesson == lesson {
			near = append(near, e.ID)
		}
	}
	if len(near) == 0 {
		return nil, fmt.Errorf("grader: %w %q: no lesson %q; lessons are %s", ErrUnknownQuestion, id, lesson, strings.Join(b.LessonIDs(), ", "))
	}
	return nil, fmt.Errorf("grader: %w %q: %s has %s", ErrUnknownQuestion, id, lesson, strings.Join(near, ", "))
}

// LessonIDs returns the lessons' ids in order.
func (b *Bank) LessonIDs() []string {
	ids := make([]string, len(b.Lessons))
	for i, l := range b.Lessons {
		ids[i] = l.ID
	}
	return ids
}

// OfLesson returns the questions of lesson, in bank order.
func (b *Bank) OfLesson(lesson string) []*Question {
	var out []*Question
	for i := range b.Questions {
		if b.Questions[i].Lesson == lesson {
			out = append(out, &b.Questions[i])
		}
	}
	return out
}

// figure returns the figure the question asks for, which ParseBank checked.
func (e *Question) figure() figures.Figure {
	f, _ := figures.Lookup(e.Quantity)
	return f
}
