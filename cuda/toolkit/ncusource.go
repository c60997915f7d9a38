package toolkit

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// SourceArgs are ncu's arguments for its source page of the first launch
// of kernel in program's run: the SourceCounters section, whose counts
// ncu takes per SASS instruction by patching the code (so they come from
// the addresses each instruction's lanes sent, not from the hardware's
// counters), printed in the cuda,sass view as CSV: every line of the
// source that -lineinfo names, each followed by its SASS instructions.
func SourceArgs(kernel, program string, programArgs []string) []string {
	args := []string{
		"--clock-control", "none",
		"--section", "SourceCounters",
		"--kernel-name", "regex:^" + regexp.QuoteMeta(kernel) + "$",
		"--launch-count", "1",
		"--page", "source", "--print-source", "cuda,sass", "--csv",
		program,
	}
	return append(args, programArgs...)
}

// SourceCmd runs program under ncu for its source page (SourceArgs).
func (n Ncu) SourceCmd(kernel, program string, args []string, timeout time.Duration) Invocation {
	return Invocation{Tool: "ncu", Path: n.Path, Args: SourceArgs(kernel, program, args), Timeout: timeout, Group: true}
}

// SourcePage is ncu's source page of one kernel (`--page source
// --print-source cuda,sass --csv`): the source lines -lineinfo ties
// instructions to, in the order ncu prints them, each with its SASS
// instructions and their counts.
type SourcePage struct {
	Kernel string // the kernel's name, as ncu's "Function Name" row gives it
	Lines  []SourceLine
}

// SourceLine is one line of a source file and the SASS instructions
// -lineinfo attributes to it.
type SourceLine struct {
	File string // the file's base name: "kernel.cu"
	Line int    // from 1
	SASS []SASS
}

// SASS is one SASS instruction of ncu's source page and what its
// executions did, summed over the launch.
type SASS struct {
	// Offset is the instruction's address less the kernel's first
	// instruction's (the lowest ncu printed): what cuobjdump prints.
	Offset uint64
	// Text is the instruction as ncu prints it: "@!P0 LDG.E R2, desc[UR6][R4.64]".
	Text string
	// Executed counts warp-level executions (inst_executed): a warp that
	// reaches a predicated instruction with every lane off counts one,
	// where the L1 sees no request.
	Executed int64
	// Threads counts thread-level executions, Active those of lanes whose
	// predicate was on (thread_inst_executed_true): the lanes that
	// accessed memory.
	Threads, Active int64
	// Space is "Global", "Shared", "Local" or "" (not a memory
	// instruction); Op "Load", "Store", or another of ncu's access
	// operations ("Atomic", "Reduction"...); Bits the access size.
	Space, Op string
	Bits      int
	// Sectors and SectorsIdeal are ncu's theoretical and ideal sectors of
	// a global instruction (memory_l2_theoretical_sectors_global and
	// _ideal): the distinct 32-byte sectors of each execution's lanes,
	// which is what the L1's l1tex__t_sectors counts.
	Sectors, SectorsIdeal int64
	// Wavefronts and WavefrontsIdeal are a shared instruction's
	// (memory_l1_wavefronts_shared and _ideal).
	Wavefronts, WavefrontsIdeal int64
}

// Predicated reports whether the instruction carries a guard predicate
// ("@P0", "@!P1"): it executes in every warp that reaches it, with the
// lanes whose predicate is false sitting out.
func (s SASS) Predicated() bool { return strings.HasPrefix(s.Text, "@") }

// Opcode returns the instruction's opcode with its modifiers, without the
// guard: "LDG.E.128".
func (s SASS) Opcode() string {
	f := strings.Fields(s.Text)
	if len(f) > 0 && strings.HasPrefix(f[0], "@") {
		f = f[1:]
	}
	if len(f) == 0 {
		return ""
	}
	return f[0]
}

// The source page's columns, as ncu 2025.3 labels them. The memory ones
// are absent from a kernel without such instructions (no shared
// wavefronts for a kernel that has no shared access).
const (
	colLine     = "Line No"
	colAddress  = "Address"
	colSource   = "Source"
	colExecuted = "Instructions Executed"
	colThreads  = "Thread Instructions Executed"
	colActive   = "Predicated-On Thread Instructions Executed"
	colSpace    = "Address Space"
	colOp       = "Access Operation"
	colSize     = "Access Size"
	colSectors  = "L2 Theoretical Sectors Global"
	colSectorsI = "L2 Theoretical Sectors Global Ideal"
	colWaves    = "L1 Wavefronts Shared"
	colWavesI   = "L1 Wavefronts Shared Ideal"
)

// maxSourceRows bounds what ParseNcuSource reads: a learner's kernel
// has a few hundred SASS instructions; the harness's own, a few thousand.
const maxSourceRows = 200_000

// ParseNcuSource reads what `ncu --page source --print-source cuda,sass
// --csv` prints (SourceArgs): for each file of each profiled kernel a
// "File Path" row, a "Function Name" row, a header row ("Line No",
// "Source", "Address", "Source", then one column per counter), then for
// each source line a row with its number and text (and the counters
// summed over it), followed by a row per SASS instruction, whose "Line No"
// and first "Source" are empty. A row of "..." stands for instructions
// ncu elides and is skipped. Lines of ncu's own (==PROF==, ==WARNING==)
// are skipped; "-" in a counter means none. The pages come in ncu's
// order, one per kernel; instruction offsets are from the lowest address
// of each kernel.
func ParseNcuSource(data []byte) ([]SourcePage, error) {
	var table bytes.Buffer
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		line := bytes.TrimRight(sc.Bytes(), "\r")
		if len(line) > 0 && line[0] == '"' {
			table.Write(line)
			table.WriteByte('\n')
		}
	}
	if err := sc.Err(); err != nil {
		return nil, &OutputError{Tool: "ncu", Msg: "source page: " + err.Error()}
	}
	if table.Len() == 0 {
		return nil, &OutputError{Tool: "ncu", Msg: "source page: no CSV rows: did ncu profile the kernel? (it prints ==WARNING== No kernels were profiled when the --kernel-name filter matched none)"}
	}
	r := csv.NewReader(&table)
	r.FieldsPerRecord = -1
	// ncu prints a source line's text between quotes without doubling the
	// quotes inside it (`"extern "C" __global__ ..."`).
	r.LazyQuotes = true
	var (
		pages  []SourcePage
		file   string
		col    map[string]int
		second int // the second "Source" column: the SASS text
		cur    *SourceLine
		n      int
	)
	page := func() *SourcePage {
		if len(pages) == 0 {
			return nil
		}
		return &pages[len(pages)-1]
	}
	for {
		rec, err := r.Read()
		if err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return nil, &OutputError{Tool: "ncu", Line: n + 1, Msg: "source page: " + err.Error()}
		}
		n++
		if n > maxSourceRows {
			return nil, &OutputError{Tool: "ncu", Msg: fmt.Sprintf("source page: more than %d rows", maxSourceRows)}
		}
		switch {
		case len(rec) >= 2 && rec[0] == "File Path":
			file, col, cur = path.Base(strings.ReplaceAll(rec[1], `\`, "/")), nil, nil
			continue
		case len(rec) >= 2 && rec[0] == "Function Name":
			name := strings.TrimSpace(rec[1])
			if p := page(); p == nil || p.Kernel != name {
				pages = append(pages, SourcePage{Kernel: name})
			}
			continue
		case len(rec) >= 1 && rec[0] == colLine:
			if col, second, err = sourceHeader(rec); err != nil {
				return nil, &OutputError{Tool: "ncu", Line: n, Msg: err.Error()}
			}
			cur = nil
			continue
		}
		if col == nil || page() == nil {
			return nil, &OutputError{Tool: "ncu", Line: n, Msg: fmt.Sprintf("source page: row %.80q before a \"File Path\", \"Function Name\" and \"Line No\" header", strings.Join(rec, ","))}
		}
		if len(rec) != len(col)+1 && len(rec) < second+1 {
			return nil, &OutputError{Tool: "ncu", Line: n, Msg: fmt.Sprintf("source page: %d fields, the header has more", len(rec))}
		}
		if line := strings.TrimSpace(rec[0]); line != "" {
			ln, err := strconv.Atoi(line)
			if err != nil || ln < 1 {
				return nil, &OutputError{Tool: "ncu", Line: n, Msg: fmt.Sprintf("source page: line number %q: want a whole number from 1", line)}
			}
			p := page()
			p.Lines = append(p.Lines, SourceLine{File: file, Line: ln})
			cur = &p.Lines[len(p.Lines)-1]
			continue
		}
		addr := strings.TrimSpace(field(rec, col[colAddress]))
		if addr == "..." || addr == "" && strings.TrimSpace(field(rec, second)) == "..." {
			continue
		}
		if cur == nil {
			return nil, &OutputError{Tool: "ncu", Line: n, Msg: "source page: an instruction row before any source line"}
		}
		s, err := sassRow(rec, col, second)
		if err != nil {
			return nil, &OutputError{Tool: "ncu", Line: n, Msg: "source page: " + err.Error()}
		}
		cur.SASS = append(cur.SASS, s)
	}
	if len(pages) == 0 {
		return nil, &OutputError{Tool: "ncu", Msg: "source page: no \"Function Name\" row: not the cuda,sass view of a profiled kernel"}
	}
	for i := range pages {
		rebase(&pages[i])
	}
	return pages, nil
}

// sourceHeader maps the header's labels to columns, and finds the second
// "Source" column, the SASS text.
func sourceHeader(rec []string) (map[string]int, int, error) {
	col := map[string]int{}
	second := -1
	for i, h := range rec {
		h = strings.TrimSpace(h)
		if h == colSource {
			if _, ok := col[h]; ok {
				second = i
				continue
			}
		}
		if _, ok := col[h]; !ok {
			col[h] = i
		}
	}
	for _, want := range []string{colAddress, colExecuted, colThreads, colActive, colSpace, colOp} {
		if _, ok := col[want]; !ok {
			return nil, 0, fmt.Errorf("source page: no %q column in the header: want ncu's SourceCounters section in the cuda,sass view", want)
		}
	}
	if second < 0 {
		return nil, 0, fmt.Errorf("source page: one \"Source\" column: want two (the cuda,sass view)")
	}
	return col, second, nil
}

func field(rec []string, i int) string {
	if i < 0 || i >= len(rec) {
		return ""
	}
	return rec[i]
}

// sassRow reads one instruction row.
func sassRow(rec []string, col map[string]int, second int) (SASS, error) {
	s := SASS{Text: strings.Join(strings.Fields(field(rec, second)), " ")}
	a := strings.TrimSpace(field(rec, col[colAddress]))
	off, err := strconv.ParseUint(strings.TrimPrefix(strings.TrimPrefix(a, "0x"), "0X"), 16, 64)
	if err != nil || !strings.HasPrefix(strings.ToLower(a), "0x") {
		return s, fmt.Errorf("address %q: want 0x and hex digits", a)
	}
	s.Offset = off
	counts := []struct {
		name string
		dst  *int64
		need bool
	}{
		{colExecuted, &s.Executed, true}, {colThreads, &s.Threads, true}, {colActive, &s.Active, true},
		{colSectors, &s.Sectors, false}, {colSectorsI, &s.SectorsIdeal, false},
		{colWaves, &s.Wavefronts, false}, {colWavesI, &s.WavefrontsIdeal, false},
	}
	for _, c := range counts {
		i, ok := col[c.name]
		if !ok {
			continue
		}
		v, err := count(field(rec, i))
		if err != nil {
			return s, fmt.Errorf("%s: %w", c.name, err)
		}
		*c.dst = v
	}
	s.Space = dash(field(rec, col[colSpace]))
	s.Op = dash(field(rec, col[colOp]))
	if i, ok := col[colSize]; ok {
		if b := dash(field(rec, i)); b != "" {
			v, err := strconv.Atoi(b)
			if err != nil || v < 0 || v > 4096 {
				return s, fmt.Errorf("%s %q: want a number of bits", colSize, b)
			}
			s.Bits = v
		}
	}
	switch {
	case s.Space != "" && !slices.Contains([]string{"Global", "Shared", "Local", "Generic", "Constant", "Texture"}, s.Space):
		return s, fmt.Errorf("%s %q: not an address space ncu names", colSpace, s.Space)
	case s.Active > s.Threads || s.Threads > 32*s.Executed:
		return s, fmt.Errorf("%d active of %d threads in %d warp executions: more lanes than warps hold", s.Active, s.Threads, s.Executed)
	}
	return s, nil
}

// count reads a counter: a whole number, maybe with thousands separators;
// "-" or "" is 0.
func count(v string) (int64, error) {
	v = strings.ReplaceAll(strings.TrimSpace(v), ",", "")
	if v == "" || v == "-" {
		return 0, nil
	}
	x, err := strconv.ParseInt(v, 10, 64)
	if err != nil || x < 0 {
		return 0, fmt.Errorf("%q is not a count", v)
	}
	return x, nil
}

func dash(v string) string {
	v = strings.TrimSpace(v)
	if v == "-" {
		return ""
	}
	return v
}

// rebase makes offsets relative to the page's lowest address.
func rebase(p *SourcePage) {
	var low uint64
	first := true
	for _, l := range p.Lines {
		for _, s := range l.SASS {
			if first || s.Offset < low {
				low, first = s.Offset, false
			}
		}
	}
	for i := range p.Lines {
		for j := range p.Lines[i].SASS {
			p.Lines[i].SASS[j].Offset -= low
		}
	}
}

// File returns the lines of file (a base name) in line order, each line
// once: ncu may print a line more than once when its instructions are
// not contiguous, and those are merged.
func (p SourcePage) File(file string) []SourceLine {
	byLine := map[int]int{}
	var out []SourceLine
	for _, l := range p.Lines {
		if l.File != file {
			continue
		}
		if i, ok := byLine[l.Line]; ok {
			out[i].SASS = append(out[i].SASS, l.SASS...)
			continue
		}
		byLine[l.Line] = len(out)
		out = append(out, SourceLine{File: l.File, Line: l.Line, SASS: slices.Clone(l.SASS)})
	}
	slices.SortFunc(out, func(a, b SourceLine) int { return a.Line - b.Line })
	for i := range out {
		slices.SortFunc(out[i].SASS, func(a, b SASS) int {
			switch {
			case a.Offset < b.Offset:
				return -1
			case a.Offset > b.Offset:
				return 1
			}
			return 0
		})
	}
	return out
}
