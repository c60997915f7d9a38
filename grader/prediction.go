package grader

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"

	"github.com/coalescing-course/coalesce/lessons/figures"
	"github.com/coalescing-course/coalesce/units"
)

// A prediction may be written as text, the way a person writes a number
// with its unit: lab.Check(id, "32 sectors"), "50%", "3.1x". ReadPrediction
// is the one reader of that text: lab.Check reads a learner's string with
// it, and the gradebook reads the same string from the saved notebook
// with it, so that both grade the same number.

// ErrPredictionText is a prediction text that is not a number of the
// question's unit; a *PredictionError wraps it.
var ErrPredictionText = errors.New("not a prediction")

// PredictionError says what a prediction text was, and what is allowed.
type PredictionError struct {
	ID, Text string
	Msg      string
}

func (e *PredictionError) Error() string {
	return fmt.Sprintf("grader: %s: %q is %v: %s", e.ID, e.Text, ErrPredictionText, e.Msg)
}

// Unwrap returns ErrPredictionText.
func (e *PredictionError) Unwrap() error { return ErrPredictionText }

// Reading is a prediction text read as a number.
type Reading struct {
	Value float64
	// As says what the text was read as, in the question's unit: "32
	// sectors per request", "0.5 (50%)".
	As string
}

// maxPredictionText bounds the text read: a number and a unit.
const maxPredictionText = 100

// ReadPrediction reads a prediction for question q written as text: a
// number ("32", "-0.5", "1e3", "1,048,576"), optionally followed by the
// question's unit or the first words of it ("32 sectors", "32 sectors per
// request"); for a question answered as a fraction, a percentage ("50%",
// "50 %") is its hundredth; for a ratio, "×"/"x"/"times" may follow ("3.1x",
// "3.1 ×", "3.1 times"). Anything else is a *PredictionError that names
// the text and says what the question takes.
func ReadPrediction(q *Question, text string) (Reading, error) {
	bad := func(format string, args ...any) (Reading, error) {
		return Reading{}, &PredictionError{ID: q.ID, Text: clipText(text), Msg: fmt.Sprintf(format, args...) + "; " + allowed(q)}
	}
	if len(text) > maxPredictionText {
		return bad("%d bytes, more than a number and its unit", len(text))
	}
	s := strings.TrimSpace(text)
	num, rest := splitNumber(s)
	if num == "" {
		return bad("no number at its start")
	}
	v, err := strconv.ParseFloat(strings.ReplaceAll(num, ",", ""), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return bad("%q is not a finite number", num)
	}
	unit := strings.ToLower(strings.Join(strings.Fields(rest), " "))
	switch {
	case unit == "":
	case unit == "%":
		if !asFraction(q) {
			return bad("a percentage, and this question does not ask for a share")
		}
		v /= 100
	case unit == "x" || unit == "×" || unit == "times" || strings.HasPrefix(unit, "times "):
		if !asRatio(q) {
			return bad("a ratio, and this question asks for %s", q.Unit)
		}
		if strings.HasPrefix(unit, "times ") && !strings.HasPrefix(strings.ToLower(q.Unit), unit) {
			return bad("%q, and the question asks for %s", strings.TrimSpace(rest), q.Unit)
		}
	case unitMatches(q.Unit, unit):
	default:
		return bad("%q is not this question's unit (%s)", strings.TrimSpace(rest), q.Unit)
	}
	return Reading{Value: v, As: readAs(q, v)}, nil
}

// splitNumber returns the number s starts with (a sign, digits with
// thousands separators, decimals, an exponent) and the rest.
func splitNumber(s string) (num, rest string) {
	i := 0
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		i++
	}
	start := i
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	if i > start && i-start <= 3 {
		for i < len(s) && s[i] == ',' && threeDigits(s[i+1:]) {
			i += 4
		}
	}
	digits := i > start
	if i < len(s) && s[i] == '.' {
		j := i + 1
		for j < len(s) && isDigit(s[j]) {
			j++
		}
		if j > i+1 || digits {
			digits = digits || j > i+1
			i = j
		}
	}
	if !digits {
		return "", s
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		j := i + 1
		if j < len(s) && (s[j] == '-' || s[j] == '+') {
			j++
		}
		k := j
		for k < len(s) && isDigit(s[k]) {
			k++
		}
		if k > j {
			i = k
		}
	}
	return s[:i], s[i:]
}

func isDigit(b byte) bool { return '0' <= b && b <= '9' }

// threeDigits reports whether s starts with exactly three digits: a
// thousands group.
func threeDigits(s string) bool {
	return len(s) >= 3 && isDigit(s[0]) && isDigit(s[1]) && isDigit(s[2]) && (len(s) == 3 || !isDigit(s[3]))
}

// asFraction reports whether q's answer is a share, which a percentage
// may state.
func asFraction(q *Question) bool {
	return q.Combine == "" && (q.Quantity == figures.Efficiency.Name || q.Quantity == figures.FractionOfMemcpy.Name)
}

// asRatio reports whether q's answer is a ratio, which "x" may follow.
func asRatio(q *Question) bool {
	return q.Combine == Ratio || strings.HasPrefix(strings.ToLower(q.Unit), "times")
}

// unitMatches reports whether written is the question's unit, or its
// first words, in the singular or the plural: "sector", "sectors",
// "sectors per request", "sectors/request" for "sectors per request".
func unitMatches(unit, written string) bool {
	want := strings.Fields(strings.ToLower(unit))
	got := strings.Fields(strings.ReplaceAll(written, "/", " per "))
	if len(got) == 0 || len(got) > len(want) {
		return false
	}
	for i, w := range got {
		if w != want[i] && w+"s" != want[i] && w != want[i]+"s" {
			return false
		}
		if !wordLike(w) {
			return false
		}
	}
	return true
}

func wordLike(w string) bool {
	for _, r := range w {
		if !unicode.IsLetter(r) {
			return false
		}
	}
	return true
}

// readAs writes a value as the question's answer is written: "32 sectors
// per request", "0.5 (50%)", "3.1 times slower".
func readAs(q *Question, v float64) string {
	if asFraction(q) {
		return fmt.Sprintf("%s (%s)", fmtNum(v), pct(v))
	}
	return units.With(fmtNum(v), q.Unit)
}

// allowed says what a prediction of q may be written as.
func allowed(q *Question) string {
	first, _, _ := strings.Cut(q.Unit, " ")
	ex := fmt.Sprintf("a number (32), or one with the question's unit, in quotes: \"32 %s\"", first)
	switch {
	case asFraction(q):
		ex = "a fraction (0.5), or a percentage in quotes (\"50%\")"
	case asRatio(q):
		ex = "a number (3.1), or in quotes \"3.1x\" or \"3.1 " + strings.TrimSpace(q.Unit) + "\""
	}
	return "write " + ex
}

func clipText(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}
