package notebook

import (
	"encoding/json"
	"fmt"
	"html"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/coalescing-course/coalesce/units"
)

// Number is a number written in a text: "1,048,576", "2²⁴", "64.5 %",
// "3.97×", "258 GB/s".
type Number struct {
	// Text is the number as written, without its unit.
	Text string
	// Value is what it stands for: 2²⁴ is 16777216, 1,048,576 is 1048576.
	Value float64
	// Decimals counts the digits written after the decimal point, so that
	// a stated 64.5 can be told to round a printed 64.52.
	Decimals int
	// Percent is a number followed by %.
	Percent bool
	// Offset is the byte offset of Text in the scanned text.
	Offset int
}

// unitSymbols may follow a number, attached ("4MB", "8×", "8.39M") or
// after a space: every symbol units writes, and a few people type.
// A number followed by other letters ("2D", "3rd", "64bit") is part of a
// word, not a quantity, and is not scanned.
var unitSymbols = func() map[string]bool {
	m := map[string]bool{"KB": true, "K": true}
	for _, s := range units.Symbols() {
		m[s] = true
	}
	return m
}()

var superscripts = map[rune]int{'⁰': 0, '¹': 1, '²': 2, '³': 3, '⁴': 4, '⁵': 5, '⁶': 6, '⁷': 7, '⁸': 8, '⁹': 9}

// ScanNumbers returns the numbers written in text, in order. A number is a
// run of digits not glued to a word before it (H200, L2, sm_90 and float4
// are names), with thousands separators ("1,048,576"), a decimal part, an
// exponent ("1.2e+06"), or a power ("2^24", "2²⁴", and in code "1 << 24").
// Signs are left out: a magnitude is what prose states.
func ScanNumbers(text string) []Number {
	var out []Number
	for i := 0; i < len(text); {
		if !isDigit(text[i]) || gluedBefore(text, i) {
			_, w := utf8.DecodeRuneInString(text[i:])
			i += w
			continue
		}
		n, end, ok := scanNumber(text, i)
		if ok {
			out = append(out, n)
		}
		i = end
	}
	return out
}

func isDigit(b byte) bool { return '0' <= b && b <= '9' }

// gluedBefore reports whether the digit at i continues a word or a number.
func gluedBefore(text string, i int) bool {
	if i == 0 {
		return false
	}
	r, _ := utf8.DecodeLastRuneInString(text[:i])
	return unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || r == '.'
}

// scanNumber reads the number starting at text[i]; it returns the number,
// where scanning goes on, and whether it is a quantity (not part of a word).
func scanNumber(text string, i int) (Number, int, bool) {
	j := i
	for j < len(text) && isDigit(text[j]) {
		j++
	}
	digits := text[i:j]
	// Thousands separators: only after a first group of 1 to 3 digits, and
	// each followed by exactly three digits ("3, 5 and 7" is a list).
	if j-i <= 3 {
		for j+4 <= len(text) && text[j] == ',' && allDigits(text[j+1:j+4]) && (j+4 == len(text) || !isDigit(text[j+4])) {
			digits += text[j+1 : j+4]
			j += 4
		}
	}
	decimals := 0
	if j+1 < len(text) && text[j] == '.' && isDigit(text[j+1]) {
		k := j + 1
		for k < len(text) && isDigit(text[k]) {
			k++
		}
		decimals = k - j - 1
		digits += text[j:k]
		j = k
	}
	if j < len(text) && (text[j] == 'e' || text[j] == 'E') {
		k := j + 1
		if k < len(text) && (text[k] == '+' || text[k] == '-') {
			k++
		}
		l := k
		for l < len(text) && isDigit(text[l]) {
			l++
		}
		if l > k && !gluedAfter(text, l) {
			digits += text[j:l]
			j = l
		}
	}
	value, err := strconv.ParseFloat(digits, 64)
	if err != nil { // only an overflow can get here; such a number states nothing checkable
		return Number{}, j, false
	}
	j, value = scanPower(text, j, value)
	n := Number{Text: text[i:j], Value: value, Decimals: decimals, Offset: i}
	k := j
	for k < len(text) && (text[k] == ' ' || text[k] == '\u00a0') && k-j < 2 {
		k++
	}
	if k < len(text) && text[k] == '%' {
		n.Percent = true
		return n, k + 1, true
	}
	unit := unitAt(text, j)
	if unit == "" && gluedAfter(text, j) {
		for j < len(text) && gluedAfter(text, j) { // the rest of the word
			_, w := utf8.DecodeRuneInString(text[j:])
			j += w
		}
		return Number{}, j, false
	}
	return n, j + len(unit), true
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}

// gluedAfter reports whether a letter, a digit or an underscore follows at j.
func gluedAfter(text string, j int) bool {
	if j >= len(text) {
		return false
	}
	r, _ := utf8.DecodeRuneInString(text[j:])
	return unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_'
}

// unitAt returns the unit attached at text[j:], the longest that ends a
// word, or "".
func unitAt(text string, j int) string {
	best := ""
	for u := range unitSymbols {
		if strings.HasPrefix(text[j:], u) && !gluedAfter(text, j+len(u)) && len(u) > len(best) {
			best = u
		}
	}
	return best
}

var supPower = regexp.MustCompile(`^<sup>(\d{1,3})</sup>`)
var caretPower = regexp.MustCompile(`^\^\{?(\d{1,3})\}?`)
var shiftPower = regexp.MustCompile(`^ ?<< ?(\d{1,2})\b`)

// scanPower reads a power after a base: 2^24, 2^{24}, 2²⁴, 2<sup>24</sup>,
// and 1 << 24 (code); it returns where scanning goes on and the value.
func scanPower(text string, j int, base float64) (int, float64) {
	if m := caretPower.FindStringSubmatch(text[j:]); m != nil {
		e, _ := strconv.Atoi(m[1])
		return j + len(m[0]), math.Pow(base, float64(e))
	}
	if m := supPower.FindStringSubmatch(text[j:]); m != nil {
		e, _ := strconv.Atoi(m[1])
		return j + len(m[0]), math.Pow(base, float64(e))
	}
	if m := shiftPower.FindStringSubmatch(text[j:]); m != nil {
		e, _ := strconv.Atoi(m[1])
		return j + len(m[0]), base * math.Pow(2, float64(e))
	}
	e, k, any := 0, j, false
	for k < len(text) {
		r, w := utf8.DecodeRuneInString(text[k:])
		d, ok := superscripts[r]
		if !ok || e > 100 {
			break
		}
		e, k, any = e*10+d, k+w, true
	}
	if any {
		return k, math.Pow(base, float64(e))
	}
	return j, base
}

// Stated is a number a markdown cell states, with the sentence it is in.
type Stated struct {
	Number
	// Sentence is the sentence of the markdown that holds the number,
	// whitespace collapsed.
	Sentence string
}

var (
	fence       = regexp.MustCompile("^ {0,3}(```+|~~~+)")
	codeSpan    = regexp.MustCompile("(`+)[^`]*?(`+)")
	htmlComment = regexp.MustCompile(`(?s)<!--.*?-->`)
	image       = regexp.MustCompile(`!\[[^\]]*\]\([^)]*\)`)
	link        = regexp.MustCompile(`\[([^\]]*)\]\(([^)]*)\)`)
	autolink    = regexp.MustCompile(`<https?://[^>]*>|https?://\S+`)
	htmlTag     = regexp.MustCompile(`</?[A-Za-z][^>]*>`)
	headingNum  = regexp.MustCompile(`(?m)^ {0,3}#{1,6}[ \t]+(\d+)`)
	listNum     = regexp.MustCompile(`(?m)^[ \t]*(\d{1,3})[.)][ \t]`)
	// A power written in HTML keeps its exponent: 2<sup>24</sup>.
	supTag = regexp.MustCompile(`</?sup>`)
)

// ProseNumbers returns the numbers stated in the prose of a markdown
// text: not in fenced code blocks or code spans, link targets, images,
// URLs, HTML tags or comments, not the lesson number that leads a heading
// ("# 3 · Strided access"), a list item's number ("1. with stride 32"), or
// the number in the text of a link to a notebook ("[lesson 3](03-strided.ipynb)").
func ProseNumbers(md string) []Stated {
	masked := []byte(md)
	blank := func(from, to int) {
		for k := from; k < to; k++ {
			if masked[k] != '\n' {
				masked[k] = ' '
			}
		}
	}
	inFence, fenceMark := false, ""
	for off := 0; off < len(md); {
		end := strings.IndexByte(md[off:], '\n')
		if end < 0 {
			end = len(md)
		} else {
			end += off
		}
		line := md[off:end]
		if m := fence.FindStringSubmatch(line); m != nil && (!inFence || strings.HasPrefix(strings.TrimSpace(line), fenceMark)) {
			if !inFence {
				fenceMark = m[1][:3]
			}
			inFence = !inFence
			blank(off, end)
		} else if inFence {
			blank(off, end)
		}
		off = end + 1
	}
	mask := func(rx *regexp.Regexp, group int) {
		for _, m := range rx.FindAllSubmatchIndex(masked, -1) {
			if m[2*group] >= 0 {
				blank(m[2*group], m[2*group+1])
			}
		}
	}
	mask(codeSpan, 0)
	mask(htmlComment, 0)
	mask(image, 0)
	for _, m := range link.FindAllSubmatchIndex(masked, -1) {
		blank(m[4], m[5]) // the target
		if strings.Contains(string(md[m[4]:m[5]]), ".ipynb") {
			blank(m[2], m[3]) // a lesson's number and title
		}
	}
	mask(autolink, 0)
	// <sup> stays readable to the scanner as the power it writes.
	for _, m := range htmlTag.FindAllIndex(masked, -1) {
		if !supTag.Match(masked[m[0]:m[1]]) {
			blank(m[0], m[1])
		}
	}
	mask(headingNum, 1)
	mask(listNum, 1)

	var out []Stated
	for _, n := range ScanNumbers(string(masked)) {
		n.Text = md[n.Offset : n.Offset+len(n.Text)]
		out = append(out, Stated{Number: n, Sentence: sentenceAt(md, n.Offset)})
	}
	return out
}

var (
	paragraphBreak = regexp.MustCompile(`\n[ \t]*\n|\n[ \t]*(?:[*+-]|\d{1,3}[.)]|#{1,6})[ \t]`)
	sentenceEnd    = regexp.MustCompile(`[.!?][)*_"]*\s`)
	spaces         = regexp.MustCompile(`\s+`)
)

// sentenceAt returns the sentence of md around byte offset at: within its
// paragraph or list item, from the end of the sentence before to the end
// of its own.
func sentenceAt(md string, at int) string {
	start, end := 0, len(md)
	for _, m := range paragraphBreak.FindAllStringIndex(md, -1) {
		if m[1] <= at {
			start = m[0] + 1
		} else if m[0] >= at {
			end = m[0]
			break
		}
	}
	base, stop := start, end
	for _, m := range sentenceEnd.FindAllStringIndex(md[base:stop], -1) {
		if base+m[1] <= at {
			start = base + m[1]
			continue
		}
		end = base + m[1]
		break
	}
	return strings.TrimSpace(spaces.ReplaceAllString(md[start:end], " "))
}

// Definition is a number that prose may state without a cell printing it:
// a fact of the hardware the course defines rather than measures or
// models, recognised by the words around it.
type Definition struct {
	// Values the definition covers.
	Values []float64
	// Before and After must match the text just before and just after
	// the number (either may be nil: anything goes).
	Before, After *regexp.Regexp
	// Why says what the number is, for the documentation.
	Why string
}

// Definitions is the allow-list: the numbers a lesson may state as
// definitions. It is kept small on purpose; a result belongs in a cell's
// output.
var Definitions = []Definition{
	{Values: []float64{32}, After: regexp.MustCompile(`^\s*(lanes?|threads)\b`), Why: "a warp is 32 lanes"},
	{Values: []float64{32}, Before: regexp.MustCompile(`(?i)\bwarps? of\s*$`), Why: "a warp is 32 lanes"},
	{Values: []float64{32}, After: regexp.MustCompile(`^(-|\s)bytes?\s+(L1\s+|L2\s+)?sectors?\b`), Why: "a sector is 32 bytes"},
	{Values: []float64{32}, Before: regexp.MustCompile(`(?i)\bsectors? (is |are |of )\s*$`), After: regexp.MustCompile(`^\s*bytes\b`), Why: "a sector is 32 bytes"},
	{Values: []float64{128}, After: regexp.MustCompile(`^(-|\s)bytes?\s+(cache\s+|L1\s+)?lines?\b`), Why: "a cache line is 128 bytes"},
	{Values: []float64{128}, Before: regexp.MustCompile(`(?i)\blines? (is |are |of )\s*$`), After: regexp.MustCompile(`^\s*bytes\b`), Why: "a cache line is 128 bytes"},
	{Values: []float64{4}, After: regexp.MustCompile(`^\s*sectors?\b`), Before: regexp.MustCompile(`(?i)\b(line|lines) (is |are |of |holds? )\s*$`), Why: "a line is 4 sectors"},
	{Values: []float64{1, 2, 4, 8, 16}, After: regexp.MustCompile(`^(-|\s)bytes?\b`), Why: "element and access sizes: 1, 2, 4, 8 and 16 bytes"},
	{Values: []float64{1, 2, 4}, Before: regexp.MustCompile(`(?i)\bwidths?\s*(of\s*|=\s*)?$`), Why: "vector widths: 1, 2 or 4 elements a load"},
	{Values: nil, Before: regexp.MustCompile(`(?i)\blessons?\s+(\d+\s*(,|and|or|to|–|-)\s*)*$`), Why: "a lesson's number"},
}

// allowed returns the definition that covers a stated number, or nil.
func allowed(prose string, n Number) *Definition {
	before, after := prose[:n.Offset], prose[n.Offset+len(n.Text):]
	if len(before) > 60 {
		before = before[len(before)-60:]
	}
	if n.Percent {
		return nil
	}
	for i, d := range Definitions {
		if d.Values != nil && !containsValue(d.Values, n.Value) {
			continue
		}
		if (d.Before == nil || d.Before.MatchString(before)) && (d.After == nil || d.After.MatchString(after)) {
			return &Definitions[i]
		}
	}
	return nil
}

func containsValue(vs []float64, v float64) bool {
	for _, x := range vs {
		if x == v {
			return true
		}
	}
	return false
}

// Evidence is what a notebook's code cells give to back its prose: the
// numbers written in their sources (inputs: a stride, an n) and the
// numbers they printed (results), each with its cell.
type Evidence struct {
	Inputs, Printed []Fact
}

// Fact is a number a code cell writes or prints.
type Fact struct {
	Cell int
	Number
}

// support returns what backs a stated number: an input must be equal; a
// printed result may have more decimals than the prose ("64.5 %" states a
// printed 64.52), rounded as units rounds what it prints (half
// away from zero, as written: 3.125 states 3.13). A percentage also stands
// for its fraction: "25%" for a 0.25 in the code. It returns "" when
// nothing does.
func (e Evidence) support(n Number) string {
	type want struct {
		v float64
		d int
	}
	wants := []want{{n.Value, n.Decimals}}
	if n.Percent {
		wants = append(wants, want{n.Value / 100, n.Decimals + 2})
	}
	for _, w := range wants {
		for _, in := range e.Inputs {
			if near(in.Value, w.v) {
				return fmt.Sprintf("input %s in cell %d", in.Text, in.Cell)
			}
		}
		for _, p := range e.Printed {
			if near(p.Value, w.v) || (p.Decimals > w.d && near(units.Round(p.Value, w.d), w.v)) {
				return fmt.Sprintf("printed %s by cell %d", p.Text, p.Cell)
			}
		}
	}
	return ""
}

func near(a, b float64) bool {
	return a == b || math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b))
}

// Finding is a number a markdown cell states and what backs it.
type Finding struct {
	// Cell is the markdown cell's index in the notebook (0-based).
	Cell int
	Stated
	// By says what backs the number: "input 32 in cell 4", "printed 64.52
	// by cell 14", "definition: a warp is 32 lanes"; "" when nothing does.
	By string
}

func (f Finding) String() string {
	if f.By == "" {
		return fmt.Sprintf("cell %d (markdown, index %d): %q is in no code cell's source or output: %q", f.Cell+1, f.Cell, f.Text, f.Sentence)
	}
	return fmt.Sprintf("cell %d (markdown, index %d): %q: %s: %q", f.Cell+1, f.Cell, f.Text, f.By, f.Sentence)
}

// Findings returns every number the markdown cells of nb state, each
// with what backs it: the code cells' sources, their outputs (outputs[i]
// is cell i's output text, as OutputTexts reads it), or Definitions.
func Findings(nb *Notebook, outputs map[int]string) []Finding {
	var ev Evidence
	for _, c := range nb.Cells {
		if c.Type != Code {
			continue
		}
		for _, n := range ScanNumbers(c.Source) {
			ev.Inputs = append(ev.Inputs, Fact{c.Index, n})
		}
		for _, n := range ScanNumbers(outputs[c.Index]) {
			ev.Printed = append(ev.Printed, Fact{c.Index, n})
		}
	}
	var out []Finding
	for _, c := range nb.Cells {
		if c.Type != Markdown {
			continue
		}
		for _, s := range ProseNumbers(c.Source) {
			f := Finding{Cell: c.Index, Stated: s}
			if d := allowed(c.Source, s.Number); d != nil {
				f.By = "definition: " + d.Why
			} else {
				f.By = ev.support(s.Number)
			}
			out = append(out, f)
		}
	}
	return out
}

// CheckNumbers returns the Findings that nothing backs: numbers a
// markdown cell states that no code cell writes or prints and no
// Definition covers.
func CheckNumbers(nb *Notebook, outputs map[int]string) []Finding {
	var bad []Finding
	for _, f := range Findings(nb, outputs) {
		if f.By == "" {
			bad = append(bad, f)
		}
	}
	return bad
}

// FalseEquation is an equation a code cell printed that does not hold as
// printed: its terms, worked out, do not round to its result.
type FalseEquation struct {
	// Cell is the code cell's index in the notebook (0-based).
	Cell int
	units.Found
}

func (f FalseEquation) String() string {
	return fmt.Sprintf("cell %d (code, index %d) printed %q: its terms work out to %s, not its result",
		f.Cell+1, f.Cell, f.Text, units.Exact(f.Worked))
}

// CheckEquations returns the equations the code cells printed (outputs
// as OutputTexts reads them) that do not hold as printed, read as a
// learner reads them (units.FindEquations): "2,097,152 requests × 5
// sectors per request = 10,485,759 sectors" is false as printed.
func CheckEquations(outputs map[int]string) []FalseEquation {
	var bad []FalseEquation
	for cell, text := range outputs {
		for _, f := range units.FindEquations(text) {
			if !f.Holds {
				bad = append(bad, FalseEquation{Cell: cell, Found: f})
			}
		}
	}
	slices.SortFunc(bad, func(a, b FalseEquation) int { return a.Cell - b.Cell })
	return bad
}

type outputsNotebook struct {
	Cells []struct {
		Outputs []struct {
			Type string                     `json:"output_type"`
			Text json.RawMessage            `json:"text"`
			Data map[string]json.RawMessage `json:"data"`
		} `json:"outputs"`
	} `json:"cells"`
}

var (
	styleBlock = regexp.MustCompile(`(?is)<(style|script)\b.*?</(style|script)>`)
	anyTag     = regexp.MustCompile(`<[^>]*>`)
)

// ShownMIMEType is the MIME type of the record a course display attaches
// to its output (grader.ShownMIMEType): what it showed and what it held
// back until the learner answers a question.
const ShownMIMEType = "application/vnd.coalesce.shown+json"

// OutputTexts returns the text each code cell of an executed notebook
// printed, by cell index: its streams, and its text/plain, text/markdown
// and text/html results (HTML as text: tags, styles and scripts dropped,
// entities decoded). Errors and images are left out: they state no result.
// A value a display withheld (its ShownMIMEType record lists it) counts
// as printed: the cell prints it once the learner has answered, which a
// run with the lessons' placeholders never does.
func OutputTexts(data []byte) (map[int]string, error) {
	if _, err := Parse(data); err != nil {
		return nil, err
	}
	var nb outputsNotebook
	if err := json.Unmarshal(data, &nb); err != nil {
		return nil, &Error{Cell: -1, Err: ErrNotNotebook, Msg: "outputs: " + err.Error()}
	}
	texts := map[int]string{}
	for i, c := range nb.Cells {
		var b strings.Builder
		for _, o := range c.Outputs {
			switch o.Type {
			case "stream":
				s, _ := joinSource(o.Text)
				b.WriteString(s)
				b.WriteByte('\n')
			case "display_data", "execute_result", "update_display_data":
				if raw, ok := o.Data[ShownMIMEType]; ok {
					b.WriteString(withheldText(raw))
				}
				for _, mime := range []string{"text/plain", "text/markdown", "text/html"} {
					raw, ok := o.Data[mime]
					if !ok {
						continue
					}
					s, _ := joinSource(raw)
					if mime == "text/html" {
						s = html.UnescapeString(anyTag.ReplaceAllString(styleBlock.ReplaceAllString(s, " "), " "))
					}
					b.WriteString(s)
					b.WriteByte('\n')
				}
			}
		}
		if b.Len() > 0 {
			texts[i] = b.String()
		}
	}
	return texts, nil
}

// withheldText writes the values a display's record says it withheld, one
// a line, as a cell prints them once they show.
func withheldText(raw json.RawMessage) string {
	s, _ := joinSource(raw)
	var rec struct {
		Withheld []struct {
			Tell struct {
				Value float64 `json:"value"`
			} `json:"tell"`
		} `json:"withheld"`
	}
	if json.Unmarshal([]byte(s), &rec) != nil {
		return ""
	}
	var b strings.Builder
	for _, w := range rec.Withheld {
		fmt.Fprintf(&b, "withheld until answered: %s\n", strconv.FormatFloat(w.Tell.Value, 'g', 4, 64))
	}
	return b.String()
}
