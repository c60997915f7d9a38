// Package twin sets a learner's CUDA body beside its Go twin line by
// line: for each line of the body, what ncu's source counters say its
// instructions did on the GPU (toolkit.SourceLine), and what simt's model
// counted for the same accesses of the Go kernel (simt.Site), with the
// lines that differ marked and, where the SASS shows it, the compiler's
// transformation that made them differ.
//
// # How lines correspond
//
// A Go kernel's sites and a CUDA body's lines are paired by buffer and
// access order, not by line number (the two texts need not have the same
// layout): the k-th load of a buffer in the Go kernel, in source order
// (simt.Site's Line), is the k-th read of that buffer in the CUDA body, in
// text order, and likewise for stores. A CUDA access of a buffer is an
// indexing `in[...]` of a kernel argument, or of a pointer the body makes
// from one (`const float4* src = reinterpret_cast<const float4*>(in +
// off)`); an assignment `x[...] = ` is a store, a compound one (`+=`, `++`)
// a load and a store. All shared arrays are one buffer on each side (a
// body declares its own `__shared__ float tile[32][33]`, whatever its
// name; the Go kernel's is the exercise's Shared). A site or an access
// left over on either side is shown alone.
//
// # What the GPU counts
//
// ncu's source counters are taken per SASS instruction from the addresses
// its lanes sent: a global instruction's sectors are the L1's
// (l1tex__t_sectors, summed over the body they equal it), a shared one's
// wavefronts the bank rule's. Its instruction count is warp-level
// executions, which includes warps that reached a predicated instruction
// with every lane off: those make no request (l1tex__t_requests) and no
// wavefront.
package twin

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/coalescing-course/coalesce/cuda/toolkit"
	"github.com/coalescing-course/coalesce/lessons/simt"
	"github.com/coalescing-course/coalesce/units"
)

// Counts are what one line's accesses cost, on one side: global loads
// and stores (instructions and sectors), shared loads and stores
// (instructions and wavefronts), and the lanes that accessed memory.
type Counts struct {
	Ld, LdSectors, St, StSectors     int64
	ShLd, ShLdWaves, ShSt, ShStWaves int64
	Lanes                            int64
}

// Any reports whether c counts some access.
func (c Counts) Any() bool { return c != Counts{} }

// sameCost reports whether a and b cost the same sectors and wavefronts,
// whatever their instruction counts.
func sameCost(a, b Counts) bool {
	return a.LdSectors == b.LdSectors && a.StSectors == b.StSectors && a.ShLdWaves == b.ShLdWaves && a.ShStWaves == b.ShStWaves
}

// Reason names a known way the compiler makes the GPU's instructions of a
// line differ from simt's.
type Reason string

// The transformations the table recognises, each from the line's SASS.
const (
	// Unrolled: the line's access became several instructions, a loop
	// unrolled after a remainder loop. In the unrolled copies the lanes
	// of a warp whose trip counts differ run one instruction for trips a
	// trip apart; simt groups every lane's k-th trip.
	Unrolled Reason = "unrolled"
	// Merged: the line's load has no instruction of its own; the compiler
	// merged it with another line's (an if/else pair of loads became a
	// select of the address and one load).
	Merged Reason = "merged"
	// Predicated: the line's instructions are guarded by a predicate, so
	// every warp that reaches them executes them, lanes off or not; ncu
	// counts the executions of warps with no lane on, simt does not.
	Predicated Reason = "predicated"
)

// Why returns the sentence the table prints for r.
func (r Reason) Why() string {
	switch r {
	case Unrolled:
		return "nvcc unrolled the loop around this line after a remainder loop: its access is several instructions in the SASS, and where a warp's lanes run different numbers of trips, lanes a trip apart share one instruction, which touches sectors of both trips; simt groups every lane's k-th trip"
	case Merged:
		return "nvcc merged this load with another line's into one instruction (a select of the address, then one load): one request for the lanes of both, where simt counts one a line; a sector both lines' lanes touch is counted once, so the GPU's sectors are the same or fewer"
	case Predicated:
		return "the instruction is predicated, not branched around: every warp that reaches it executes it, so ncu counts the warps whose lanes are all off (no request, no wavefront), which simt does not"
	}
	return ""
}

// Row is one line of the body that accesses memory on either side.
type Row struct {
	Line int
	Code string // the line's text, trimmed
	// GPU is ncu's count of the line's instructions; Model simt's of the
	// Go sites paired with the line's accesses (Sites).
	GPU, Model Counts
	Sites      []simt.Site
	// Differs says the two disagree on something; Reasons name the
	// transformations the SASS shows on the line (none when they are not
	// known), and SASS holds the line's memory instructions, the evidence.
	Differs bool
	Reasons []Reason
	SASS    []toolkit.SASS
}

// Explained reports whether the row agrees, or differs only in ways its
// Reasons account for.
func (r Row) Explained() bool { return !r.Differs || len(r.Reasons) > 0 }

// Table is a body's rows in line order, and the Go sites no access of the
// body pairs with.
type Table struct {
	Rows     []Row
	Unpaired []simt.Site
}

// access is one indexing of a buffer in the body's text.
type access struct {
	line   int
	buffer string // the argument's name, or sharedBuffer
	store  bool
}

// sharedBuffer is what every shared array counts as, on both sides.
const sharedBuffer = "__shared__"

var (
	identIndexRE = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*\s*\[`)
	pointerRE    = regexp.MustCompile(`\*\s*(?:__restrict__\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=([^;]*)`)
	sharedRE     = regexp.MustCompile(`__shared__[^;]*?([A-Za-z_][A-Za-z0-9_]*)\s*\[`)
	identRE      = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*`)
)

// stripLine removes comments and string and character literals from one
// line, so that nothing inside them reads as an access; block tells
// whether a /* */ comment is open at its start and at its end.
func stripLine(line string, block bool) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(line); i++ {
		c := line[i]
		if block {
			if c == '*' && i+1 < len(line) && line[i+1] == '/' {
				block = false
				i++
			}
			continue
		}
		switch {
		case c == '/' && i+1 < len(line) && line[i+1] == '/':
			return b.String(), false
		case c == '/' && i+1 < len(line) && line[i+1] == '*':
			block = true
			i++
		case c == '"' || c == '\'':
			q := c
			for i++; i < len(line) && line[i] != q; i++ {
				if line[i] == '\\' {
					i++
				}
			}
			b.WriteString(`""`)
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), block
}

// accesses finds the body's accesses of args (the pointer arguments'
// names) and of its shared arrays, in text order.
func accesses(body string, args []string) []access {
	lines := strings.Split(body, "\n")
	views := map[string]string{}
	for _, a := range args {
		views[a] = a
	}
	shared := map[string]bool{}
	var out []access
	block := false
	for i, raw := range lines {
		var code string
		code, block = stripLine(raw, block)
		// Declarations first: a shared array, a pointer made from a buffer.
		for _, m := range sharedRE.FindAllStringSubmatch(code, -1) {
			shared[m[1]] = true
		}
		for _, m := range pointerRE.FindAllStringSubmatch(code, -1) {
			for _, id := range identRE.FindAllString(m[2], -1) {
				if base, ok := views[id]; ok && id != m[1] {
					views[m[1]] = base
					break
				}
			}
		}
		decl := strings.Contains(code, "__shared__")
		for _, loc := range identIndexRE.FindAllStringIndex(code, -1) {
			name := strings.TrimSpace(strings.TrimSuffix(code[loc[0]:loc[1]], "["))
			if loc[0] > 0 && isIdent(code[loc[0]-1]) {
				continue
			}
			buf := ""
			if shared[name] {
				buf = sharedBuffer
			} else if b, ok := views[name]; ok {
				buf = b
			} else {
				continue
			}
			if decl && buf == sharedBuffer {
				continue // the declaration's extents, not an access
			}
			end := skipIndices(code, loc[1]-1)
			load, store := classify(code[end:])
			if load {
				out = append(out, access{line: i + 1, buffer: buf})
			}
			if store {
				out = append(out, access{line: i + 1, buffer: buf, store: true})
			}
		}
	}
	return out
}

func isIdent(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// skipIndices returns the index just past the [...] groups starting at
// open (tile[a][b]).
func skipIndices(s string, open int) int {
	i := open
	for i < len(s) && s[i] == '[' {
		depth := 0
		for ; i < len(s); i++ {
			if s[i] == '[' {
				depth++
			} else if s[i] == ']' {
				depth--
				if depth == 0 {
					i++
					break
				}
			}
		}
		for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
	}
	return i
}

// classify says what the text after an indexing makes of it: a plain
// assignment stores, a compound one or ++/-- loads and stores, anything
// else loads. A member access (v.x = ...) of an element counts as the
// element's.
func classify(rest string) (load, store bool) {
	r := strings.TrimLeft(rest, " \t")
	if strings.HasPrefix(r, ".") {
		r = strings.TrimLeft(strings.TrimLeft(r[1:], "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_0123456789"), " \t")
	}
	switch {
	case strings.HasPrefix(r, "=="):
		return true, false
	case strings.HasPrefix(r, "="):
		return false, true
	case strings.HasPrefix(r, "++"), strings.HasPrefix(r, "--"):
		return true, true
	}
	for _, op := range []string{"+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>="} {
		if strings.HasPrefix(r, op) {
			return true, true
		}
	}
	return true, false
}

// key groups accesses and sites that pair: a buffer and a direction.
type key struct {
	buffer string
	store  bool
}

func siteKey(s simt.Site) key {
	if s.Shared {
		return key{sharedBuffer, s.Store}
	}
	return key{s.Buffer, s.Store}
}

// Build pairs body's lines (its pointer arguments named args) with the Go
// kernel's sites and ncu's counts of the body's lines (usercuda's
// Result.Lines; nil when there are none) and marks what differs. With no
// sites, the rows hold the GPU's side only.
func Build(body string, args []string, gpu []toolkit.SourceLine, sites []simt.Site) Table {
	acc := accesses(body, args)
	text := strings.Split(body, "\n")
	rows := map[int]*Row{}
	row := func(line int) *Row {
		if r, ok := rows[line]; ok {
			return r
		}
		r := &Row{Line: line}
		if line >= 1 && line <= len(text) {
			r.Code = strings.TrimSpace(text[line-1])
		}
		rows[line] = r
		return r
	}
	// The Go sites in source order, paired by buffer and direction.
	ordered := slices.Clone(sites)
	slices.SortStableFunc(ordered, func(a, b simt.Site) int { return a.Line - b.Line })
	next := map[key]int{}
	byKey := map[key][]simt.Site{}
	for _, s := range ordered {
		byKey[siteKey(s)] = append(byKey[siteKey(s)], s)
	}
	textual := map[int]map[key]int{}
	for _, a := range acc {
		k := key{a.buffer, a.store}
		r := row(a.line)
		if textual[a.line] == nil {
			textual[a.line] = map[key]int{}
		}
		textual[a.line][k]++
		if i := next[k]; i < len(byKey[k]) {
			s := byKey[k][i]
			next[k] = i + 1
			r.Sites = append(r.Sites, s)
			addSite(&r.Model, s)
		}
	}
	var t Table
	for k, ss := range byKey {
		t.Unpaired = append(t.Unpaired, ss[next[k]:]...)
	}
	slices.SortStableFunc(t.Unpaired, func(a, b simt.Site) int { return a.Line - b.Line })
	for _, l := range gpu {
		var mem []toolkit.SASS
		for _, s := range l.SASS {
			if s.Space == "Global" || s.Space == "Shared" {
				mem = append(mem, s)
			}
		}
		if len(mem) == 0 {
			continue
		}
		r := row(l.Line)
		r.SASS = append(r.SASS, mem...)
		for _, s := range mem {
			addSASS(&r.GPU, s)
		}
	}
	haveGPU, haveModel := gpu != nil, sites != nil
	for _, r := range rows {
		switch {
		case haveGPU && haveModel:
			r.Differs = r.GPU != r.Model
			if r.Differs {
				r.Reasons = reasons(r, textual[r.Line])
			}
		case haveGPU:
			// No twin: what the SASS alone shows, the copies of an
			// unrolled loop.
			if rs := reasons(r, textual[r.Line]); slices.Contains(rs, Unrolled) {
				r.Reasons = []Reason{Unrolled}
			}
		}
	}
	// A merged load's lines: one without its instruction, one with an
	// instruction its text does not account for.
	if haveGPU && haveModel {
		markMerged(rows, textual)
	}
	for _, r := range rows {
		t.Rows = append(t.Rows, *r)
	}
	slices.SortFunc(t.Rows, func(a, b Row) int { return a.Line - b.Line })
	return t
}

func addSite(c *Counts, s simt.Site) {
	c.Lanes += s.Lanes
	switch {
	case s.Shared && s.Store:
		c.ShSt += s.Instructions
		c.ShStWaves += s.Wavefronts
	case s.Shared:
		c.ShLd += s.Instructions
		c.ShLdWaves += s.Wavefronts
	case s.Store:
		c.St += s.Instructions
		c.StSectors += s.Sectors
	default:
		c.Ld += s.Instructions
		c.LdSectors += s.Sectors
	}
}

func addSASS(c *Counts, s toolkit.SASS) {
	c.Lanes += s.Active
	load := s.Op == "Load"
	switch {
	case s.Space == "Shared" && load:
		c.ShLd += s.Executed
		c.ShLdWaves += s.Wavefronts
	case s.Space == "Shared":
		c.ShSt += s.Executed
		c.ShStWaves += s.Wavefronts
	case load:
		c.Ld += s.Executed
		c.LdSectors += s.Sectors
	default:
		c.St += s.Executed
		c.StSectors += s.Sectors
	}
}

// reasons names what the row's SASS shows.
func reasons(r *Row, text map[key]int) []Reason {
	var out []Reason
	// Instructions of one kind beyond the text's accesses of it: copies.
	kinds := map[[2]bool]int{}
	for _, s := range r.SASS {
		kinds[[2]bool{s.Space == "Shared", s.Op != "Load"}]++
	}
	written := map[[2]bool]int{}
	for k, n := range text {
		written[[2]bool{k.buffer == sharedBuffer, k.store}] += n
	}
	for k, n := range kinds {
		if w := written[k]; w > 0 && n > w {
			out = append(out, Unrolled)
			break
		}
	}
	// Predicated instructions whose executions exceed the model's while
	// the lanes agree.
	pred := slices.ContainsFunc(r.SASS, func(s toolkit.SASS) bool { return s.Predicated() && s.Active < 32*s.Executed })
	if pred && r.GPU.Lanes == r.Model.Lanes && (r.GPU.Ld > r.Model.Ld || r.GPU.St > r.Model.St || r.GPU.ShLd > r.Model.ShLd || r.GPU.ShSt > r.Model.ShSt) {
		if sameCost(r.GPU, r.Model) || !slices.Contains(out, Unrolled) {
			out = append(out, Predicated)
		}
	}
	return out
}

// markMerged finds loads the text has on one line and the SASS on
// another: a line whose written loads have no load instruction, and a
// line with load instructions its text does not account for.
func markMerged(rows map[int]*Row, text map[int]map[key]int) {
	var lost, extra []*Row
	for line, r := range rows {
		wl, gl := 0, 0
		for k, n := range text[line] {
			if !k.store && k.buffer != sharedBuffer {
				wl += n
			}
		}
		for _, s := range r.SASS {
			if s.Space == "Global" && s.Op == "Load" {
				gl++
			}
		}
		switch {
		case wl > 0 && gl == 0:
			lost = append(lost, r)
		case gl > wl:
			extra = append(extra, r)
		}
	}
	if len(lost) == 0 || len(extra) == 0 {
		return
	}
	for _, r := range append(lost, extra...) {
		if !slices.Contains(r.Reasons, Merged) {
			r.Reasons = append(r.Reasons, Merged)
		}
	}
}

// String writes the table as text: one row a line, the GPU's counts, then
// the model's, then the reasons.
func (t Table) String() string {
	var b strings.Builder
	b.WriteString("line  GPU (ncu source counters)             model (simt, your Go kernel)         \n")
	for _, r := range t.Rows {
		mark := " "
		if r.Differs {
			mark = "≠"
			if len(r.Reasons) == 0 {
				mark = "✗"
			}
		}
		fmt.Fprintf(&b, "%s%4d  %-36s  %-36s  %s\n", mark, r.Line, r.GPU.Short(), r.Model.Short(), r.Code)
		for _, why := range r.Reasons {
			fmt.Fprintf(&b, "        %s: %s\n", why, why.Why())
		}
	}
	for _, s := range t.Unpaired {
		fmt.Fprintf(&b, "  Go site %s:%d (%s) pairs with no access of the CUDA body\n", s.File, s.Line, s.Buffer)
	}
	return b.String()
}

// count writes a count of a line's instructions or sectors as units does.
func count[T int | int64](n T) string { return units.Count.Format(float64(n)) }

// Short writes c compactly: "ld 3125×/12500 sectors, st 3125×/12500".
func (c Counts) Short() string {
	var parts []string
	if c.Ld > 0 || c.LdSectors > 0 {
		parts = append(parts, fmt.Sprintf("ld %s/%s sect", count(c.Ld), count(c.LdSectors)))
	}
	if c.St > 0 || c.StSectors > 0 {
		parts = append(parts, fmt.Sprintf("st %s/%s sect", count(c.St), count(c.StSectors)))
	}
	if c.ShLd > 0 || c.ShLdWaves > 0 {
		parts = append(parts, fmt.Sprintf("shld %s/%s wf", count(c.ShLd), count(c.ShLdWaves)))
	}
	if c.ShSt > 0 || c.ShStWaves > 0 {
		parts = append(parts, fmt.Sprintf("shst %s/%s wf", count(c.ShSt), count(c.ShStWaves)))
	}
	if len(parts) == 0 {
		return "—"
	}
	return strings.Join(parts, ", ")
}
