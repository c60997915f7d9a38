// Package words writes counts in English for the course's messages,
// captions and explanations: "1 sector", "32 sectors", "2 launches".
package words

import (
	"strconv"
	"strings"
)

// Plural writes n and the noun, plural unless n is 1: Plural(1, "line")
// is "1 line", Plural(3, "launch") "3 launches".
func Plural(n int, noun string) string {
	return strconv.Itoa(n) + " " + Noun(n, noun)
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
