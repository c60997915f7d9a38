package grader

import (
	"html"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coalescing-course/coalesce/lessons/figures"
	"github.com/coalescing-course/coalesce/lessons/metrics"
)

// The bounds of a verdict: its headline one line of at most
// maxHeadlineWords, all of it at most maxVerdictWords (the 03 slowdown's
// ran to 1,144 words before; a lesson's own prose is a few hundred).
const (
	maxHeadlineWords = 70
	maxVerdictWords  = 520
)

// TestVerdictLength holds every question's verdict, right and wrong, to
// the bounds, and its HTML to one open line with the rest folded.
func TestVerdictLength(t *testing.T) {
	g := recordingGrader(t)
	for _, q := range g.Bank().Questions {
		t.Run(q.ID, func(t *testing.T) {
			k, err := g.Key(q.ID)
			require.NoError(t, err)
			right, _, _ := k.Answer()
			for _, p := range []float64{right, 2.5 * right, 32 * right} {
				v := k.Verdict(p)
				h := v.Headline()
				assert.NotContains(t, h, "\n")
				assert.LessOrEqual(t, len(strings.Fields(h)), maxHeadlineWords, "headline: %s", h)
				assert.LessOrEqual(t, len(strings.Fields(v.String())), maxVerdictWords, "the verdict on %v", p)
				page := v.HTML()
				open, folded, ok := strings.Cut(page, "<details>")
				require.True(t, ok, "the detail is folded")
				assert.Contains(t, html.UnescapeString(open), strings.TrimPrefix(h, strings.ToUpper(v.word())+" "+q.ID))
				assert.NotContains(t, open, "<table", "nothing but the headline is open")
				assert.Contains(t, folded, "</details>")
			}
		})
	}
}

// TestWhySpeaksOfItsQuantity: every question's explanation is about its
// own quantity: a bank question explains banks and wavefronts, not global
// sectors; a sector question sectors per request; a time question time.
func TestWhySpeaksOfItsQuantity(t *testing.T) {
	g := recordingGrader(t)
	for _, q := range g.Bank().Questions {
		t.Run(q.ID, func(t *testing.T) {
			k, err := g.Key(q.ID)
			require.NoError(t, err)
			var b strings.Builder
			for _, s := range k.Explanation {
				b.WriteString(s.Title + "\n" + strings.Join(s.Lines, "\n") + "\n")
			}
			why := b.String()
			want, not := quantityTerms(q.Quantity)
			for _, w := range want {
				assert.Regexp(t, w, why, "the explanation of %s must speak of %s", q.Quantity, w)
			}
			for _, n := range not {
				assert.NotRegexp(t, n, why, "the explanation of %s speaks of %s, another quantity", q.Quantity, n)
			}
			assert.NotEmpty(t, k.Reason)
			assert.Regexp(t, append(want, `.`)[0], k.Reason+" "+why)
		})
	}
}

// quantityTerms are what an explanation of a quantity must say, and what
// it must not.
func quantityTerms(quantity string) (want, not []string) {
	sector := regexp.QuoteMeta("sector")
	switch quantity {
	case figures.LdSectorsPerRequest.Name, figures.StSectorsPerRequest.Name:
		return []string{`sectors? per request`, `\bload|store\b`}, []string{`(?i)wavefront`, `(?i)\bbank\b`}
	case figures.Efficiency.Name:
		return []string{`bytes in the sectors they touch`, `\d+(\.\d+)?%`}, []string{`(?i)wavefront`}
	case figures.ShLdWavefrontsPerRequest.Name, figures.ShStWavefrontsPerRequest.Name:
		return []string{`\bbanks?\b`, `wavefronts? per request`, `busiest`}, []string{sector}
	case metrics.LdRequests, metrics.StRequests:
		return []string{`\bwarps\b`, `requests`}, []string{`(?i)wavefront`}
	case metrics.LdSectors, metrics.StSectors:
		return []string{`requests × .* sectors per request = `}, []string{`(?i)wavefront`}
	case metrics.DRAMRead, metrics.DRAMWrite, figures.DRAMBytesPerUsefulByte.Name:
		return []string{`DRAM`, `fetch`}, []string{`(?i)wavefront`}
	case figures.TimeSeconds.Name, figures.UsefulBandwidth.Name, figures.FractionOfMemcpy.Name:
		return []string{`time model`, `µs|ms`}, []string{`(?i)wavefront`}
	}
	return []string{`.`}, nil
}

// A RIGHT card says which answer grades; the other is information, in
// grey, never "wrong" in red.
func TestRightCardShowsTheOtherAsInformation(t *testing.T) {
	q := question(t, "03-strided/sectors-stride-32")
	k := &Key{Question: q, Model: 32, Measured: 30, HasMeasured: true, Origin: "recorded on a test GPU", Reason: "a reason"}
	v := k.Verdict(32)
	require.True(t, v.Right)
	text := v.String()
	assert.Contains(t, text, "grades, exact: right")
	assert.Contains(t, text, "for information: your prediction is not within 2% of it")
	assert.NotRegexp(t, `\bwrong\b`, text)
	assert.NotContains(t, v.HTML(), "#a00")

	w := k.Verdict(30) // right by the measurement, wrong by the model, which grades
	assert.False(t, w.Right)
	assert.Contains(t, w.String(), "grades, exact: wrong")
	assert.Contains(t, w.String(), "for information: your prediction is within 2% of it")
}
