package lab

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/coalescing-course/coalesce/grader"
)

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
// It uses the notebook's grader (grader.Default) but records nothing: it
// makes no grader.Check call, so `coalesce grade` does not read it as the
// learner's prediction.
//
// An exercise that cannot be graded ends the cell with the error (Must).
func Planted(id string, wrong float64) {
	g, err := grader.Default()
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
		fmt.Fprintf(Output, "planted %s answer %s: %s\n", c.what, strconv.FormatFloat(c.value, 'g', 6, 64), first)
		if c.what == "wrong" {
			for _, h := range v.Hints {
				fmt.Fprintf(Output, "  Hint: %s\n", h)
			}
		}
	}
	return nil
}
