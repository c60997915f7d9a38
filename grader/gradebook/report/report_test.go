package report

import (
	"bytes"
	"encoding/csv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coalescing-course/coalesce/grader/gradebook"
)

// A gradebook made by hand, with learner text that a spreadsheet would run
// and a negative prediction: gradebook.csv shows the text with a leading
// quote, keeps the number a number, and keeps every column of the header.
// (The whole pipeline, notebooks to files, is gradebook's TestGradebookGolden.)
func TestWriteCSVOfAGradebookByHand(t *testing.T) {
	p := -0.5
	gb := &gradebook.Gradebook{Rows: []gradebook.Row{
		{Learner: "=cmd|' /C calc'!A0", Notebook: "subs/x/03-strided.ipynb", ID: "03-strided/efficiency-stride-2", Lesson: "03-strided",
			Prediction: &p, Status: gradebook.Wrong, MaxPoints: 1, Note: "+1 said the learner"},
	}}
	var b bytes.Buffer
	require.NoError(t, WriteCSV(gb, &b))
	recs, err := csv.NewReader(&b).ReadAll()
	require.NoError(t, err)
	require.Len(t, recs, 2)
	assert.Equal(t, GradebookHeader, recs[0])
	row := map[string]string{}
	for i, name := range GradebookHeader {
		row[name] = recs[1][i]
	}
	assert.Equal(t, "'=cmd|' /C calc'!A0", row["learner"])
	assert.Equal(t, "-0.5", row["prediction"], "a number the gradebook wrote stays a number")
	assert.Equal(t, "'+1 said the learner", row["note"])
	assert.Equal(t, "wrong", row["verdict"])
}

// Markdown shows learner text as text: no HTML, no table cell ends early,
// no code span opens, no link or image, no line breaks into a new block.
func TestMarkdownText(t *testing.T) {
	tests := []struct{ in, want string }{
		{"<b>ada</b>", "&lt;b&gt;ada&lt;/b&gt;"},
		{"a|b", `a\|b`},
		{"x\ny\rz", "x y z"},
		{"`rm -rf`", "\\`rm -rf\\`"},
		{"R&D", "R&amp;D"},
		{"[click](http://x)", `\[click\](http://x)`},
		{"![img](http://x/a.png)", `!\[img\](http://x/a.png)`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			assert.Equal(t, tt.want, mdText(tt.in))
		})
	}
}
