package grader

import (
	"fmt"
	"html"
	"math"
	"math/bits"
	"strings"

	"github.com/coalescing-course/coalesce/internal/words"
	"github.com/coalescing-course/coalesce/lessons/figures"
	"github.com/coalescing-course/coalesce/lessons/sectors"
	"github.com/coalescing-course/coalesce/units"
)

// Judgement is a prediction held against one answer.
type Judgement struct {
	// Value is the answer; Tolerance its relative tolerance (0: exact).
	Value, Tolerance float64
	// Right is true when the prediction is within Tolerance of Value.
	Right bool
}

// Verdict is the grader's answer to one prediction.
type Verdict struct {
	// ID is the question id as given; Question is nil when it is unknown.
	ID       string
	Question *Question
	// Prediction is the learner's value.
	Prediction float64
	// Model is the prediction against the sector model.
	Model Judgement
	// Measurement is the prediction against the measurement, nil when
	// there is none; Origin names where it comes from, and NoMeasurement
	// says why there is none.
	Measurement   *Judgement
	Origin        string
	NoMeasurement string
	// GradedBy is the judgement the points come from. Graded is false
	// when it is the measurement and there is none: the verdict is then
	// for information, Right is false and MaxPoints is 0.
	GradedBy Judge
	Graded   bool
	// Right is the graded judgement; Points are MaxPoints when Right, else 0.
	Right             bool
	Points, MaxPoints float64
	// Hints are remarks on this prediction: a percentage given for a
	// fraction, a ratio upside down.
	Hints []string
	// Reason is the one sentence that says why the answer is what it is.
	Reason string
	// Read says what a prediction written as text was read as ("32
	// sectors per request", ReadPrediction); "" for a number.
	Read string
	// Explanation is the case's explanation, the same for every learner.
	Explanation []Section
	// numbers write the answers as the explanation writes them.
	numbers *units.System
	// Unanswered is true when the prediction is not a number a learner
	// writes (NaN or an infinity: the placeholder a lesson ships,
	// lab.YourPrediction). The verdict then asks for a prediction and
	// holds nothing of the key: no answer, no explanation.
	Unanswered bool
	// Err is why there is no verdict: an unknown question, a model that
	// failed. The other fields are then empty.
	Err error
}

// Rule says how question e is graded, for the learner who has yet to
// answer: "Graded against the model, exactly; a number, or one with its
// unit in quotes: 32 or "32 sectors"." It holds nothing of the answer.
func Rule(e *Question) string {
	tol := e.Tolerance.Model
	if e.GradedBy == Measurement {
		tol = e.Tolerance.Measured
	}
	how := "exactly"
	if tol > 0 {
		how = "within " + pct(tol)
	}
	return fmt.Sprintf("Graded against the %s, %s, for %s.", e.GradedBy, how, words.Plural(int(e.Points), "point"))
}

// WritePredictionFirst is what an unanswered verdict says.
const WritePredictionFirst = "Write your prediction first: replace lab.YourPrediction with your number and run the cell again."

// Answered reports whether p is a prediction a learner wrote: a finite
// number. NaN and the infinities are placeholders.
func Answered(p float64) bool { return !math.IsNaN(p) && !math.IsInf(p, 0) }

// unanswered is the verdict on a placeholder for question e (nil when the
// bank does not have it): the question, and nothing of the key.
func unanswered(id string, e *Question, p float64) *Verdict {
	return &Verdict{ID: id, Question: e, Prediction: p, Unanswered: true}
}

// Verdict judges a prediction against the key's answers.
func (k *Key) Verdict(prediction float64) *Verdict {
	e := k.Question
	if !Answered(prediction) {
		return unanswered(e.ID, e, prediction)
	}
	v := &Verdict{
		ID: e.ID, Question: e, Prediction: prediction,
		Model:         Judgement{Value: k.Model, Tolerance: e.Tolerance.Model, Right: Within(prediction, k.Model, e.Tolerance.Model)},
		Origin:        k.Origin,
		NoMeasurement: k.NoMeasurement,
		GradedBy:      e.GradedBy,
		Graded:        k.Graded(),
		Explanation:   k.Explanation,
		numbers:       k.numbers,
		Reason:        k.Reason,
	}
	if k.HasMeasured {
		v.Measurement = &Judgement{Value: k.Measured, Tolerance: e.Tolerance.Measured, Right: Within(prediction, k.Measured, e.Tolerance.Measured)}
		v.NoMeasurement = ""
	} else {
		v.Origin = ""
	}
	want, tol, ok := k.Answer()
	if !ok {
		// Nothing to grade against: hint against the model instead.
		v.Hints = hints(k, prediction, k.Model, e.Tolerance.Model, v.Model.Right)
		return v
	}
	v.MaxPoints = e.Points
	if v.GradedBy == Measurement {
		v.Right = v.Measurement.Right
	} else {
		v.Right = v.Model.Right
	}
	if v.Right {
		v.Points = e.Points
	}
	v.Hints = hints(k, prediction, want, tol, v.Right)
	return v
}

// hints looks for the usual slips in a wrong prediction.
func hints(k *Key, p, want, tol float64, right bool) []string {
	e := k.Question
	if right || math.IsNaN(p) || math.IsInf(p, 0) {
		return nil
	}
	tol = math.Max(tol, 0.01)
	var hs []string
	if (e.Quantity == figures.Efficiency.Name || e.Quantity == figures.FractionOfMemcpy.Name) && p > 1 && Within(p/100, want, tol) {
		hs = append(hs, fmt.Sprintf("%s looks like a percentage: this question wants a fraction, %s for %s.", prediction(p), fraction(p), prediction(p)+"%"))
	}
	if e.Combine == Ratio && p != 0 && Within(1/p, want, tol) {
		hs = append(hs, "That is the ratio upside down: the question divides the first case by the second.")
	}
	if strings.Contains(e.Unit, "sector") && Within(p/32, want, tol) {
		hs = append(hs, "That counts bytes: divide by 32 bytes per sector.")
	}
	if asked, ok := askedPerRequest(k); ok && !Within(asked, want, tol) && Within(p, asked, tol) {
		hs = append(hs, fmt.Sprintf("%s is the bytes a request asks for divided by 32: the sectors its lanes would fill if their bytes lay side by side. The L1 fetches the sectors the lanes' addresses fall in, wherever they are: count those.", prediction(p)))
	}
	if lines, ok := linesPerRequest(k); ok && !Within(lines, want, tol) && Within(p, lines, tol) {
		hs = append(hs, fmt.Sprintf("%s is how many 128-byte lines a request touches: the transactions of the older model the source page describes. The L1 fetches 32-byte sectors, up to four of a line, and counts those.", prediction(p)))
	}
	if e.Combine == Ratio && e.figure().Level == figures.Time && len(k.Parts) == 2 {
		// The L1's waste ratio: fetched over used bytes, second case over
		// first, the inverse of each one's efficiency.
		waste := func(p Part) float64 { return 1 / model(figures.Efficiency, p) }
		a, b := waste(k.Parts[0]), waste(k.Parts[1])
		for _, r := range []float64{a / b, b / a} {
			if r > 1.5 && Within(p, r, 0.05) {
				hs = append(hs, fmt.Sprintf("%s is the ratio of the L1's wasted bytes (sectors fetched per byte used). DRAM moves more than the sectors asked for, in fetch blocks, and the time follows DRAM: see \"Below the L1\".", prediction(p)))
				break
			}
		}
	}
	return hs
}

// askedPerRequest returns, for a question that asks for sectors per
// request, the bytes warp 0's requests ask for (active lanes times the
// access size) over 32 bytes a sector, rounded up per request: what a
// learner who divides the requested bytes by the sector size answers.
func askedPerRequest(k *Key) (float64, bool) {
	e := k.Question
	if len(k.Parts) != 1 || (e.Quantity != figures.LdSectorsPerRequest.Name && e.Quantity != figures.StSectorsPerRequest.Name) {
		return 0, false
	}
	p := k.Parts[0]
	asked, requests := 0, 0
	for _, in := range warpInstrs(p.Spec, p.idx, 0, 0) {
		if !relevant(e.Quantity, in) {
			continue
		}
		b := bits.OnesCount32(in.Warp.Active) * in.Warp.Size
		asked += (b + sectors.SectorBytes - 1) / sectors.SectorBytes
		requests++
	}
	if requests == 0 {
		return 0, false
	}
	return float64(asked) / float64(requests), true
}

// linesPerRequest returns, for a question that asks for sectors per
// request, the 128-byte lines per request of warp 0 of its launch (the
// loads or the stores the question is about): what a learner counting
// 128-byte transactions would answer.
func linesPerRequest(k *Key) (float64, bool) {
	e := k.Question
	if len(k.Parts) != 1 || (e.Quantity != figures.LdSectorsPerRequest.Name && e.Quantity != figures.StSectorsPerRequest.Name) {
		return 0, false
	}
	p := k.Parts[0]
	lines, requests := 0, 0
	for _, in := range warpInstrs(p.Spec, p.idx, 0, 0) {
		if !relevant(e.Quantity, in) {
			continue
		}
		a, err := sectors.Coalesce(in.Warp)
		if err != nil {
			return 0, false
		}
		lines += a.Lines
		requests++
	}
	if requests == 0 {
		return 0, false
	}
	return float64(lines) / float64(requests), true
}

// Headline is the verdict in one line: right or wrong, the prediction,
// the answer that grades it, and the one reason (for a wrong prediction
// that makes a known slip, the hint that names it):
//
//	RIGHT 03-strided/sectors-stride-32 (1 of 1 point): your 32; the answer is 32 sectors per request (the model's, exact): warp 0's load touches 32 sectors for its 128 bytes.
func (v *Verdict) Headline() string {
	if v.Err != nil {
		return fmt.Sprintf("%s: no verdict: %v", v.ID, v.Err)
	}
	e := v.Question
	if v.Unanswered {
		return fmt.Sprintf("YOUR PREDICTION? %s: %s", v.ID, WritePredictionFirst)
	}
	yours := prediction(v.Prediction)
	if v.Read != "" {
		yours = v.Read
	}
	head := strings.ToUpper(v.word()) + " " + e.ID
	if v.Graded {
		head += " (" + pointsText(v.Points, v.MaxPoints) + ")"
	}
	var answer string
	switch {
	case !v.Graded:
		answer = fmt.Sprintf("it is graded against the measurement, and there is none; the model says %s", withUnit(v.numbers, e, v.Model.Value, v.Model.Tolerance))
	case v.GradedBy == Measurement:
		answer = fmt.Sprintf("the answer is %s (measured, %s)", withUnit(v.numbers, e, v.Measurement.Value, v.Measurement.Tolerance), tolText(v.Measurement.Tolerance))
	default:
		answer = fmt.Sprintf("the answer is %s (the model's, %s)", withUnit(v.numbers, e, v.Model.Value, v.Model.Tolerance), tolText(v.Model.Tolerance))
	}
	why := v.Reason
	if !v.Right && len(v.Hints) > 0 {
		// The hint's first sentence: the slip it names.
		why, _, _ = strings.Cut(v.Hints[0], ". ")
		why = strings.TrimSuffix(why, ".")
	}
	line := fmt.Sprintf("%s: your %s; %s", head, yours, answer)
	if why != "" {
		line += ": " + why
	}
	return line + "."
}

// String renders the verdict as text: the headline, then the detail a
// notebook keeps folded: the question, the prediction against each
// answer (the one that grades, and the other for information), the hints
// and the explanation.
func (v *Verdict) String() string {
	var b strings.Builder
	if v.Err != nil {
		fmt.Fprintf(&b, "%s: no verdict: %v\n", v.ID, v.Err)
		return b.String()
	}
	e := v.Question
	if v.Unanswered {
		fmt.Fprintf(&b, "%s: %s\n", v.ID, WritePredictionFirst)
		if e != nil {
			fmt.Fprintf(&b, "%s\n%s\n", e.Text, Rule(e))
		}
		return b.String()
	}
	fmt.Fprintf(&b, "%s\n", v.Headline())
	fmt.Fprintf(&b, "%s\n", e.Text)
	for _, r := range v.rows() {
		fmt.Fprintf(&b, "  %-16s %s: %s%s\n", r.name, r.value, r.judge, r.src)
	}
	for _, h := range v.Hints {
		fmt.Fprintf(&b, "Hint: %s\n", h)
	}
	for _, s := range v.Explanation {
		fmt.Fprintf(&b, "\n%s\n", s.Title)
		for _, l := range s.Lines {
			fmt.Fprintf(&b, "%s\n", l)
		}
	}
	return b.String()
}

// row is one answer a verdict holds the prediction against.
type row struct {
	name, value, judge, src string
	grades, right           bool
}

// rows are the model's and the measurement's answers: the one that grades
// says right or wrong, the other is for information.
func (v *Verdict) rows() []row {
	e := v.Question
	out := []row{{name: "model", value: withUnit(v.numbers, e, v.Model.Value, v.Model.Tolerance), src: ""}}
	out[0].grades, out[0].right = v.Graded && v.GradedBy == Model, v.Model.Right
	if v.Measurement != nil {
		out = append(out, row{name: "measured", value: withUnit(v.numbers, e, v.Measurement.Value, v.Measurement.Tolerance), src: "  [" + v.Origin + "]",
			grades: v.Graded && v.GradedBy == Measurement, right: v.Measurement.Right})
	} else {
		out = append(out, row{name: "measured", value: "none", src: "", judge: v.NoMeasurement})
	}
	for i := range out {
		r := &out[i]
		if r.value == "none" {
			continue
		}
		tol := v.Model.Tolerance
		if r.name == "measured" {
			tol = v.Measurement.Tolerance
		}
		switch {
		case r.grades:
			r.judge = fmt.Sprintf("grades, %s: %s", tolText(tol), rightWord(r.right))
		case r.right:
			r.judge = fmt.Sprintf("for information: your prediction is %s of it", tolPhrase(tol))
		default:
			r.judge = fmt.Sprintf("for information: your prediction is not %s of it", tolPhrase(tol))
		}
	}
	return out
}

// tolPhrase is "within 5%" or, for an exact answer, "exactly that".
func tolPhrase(tol float64) string {
	if tol == 0 {
		return "exactly"
	}
	return "within " + units.Percent.Format(tol)
}

// Outcome is the verdict in a word, as its headline starts: "RIGHT",
// "WRONG" or "NOT GRADED".
func (v *Verdict) Outcome() string { return strings.ToUpper(v.word()) }

func (v *Verdict) word() string {
	if !v.Graded {
		return "not graded"
	}
	if v.Right {
		return "right"
	}
	return "wrong"
}

func (v *Verdict) gradedLine() string {
	switch {
	case !v.Graded:
		return "it is graded against the measurement, and there is none"
	case v.GradedBy == Measurement:
		return "graded against the measurement"
	}
	return "graded against the model"
}

// pointsText says "1 of 2 points".
func pointsText(points, max float64) string {
	unit := "points"
	if max == 1 {
		unit = "point"
	}
	return fmt.Sprintf("%s of %s %s", units.Points.Format(points), units.Points.Format(max), unit)
}

func tolText(tol float64) string {
	if tol == 0 {
		return "exact"
	}
	return "within " + units.Percent.Format(tol)
}

func rightWord(ok bool) string {
	if ok {
		return "right"
	}
	return "wrong"
}

// HTML renders the verdict for a notebook: the headline, coloured, and
// the detail folded under it (<details>): the question, the answers,
// the hints and the explanation, preformatted lines in <pre>.
func (v *Verdict) HTML() string {
	var b strings.Builder
	esc := html.EscapeString
	b.WriteString(`<div class="coalesce-verdict" style="border:1px solid #ccc;border-radius:4px;padding:0.5em 0.8em;margin:0.3em 0">`)
	if v.Err != nil {
		fmt.Fprintf(&b, `<b style="color:#a00">%s: no verdict</b><br>%s</div>`, esc(v.ID), esc(v.Err.Error()))
		return b.String()
	}
	e := v.Question
	if v.Unanswered {
		fmt.Fprintf(&b, `<div><b style="color:#666">YOUR PREDICTION?</b> <code>%s</code> — %s</div>`, esc(v.ID), esc(WritePredictionFirst))
		if e != nil {
			fmt.Fprintf(&b, `<p style="margin:0.3em 0">%s</p><p style="margin:0.3em 0;color:#555">%s</p>`, esc(e.Text), esc(Rule(e)))
		}
		b.WriteString(`</div>`)
		return b.String()
	}
	color := "#a00"
	switch {
	case !v.Graded:
		color = "#666"
	case v.Right:
		color = "#070"
	}
	word := strings.ToUpper(v.word())
	rest := strings.TrimPrefix(v.Headline(), word+" "+e.ID)
	fmt.Fprintf(&b, `<div><b style="color:%s">%s</b> <code>%s</code>%s</div>`, color, word, esc(e.ID), esc(rest))
	b.WriteString(`<details><summary>Details</summary>`)
	fmt.Fprintf(&b, `<p style="margin:0.3em 0">%s</p>`, esc(e.Text))
	b.WriteString(`<table style="border-collapse:collapse;margin:0.3em 0">`)
	yours := prediction(v.Prediction)
	if v.Read != "" {
		yours = v.Read
	}
	fmt.Fprintf(&b, `<tr><td style="padding:0 1em 0 0;text-align:left">your prediction</td><td style="padding:0 1em 0 0;text-align:left"><b>%s</b></td><td></td><td></td></tr>`, esc(yours))
	for _, r := range v.rows() {
		judge := `<span style="color:#555">` + esc(r.judge) + `</span>`
		if r.grades {
			c := "#a00"
			if r.right {
				c = "#070"
			}
			judge = fmt.Sprintf(`<span style="color:%s">%s</span>`, c, esc(r.judge))
		}
		fmt.Fprintf(&b, `<tr><td style="padding:0 1em 0 0;text-align:left">%s</td><td style="padding:0 1em 0 0;text-align:left"><b>%s</b></td><td style="padding:0 1em 0 0;text-align:left">%s</td><td style="text-align:left;color:#555">%s</td></tr>`,
			esc(r.name), esc(r.value), judge, esc(strings.TrimSpace(strings.Trim(r.src, " []"))))
	}
	b.WriteString(`</table>`)
	for _, h := range v.Hints {
		fmt.Fprintf(&b, `<p style="margin:0.3em 0"><b>Hint:</b> %s</p>`, esc(h))
	}
	for _, s := range v.Explanation {
		fmt.Fprintf(&b, `<h4 style="margin:0.6em 0 0.2em">%s</h4>`, esc(s.Title))
		writeLinesHTML(&b, s.Lines)
	}
	b.WriteString(`</details></div>`)
	return b.String()
}

// writeLinesHTML writes prose lines as paragraphs and runs of preformatted
// lines (two leading spaces) as one <pre> each.
func writeLinesHTML(b *strings.Builder, lines []string) {
	for i := 0; i < len(lines); {
		if strings.HasPrefix(lines[i], "  ") {
			j := i
			for j < len(lines) && strings.HasPrefix(lines[j], "  ") {
				j++
			}
			b.WriteString(`<pre style="margin:0.2em 0">`)
			for _, l := range lines[i:j] {
				b.WriteString(html.EscapeString(l[2:]))
				b.WriteByte('\n')
			}
			b.WriteString(`</pre>`)
			i = j
			continue
		}
		fmt.Fprintf(b, `<p style="margin:0.2em 0">%s</p>`, html.EscapeString(lines[i]))
		i++
	}
}

// Points writes points earned of a maximum: "1 of 2 points".
func Points(points, max float64) string { return pointsText(points, max) }

// AnswerText writes the answer of judge j with its unit and tolerance,
// as a report lists it: "4 sectors per request, exact", "16.69 DRAM bytes
// per useful byte, within 20%". It is "" for a measured answer the key
// does not have.
func (k *Key) AnswerText(j Judge) string {
	e := k.Question
	if j == Measurement {
		if !k.HasMeasured {
			return ""
		}
		return fmt.Sprintf("%s, %s", withUnit(k.numbers, e, k.Measured, e.Tolerance.Measured), tolText(e.Tolerance.Measured))
	}
	return fmt.Sprintf("%s, %s", withUnit(k.numbers, e, k.Model, e.Tolerance.Model), tolText(e.Tolerance.Model))
}

// Markdown renders the section's lines as markdown: prose as paragraphs,
// the preformatted lines (those starting with two spaces) as code blocks.
func (s Section) Markdown() string {
	var b strings.Builder
	lines := s.Lines
	for i := 0; i < len(lines); {
		if strings.HasPrefix(lines[i], "  ") {
			b.WriteString("```\n")
			for ; i < len(lines) && strings.HasPrefix(lines[i], "  "); i++ {
				b.WriteString(lines[i][2:])
				b.WriteByte('\n')
			}
			b.WriteString("```\n\n")
			continue
		}
		b.WriteString(lines[i])
		b.WriteString("\n\n")
		i++
	}
	return b.String()
}
