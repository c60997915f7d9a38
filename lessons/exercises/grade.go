package exercises

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

// Grade runs kernel on learner's variant of exercise id and judges it, in
// this process: Judge of Observe. It never panics: what goes wrong is in
// Error.
func Grade(id, learner string, kernel any) Report {
	return Judge(id, learner, Observe(id, learner, kernel, nil))
}
