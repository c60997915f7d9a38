package lab

import (
	"encoding/json"
	"fmt"
	"html"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/janpfeifer/gonb/gonbui"
	"github.com/janpfeifer/gonb/gonbui/protocol"

	"github.com/coalescing-course/coalesce/grader"
	"github.com/coalescing-course/coalesce/internal/attempt"
	"github.com/coalescing-course/coalesce/internal/progress"
)

// This file is where the course meets the notebook, and the one gate
// everything lab displays goes through: every table, chart, picture,
// verdict and printed line is an output built with a display, which
// knows the values it shows (grader.Tell) and withholds those that tell
// the answer of a question the learner has not answered yet, in this
// lesson or a later one. No other file of the package writes to the cell
// (TestOneGate holds it so), so a new display cannot forget the gate.
//
// A withheld value shows as Hidden, with a short note saying which
// question to answer first; the rest of the table or chart still shows.
// Once the learner has answered (Check recorded an attempt), the next run
// of the cell shows everything. Every output carries what it showed and
// withheld (grader.Shown, under grader.ShownMIMEType), for the leak test
// of `make test`.

// Hidden is what a table shows in place of a value it withholds.
const Hidden = "(hidden)"

// RevealEnv names the variable that opens the gate: "all" shows every
// value, as an instructor previewing a lesson wants; the leak test then
// fails, which is how it is shown to work.
const RevealEnv = "COALESCE_REVEAL"

// inNotebook reports whether the program runs in a GoNB cell; tests set it.
var inNotebook = gonbui.IsNotebook

// send hands one output to GoNB; tests replace it.
var send = func(d *protocol.DisplayData) {
	gonbui.SendData(d)
	gonbui.Sync()
}

// gateState is this cell's gate and what it needs to word its notes.
type gateState struct {
	gate   *grader.Gate
	lesson string
	// why is said beside a note when the learner's answers could not be
	// read (everything unanswered is then withheld).
	why string
}

// openGate makes the gate of this cell, afresh for every output: the
// learner's answers are a few small files, and an answer recorded by a
// Check lets its own verdict through.
func openGate() (*gateState, error) {
	if os.Getenv(RevealEnv) == "all" {
		return &gateState{gate: grader.OpenGate()}, nil
	}
	store, ok := attempts()
	if !ok {
		// Not a learner's notebook (a test, the command line): there is
		// nobody to keep an answer from.
		return &gateState{gate: grader.OpenGate()}, nil
	}
	b, err := grader.Questions()
	if err != nil {
		return nil, err
	}
	lesson := strings.TrimSuffix(filepath.Base(store.Path), ".json")
	if lesson == attempt.FallbackName {
		lesson = "" // the notebook's name is not known: guard every lesson
	}
	st := &gateState{lesson: lesson}
	answered, err := attempt.Answered(filepath.Dir(store.Path))
	if err != nil {
		st.why = fmt.Sprintf("(Your answers could not all be read: %v)", err)
	}
	st.gate = grader.NewGate(b, lesson, func(id string) bool { return answered[id] })
	return st, nil
}

// display is one output being built: what it shows and what it holds back.
type display struct {
	st       *gateState
	err      error
	rec      grader.Shown
	waits    []*grader.Question
	untagged bool
}

// newDisplay starts an output under this cell's gate.
func newDisplay() *display {
	st, err := openGate()
	return &display{st: st, err: err}
}

// show reports whether the value t may be shown, and notes it as shown
// or withheld. A gate that cannot decide (a broken bank) withholds.
func (d *display) show(t grader.Tell) bool {
	if d.err != nil {
		d.rec.Withheld = append(d.rec.Withheld, grader.Withheld{Tell: t})
		return false
	}
	qs, err := d.st.gate.Withheld(t)
	if err != nil {
		d.err = err
		d.rec.Withheld = append(d.rec.Withheld, grader.Withheld{Tell: t})
		return false
	}
	if len(qs) == 0 {
		d.rec.Tells = append(d.rec.Tells, t)
		return true
	}
	w := grader.Withheld{Tell: t}
	for _, q := range qs {
		w.Questions = append(w.Questions, q.ID)
		if !slices.Contains(d.waits, q) {
			d.waits = append(d.waits, q)
		}
	}
	d.rec.Withheld = append(d.rec.Withheld, w)
	return false
}

// showAll reports whether every one of ts may be shown: a value made of
// several (a ratio of two launches) shows only when all of them do.
func (d *display) showAll(ts []grader.Tell) bool {
	ok := true
	for _, t := range ts {
		ok = d.show(t) && ok
	}
	return ok
}

// untaggedCell notes a table cell that holds a number no tell names.
func (d *display) untaggedCell(column, text string) {
	d.rec.Untagged = append(d.rec.Untagged, grader.Untagged{Column: column, Text: text})
}

// withheld reports whether anything was held back.
func (d *display) withheld() bool { return len(d.rec.Withheld) > 0 }

// note says what was held back and how to see it: "Hidden: answer
// 03-strided/slowdown-stride-32 in this notebook first, then run this cell
// again." It is "" when nothing was.
func (d *display) note() string {
	switch {
	case !d.withheld():
		return ""
	case d.err != nil:
		return fmt.Sprintf("Hidden: the course cannot tell which values give answers away (%v), so it shows none of them.", d.err)
	}
	n := fmt.Sprintf("%s: %s, then run this cell again.", Hidden, grader.Wait(d.st.lesson, d.waits))
	if d.st.why != "" {
		n += " " + d.st.why
	}
	return n
}

// output is what a display shows: text, with HTML and a picture where it
// has them, and a Check's attempt record.
type output struct {
	// text is the plain text: what headless checks and text exports
	// read, and what a program outside a notebook prints.
	text string
	// html is the notebook's rendering; "" shows the text preformatted.
	html string
	// png is a picture, shown under the HTML.
	png []byte
	// attempt is a Check's record (attempt.MIMEType), for the saved
	// notebook to keep.
	attempt string
}

// emit shows o in the cell with the display's note under it and its
// record beside it; outside a notebook it prints the text.
func (d *display) emit(o output) {
	if n := d.note(); n != "" {
		o.text = strings.TrimRight(o.text, "\n") + "\n" + n + "\n"
		if o.html != "" {
			o.html += `<p class="coalesce-hidden" style="margin:0.2em 0;color:#555">` + html.EscapeString(n) + `</p>`
		}
	}
	if !inNotebook {
		fmt.Fprint(stdout(), o.text)
		if o.png != nil {
			fmt.Fprintln(stdout(), "(not in a notebook: no picture; plots.Save writes one to a file)")
		}
		return
	}
	data := map[protocol.MIMEType]any{protocol.MIMETextPlain: o.text}
	switch {
	case o.html != "":
		data[protocol.MIMETextHTML] = o.html
	case o.png == nil:
		data[protocol.MIMETextHTML] = `<pre class="coalesce-text">` + html.EscapeString(o.text) + `</pre>`
	}
	if o.png != nil {
		data[protocol.MIMEImagePNG] = o.png
	}
	if o.attempt != "" {
		data[attempt.MIMEType] = o.attempt
	}
	if rec, err := json.Marshal(d.rec); err == nil {
		data[grader.ShownMIMEType] = string(rec)
	}
	send(&protocol.DisplayData{Data: data})
}

// printf shows a line of text that holds no value of a launch (a
// caption, a notice): an output of its own.
func printf(format string, args ...any) {
	newDisplay().emit(output{text: fmt.Sprintf(format, args...)})
}

// flush waits until GoNB has what was displayed, so that it lands in this
// cell's output and not the next one's.
func flush() {
	if inNotebook {
		gonbui.Sync()
	}
}

// statusLine returns a status line for a slow step of this cell (the
// harness's first build, a sweep, the model of a large launch): in a
// notebook an output GoNB updates in place while it runs and clears at the
// end, elsewhere a line on stderr for each new status. It shows no value.
func statusLine() *progress.Line {
	if !inNotebook {
		return progress.New(progress.Lines(stderr()), 0)
	}
	id := "coalesce-progress-" + gonbui.UniqueID()
	return progress.New(func(text string, final bool) {
		if final {
			gonbui.UpdateHTML(id, "")
			return
		}
		gonbui.UpdateHTML(id, `<div class="coalesce-progress" style="color:#555">`+html.EscapeString(text)+`</div>`)
	}, time.Second)
}

// working puts what on the cell's status line when the step it names
// takes longer than a second (the model replaying every warp of a large
// launch, a grader working out an answer), ticking the time it has taken,
// and clears it when done is called: no cell waits in silence.
func working(what string) (done func()) {
	line := statusLine()
	t := time.AfterFunc(time.Second, func() { fmt.Fprintln(line, what) })
	return func() {
		t.Stop()
		line.Close()
	}
}

// stdout is where the package prints outside a notebook: Output, or
// the standard output as it is at the time, a cell's.
func stdout() io.Writer {
	if Output != nil {
		return Output
	}
	return os.Stdout
}
