package exercises

import "fmt"

// Report is a graded kernel, as the sandbox's child prints it (JSON; the
// package documentation lists its fields under "JSON schema").
type Report struct {
	ID      string         `json:"id"`
	Learner string         `json:"learner"`
	Params  map[string]int `json:"params"`
	// Correct: the output equals the reference; Mismatch: the first
	// difference otherwise (null when correct or when nothing ran).
	Correct  bool      `json:"correct"`
	Mismatch *Mismatch `json:"mismatch"`
	// Targets: each counter target, with the kernel's count.
	Targets []Target `json:"targets"`
	// Pass: correct and every target met.
	Pass bool `json:"pass"`
	// Points: 1 for a correct output and 1 for each target met by it;
	// MaxPoints is 1 plus the number of targets.
	Points    int `json:"points"`
	MaxPoints int `json:"max_points"`
	// Error: why the kernel could not be graded or did not finish (an
	// unknown id, a kernel of the wrong type, a fault, a panic); "" when
	// it ran to its end.
	Error string `json:"error"`
}

// Grade runs kernel on learner's variant of exercise id and reports. It
// never panics: what goes wrong is in Error.
func Grade(id, learner string, kernel any) (rep Report) {
	rep = Report{ID: id, Learner: learner, Params: map[string]int{}, Targets: []Target{}}
	defer func() {
		if v := recover(); v != nil {
			rep.Error = fmt.Sprintf("exercises: %s: grading panicked: %v", id, v)
			rep.Correct, rep.Mismatch, rep.Pass, rep.Points = false, nil, false, 0
		}
	}()
	e, err := Lookup(id)
	if err != nil {
		rep.Error = err.Error()
		return rep
	}
	v := e.Variant(learner)
	rep.Params = v.Params
	rep.MaxPoints = 1 + len(e.Metrics)
	out, err := e.Run(v, kernel)
	if err != nil {
		rep.Error = err.Error()
		return rep
	}
	if out.Fault != nil {
		rep.Error = out.Fault.Error()
	}
	rep.Correct, rep.Mismatch, rep.Pass = out.Correct, out.Mismatch, out.Pass
	rep.Targets = append(rep.Targets, out.Targets...)
	if out.Correct {
		rep.Points = 1
		for _, t := range out.Targets {
			if t.Pass {
				rep.Points++
			}
		}
	}
	return rep
}
