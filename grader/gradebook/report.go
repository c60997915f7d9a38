package gradebook

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/coalescing-course/coalesce/grader"
)

// GradebookHeader is the header of gradebook.csv.
var GradebookHeader = []string{
	"learner", "notebook", "exercise", "lesson", "prediction", "model_answer", "measured_answer",
	"measurement_source", "verdict", "points", "max_points", "note",
	"first_attempt", "attempts",
}

// TotalsHeader is the header of totals.csv: one row per learner, the
// columns a learning management system imports as a grade column.
var TotalsHeader = []string{"learner", "points", "max_points", "percent"}

// WriteCSV writes the gradebook's rows as CSV, header first.
func (gb *Gradebook) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(GradebookHeader); err != nil {
		return err
	}
	for _, r := range gb.Rows {
		rec := []string{
			r.Learner, filepath.ToSlash(r.Notebook), r.Exercise, r.Lesson, numPtr(r.Prediction), numPtr(r.Model), numPtr(r.Measured),
			r.Source, string(r.Status), csvNum(r.Points), csvNum(r.MaxPoints), r.Note,
			numPtr(r.FirstAttempt), attemptsText(r.Attempts),
		}
		if r.Prediction == nil && r.PredictionText != "" {
			rec[4] = r.PredictionText
		}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// WriteTotalsCSV writes one row per learner: points, max_points, percent.
func (gb *Gradebook) WriteTotalsCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(TotalsHeader); err != nil {
		return err
	}
	for _, t := range gb.Totals {
		if err := cw.Write([]string{t.Learner, csvNum(t.Points), csvNum(t.MaxPoints), csvNum(t.Percent)}); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// WriteJSON writes the whole gradebook as one indented JSON document (see
// the package documentation for its schema).
func (gb *Gradebook) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(gb)
}

// Feedback returns the markdown feedback of one learner: their total, then
// every row of theirs with the question, the prediction and the answers,
// and for every attempt the case's explanation.
func (gb *Gradebook) Feedback(learner string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Feedback for %s\n\n", learner)
	for _, t := range gb.Totals {
		if t.Learner == learner {
			fmt.Fprintf(&b, "Total: %s of %s points (%s%%).\n\n", grader.Number(t.Points), grader.Number(t.MaxPoints), csvNum(t.Percent))
		}
	}
	fmt.Fprintf(&b, "Measurements: %s.\n", gb.Source)
	for _, r := range gb.Rows {
		if r.Learner != learner {
			continue
		}
		b.WriteString("\n")
		gb.feedbackRow(&b, r)
	}
	return b.String()
}

func (gb *Gradebook) feedbackRow(b *strings.Builder, r Row) {
	title := r.Exercise
	if title == "" {
		title = "A call without an exercise id"
	}
	switch r.Status {
	case BadNotebook:
		fmt.Fprintf(b, "## %s: not graded\n\n%s\n", filepath.ToSlash(r.Notebook), r.Note)
		return
	case UnknownExercise:
		fmt.Fprintf(b, "## %s: unknown exercise\n\n%s\n", title, r.Note)
		return
	}
	points := ""
	if r.MaxPoints > 0 {
		points = ", " + grader.Points(r.Points, r.MaxPoints)
	}
	fmt.Fprintf(b, "## %s: %s%s\n\n", title, r.Status, points)
	k := gb.keys[r.Exercise]
	if k == nil {
		fmt.Fprintf(b, "%s\n", r.Note)
		return
	}
	fmt.Fprintf(b, "%s\n\n", k.Exercise.Question)
	if r.Prediction != nil {
		fmt.Fprintf(b, "- Your prediction: %s\n", grader.Number(*r.Prediction))
	} else if r.PredictionText != "" {
		fmt.Fprintf(b, "- Your prediction: `%s` (not read)\n", r.PredictionText)
	} else {
		b.WriteString("- Your prediction: none\n")
	}
	fmt.Fprintf(b, "- Model: %s\n", k.AnswerText(grader.Model))
	if k.HasMeasured {
		fmt.Fprintf(b, "- Measured (%s): %s\n", k.Source, k.AnswerText(grader.Measurement))
	} else {
		fmt.Fprintf(b, "- Measured: none (%s)\n", k.NoMeasurement)
	}
	if r.Note != "" {
		fmt.Fprintf(b, "- Note: %s\n", r.Note)
	}
	if r.Status == Missing {
		return // the answer is above; the explanation is for an attempt
	}
	for _, s := range k.Explanation {
		fmt.Fprintf(b, "\n### %s\n\n%s", s.Title, s.Markdown())
	}
}

// Output files of WriteDir.
const (
	GradebookCSV  = "gradebook.csv"
	TotalsCSV     = "totals.csv"
	GradebookJSON = "gradebook.json"
	FeedbackDir   = "feedback"
)

// WriteDir writes gradebook.csv, totals.csv, gradebook.json and
// feedback/LEARNER.md into dir, creating it. Learner names become file
// names with every character but letters, digits, '.', '-' and '_'
// replaced by '_'; two learners whose names collide get -2, -3...
func (gb *Gradebook) WriteDir(dir string) error {
	if err := os.MkdirAll(filepath.Join(dir, FeedbackDir), 0o755); err != nil {
		return fmt.Errorf("gradebook: %w", err)
	}
	write := func(name string, f func(io.Writer) error) error {
		file, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			return fmt.Errorf("gradebook: %w", err)
		}
		if err := f(file); err != nil {
			file.Close()
			return fmt.Errorf("gradebook: writing %s: %w", name, err)
		}
		return file.Close()
	}
	if err := write(GradebookCSV, gb.WriteCSV); err != nil {
		return err
	}
	if err := write(TotalsCSV, gb.WriteTotalsCSV); err != nil {
		return err
	}
	if err := write(GradebookJSON, gb.WriteJSON); err != nil {
		return err
	}
	for learner, name := range gb.FeedbackFiles() {
		text := gb.Feedback(learner)
		if err := os.WriteFile(filepath.Join(dir, FeedbackDir, name), []byte(text), 0o644); err != nil {
			return fmt.Errorf("gradebook: %w", err)
		}
	}
	return nil
}

// FeedbackFiles maps each learner to the name of their feedback file.
func (gb *Gradebook) FeedbackFiles() map[string]string {
	out := map[string]string{}
	used := map[string]bool{}
	for _, t := range gb.Totals {
		base := fileName(t.Learner)
		name := base + ".md"
		for i := 2; used[strings.ToLower(name)]; i++ {
			name = fmt.Sprintf("%s-%d.md", base, i)
		}
		used[strings.ToLower(name)] = true
		out[t.Learner] = name
	}
	return out
}

func fileName(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_':
			b.WriteRune(r)
		case r == '.' && b.Len() > 0:
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
		if b.Len() >= 100 {
			break
		}
	}
	if b.Len() == 0 {
		return "_"
	}
	return b.String()
}

// attemptsText is the attempts column: empty when there is no record.
func attemptsText(n int) string {
	if n == 0 {
		return ""
	}
	return strconv.Itoa(n)
}

// csvNum prints a number for the CSV: integers whole, others to six
// significant digits, never with an exponent, so that spreadsheets read it
// as the number it is.
func csvNum(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return strconv.FormatFloat(v, 'f', -1, 64) // counts stay exact
	}
	r, err := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 6, 64), 64)
	if err != nil {
		r = v
	}
	return strconv.FormatFloat(r, 'f', -1, 64)
}

func numPtr(p *float64) string {
	if p == nil {
		return ""
	}
	return csvNum(*p)
}
