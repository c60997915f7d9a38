package report

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/coalescing-course/coalesce/grader"
	"github.com/coalescing-course/coalesce/grader/gradebook"
	"github.com/coalescing-course/coalesce/grader/gradebook/csvsafe"
	"github.com/coalescing-course/coalesce/internal/words"
	"github.com/coalescing-course/coalesce/units"
)

// GradebookHeader is the header of gradebook.csv.
var GradebookHeader = []string{
	"learner", "notebook", "exercise", "lesson", "prediction", "model_answer", "measured_answer",
	"measurement_source", "verdict", "points", "max_points", "note",
	"first_attempt", "attempts",
}

// TotalsHeader is the header of totals.csv: one row per learner, the id
// first, as a learning management system imports a grade column; its
// first row is the points possible (PointsPossibleRow).
var TotalsHeader = []string{"learner", "assignment", "points", "max_points", "percent", "status", "submitted", "last_run", "notebooks", "flags"}

// PointsPossibleRow is the learner cell of totals.csv's first row, which
// holds the assignment's points possible, as Canvas's gradebook lays it
// out; for an importer that wants learners only (Moodle), delete it.
const PointsPossibleRow = "Points Possible"

// ItemsHeader is the header of item_analysis.csv (see Item).
var ItemsHeader = []string{
	"exercise", "lesson", "max_points", "learners", "answered", "right", "wrong", "missing", "unreadable", "overridden",
	"median_prediction", "model_answer", "measured_answer", "common_wrong", "common_wrong_count", "misconception",
}

// WriteCSV writes the gradebook's rows as CSV, header first. Every text
// cell is neutralised against formula injection (csvsafe.Safe); numbers are
// written from the gradebook's numbers, never from learner text.
func WriteCSV(gb *gradebook.Gradebook, w io.Writer) error {
	cw := csvsafe.NewWriter(w)
	cw.Header(GradebookHeader)
	for _, r := range gb.Rows {
		pred := csvsafe.NumPtrCell(r.Prediction)
		if r.Prediction == nil && r.PredictionText != "" {
			pred = csvsafe.TextCell(r.PredictionText) // as written: learner text
		}
		cw.Write([]csvsafe.Cell{
			csvsafe.TextCell(r.Learner), csvsafe.TextCell(filepath.ToSlash(r.Notebook)), csvsafe.TextCell(r.ID), csvsafe.TextCell(r.Lesson), pred, csvsafe.NumPtrCell(r.Model), csvsafe.NumPtrCell(r.Measured),
			csvsafe.TextCell(r.Origin), csvsafe.TextCell(string(r.Status)), csvsafe.NumCell(r.Points), csvsafe.NumCell(r.MaxPoints), csvsafe.TextCell(r.Note),
			csvsafe.NumPtrCell(r.FirstAttempt), attemptsCell(r.Attempts),
		})
	}
	return cw.Err()
}

// WriteTotalsCSV writes totals.csv: the points-possible row, then one row
// per learner (TotalsHeader).
func WriteTotalsCSV(gb *gradebook.Gradebook, w io.Writer) error {
	cw := csvsafe.NewWriter(w)
	cw.Header(TotalsHeader)
	cw.Write([]csvsafe.Cell{csvsafe.TextCell(PointsPossibleRow), csvsafe.TextCell(gb.Assignment), csvsafe.NumCell(gb.PointsPossible), csvsafe.NumCell(gb.PointsPossible), csvsafe.NumCell(100),
		csvsafe.TextCell(""), csvsafe.TextCell(""), csvsafe.TextCell(""), csvsafe.TextCell(""), csvsafe.TextCell("")})
	for _, t := range gb.Totals {
		cw.Write([]csvsafe.Cell{csvsafe.TextCell(t.Learner), csvsafe.TextCell(t.Assignment), csvsafe.NumCell(t.Points), csvsafe.NumCell(t.MaxPoints), csvsafe.NumCell(t.Percent),
			csvsafe.TextCell(string(t.Status)), csvsafe.TextCell(t.Submitted), csvsafe.TextCell(t.LastRun), csvsafe.NumCell(float64(t.Notebooks)), csvsafe.TextCell(strings.Join(t.Flags, "; "))})
	}
	return cw.Err()
}

// WriteItemsCSV writes item_analysis.csv: one row per exercise (Item).
func WriteItemsCSV(gb *gradebook.Gradebook, w io.Writer) error {
	cw := csvsafe.NewWriter(w)
	cw.Header(ItemsHeader)
	for _, it := range gb.Items {
		count := func(n int) csvsafe.Cell { return csvsafe.NumCell(float64(n)) }
		common := csvsafe.NumPtrCell(it.CommonWrong)
		cw.Write([]csvsafe.Cell{csvsafe.TextCell(it.ID), csvsafe.TextCell(it.Lesson), csvsafe.NumCell(it.MaxPoints), count(it.Learners), count(it.Answered), count(it.Right),
			count(it.Wrong), count(it.Missing), count(it.Unreadable), count(it.Overridden),
			csvsafe.NumPtrCell(it.Median), csvsafe.NumPtrCell(it.Model), csvsafe.NumPtrCell(it.Measured), common, count(it.CommonWrongCount), csvsafe.TextCell(it.Misconception)})
	}
	return cw.Err()
}

// Summary returns the class summary in markdown: the totals by status,
// the learners who need a look, and the item analysis.
func Summary(gb *gradebook.Gradebook) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Class summary: %s\n\n", mdText(gb.Assignment))
	fmt.Fprintf(&b, "%s of %s; %s points possible; lessons %s. Measurements: %s.\n\n",
		words.Plural(len(gb.Totals), "learner"), words.Plural(gb.Notebooks, "notebook"), units.Points.Format(gb.PointsPossible),
		strings.Join(gb.Lessons, ", "), mdText(gb.Origin))
	byStatus := map[gradebook.LearnerStatus]int{}
	var pct []float64
	for _, t := range gb.Totals {
		byStatus[t.Status]++
		if t.Status != gradebook.StatusMissing {
			pct = append(pct, t.Percent)
		}
	}
	b.WriteString("| status | learners |\n|---|---:|\n")
	for _, st := range []gradebook.LearnerStatus{gradebook.StatusGraded, gradebook.StatusPartial, gradebook.StatusFlagged, gradebook.StatusUnreadable, gradebook.StatusMissing} {
		fmt.Fprintf(&b, "| %s | %d |\n", st, byStatus[st])
	}
	if len(pct) > 0 {
		slices.Sort(pct)
		fmt.Fprintf(&b, "\nMedian score of those who submitted: %s.\n", units.Percent.Format(median(pct)/100))
	}
	if att := attention(gb); len(att) > 0 {
		b.WriteString("\n## Needs a look\n\n")
		for _, t := range att {
			fmt.Fprintf(&b, "- %s: %s (%s)\n", mdText(t.Learner), t.Status, mdText(strings.Join(t.Flags, "; ")))
		}
	}
	b.WriteString("\n## Item analysis\n\n")
	b.WriteString("| exercise | points | answered | right | median prediction | answer | most common wrong | misconception |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---|---|\n")
	for _, it := range gb.Items {
		answer := answerText(it.Model)
		if it.Measured != nil {
			answer += " (measured " + answerText(it.Measured) + ")"
		}
		common := ""
		if it.CommonWrong != nil {
			common = fmt.Sprintf("%s (%d)", numText(it.CommonWrong), it.CommonWrongCount)
		}
		fmt.Fprintf(&b, "| %s | %s | %d of %d | %d | %s | %s | %s | %s |\n", it.ID, units.Points.Format(it.MaxPoints),
			it.Answered, it.Learners, it.Right, numText(it.Median), answer, common, mdText(it.Misconception))
	}
	return b.String()
}

// median is the median of sorted values (not empty).
func median(s []float64) float64 {
	m := s[len(s)/2]
	if len(s)%2 == 0 {
		m = (s[len(s)/2-1] + m) / 2
	}
	return m
}

// numText writes a learner's number with every digit, "–" for none.
func numText(p *float64) string {
	if p == nil {
		return "–"
	}
	return units.AsWritten(*p)
}

// answerText writes an answer as the verdicts do, "–" for none.
func answerText(p *float64) string {
	if p == nil {
		return "–"
	}
	return units.Ratio.Format(*p)
}

// mdText makes learner text (a name, a note) inert in markdown: no HTML,
// no table cell break, no link or image ([x](y) shown as written), one
// line.
func mdText(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", "|", "\\|", "\n", " ", "\r", " ", "`", "\\`",
		"[", "\\[", "]", "\\]").Replace(s)
}

// WriteJSON writes the whole gradebook as one indented JSON document (see
// the package documentation for its schema).
func WriteJSON(gb *gradebook.Gradebook, w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(gb)
}

// Feedback returns the markdown feedback of one learner. It opens with a
// summary: the score, the status and the exercises to review (wrong,
// missing, unreadable). Then each row: a right answer in a line or two;
// any other with the question, the prediction, the answers, the notes and,
// for a wrong answer, the case's explanation, collapsed (<details>).
func Feedback(gb *gradebook.Gradebook, learner string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Feedback for %s\n\n", mdText(learner))
	for _, t := range gb.Totals {
		if t.Learner == learner {
			fmt.Fprintf(&b, "**Score: %s of %s points (%s)** on %s.\n\n", units.Points.Format(t.Points), units.Points.Format(t.MaxPoints), units.Percent.Format(t.Percent/100), mdText(t.Assignment))
			// The status comes second, before anything to review: a learner
			// whose only notebook could not be read learns why here, not
			// under 70 lines of exercises without a prediction.
			fmt.Fprintf(&b, "**Status: %s**", t.Status)
			if len(t.Flags) > 0 {
				fmt.Fprintf(&b, ": %s", mdText(strings.Join(t.Flags, "; ")))
			}
			b.WriteString(".\n\n")
			for _, r := range gb.Rows {
				if r.Learner == learner && r.Status == gradebook.BadNotebook {
					fmt.Fprintf(&b, "- Not read: %s: %s\n", mdText(filepath.ToSlash(r.Notebook)), mdText(r.Note))
				}
			}
			if slices.ContainsFunc(gb.Rows, func(r gradebook.Row) bool { return r.Learner == learner && r.Status == gradebook.BadNotebook }) {
				b.WriteString("\n")
			}
		}
	}
	var review, missingIn []string
	missing := 0
	for _, r := range gb.Rows {
		switch {
		case r.Learner != learner || r.ID == "":
		case r.Status == gradebook.Wrong || r.Status == gradebook.Unreadable:
			review = append(review, fmt.Sprintf("%s (%s)", mdText(r.ID), r.Status))
		case r.Status == gradebook.Missing:
			missing++
			if !slices.Contains(missingIn, r.Lesson) {
				missingIn = append(missingIn, r.Lesson)
			}
		}
	}
	if missing > 0 {
		// Listed by lesson: a lesson not done is one item to review, not ten.
		review = append(review, fmt.Sprintf("%s without a prediction (lessons %s)", words.Plural(missing, "exercise"), strings.Join(missingIn, ", ")))
	}
	if len(review) > 0 {
		fmt.Fprintf(&b, "To review: %s.\n\n", strings.Join(review, "; "))
	} else {
		b.WriteString("Nothing to review.\n\n")
	}
	fmt.Fprintf(&b, "Measurements: %s.\n", mdText(gb.Origin))
	for _, r := range gb.Rows {
		if r.Learner != learner {
			continue
		}
		b.WriteString("\n")
		feedbackRow(gb, &b, r)
	}
	return b.String()
}

func feedbackRow(gb *gradebook.Gradebook, b *strings.Builder, r gradebook.Row) {
	title := mdText(r.ID)
	if title == "" {
		title = "A call without an exercise id"
	}
	note := mdText(r.Note)
	switch r.Status {
	case gradebook.BadNotebook:
		fmt.Fprintf(b, "## %s: not graded\n\n%s\n", mdText(filepath.ToSlash(r.Notebook)), note)
		return
	case gradebook.Ignored:
		fmt.Fprintf(b, "## %s: not the course's, ignored\n\n%s\n", mdText(filepath.ToSlash(r.Notebook)), note)
		return
	case gradebook.UnknownQuestion:
		fmt.Fprintf(b, "## %s: unknown exercise\n\n%s\n", title, note)
		return
	}
	points := ""
	if r.MaxPoints > 0 {
		points = ", " + grader.Points(r.Points, r.MaxPoints)
	}
	fmt.Fprintf(b, "## %s: %s%s\n\n", title, r.Status, points)
	k := gb.Key(r.ID)
	if k == nil {
		fmt.Fprintf(b, "%s\n", note)
		return
	}
	if r.Override != nil {
		fmt.Fprintf(b, "**%s**\n\n", mdText(gradebook.OverrideNote(*r.Override, r.MaxPoints)))
	}
	if r.Status == gradebook.Right && r.Prediction != nil {
		fmt.Fprintf(b, "%s\n\n- Your prediction: %s, right.\n", k.Question.Text, units.AsWritten(*r.Prediction))
		return // right: no need of the explanation
	}
	fmt.Fprintf(b, "%s\n\n", k.Question.Text)
	if r.Prediction != nil {
		fmt.Fprintf(b, "- Your prediction: %s\n", units.AsWritten(*r.Prediction))
	} else if r.PredictionText != "" {
		fmt.Fprintf(b, "- Your prediction: %s (not read)\n", mdText(r.PredictionText))
	} else {
		b.WriteString("- Your prediction: none\n")
	}
	fmt.Fprintf(b, "- Model: %s\n", k.AnswerText(grader.Model))
	if k.HasMeasured {
		fmt.Fprintf(b, "- Measured (%s): %s\n", k.Origin, k.AnswerText(grader.Measurement))
	} else {
		fmt.Fprintf(b, "- Measured: none (%s)\n", k.NoMeasurement)
	}
	if r.Note != "" {
		fmt.Fprintf(b, "- Note: %s\n", note)
	}
	if r.Status == gradebook.Missing || r.Prediction == nil {
		return // the answer is above; the explanation is for an attempt
	}
	b.WriteString("\n<details><summary>Explanation</summary>\n")
	for _, s := range k.Explanation {
		fmt.Fprintf(b, "\n### %s\n\n%s", s.Title, s.Markdown())
	}
	b.WriteString("\n</details>\n")
}

// Output files of WriteDir.
const (
	GradebookCSV  = "gradebook.csv"
	TotalsCSV     = "totals.csv"
	GradebookJSON = "gradebook.json"
	ItemsCSV      = "item_analysis.csv"
	SummaryMD     = "summary.md"
	FeedbackDir   = "feedback"
)

// WriteDir writes gradebook.csv, totals.csv, gradebook.json,
// item_analysis.csv, summary.md and feedback/LEARNER.md into dir, creating it. Learner names become file
// names with every character but letters, digits, '.', '-' and '_'
// replaced by '_'; two learners whose names collide get -2, -3...
func WriteDir(gb *gradebook.Gradebook, dir string) error {
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
	if err := write(GradebookCSV, func(w io.Writer) error { return WriteCSV(gb, w) }); err != nil {
		return err
	}
	if err := write(TotalsCSV, func(w io.Writer) error { return WriteTotalsCSV(gb, w) }); err != nil {
		return err
	}
	if err := write(GradebookJSON, func(w io.Writer) error { return WriteJSON(gb, w) }); err != nil {
		return err
	}
	if err := write(ItemsCSV, func(w io.Writer) error { return WriteItemsCSV(gb, w) }); err != nil {
		return err
	}
	if err := write(SummaryMD, func(w io.Writer) error { _, err := io.WriteString(w, Summary(gb)); return err }); err != nil {
		return err
	}
	for learner, name := range FeedbackFiles(gb) {
		text := Feedback(gb, learner)
		if err := os.WriteFile(filepath.Join(dir, FeedbackDir, name), []byte(text), 0o644); err != nil {
			return fmt.Errorf("gradebook: %w", err)
		}
	}
	return nil
}

// FeedbackFiles maps each learner to the name of their feedback file.
func FeedbackFiles(gb *gradebook.Gradebook) map[string]string {
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

// attemptsCell is the attempts column: empty when there is no record.
func attemptsCell(n int) csvsafe.Cell {
	if n == 0 {
		return csvsafe.NumPtrCell(nil)
	}
	return csvsafe.NumCell(float64(n))
}

// attention returns the totals whose status needs the instructor, the
// most urgent first, then by learner.
func attention(gb *gradebook.Gradebook) []gradebook.Total {
	rank := map[gradebook.LearnerStatus]int{gradebook.StatusMissing: 0, gradebook.StatusUnreadable: 1, gradebook.StatusFlagged: 2}
	var out []gradebook.Total
	for _, t := range gb.Totals {
		if _, ok := rank[t.Status]; ok {
			out = append(out, t)
		}
	}
	slices.SortStableFunc(out, func(a, b gradebook.Total) int { return cmp.Compare(rank[a.Status], rank[b.Status]) })
	return out
}
