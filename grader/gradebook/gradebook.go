package gradebook

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/coalescing-course/coalesce/grader"
	"github.com/coalescing-course/coalesce/grader/gradebook/answers"
	"github.com/coalescing-course/coalesce/grader/gradebook/intake"
	"github.com/coalescing-course/coalesce/grader/sandbox"
	"github.com/coalescing-course/coalesce/internal/attempt"
	"github.com/coalescing-course/coalesce/internal/words"
	"github.com/coalescing-course/coalesce/lessons/spec"
	"github.com/coalescing-course/coalesce/units"
)

// Status is the verdict column of a gradebook row.
type Status string

// The statuses of a row.
const (
	// Right and Wrong are graded predictions.
	Right Status = "right"
	Wrong Status = "wrong"
	// Ungraded is a prediction for an exercise graded by the measurement
	// when there is none: no points, and none counted against the learner.
	Ungraded Status = "ungraded"
	// Missing is an exercise with no Check call that ran (one in a comment
	// or a markdown cell does not count; the note says so), or whose calls
	// still hold the placeholder lab.YourPrediction.
	Missing Status = "missing"
	// Unreadable is a Check call whose prediction is not a number written
	// in the call, or that sits in a cell that does not compile.
	Unreadable Status = "unreadable"
	// UnknownQuestion is a Check call with an id the bank does not have
	// (printed unknown-exercise, the name the gradebook's formats keep).
	UnknownQuestion Status = "unknown-exercise"
	// BadNotebook is a file that cannot be graded at all.
	BadNotebook Status = "bad-notebook"
	// Ignored is a notebook that is not the course's (a scratch notebook):
	// listed, not graded, never a failure (Submission.Ignored).
	Ignored Status = "ignored"
)

// Row is one line of the gradebook: one learner and one question (or
// kernel exercise), or one learner and one problem (an unknown question, a
// bad notebook).
type Row struct {
	Learner  string `json:"learner"`
	Notebook string `json:"notebook"`
	// ID is the question's id, or the kernel exercise's: the gradebook's
	// "exercise" column.
	ID     string `json:"exercise"`
	Lesson string `json:"lesson"`
	// Prediction is the value read, nil when none; PredictionText is the
	// argument as written.
	Prediction     *float64 `json:"prediction"`
	PredictionText string   `json:"prediction_text"`
	// Model and Measured are the exercise's answers, nil when not known.
	Model    *float64 `json:"model_answer"`
	Measured *float64 `json:"measured_answer"`
	// Origin names the source of Measured ("" when there is none).
	Origin    string  `json:"measurement_source"`
	Status    Status  `json:"verdict"`
	Points    float64 `json:"points"`
	MaxPoints float64 `json:"max_points"`
	Note      string  `json:"note"`
	// FirstAttempt and Attempts come from the attempt record the saved
	// notebook's outputs hold for the exercise (package attempt): the
	// learner's first prediction and how many they made; nil and 0 when
	// there is none.
	FirstAttempt *float64 `json:"first_attempt"`
	Attempts     int      `json:"attempts"`
	// Override is the instructor's override of Points (Options.Overrides),
	// nil when there is none.
	Override *Override `json:"override"`

	verdict *grader.Verdict
}

// Total is one learner's sum over their rows.
type Total struct {
	Learner      string `json:"learner"`
	IdentityFrom string `json:"identity_from"`
	// Assignment is the gradebook's (Options.Assignment).
	Assignment string  `json:"assignment"`
	Points     float64 `json:"points"`
	// MaxPoints are the assignment's points possible, the same for every
	// learner: what a learner did not submit counts 0 of its points.
	MaxPoints float64 `json:"max_points"`
	Percent   float64 `json:"percent"`
	// Status says whether the total can be trusted as it is (see
	// LearnerStatus); Flags say why, one sentence each.
	Status LearnerStatus `json:"status"`
	Flags  []string      `json:"flags"`
	// Submitted is the newest modification time of the learner's notebook
	// files, LastRun the latest time an attempt record of theirs holds
	// (the last lab.Check that ran with a prediction): RFC 3339 UTC, ""
	// when unknown.
	Submitted string `json:"submitted"`
	LastRun   string `json:"last_run"`
	// Notebooks is the number of the learner's notebook files.
	Notebooks int `json:"notebooks"`
}

// Gradebook is the result of grading a batch of submissions.
type Gradebook struct {
	Course string `json:"course"`
	// Assignment names what is graded (Options.Assignment); PointsPossible
	// is its points, the sum over the graded exercises.
	Assignment     string  `json:"assignment"`
	PointsPossible float64 `json:"points_possible"`
	// Origin names the measurement source, or why there is none.
	Origin string `json:"measurement_source"`
	// Lessons are the lessons graded, Questions their questions.
	Lessons   []string       `json:"lessons"`
	Questions []QuestionInfo `json:"exercises"`
	Rows      []Row          `json:"rows"`
	Totals    []Total        `json:"totals"`
	// Items is the item analysis: one per exercise, over the class.
	Items []Item `json:"items"`
	// Notebooks and BadNotebooks count the files graded and those that
	// could not be.
	Notebooks    int `json:"notebooks"`
	BadNotebooks int `json:"bad_notebooks"`

	keys map[string]*grader.Key
}

// Key returns the answer key of question id, nil for an id the gradebook
// did not grade.
func (gb *Gradebook) Key(id string) *grader.Key { return gb.keys[id] }

// QuestionInfo is a question of a gradebook with its answer key.
type QuestionInfo struct {
	ID        string       `json:"id"`
	Lesson    string       `json:"lesson"`
	Text      string       `json:"question"`
	Unit      string       `json:"unit"`
	GradedBy  grader.Judge `json:"graded_by"`
	Graded    bool         `json:"graded"`
	Points    float64      `json:"points"`
	Model     float64      `json:"model_answer"`
	Measured  *float64     `json:"measured_answer"`
	Tolerance float64      `json:"tolerance"`
}

// Options adjust Grade.
type Options struct {
	// Lessons whose exercises are graded; nil: every lesson of the bank.
	// The points possible are those of these lessons' exercises, whatever
	// the batch touched.
	Lessons []string
	// Assignment names the assignment in the totals (`coalesce grade
	// -assignment`); "" is the graded lessons' ids joined with "+".
	Assignment string
	// Roster is the class list (ReadRoster), nil for none: a learner on it
	// with no submission gets 0 and the status missing; a learner found
	// but not on it is graded and flagged. Ids match folders whatever
	// their case.
	Roster []string
	// Overrides set points by hand (ReadOverrides), applied after grading,
	// so that they survive a regrade.
	Overrides []Override
	// ModTime returns a notebook file's modification time; nil is the
	// file system's (os.Stat). Tests set it for reproducible totals.
	ModTime func(path string) (time.Time, bool)
	// FirstAttempt grades, where the saved notebook holds an attempt
	// record for the exercise, the record's first prediction instead of
	// the one written in the source (`coalesce grade -first-attempt`).
	FirstAttempt bool
	// RunKernels grades the kernels of lab.Try calls by running them,
	// each in a child process with limits (package sandbox; `coalesce
	// grade -kernels`): one row per learner and KernelExercises entry,
	// whose points count in the points possible. Off, Try calls are not
	// graded and no learner code runs.
	RunKernels      bool
	KernelExercises []KernelExercise
	// RunKernel runs one kernel; nil opens a sandbox.Batch with its
	// defaults (and KernelWorkers) for the call to Grade, and closes it
	// after: an error opening it (no go command, limits the system
	// refuses) is Grade's, before any learner is graded.
	RunKernel func(context.Context, sandbox.Kernel) (*sandbox.Result, error)
	// KernelTimeout bounds all of one learner's kernels, builds and runs
	// (`coalesce grade -kernel-timeout`), KernelsDeadline the kernels of
	// the whole batch (-kernels-deadline); 0 is DefaultKernelTimeout,
	// DefaultKernelsDeadline. A kernel not graded in time is an ungraded
	// row that says which deadline passed, and its learner is flagged.
	// KernelWorkers is how many learners' kernels are graded at once; 0
	// is GOMAXPROCS.
	KernelTimeout, KernelsDeadline time.Duration
	KernelWorkers                  int
}

// Grade grades a batch of submissions with g: one row per learner and
// exercise of the lessons graded, then one per unknown id or unreadable
// call without an id, then one per bad notebook. Within a learner the
// notebooks are taken graded before duplicates (see Role), then by their
// earliest recorded attempt, then by path, and their calls in cell order;
// for each exercise the first call whose prediction can be read counts,
// and the note lists the others. Roster learners without a submission
// get missing rows; the overrides are applied last; the totals and the
// item analysis are computed from the rows.
func Grade(g *grader.Grader, subs []intake.Submission, opt Options) (*Gradebook, error) {
	return GradeContext(context.Background(), g, subs, opt)
}

// GradeContext is Grade until ctx is done: the kernels not graded by then
// are ungraded rows saying so.
func GradeContext(ctx context.Context, g *grader.Grader, subs []intake.Submission, opt Options) (*Gradebook, error) {
	b := g.Bank()
	gb := &Gradebook{Course: b.Course, Origin: g.Origin(), keys: map[string]*grader.Key{}}
	lessons, err := scope(b, opt.Lessons)
	if err != nil {
		return nil, err
	}
	gb.Lessons = lessons
	if opt.RunKernels {
		// The kernel exercises' lessons are the assignment's too.
		for _, e := range opt.KernelExercises {
			if l := lessonOfID(e.ID); !slices.Contains(gb.Lessons, l) {
				gb.Lessons = append(slices.Clip(gb.Lessons), l)
			}
		}
	}
	gb.Assignment = opt.Assignment
	if gb.Assignment == "" {
		gb.Assignment = strings.Join(gb.Lessons, "+")
	}
	var exercises []*grader.Question
	for _, l := range lessons {
		exercises = append(exercises, b.OfLesson(l)...)
	}
	runKernel := opt.RunKernel
	if opt.RunKernels {
		if len(opt.KernelExercises) == 0 {
			return nil, fmt.Errorf("gradebook: RunKernels: no kernel exercises given to grade")
		}
		if runKernel == nil {
			batch, err := sandbox.NewBatch(ctx, sandbox.Config{Workers: opt.KernelWorkers})
			if err != nil {
				return nil, fmt.Errorf("gradebook: grading kernels: %w", err)
			}
			defer batch.Close()
			runKernel = batch.Run
		}
		for _, e := range opt.KernelExercises {
			gb.PointsPossible += e.Points
		}
	}
	if err := keysFor(g, exercises, gb.keys); err != nil {
		return nil, err
	}
	for _, e := range exercises {
		k := gb.keys[e.ID]
		info := QuestionInfo{ID: e.ID, Lesson: e.Lesson, Text: e.Text, Unit: e.Unit, GradedBy: e.GradedBy,
			Graded: k.Graded(), Points: e.Points, Model: k.Model, Tolerance: e.Tol(e.GradedBy)}
		if k.HasMeasured {
			info.Measured = ptr(k.Measured)
		}
		gb.Questions = append(gb.Questions, info)
		if info.Graded {
			gb.PointsPossible += info.Points
		}
	}

	subs = slices.Clone(subs)
	intake.Settle(subs)
	byLearner := map[string][]*intake.Submission{}
	identity := map[string]string{}
	for i := range subs {
		s := &subs[i]
		byLearner[s.Learner] = append(byLearner[s.Learner], s)
		if identity[s.Learner] == "" {
			identity[s.Learner] = s.IdentityFrom
		}
		gb.Notebooks++
		if s.Problem != "" {
			gb.BadNotebooks++
		}
	}
	learners := intake.Learners(subs)
	found := map[string]bool{}
	for _, l := range learners {
		found[sameLearner(l)] = true
	}
	roster := map[string]bool{}
	for _, l := range opt.Roster {
		k := sameLearner(l)
		if !roster[k] && !found[k] {
			learners = append(learners, l)
		}
		roster[k] = true
	}
	slices.Sort(learners)
	overridable := gb.Questions
	if opt.RunKernels {
		// An instructor may set a kernel exercise's points too: one the
		// sandbox could not judge, or a kernel read wrongly.
		overridable = slices.Clone(gb.Questions)
		for _, e := range opt.KernelExercises {
			overridable = append(overridable, QuestionInfo{ID: e.ID, Lesson: lessonOfID(e.ID), Graded: true, Points: e.Points})
		}
	}
	overrides, err := checkOverrides(opt.Overrides, learners, overridable)
	if err != nil {
		return nil, err
	}
	modTime := opt.ModTime
	if modTime == nil {
		modTime = fileModTime
	}
	var kernelRows map[string][]Row
	if opt.RunKernels {
		kernelRows = gradeKernels(ctx, learners, byLearner, opt, runKernel)
	}
	for _, learner := range learners {
		mine := byLearner[learner]
		intake.GradingOrder(mine)
		rows := learnerRows(b, learner, mine, exercises, gb.keys, opt.FirstAttempt)
		rows = append(rows, kernelRows[learner]...)
		applyOverrides(rows, overrides[learner])
		t := Total{Learner: learner, IdentityFrom: identity[learner], Assignment: gb.Assignment,
			MaxPoints: gb.PointsPossible, Notebooks: len(mine)}
		for _, r := range rows {
			t.Points += r.Points
		}
		if t.MaxPoints > 0 {
			t.Percent = math.Round(10000*t.Points/t.MaxPoints) / 100
		}
		t.Submitted, t.LastRun = times(mine, modTime)
		var flags []string
		if opt.Roster != nil && !roster[sameLearner(learner)] {
			flags = append(flags, "not on roster")
		}
		if f := ungradedKernels(rows, opt.KernelExercises); f != "" {
			flags = append(flags, f)
		}
		t.Status, t.Flags = learnerStatus(rows, mine, flags)
		gb.Rows = append(gb.Rows, rows...)
		gb.Totals = append(gb.Totals, t)
	}
	gb.Items = gb.itemAnalysis()
	if opt.RunKernels {
		gb.Items = append(gb.Items, gb.kernelItems(opt.KernelExercises)...)
	}
	return gb, nil
}

// sameLearner is the form in which a roster's ids and the submissions'
// folders are matched: case folded, since an LMS export may spell "Ada"
// where JupyterHub, which lowercases user names, made the folder "ada".
func sameLearner(id string) string { return strings.ToLower(id) }

// scope returns the lessons to grade, in bank order: those wanted, or
// every lesson of the bank when want is nil. The batch never decides: the
// points possible must not depend on what the learners happened to submit.
func scope(b *grader.Bank, want []string) ([]string, error) {
	if want == nil {
		return b.LessonIDs(), nil
	}
	in := map[string]bool{}
	for _, l := range want {
		if b.Lesson(l) == nil {
			return nil, fmt.Errorf("gradebook: no lesson %q: lessons are %s", l, strings.Join(b.LessonIDs(), ", "))
		}
		in[l] = true
	}
	var out []string
	for _, l := range b.Lessons {
		if in[l.ID] {
			out = append(out, l.ID)
		}
	}
	return out, nil
}

// keysFor computes the keys of the exercises concurrently: each runs the
// model over a whole launch, which is most of a small batch's time.
func keysFor(g *grader.Grader, exercises []*grader.Question, into map[string]*grader.Key) error {
	keys := make([]*grader.Key, len(exercises))
	errs := make([]error, len(exercises))
	// Keys are worked out several at a time, but a gather's alone: it
	// holds its n indices while the model runs (128 MiB at n = 2^25), and
	// two at once would double the batch's memory.
	var wg sync.WaitGroup
	sem := make(chan struct{}, max(1, runtime.GOMAXPROCS(0)))
	for i, e := range exercises {
		if gathers(e) {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			keys[i], errs[i] = g.Key(e.ID)
		}()
	}
	wg.Wait()
	for i, e := range exercises {
		if gathers(e) {
			keys[i], errs[i] = g.Key(e.ID)
			// The key keeps 32 of its indices; the other n are garbage now,
			// and left to the pacer they are still there when the next
			// gather draws its own, doubling the peak.
			runtime.GC()
		}
	}
	for i, e := range exercises {
		if errs[i] != nil {
			return errs[i]
		}
		into[e.ID] = keys[i]
	}
	return nil
}

// gathers reports whether one of e's launches is a gather_copy.
func gathers(e *grader.Question) bool {
	return slices.ContainsFunc(e.Specs, func(s spec.Spec) bool { return s.Kernel == spec.GatherCopy })
}

// judge grades the prediction of c against k and sets r from the verdict:
// where the prediction came from, its status and its points.
func judge(r *Row, k *grader.Key, c located) *grader.Verdict {
	v := k.Verdict(c.Value)
	r.verdict = v
	r.Notebook, r.Prediction, r.PredictionText = c.path, ptr(c.Value), c.Arg
	switch {
	case !v.Graded:
		r.Status = Ungraded
	case v.Right:
		r.Status, r.Points = Right, v.Points
	default:
		r.Status = Wrong
	}
	return v
}

// located is a call, or an attempt record, with the notebook it is in.
type located struct {
	answers.Call
	path     string
	attempts attempt.Record
}

// where locates a call for a note; cells are counted from 1, as a reader
// of the notebook counts them.
func (l located) where() string { return fmt.Sprintf("cell %d, line %d", l.Cell+1, l.Line) }

func learnerRows(b *grader.Bank, learner string, subs []*intake.Submission, exercises []*grader.Question, keys map[string]*grader.Key, firstAttempt bool) []Row {
	var calls []located
	// The attempt record of each exercise: the one with the most attempts
	// (a cell's output holds the count when it ran, so the latest has
	// the most), the earlier notebook on a tie.
	records := map[string]located{}
	badRecords := map[string][]string{} // by exercise id
	for _, s := range subs {
		for _, a := range s.Found.Attempts {
			if old, ok := records[a.Record.ID]; !ok || a.Record.Attempts > old.attempts.Attempts {
				records[a.Record.ID] = located{path: s.Path, attempts: a.Record, Call: answers.Call{Cell: a.Cell}}
			}
		}
		for _, bad := range s.Found.BadAttempts {
			id := bad.ID
			if id == "" {
				id = s.Lesson // no id: noted on the lesson's exercises
			}
			badRecords[id] = append(badRecords[id], fmt.Sprintf("cell %d%s: %s", bad.Cell+1, inFile(s.Path, ""), bad.Problem))
		}
	}
	// What the intake flagged (a possible copy, a duplicate) goes in the
	// note of every row graded from that notebook.
	flagged := map[string][]string{}
	for _, s := range subs {
		for i, f := range s.Flags {
			if f == intake.FlagPossibleCopy || f == intake.FlagDuplicate {
				flagged[s.Path] = append(flagged[s.Path], s.Notes[i])
			}
		}
	}
	type locMention struct {
		answers.Mention
		path string
	}
	var mentions []locMention
	bad := 0
	for _, s := range subs {
		if s.Problem != "" {
			bad++
			continue
		}
		for _, c := range s.Found.Calls {
			calls = append(calls, located{Call: c, path: s.Path})
		}
		for _, m := range s.Found.Mentions {
			mentions = append(mentions, locMention{m, s.Path})
		}
	}
	var rows []Row
	for _, e := range exercises {
		k := keys[e.ID]
		r := Row{Learner: learner, ID: e.ID, Lesson: e.Lesson, Model: ptr(k.Model)}
		if k.HasMeasured {
			r.Measured, r.Origin = ptr(k.Measured), k.Origin
		}
		if k.Graded() {
			r.MaxPoints = e.Points
		}
		var mine []located
		reads := map[int]string{}
		for _, c := range calls {
			if c.ID == e.ID {
				if as := readText(&c.Call, e); as != "" {
					reads[len(mine)] = fmt.Sprintf("the text %s read as %s", c.Arg, as)
				}
				mine = append(mine, c)
			}
		}
		first := slices.IndexFunc(mine, func(c located) bool { return c.Form != answers.FormUnreadable && c.Form != answers.FormPlaceholder })
		var notes []string
		rec, hasRec := records[e.ID]
		if hasRec {
			r.FirstAttempt, r.Attempts = ptr(rec.attempts.First.Value), rec.attempts.Attempts
		}
		switch {
		case firstAttempt && hasRec:
			// The first attempt stands in for the call: graded like one.
			c := located{Call: answers.Call{Cell: rec.Cell, Line: 0, ID: e.ID, Value: rec.attempts.First.Value, Form: answers.FormLiteral,
				Arg: units.Exact(rec.attempts.First.Value)}, path: rec.path}
			v := judge(&r, k, c)
			if !v.Graded {
				notes = append(notes, "graded by the measurement, and there is none: "+k.NoMeasurement)
			}
			notes = append(notes, fmt.Sprintf("graded on the first attempt, %s, of %s (the attempt record in the output of cell %d)",
				c.Arg, words.Plural(rec.attempts.Attempts, "attempt"), rec.Cell+1))
			notes = append(notes, v.Hints...)
		case first >= 0:
			c := mine[first]
			v := judge(&r, k, c)
			if !v.Graded {
				notes = append(notes, "graded by the measurement, and there is none: "+k.NoMeasurement)
			}
			notes = append(notes, c.where())
			if n, ok := reads[first]; ok {
				notes = append(notes, n)
			}
			if c.Form == answers.FormConstant {
				n := fmt.Sprintf("the constant expression %s read as %s, as Go evaluates it", c.Arg, units.AsWritten(c.Value))
				if c.Truncated {
					n += " (integer division drops the fraction: write 1.0/8, not 1/8)"
				}
				notes = append(notes, n)
			}
			notes = append(notes, v.Hints...)
			if others := len(mine) - 1; others > 0 {
				var where []string
				for i, o := range mine {
					if i != first {
						where = append(where, o.where()+inFile(o.path, c.path))
					}
				}
				notes = append(notes, fmt.Sprintf("%s for this exercise not graded (%s): the first readable one counts",
					words.Plural(others, "other call"), strings.Join(where, "; ")))
			}
		case len(mine) > 0 && !slices.ContainsFunc(mine, func(c located) bool { return c.Form == answers.FormUnreadable }):
			c := mine[0]
			r.Status, r.Notebook, r.PredictionText = Missing, c.path, c.Arg
			if c.Template {
				notes = append(notes, fmt.Sprintf("%s: missing (untouched template): the cell is as the course's first build shipped it, with %s, and no attempt is recorded", c.where(), c.Arg))
			} else {
				notes = append(notes, fmt.Sprintf("%s: still the placeholder %s: no prediction written", c.where(), c.Arg))
			}
		case len(mine) > 0:
			i := slices.IndexFunc(mine, func(c located) bool { return c.Form == answers.FormUnreadable })
			c := mine[i]
			r.Status, r.Notebook, r.PredictionText = Unreadable, c.path, c.Arg
			if c.OutsideMain {
				notes = append(notes, fmt.Sprintf("%s: %s", c.where(), c.Problem))
			} else {
				notes = append(notes, fmt.Sprintf("%s: %s; write the number in the call, e.g. lab.Check(%q, 32)", c.where(), c.Problem, e.ID))
			}
			if len(mine) > 1 {
				notes = append(notes, fmt.Sprintf("%d more unreadable call(s) for this exercise", len(mine)-1))
			}
		case len(subs) == 0:
			r.Status = Missing
			notes = append(notes, "no notebook submitted")
		default:
			r.Status = Missing
			notes = append(notes, "no lab.Check call for this exercise")
			for _, m := range mentions {
				if m.ID == e.ID {
					if r.Notebook == "" {
						r.Notebook = m.path
					}
					notes = append(notes, fmt.Sprintf("one appears in %s (cell %d, line %d%s), which is not graded", m.Where, m.Cell+1, m.Line, inFile(m.path, r.Notebook)))
				}
			}
			if bad > 0 {
				notes = append(notes, fmt.Sprintf("%s of this learner could not be read (see the bad-notebook rows)", words.Plural(bad, "notebook")))
			}
		}
		if hasRec && r.Prediction != nil && !firstAttempt && rec.attempts.First.Value != *r.Prediction {
			notes = append(notes, fmt.Sprintf("the first attempt was %s (%s; -first-attempt grades it)",
				units.AsWritten(rec.attempts.First.Value), words.Plural(rec.attempts.Attempts, "attempt")))
		}
		if bad := append(badRecords[e.ID], badRecords[e.Lesson]...); len(bad) > 0 {
			notes = append(notes, "an attempt record in the saved outputs does not parse ("+strings.Join(bad, "; ")+")")
		}
		notes = append(notes, flagged[r.Notebook]...)
		r.Note = strings.Join(notes, "; ")
		rows = append(rows, r)
	}
	// Calls that name no exercise of the bank.
	reported := map[string]bool{}
	for _, c := range calls {
		if c.ID != "" {
			if _, err := b.Question(c.ID); err == nil || reported[c.ID] {
				continue
			}
			reported[c.ID] = true
			_, err := b.Question(c.ID)
			rows = append(rows, Row{Learner: learner, Notebook: c.path, ID: c.ID, Status: UnknownQuestion,
				PredictionText: c.Arg, Prediction: predictionPtr(c.Call),
				Note: c.where() + ": " + strings.TrimPrefix(err.Error(), "grader: ")})
			continue
		}
		rows = append(rows, Row{Learner: learner, Notebook: c.path, Status: Unreadable, PredictionText: c.Arg,
			Note: c.where() + ": " + c.Problem})
	}
	for _, s := range subs {
		switch {
		case s.Problem != "":
			rows = append(rows, Row{Learner: learner, Notebook: s.Path, Lesson: s.Lesson, Status: BadNotebook, Note: s.Problem})
		case s.Ignored != "":
			rows = append(rows, Row{Learner: learner, Notebook: s.Path, Status: Ignored, Note: s.Ignored})
		}
	}
	return rows
}

func inFile(path, same string) string {
	if path == "" || path == same {
		return ""
	}
	return " of " + path
}

func predictionPtr(c answers.Call) *float64 {
	if c.Form == answers.FormUnreadable || c.Form == answers.FormPlaceholder {
		return nil
	}
	return ptr(c.Value)
}

func ptr(v float64) *float64 { return &v }

// readText reads a prediction written with its unit (answers.FormText)
// against question q, as lab.Check read it in the notebook
// (grader.ReadPrediction): the call's Value, or its Problem and
// FormUnreadable. It returns what the text was read as.
func readText(c *answers.Call, q *grader.Question) string {
	if c.Form != answers.FormText {
		return ""
	}
	r, err := grader.ReadPrediction(q, c.Text)
	if err != nil {
		c.Form, c.Value, c.Problem = answers.FormUnreadable, 0, strings.TrimPrefix(err.Error(), "grader: "+q.ID+": ")
		return ""
	}
	c.Value = r.Value
	return r.As
}
