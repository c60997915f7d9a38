package grader

import (
	"sync"

	"github.com/coalescing-course/coalesce/lessons/measure"
)

// Grader holds a bank and a measurement source, and computes each
// question's answer key once, the first time it is asked for. It is safe
// for concurrent use. Build one with New.
type Grader struct {
	bank   *Bank
	src    measure.Measurer
	noMeas string

	mu   sync.Mutex
	keys map[string]func() (*Key, error)
}

// Options configure New.
type Options struct {
	// Bank is the question bank; nil is the course's (Questions).
	Bank *Bank
	// Measurer is where measured answers come from; nil is none.
	Measurer measure.Measurer
	// NoMeasurer says why there is no measurement source, for the verdicts,
	// when Measurer is nil.
	NoMeasurer string
}

// New returns a Grader. It fails only when the course's bank is needed and
// does not validate.
func New(opt Options) (*Grader, error) {
	b := opt.Bank
	if b == nil {
		var err error
		if b, err = Questions(); err != nil {
			return nil, err
		}
	}
	g := &Grader{bank: b, src: opt.Measurer, noMeas: opt.NoMeasurer, keys: map[string]func() (*Key, error){}}
	if g.src == nil && g.noMeas == "" {
		g.noMeas = "no measurement source was given"
	}
	return g, nil
}

// Bank returns the grader's bank.
func (g *Grader) Bank() *Bank { return g.bank }

// Origin returns the label of the measurement source, or why there is none.
func (g *Grader) Origin() string {
	if g.src != nil {
		return g.src.Origin().String()
	}
	return "none: " + g.noMeas
}

// Key returns the answer key of question id, computing it on first use.
func (g *Grader) Key(id string) (*Key, error) {
	e, err := g.bank.Question(id)
	if err != nil {
		return nil, err
	}
	g.mu.Lock()
	key, ok := g.keys[id]
	if !ok {
		key = sync.OnceValues(func() (*Key, error) { return computeKey(e, g.src, g.noMeas) })
		g.keys[id] = key
	}
	g.mu.Unlock()
	return key()
}

// Grade judges a prediction for question id. It never fails: a verdict
// that cannot be given (an unknown id) has Err set. A prediction that is
// not a finite number (a placeholder) gets an Unanswered verdict, made
// without computing the key.
func (g *Grader) Grade(id string, prediction float64) *Verdict {
	if !Answered(prediction) {
		e, err := g.bank.Question(id)
		if err != nil {
			return &Verdict{ID: id, Prediction: prediction, Err: err}
		}
		return unanswered(id, e, prediction)
	}
	k, err := g.Key(id)
	if err != nil {
		return &Verdict{ID: id, Prediction: prediction, Err: err}
	}
	return k.Verdict(prediction)
}
