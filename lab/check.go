package lab

import (
	"encoding/json"
	"fmt"
	"html"
	"math"
	"os"
	"strings"
	"time"

	"github.com/coalescing-course/coalesce/grader"
	"github.com/coalescing-course/coalesce/internal/attempt"
	"github.com/coalescing-course/coalesce/lessons/figures"
	"github.com/coalescing-course/coalesce/lessons/plots"
	"github.com/coalescing-course/coalesce/units"
)

// YourPrediction is the placeholder a lesson's Check cells ship with,
//
//	lab.Check("03-strided/sectors-stride-32", lab.YourPrediction)
//
// It is NaN, a number no learner writes, so that 0 is a real prediction.
// Check with it (or any NaN or infinity) says "write your prediction
// first", shows the question and nothing of the answer, and records
// nothing; `coalesce grade` counts it as missing.
var YourPrediction = math.NaN()

// now is the clock of the attempts; tests set it.
var now = time.Now

// attempts returns the notebook's attempt store (attempt.Locate), ok
// false when nothing is recorded (outside a notebook, with no
// COALESCE_ATTEMPTS folder).
func attempts() (s attempt.Store, ok bool) {
	cwd, _ := os.Getwd()
	p := attempt.Locate(os.Getenv, cwd, inNotebook)
	return attempt.Store{Path: p}, p != ""
}

// theGrader is the notebook's grader: the course's bank, and the
// notebook's measurement source, made on first use.
var theGrader = newOnDemand(newGrader)

func newGrader() (*grader.Grader, error) {
	src, err := measurer()
	if err != nil {
		return grader.New(grader.Options{NoMeasurer: err.Error()})
	}
	return grader.New(grader.Options{Measurer: src})
}

// Check records a prediction and answers it at once: the verdict against
// the model and the measurement, its one line open and the explanation
// folded under it, displayed as HTML in a notebook and printed as text
// elsewhere. The prediction is a number written in the call, or the
// number with its unit in quotes,
//
//	lab.Check("03-strided/sectors-stride-32", 32)
//	lab.Check("03-strided/sectors-stride-32", "32 sectors")
//	lab.Check("03-strided/efficiency-stride-2", "50%")
//	lab.Check("03-strided/slowdown-stride-32", "3.1x")
//
// read by grader.ReadPrediction, as `coalesce grade` reads the same call
// from the saved notebook; the verdict says what a text was read as. The
// measured answers come from the notebook's own source (Measure's).
//
// Every real prediction is an attempt: Check counts them per question in
// the notebook's attempt file (package attempt: beside the notebook, in
// .coalesce/attempts/) and puts the record, first and last prediction and
// count, in the cell's output as well (attempt.MIMEType), where the saved
// notebook keeps it for the instructor. The placeholder YourPrediction
// shows the question only and records nothing. A verdict's explanation
// holds back a part that would answer another question not yet answered.
func Check(id string, prediction any) *grader.Verdict {
	g, err := theGrader.value()
	var v *grader.Verdict
	switch {
	case err != nil:
		v = &grader.Verdict{ID: id, Err: err}
	default:
		value, read, perr := predictionOf(g, id, prediction)
		if perr != nil {
			v = &grader.Verdict{ID: id, Err: perr}
			break
		}
		done := func() {}
		if grader.Answered(value) {
			done = working(fmt.Sprintf("grading %s: the model replays every warp of its launches, and the measurement is looked up", id))
		}
		v = g.Grade(id, value)
		done()
		if v.Err == nil && !v.Unanswered {
			v.Read = read
		}
	}
	prediction = v.Prediction
	if v.Unanswered || v.Err != nil {
		newDisplay().emit(output{text: v.String(), html: v.HTML()})
		return v
	}
	store, ok := attempts()
	var note, record string
	if ok {
		rec, err := store.Add(id, v.Prediction, now())
		switch {
		case rec.Attempts == 0: // nothing recorded: say why, under the verdict
			note = fmt.Sprintf("(This attempt was not recorded: %v)", err)
		default:
			note = attemptNote(rec)
			if err != nil { // recorded, in a new file: the old one did not parse
				note += fmt.Sprintf(" (%v)", err)
			}
			if js, jerr := json.Marshal(rec); jerr == nil {
				record = string(js)
			}
		}
	}
	d := newDisplay()
	shown := gated(d, v)
	o := output{text: shown.String(), html: shown.HTML(), attempt: record}
	if note != "" {
		o.text += note + "\n"
		o.html += noteHTML(note)
	}
	d.emit(o)
	if len(v.Hints) > 0 && g != nil {
		// The hint names the wrong model; the picture shows the right one.
		misconceptionDiagram(g, id)
	}
	return v
}

// predictionOf reads a Check's prediction: a number as it is, a text
// (grader.ReadPrediction) with what it was read as. Anything else is an
// error that says what Check takes.
func predictionOf(g *grader.Grader, id string, p any) (float64, string, error) {
	switch x := p.(type) {
	case float64:
		return x, "", nil
	case float32:
		return float64(x), "", nil
	case int:
		return float64(x), "", nil
	case int64:
		return float64(x), "", nil
	case int32:
		return float64(x), "", nil
	case uint:
		return float64(x), "", nil
	case string:
		q, err := g.Bank().Question(id)
		if err != nil {
			return 0, "", err
		}
		r, err := grader.ReadPrediction(q, x)
		if err != nil {
			return 0, "", err
		}
		return r.Value, fmt.Sprintf("%q, read as %s", x, r.As), nil
	}
	return 0, "", fmt.Errorf("lab: Check(%q, %v): the prediction is a %T; want a number (32, 0.5) or one with its unit in quotes (\"32 sectors\", \"50%%\", \"3.1x\")", id, p, p)
}

// gated returns v with the sections of its explanation that tell another
// question the learner owes replaced by a line saying so.
func gated(d *display, v *grader.Verdict) *grader.Verdict {
	out := *v
	out.Explanation = nil
	for _, s := range v.Explanation {
		if !d.showAll(s.Tells) {
			s = grader.Section{Title: s.Title, Lines: []string{"This part gives away an answer you have not given yet; it shows once you have (see the note below)."}}
		}
		out.Explanation = append(out.Explanation, s)
	}
	return &out
}

// attemptNote says which attempt this was and, from the second on, what
// the first prediction was: the one made before the answer was seen.
func attemptNote(r attempt.Record) string {
	if r.Attempts == 1 {
		return "Attempt 1 at this exercise."
	}
	return fmt.Sprintf("Attempt %d at this exercise; your first prediction was %s.", r.Attempts, units.AsWritten(r.First.Value))
}

func noteHTML(note string) string {
	return `<p style="margin:0.2em 0;color:#555">` + html.EscapeString(note) + `</p>`
}

// Questions returns the course's question bank, for a notebook that lists
// the lessons and what they ask.
func Questions() (*grader.Bank, error) { return grader.Questions() }

// Planted shows that the grader tells a right prediction from a wrong one:
// it grades question id with the answer the grader itself computes (the
// model's, or the measurement's for a question graded by measurement),
// then with wrong, and prints the first line of each verdict and the hints
// of the wrong one:
//
//	planted right answer 4: 01-sectors/sectors-float: RIGHT (1 of 1 point)
//	planted wrong answer 128: 01-sectors/sectors-float: WRONG (0 of 1 point)
//	  Hint: That counts bytes: divide by 32 bytes per sector.
//
// It records nothing: it makes no Check call, so `coalesce grade` does not
// read it as the learner's prediction. A question that cannot be graded
// ends the cell with the error (Must).
//
// Since it prints the answer, in a notebook it runs only after the learner
// has made a real prediction for id (an attempt that Check recorded);
// before that it says so and ends the cell cleanly, so that Run All on a
// fresh notebook reveals nothing. Outside a notebook, with no attempt
// folder configured (COALESCE_ATTEMPTS), there is no learner to wait for.
func Planted(id string, wrong float64) {
	if store, ok := attempts(); ok {
		_, made, err := store.Get(id)
		if !made {
			msg := fmt.Sprintf("Checking the checker runs after your own prediction for %s (above).", id)
			if err != nil {
				msg += fmt.Sprintf(" (Your attempts cannot be read: %v)", err)
			}
			printf("%s\n", msg)
			flush()
			return
		}
	}
	g, err := theGrader.value()
	if err == nil {
		done := working("grading " + id + " with the grader's own answer and a wrong one")
		err = planted(g, id, wrong)
		done()
	}
	Must(0, err)
}

func planted(g *grader.Grader, id string, wrong float64) error {
	k, err := g.Key(id)
	if err != nil {
		return fmt.Errorf("lab: %w", err)
	}
	right, _, ok := k.Answer()
	if !ok {
		right = k.Model
	}
	// The right answer is the verdict's, which the learner has seen:
	// Planted waits for their attempt (above) and shows nothing more.
	d := newDisplay()
	var b strings.Builder
	for _, c := range []struct {
		what  string
		value float64
	}{{"right", right}, {"wrong", wrong}} {
		v := g.Grade(id, c.value)
		if v.Err != nil {
			return fmt.Errorf("lab: %w", v.Err)
		}
		outcome := v.Outcome()
		if v.Graded {
			outcome += " (" + grader.Points(v.Points, v.MaxPoints) + ")"
		}
		fmt.Fprintf(&b, "planted %s answer %s: %s: %s\n", c.what, units.AsWritten(c.value), id, outcome)
		if c.what == "wrong" {
			for _, h := range v.Hints {
				fmt.Fprintf(&b, "  Hint: %s\n", h)
			}
		}
	}
	d.emit(output{text: b.String()})
	return nil
}

// misconceptionDiagram draws, under a verdict whose wrong answer matches a
// known wrong model (bytes for sectors, 128-byte transactions, the
// requested bytes over 32...), the instruction the question is about:
// warp 0 of the question's first launch, a load unless the question is
// about stores, with its lanes and the sectors they really touch.
func misconceptionDiagram(g *grader.Grader, id string) {
	k, err := g.Key(id)
	if err != nil || len(k.Parts) == 0 {
		return
	}
	s := k.Parts[0].Spec
	ins, err := plots.Instructions(s, 0)
	if err != nil {
		return
	}
	store, ok := grader.Asked(k.Question.Quantity)
	if !ok && k.Question.Quantity != figures.Efficiency.Name {
		return // a question about time or banks: no sector picture answers it
	}
	want := "load"
	if store {
		want = "store"
	}
	for i, in := range ins {
		if in.Op != want {
			continue
		}
		d := newDisplay()
		if !showInstruction(d, s, 0, i) {
			d.emit(output{text: "The picture of this warp waits for your prediction of another question."})
		}
		return
	}
}
