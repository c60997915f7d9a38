// Package words writes counts in English for the course's messages,
// captions and explanations: "1 sector", "32 sectors", "2 launches",
// "1,024 bytes". The number is written as units writes a Count;
// units.With makes the noun of a quantity agree with a number already
// written ("1 sector per request").
package words

import (
	"strings"

	"github.com/coalescing-course/coalesce/units"
)

// Plural writes n as a count and the noun, plural unless n is 1:
// Plural(1, "line") is "1 line", Plural(3, "launch") "3 launches",
// Plural(1024, "byte") "1,024 bytes".
func Plural(n int, noun string) string {
	return units.Count.Format(float64(n)) + " " + Noun(n, noun)
}

// Noun returns the noun as it goes with n: singular for 1, plural
// otherwise, with -es after s, x, ch and sh.
func Noun(n int, noun string) string {
	if n == 1 || n == -1 {
		return noun
	}
	for _, end := range []string{"s", "x", "ch", "sh"} {
		if strings.HasSuffix(noun, end) {
			return noun + "es"
		}
	}
	return noun + "s"
}
