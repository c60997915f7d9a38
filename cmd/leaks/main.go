// Command leaks is the course's leak test: it reads executed notebooks, in
// course order, as a learner who answered nothing but what the notebooks
// themselves record would see them, and fails when one shows a question's
// answer before the learner has answered it, in that notebook or an
// earlier one. scripts/run_notebooks.py runs it on the notebooks it has
// just executed with their shipped placeholders (lab.YourPrediction), so
// that `make test` fails on a leak.
//
//	leaks build/notebooks/01-sectors.ipynb build/notebooks/02-coalescing.ipynb ...
//
// It reads two things, independently of the gate that should have
// withheld what it finds:
//
//   - what each output says it showed: lab attaches to every output the
//     values it shows (grader.Shown, MIME grader.ShownMIMEType), and a
//     value that tells a question (grader.Tells: the question's figure or
//     one that makes it trivial, on its launch or one with the same
//     counts, within its tolerance) of this lesson or a later one, not
//     answered yet, is a leak, whatever the gate decided;
//   - the numbers the text states, in outputs and in markdown cells: a
//     number within a question's tolerance of its answer (the model's or
//     the course's recording's, grader.Answers) followed by the
//     question's unit ("32 sectors", "×15.7", "63.4%" for a fraction),
//     or a device fact with its unit near what it is ("64-byte fetch
//     blocks"), is a leak when it stands in the question's notebook (for
//     markdown: before the question's Check cell) or, for a number of
//     three significant digits or more, in an earlier notebook. A table
//     cell no tell names counts with its column's header as its unit.
//
// A question is answered from the first output that carries its attempt
// record (attempt.MIMEType) on. It prints one line per leak and exits 1
// when there is one, 2 when a notebook cannot be read.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/coalescing-course/coalesce/grader"
	"github.com/coalescing-course/coalesce/internal/attempt"
	"github.com/coalescing-course/coalesce/internal/notebook"
	"github.com/coalescing-course/coalesce/lessons/devices"
	"github.com/coalescing-course/coalesce/lessons/figures"
	"github.com/coalescing-course/coalesce/units"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	flags := flag.NewFlagSet("leaks", flag.ContinueOnError)
	flags.SetOutput(stderr)
	flags.Usage = func() {
		fmt.Fprintln(stderr, "usage: leaks NOTEBOOK.ipynb ... (executed, in course order)")
		flags.PrintDefaults()
	}
	if err := flags.Parse(args); err != nil {
		return 2
	}
	paths := flags.Args()
	if len(paths) == 0 {
		flags.Usage()
		return 2
	}
	bank, err := grader.Questions()
	if err != nil {
		fmt.Fprintf(stderr, "leaks: %v\n", err)
		return 2
	}
	c, err := newChecker(bank)
	if err != nil {
		fmt.Fprintf(stderr, "leaks: %v\n", err)
		return 2
	}
	code := 0
	for _, path := range paths {
		nb, err := readExecuted(path)
		if err != nil {
			fmt.Fprintf(stderr, "leaks: %s: %v\n", path, err)
			code = 2
			continue
		}
		for _, l := range c.notebook(strings.TrimSuffix(filepath.Base(path), ".ipynb"), nb) {
			fmt.Fprintf(stdout, "%s: %s\n", path, l)
			if code == 0 {
				code = 1
			}
		}
	}
	if code == 1 {
		fmt.Fprintf(stdout, "leaks: %d found: a value must wait for its question's answer (lab's displays withhold what their grader.Tell says; prose must not state it before the question)\n", c.found)
	}
	return code
}

// executed is what the checker reads of an executed notebook.
type executed struct {
	Cells []struct {
		Type    string          `json:"cell_type"`
		Source  json.RawMessage `json:"source"`
		Outputs []struct {
			Type string                     `json:"output_type"`
			Text json.RawMessage            `json:"text"`
			Data map[string]json.RawMessage `json:"data"`
		} `json:"outputs"`
	} `json:"cells"`
}

func readExecuted(path string) (*executed, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if _, err := notebook.Parse(data); err != nil {
		return nil, err
	}
	var nb executed
	if err := json.Unmarshal(data, &nb); err != nil {
		return nil, err
	}
	return &nb, nil
}

// text joins a JSON string or list of strings, as nbformat writes text.
func text(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var ss []string
	if json.Unmarshal(raw, &ss) == nil {
		return strings.Join(ss, "")
	}
	return ""
}

// Leak is one thing shown too early.
type Leak struct {
	Cell     int // 1-based, as a notebook's reader counts
	What     string
	Question string
}

func (l Leak) String() string {
	return fmt.Sprintf("cell %d: %s, which tells %s before it is answered", l.Cell, l.What, l.Question)
}

// answer is what the text scan looks for of one question: its answer, or
// one launch's value of its quantity (half of a ratio).
type answer struct {
	q        *grader.Question
	values   []float64 // the model's and the recording's
	tols     []float64
	fraction bool     // answered as a fraction: stated as a percentage
	times    bool     // a ratio: "×4", "4 times"
	heads    []string // words that must follow the number
	// units are the units a launch's value may be written in, with what
	// one of them is worth in the quantity's own unit: "µs" 1e-6 for a
	// time in seconds.
	units map[string]float64
	what  string // "" for the answer, else which launch's value it is
}

type checker struct {
	bank     *grader.Bank
	answers  []answer
	facts    []fact
	answered map[string]bool
	found    int
}

// fact is a device fact the text may state.
type fact struct {
	name   string
	value  float64
	words  []string // one must be in the sentence
	teller []*grader.Question
}

func newChecker(b *grader.Bank) (*checker, error) {
	c := &checker{bank: b, answered: map[string]bool{}}
	for i := range b.Questions {
		q := &b.Questions[i]
		m, r, ok, err := grader.Answers(q)
		if err != nil {
			return nil, err
		}
		a := answer{q: q, values: []float64{m}, tols: []float64{q.Tolerance.Model}}
		if ok {
			a.values, a.tols = append(a.values, r), append(a.tols, q.Tolerance.Measured)
		}
		unit := strings.ToLower(q.Unit)
		switch {
		case q.Quantity == figures.Efficiency.Name || q.Quantity == figures.FractionOfMemcpy.Name || strings.HasPrefix(unit, "fraction"):
			a.fraction = true
		case q.Combine == grader.Ratio || strings.HasPrefix(unit, "times"):
			a.times = true
		default:
			a.heads = headsOf(unit)
		}
		c.answers = append(c.answers, a)
		if q.Combine != grader.Ratio {
			continue
		}
		parts, err := grader.PartAnswers(q)
		if err != nil {
			return nil, err
		}
		for j, p := range parts {
			pa := answer{q: q, values: []float64{p.Model}, tols: []float64{q.Tolerance.Model}, what: q.Specs[j].Brief()}
			if p.HasRecorded {
				pa.values, pa.tols = append(pa.values, p.Recorded), append(pa.tols, q.Tolerance.Measured)
			}
			switch q.Quantity {
			case figures.TimeSeconds.Name:
				pa.units = map[string]float64{"s": 1, "ms": 1e-3, "µs": 1e-6, "μs": 1e-6, "us": 1e-6}
			case figures.UsefulBandwidth.Name:
				pa.units = map[string]float64{"gb/s": 1e9, "tb/s": 1e12}
			default:
				pa.heads = headsOf(q.Quantity)
			}
			c.answers = append(c.answers, pa)
		}
	}
	d, err := devices.Lookup(devices.Course)
	if err != nil {
		return nil, err
	}
	l2 := fact{name: grader.FactL2Fetch, value: float64(d.DefaultL2Fetch), words: []string{"fetch", "granularity"}}
	for i := range b.Questions {
		q := &b.Questions[i]
		for _, g := range q.ToldBy {
			if g.Fact == grader.FactL2Fetch {
				l2.teller = append(l2.teller, q)
			}
		}
	}
	c.facts = []fact{l2}
	return c, nil
}

// headsOf returns the words a number must be followed by to be a value of
// a unit or a metric: "sectors per request" wants "sector...", an ncu
// metric of requests "request...".
func headsOf(unit string) []string {
	switch {
	case strings.Contains(unit, "requests_") || strings.HasPrefix(unit, "request"):
		return []string{"request"}
	case strings.Contains(unit, "sectors_") || strings.HasPrefix(unit, "sector"):
		return []string{"sector"}
	case strings.HasPrefix(unit, "dram__"):
		return []string{"b ", "bytes"}
	}
	head, _, _ := strings.Cut(unit, " ")
	heads := []string{strings.TrimSuffix(head, "s")}
	if strings.Contains(unit, "per useful byte") {
		heads = append(heads, "bytes per useful", "b per useful")
	}
	return heads
}

// guarded returns the questions a notebook of lesson must not tell yet.
func (c *checker) guarded(lesson string) []*grader.Question {
	return grader.NewGate(c.bank, lesson, func(id string) bool { return c.answered[id] }).Guarded()
}

// notebook checks one executed notebook, and notes what it answered.
func (c *checker) notebook(lesson string, nb *executed) []Leak {
	var leaks []Leak
	add := func(l Leak) {
		for _, x := range leaks {
			if x == l {
				return
			}
		}
		leaks = append(leaks, l)
		c.found++
	}
	checkAt := c.checkCells(nb)
	for i, cell := range nb.Cells {
		guarded := c.guarded(lesson)
		if cell.Type == notebook.Markdown {
			for _, l := range c.scan(i+1, text(cell.Source), lesson, guarded, func(q *grader.Question) bool {
				at, ok := checkAt[q.ID]
				return q.Lesson != lesson || !ok || i < at
			}) {
				add(l)
			}
			continue
		}
		for _, o := range cell.Outputs {
			if raw, ok := o.Data[attempt.MIMEType]; ok {
				if r, err := attempt.Parse(raw); err == nil {
					c.answered[r.ID] = true
					guarded = c.guarded(lesson)
				}
			}
			if raw, ok := o.Data[grader.ShownMIMEType]; ok {
				var sh grader.Shown
				if err := json.Unmarshal([]byte(text(raw)), &sh); err != nil {
					add(Leak{Cell: i + 1, What: fmt.Sprintf("an output whose record does not parse (%v)", err), Question: "nothing it can vouch for"})
					continue
				}
				for _, t := range sh.Tells {
					qs, err := grader.TellsAny(guarded, t)
					if err != nil {
						add(Leak{Cell: i + 1, What: fmt.Sprintf("a value the course cannot judge (%v)", err), Question: "perhaps any question"})
						continue
					}
					for _, q := range qs {
						add(Leak{Cell: i + 1, What: fmt.Sprintf("it shows %s = %s", t, units.AsWritten(t.Value)), Question: q.ID})
					}
				}
				for _, u := range sh.Untagged {
					for _, l := range c.scan(i+1, u.Text+" "+columnUnit(u.Column), lesson, guarded, anywhere) {
						l.What = fmt.Sprintf("a table cell %q under %q of unknown origin", u.Text, u.Column)
						add(l)
					}
				}
				// lab's output: its record says what it showed, and its
				// text is tables and lines made of those values.
				continue
			}
			var out string
			if o.Type == "stream" {
				out = text(o.Text)
			} else {
				out = text(o.Data["text/plain"])
			}
			for _, l := range c.scan(i+1, out, lesson, guarded, anywhere) {
				add(l)
			}
		}
	}
	return leaks
}

func anywhere(*grader.Question) bool { return true }

// columnUnit is what a table cell's number is followed by when read as
// text: its column's unit, "(µs)" in "time (µs)", or the header itself.
func columnUnit(header string) string {
	if m := parenUnit.FindStringSubmatch(header); m != nil {
		return m[1]
	}
	return header
}

var parenUnit = regexp.MustCompile(`\(([^()]+)\)\s*$`)

// checkCells returns, per question, the index of the first cell that
// checks it.
func (c *checker) checkCells(nb *executed) map[string]int {
	at := map[string]int{}
	for i, cell := range nb.Cells {
		if cell.Type != notebook.Code {
			continue
		}
		src := text(cell.Source)
		for _, m := range checkCall.FindAllStringSubmatch(src, -1) {
			if _, ok := at[m[1]]; !ok {
				at[m[1]] = i
			}
		}
	}
	return at
}

var checkCall = regexp.MustCompile(`lab\.Check\(\s*"([^"]+)"`)

// scan looks for answers and facts stated in a text of cell. here says,
// for a question of this notebook, whether the text stands where it must
// not state its answer.
func (c *checker) scan(cell int, s, lesson string, guarded []*grader.Question, here func(*grader.Question) bool) []Leak {
	var leaks []Leak
	for _, n := range notebook.ScanNumbers(s) {
		rest := s[n.Offset+len(n.Text):]
		if word, _, _ := strings.Cut(rest, " "); strings.HasPrefix(word, "-") && strings.Contains(word, "/") {
			continue // an id or a path: 03-strided/sectors-stride-32
		}
		after := strings.ToLower(strings.TrimLeft(rest, " \u00a0-"))
		times := strings.HasSuffix(s[:n.Offset], "×")
		for _, a := range c.answers {
			if !slices.Contains(guarded, a.q) {
				continue
			}
			if a.q.Lesson == lesson && !here(a.q) {
				continue
			}
			if a.q.Lesson != lesson && significant(n.Text) < 3 {
				continue // an earlier lesson's small number is about its own launches
			}
			if !a.states(n, after, times) {
				continue
			}
			what := fmt.Sprintf("the text states %q", phrase(s, n.Offset))
			if a.what != "" {
				what = fmt.Sprintf("the text states %s's value: %q", a.what, phrase(s, n.Offset))
			}
			leaks = append(leaks, Leak{Cell: cell, What: what, Question: a.q.ID})
		}
		for _, f := range c.facts {
			if n.Value != f.value || !isBytes(after) {
				continue
			}
			sentence := strings.ToLower(sentenceAt(s, n.Offset))
			if !slices.ContainsFunc(f.words, func(w string) bool { return strings.Contains(sentence, w) }) || comparesValues(sentence, f.value) {
				continue
			}
			for _, q := range f.teller {
				if slices.Contains(guarded, q) && (q.Lesson != lesson || here(q)) {
					leaks = append(leaks, Leak{Cell: cell, What: fmt.Sprintf("the text states the device's %s: %q", f.name, phrase(s, n.Offset)), Question: q.ID})
				}
			}
		}
	}
	return leaks
}

// states reports whether the number n, followed by the text after,
// states the answer.
func (a answer) states(n notebook.Number, after string, times bool) bool {
	v := n.Value
	switch {
	case a.fraction:
		if !n.Percent {
			return false
		}
		v /= 100
	case a.times:
		if !times && !strings.HasSuffix(n.Text, "×") && !strings.HasSuffix(n.Text, "x") && !strings.HasPrefix(after, "times") {
			return false
		}
	case a.units != nil:
		scale := 0.0
		for u, k := range a.units {
			if strings.HasPrefix(after, u) && (len(after) == len(u) || !isLetter(after[len(u)])) {
				scale = k
			}
		}
		if scale == 0 {
			return false
		}
		v *= scale
	default:
		if n.Percent || !slices.ContainsFunc(a.heads, func(h string) bool { return strings.HasPrefix(after, h) }) {
			return false
		}
	}
	for i, want := range a.values {
		if grader.Within(v, want, max(a.tols[i], rounding(n))) {
			return true
		}
	}
	return false
}

func isLetter(b byte) bool { return 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' }

// isBytes reports whether a number is followed by a unit of bytes.
func isBytes(after string) bool {
	return strings.HasPrefix(after, "byte") || strings.HasPrefix(after, "b ") || after == "b" || strings.HasPrefix(after, "b,") || strings.HasPrefix(after, "b.") || strings.HasPrefix(after, "b)")
}

// otherSizes matches a fetch size in bytes a sentence also names.
var otherSizes = regexp.MustCompile(`\b(32|128)(-| )?(byte|b\b)`)

// comparesValues reports whether a sentence sets the value against the
// other granularities: it then states a choice, not the device's default.
func comparesValues(sentence string, v float64) bool {
	return otherSizes.MatchString(sentence)
}

// sentenceAt returns the sentence of s around offset i.
func sentenceAt(s string, i int) string {
	lo := strings.LastIndexAny(s[:i], ".\n!?") + 1
	hi := strings.IndexAny(s[i:], "!?\n")
	if dot := strings.Index(s[i:], ". "); dot >= 0 && (hi < 0 || dot < hi) {
		hi = dot
	}
	if hi < 0 {
		hi = len(s) - i
	}
	return s[lo : i+hi]
}

// rounding is the relative error of a number written with its digits.
func rounding(n notebook.Number) float64 {
	if n.Value == 0 {
		return 0
	}
	return 0.5 * math.Pow(10, -float64(n.Decimals)) / math.Abs(n.Value)
}

// significant counts a number's significant digits: "2,097,152" has 7,
// "15.9" 3, "64" 2, "0.5" 1.
func significant(s string) int {
	digits := strings.TrimLeft(strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return r
		}
		return -1
	}, s), "0")
	if !strings.Contains(s, ".") {
		digits = strings.TrimRight(digits, "0")
	}
	return len(digits)
}

// phrase returns the words around offset i: what a report quotes.
func phrase(s string, i int) string {
	lo, hi := max(0, i-40), min(len(s), i+40)
	for lo > 0 && lo < i && s[lo-1] != '\n' && s[lo] != ' ' {
		lo++
	}
	for hi < len(s) && s[hi] != ' ' && s[hi] != '\n' {
		hi++
	}
	return strings.TrimSpace(strings.Join(strings.Fields(s[lo:hi]), " "))
}
