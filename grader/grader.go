package grader

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/janpfeifer/gonb/gonbui"
)

// Grader holds a bank and a measurement source, and computes each
// exercise's answer key once, the first time it is asked for. It is safe
// for concurrent use. Build one with New; Default is the notebooks' own.
type Grader struct {
	bank   *Bank
	meas   Measurements
	noMeas string

	mu   sync.Mutex
	keys map[string]*keyEntry
}

type keyEntry struct {
	once sync.Once
	key  *Key
	err  error
}

// Options configure New.
type Options struct {
	// Bank is the exercise bank; nil is the course's (Exercises).
	Bank *Bank
	// Measurements is where measured answers come from; nil is none.
	Measurements Measurements
	// NoMeasurement says why there is no measurement source, for the
	// verdicts, when Measurements is nil.
	NoMeasurement string
}

// New returns a Grader. It fails only when the course's bank is needed and
// does not validate.
func New(opt Options) (*Grader, error) {
	b := opt.Bank
	if b == nil {
		var err error
		if b, err = Exercises(); err != nil {
			return nil, err
		}
	}
	g := &Grader{bank: b, meas: opt.Measurements, noMeas: opt.NoMeasurement, keys: map[string]*keyEntry{}}
	if g.meas == nil && g.noMeas == "" {
		g.noMeas = "no measurement source was given"
	}
	return g, nil
}

// Bank returns the grader's bank.
func (g *Grader) Bank() *Bank { return g.bank }

// Source returns the label of the measurement source, or why there is none.
func (g *Grader) Source() string {
	if g.meas != nil {
		return g.meas.Label()
	}
	return "none: " + g.noMeas
}

// Key returns the answer key of exercise id, computing it on first use.
func (g *Grader) Key(id string) (*Key, error) {
	e, err := g.bank.Exercise(id)
	if err != nil {
		return nil, err
	}
	g.mu.Lock()
	ent, ok := g.keys[id]
	if !ok {
		ent = &keyEntry{}
		g.keys[id] = ent
	}
	g.mu.Unlock()
	ent.once.Do(func() { ent.key, ent.err = computeKey(e, g.meas, g.noMeas) })
	return ent.key, ent.err
}

// Grade judges a prediction for exercise id. It never fails: a verdict
// that cannot be given (an unknown id) has Err set.
func (g *Grader) Grade(id string, prediction float64) *Verdict {
	k, err := g.Key(id)
	if err != nil {
		return &Verdict{ID: id, Prediction: prediction, Err: err}
	}
	return k.verdict(prediction)
}

// MeasureEnv names the environment variable that picks the notebooks'
// measurement source: "live" (this machine's GPU), "recorded" (the H200
// reference built into the course), "none", or "" / "auto": live when this
// machine can measure, else recorded.
const MeasureEnv = "COALESCE_MEASURE"

var (
	defaultOnce sync.Once
	defaultG    *Grader
	defaultErr  error
)

// Default returns the grader Check uses: the course's bank, and the
// measurement source MeasureEnv picks, opened on first use.
func Default() (*Grader, error) {
	defaultOnce.Do(func() {
		m, why := openSource(os.Getenv(MeasureEnv))
		defaultG, defaultErr = New(Options{Measurements: m, NoMeasurement: why})
	})
	return defaultG, defaultErr
}

// openSource opens the measurement source mode names, or says why none.
func openSource(mode string) (Measurements, string) {
	ctx, cancel := context.WithTimeout(context.Background(), LiveTimeout)
	defer cancel()
	switch strings.ToLower(strings.TrimSpace(mode)) {
	case "", "auto":
		m, liveErr := Live(ctx)
		if liveErr == nil {
			return m, ""
		}
		m, recErr := Recorded()
		if recErr == nil {
			return m, ""
		}
		return nil, fmt.Sprintf("no live GPU (%v) and no recorded reference (%v)", liveErr, recErr)
	case "live":
		m, err := Live(ctx)
		if err != nil {
			return nil, fmt.Sprintf("%s=live, but: %v", MeasureEnv, err)
		}
		return m, ""
	case "recorded":
		m, err := Recorded()
		if err != nil {
			return nil, fmt.Sprintf("%s=recorded, but: %v", MeasureEnv, err)
		}
		return m, ""
	case "none":
		return nil, MeasureEnv + "=none"
	}
	return nil, fmt.Sprintf("%s=%q: want live, recorded, none or auto", MeasureEnv, mode)
}

// Check records a prediction and answers it at once: the verdict against
// the model and the measurement, with the case's explanation, displayed as
// HTML in a GoNB notebook and printed as text elsewhere. The prediction
// must be a number written in the call, grader.Check("03-strided/sectors-stride-32", 32),
// so that `coalesce grade` can read it from the saved notebook.
func Check(id string, prediction float64) *Verdict {
	g, err := Default()
	var v *Verdict
	if err != nil {
		v = &Verdict{ID: id, Prediction: prediction, Err: err}
	} else {
		v = g.Grade(id, prediction)
	}
	Show(v)
	return v
}

// Output is where Show prints outside a notebook; nil is os.Stdout.
var Output io.Writer

// Show displays a verdict: HTML in a GoNB notebook (gonbui.DisplayHTML,
// then gonbui.Sync so it is on the page before the cell ends), its String
// on Output elsewhere.
func Show(v *Verdict) {
	if gonbui.IsNotebook {
		gonbui.DisplayHTML(v.HTML())
		gonbui.Sync()
		return
	}
	w := Output
	if w == nil {
		w = os.Stdout
	}
	fmt.Fprint(w, v.String())
}
