package lab

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/coalescing-course/coalesce/grader"
)

// theGrader is the notebook's grader: the course's bank, and the
// notebook's measurement source, made on first use.
var theGrader = newOnDemand(newGrader)

func newGrader() (*grader.Grader, error) {
	src, err := source()
	if err != nil {
		return grader.New(grader.Options{NoSource: err.Error()})
	}
	return grader.New(grader.Options{Source: src})
}

// Check records a prediction and answers it at once: the verdict against
// the model and the measurement, with the case's explanation, displayed as
// HTML in a notebook and printed as text elsewhere. The prediction must be
// a number written in the call,
//
//	lab.Check("03-strided/sectors-stride-32", 32)
//
// so that `coalesce grade` can read it from the saved notebook; the
// measured answers come from the notebook's own source (Measure's).
func Check(id string, prediction float64) *grader.Verdict {
	g, err := theGrader.value()
	var v *grader.Verdict
	if err != nil {
		v = &grader.Verdict{ID: id, Prediction: prediction, Err: err}
	} else {
		v = g.Grade(id, prediction)
	}
	showHTML(v.HTML(), v.String())
	return v
}

// Exercises returns the course's exercise bank, for a notebook that lists
// the lessons and what they ask.
func Exercises() (*grader.Bank, error) { return grader.Exercises() }

// Planted shows that the grader tells a right prediction from a wrong one:
// it grades exercise id with the answer the grader itself computes (the
// model's, or the measurement's for an exercise graded by measurement),
// then with wrong, and prints the first line of each verdict and the hints
// of the wrong one:
//
//	planted right answer 4: 01-sectors/sectors-float: RIGHT (1 of 1 point, graded against the model)
//	planted wrong answer 128: 01-sectors/sectors-float: WRONG (0 of 1 point, graded against the model)
//	  Hint: That counts bytes: divide by 32 bytes per sector.
//
// It records nothing: it makes no Check call, so `coalesce grade` does not
// read it as the learner's prediction. An exercise that cannot be graded
// ends the cell with the error (Must).
func Planted(id string, wrong float64) {
	g, err := theGrader.value()
	if err == nil {
		err = planted(g, id, wrong)
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
	for _, c := range []struct {
		what  string
		value float64
	}{{"right", right}, {"wrong", wrong}} {
		v := g.Grade(id, c.value)
		if v.Err != nil {
			return fmt.Errorf("lab: %w", v.Err)
		}
		first, _, _ := strings.Cut(v.String(), "\n")
		fmt.Fprintf(stdout(), "planted %s answer %s: %s\n", c.what, strconv.FormatFloat(c.value, 'g', 6, 64), first)
		if c.what == "wrong" {
			for _, h := range v.Hints {
				fmt.Fprintf(stdout(), "  Hint: %s\n", h)
			}
		}
	}
	return nil
}
