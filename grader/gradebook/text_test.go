package gradebook

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coalescing-course/coalesce/grader"
	"github.com/coalescing-course/coalesce/grader/gradebook/answers"
)

// A prediction written with its unit is read by the grader's one reader,
// as lab.Check read it in the notebook; one that is not the question's
// unit is unreadable, saying why.
func TestReadText(t *testing.T) {
	b, err := grader.Questions()
	require.NoError(t, err)
	q, err := b.Question("03-strided/sectors-stride-32")
	require.NoError(t, err)
	c := answers.Call{ID: q.ID, Arg: `"32 sectors"`, Text: "32 sectors", Form: answers.FormText}
	assert.Equal(t, "32 sectors per request", readText(&c, q))
	assert.Equal(t, 32.0, c.Value)
	assert.Equal(t, answers.FormText, c.Form)

	bad := answers.Call{ID: q.ID, Arg: `"32 bytes"`, Text: "32 bytes", Form: answers.FormText}
	assert.Empty(t, readText(&bad, q))
	assert.Equal(t, answers.FormUnreadable, bad.Form)
	assert.Contains(t, bad.Problem, `"32 bytes" is not a prediction: "bytes" is not this question's unit`)

	lit := answers.Call{ID: q.ID, Arg: "32", Value: 32, Form: answers.FormLiteral}
	assert.Empty(t, readText(&lit, q), "a number is left as it is")
	assert.Equal(t, 32.0, lit.Value)
}
