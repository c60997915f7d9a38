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

// Unit writes a value and the unit of a quantity, the unit's head noun
// singular when the value is written as exactly 1: Unit("1", "sectors per
// request") is "1 sector per request", Unit("4", "sectors per request")
// "4 sectors per request", Unit("1", "load sectors") "1 load sector". The
// unit is written in the plural, as an answer's unit is; its head noun is
// the last word before its first preposition (per, of, in), or its last
// word, and only a plural head noun changes: "fraction of fetched bytes
// used" stays, and so does a unit of "times" ("times faster"), which
// counts no thing. A value of 1.0 or 1.00 keeps the plural, as English
// does for decimals.
func Unit(value, unit string) string {
	ws := strings.Split(unit, " ")
	if (value != "1" && value != "-1") || ws[0] == "times" {
		return value + " " + unit
	}
	head := len(ws) - 1
	for i, w := range ws {
		if i > 0 && (w == "per" || w == "of" || w == "in") {
			head = i - 1
			break
		}
	}
	ws[head] = singular(ws[head])
	return value + " " + strings.Join(ws, " ")
}

// singular undoes Noun's plural: "sectors" → "sector", "launches" →
// "launch", "passes" → "pass"; a word that is no such plural, or no
// lower-case word (GB/s), stays.
func singular(w string) string {
	for _, end := range []string{"ses", "xes", "ches", "shes"} {
		if strings.HasSuffix(w, end) {
			return strings.TrimSuffix(w, "es")
		}
	}
	if strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && strings.Trim(w, "abcdefghijklmnopqrstuvwxyz") == "" {
		return strings.TrimSuffix(w, "s")
	}
	return w
}
