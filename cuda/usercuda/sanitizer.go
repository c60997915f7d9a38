package usercuda

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/coalescing-course/coalesce/cuda/toolkit"
)

// SanitizerReport is what compute-sanitizer said about one run: its
// findings, first first, and its summary's count.
type SanitizerReport struct {
	Check    toolkit.Check
	Findings []SanitizerFinding
	// Errors is the summary's count ("ERROR SUMMARY: 2 errors",
	// "RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)"): it
	// may exceed the findings printed.
	Errors int
	// Text is the report as printed, the host backtraces left out and the
	// build directory's paths shortened to kernel.cu.
	Text string
}

// Clean reports whether the check found nothing.
func (r *SanitizerReport) Clean() bool { return r.Errors == 0 && len(r.Findings) == 0 }

// SanitizerFinding is one error compute-sanitizer reports: its first line
// ("Invalid __global__ read of size 16 bytes", "Error: Race reported
// between Write access ..."), where in the learner's text it happened
// (File "kernel.cu", Line; 0 when not said), by which thread, and the
// lines that explain it ("Address 0x7f... is misaligned").
type SanitizerFinding struct {
	What          string
	File          string
	Line          int
	Thread, Block Dim3
	HasThread     bool // Thread and Block are said
	Details       []string
}

func (f SanitizerFinding) String() string {
	var b strings.Builder
	if f.File != "" {
		fmt.Fprintf(&b, "%s:%d: ", f.File, f.Line)
	}
	b.WriteString(f.What)
	if f.HasThread {
		fmt.Fprintf(&b, " by thread %v in block %v", f.Thread, f.Block)
	}
	for _, d := range f.Details {
		if strings.HasPrefix(d, "at ") || strings.HasPrefix(d, "by thread") {
			continue
		}
		b.WriteString("; ")
		b.WriteString(d)
	}
	return b.String()
}

// SanitizerError is a check that found errors in a learner's kernel.
type SanitizerError struct {
	Kernel string
	Report *SanitizerReport
}

// findingsShown is how many findings an error message lists.
const findingsShown = 5

func (e *SanitizerError) Error() string {
	var b strings.Builder
	n := max(e.Report.Errors, len(e.Report.Findings))
	fmt.Fprintf(&b, "cuda: compute-sanitizer %s found %d error(s) in kernel %s", e.Report.Check, n, e.Kernel)
	for i, f := range e.Report.Findings {
		if i == findingsShown {
			fmt.Fprintf(&b, "\n  ... %d more", len(e.Report.Findings)-i)
			break
		}
		b.WriteString("\n  ")
		b.WriteString(f.String())
	}
	return b.String()
}

const sanitizerPrefix = "========="

var (
	sanLocRE     = regexp.MustCompile(`(\S+\.cu):(\d+)`)
	sanThreadRE  = regexp.MustCompile(`by thread \((\d+),(\d+),(\d+)\) in block \((\d+),(\d+),(\d+)\)`)
	sanSummaryRE = regexp.MustCompile(`^(?:ERROR SUMMARY: (\d+) errors?|RACECHECK SUMMARY: \d+ hazards? displayed \((\d+) errors?, \d+ warnings?\))`)
)

// parseSanitizer reads compute-sanitizer's report from its output, where
// every line of its own starts with "=========": a finding is a line
// right after that prefix (its first line), then lines indented under it,
// until a line of the prefix alone. The program's own lines, the banner,
// the summary and the host and device backtraces are not findings. The
// build directory's paths are cut to the file's name.
func parseSanitizer(c toolkit.Check, out string) *SanitizerReport {
	r := &SanitizerReport{Check: c}
	var text []string
	var cur *SanitizerFinding
	inTrace := false
	flush := func() {
		if cur != nil {
			r.Findings = append(r.Findings, *cur)
			cur = nil
		}
	}
	for line := range strings.Lines(out) {
		line = strings.TrimRight(line, "\r\n")
		rest, ok := strings.CutPrefix(line, sanitizerPrefix)
		if !ok {
			continue
		}
		body := strings.TrimSpace(rest)
		indented := strings.HasPrefix(rest, "  ")
		switch {
		case body == "":
			flush()
			inTrace = false
			text = append(text, line)
			continue
		case strings.HasPrefix(body, "Saved host backtrace") || strings.HasPrefix(body, "Device Frame") || strings.HasPrefix(body, "Host Frame"):
			inTrace = true
			continue
		case inTrace && indented:
			continue
		}
		inTrace = false
		text = append(text, shortenPaths(line))
		if m := sanSummaryRE.FindStringSubmatch(body); m != nil {
			flush()
			n := m[1]
			if n == "" {
				n = m[2]
			}
			r.Errors, _ = strconv.Atoi(n)
			continue
		}
		if !indented {
			flush()
			if body == "COMPUTE-SANITIZER" || strings.HasPrefix(body, "LEAK SUMMARY") || strings.HasPrefix(body, "Target application returned") {
				continue
			}
			cur = &SanitizerFinding{What: shortenPaths(body)}
			locate(cur, body)
			continue
		}
		if cur != nil {
			d := shortenPaths(body)
			cur.Details = append(cur.Details, d)
			locate(cur, body)
		}
	}
	flush()
	r.Text = strings.Join(text, "\n")
	return r
}

// locate fills in f's place and thread from a line of it, where not yet
// known: the first .cu file and line named, the first thread.
func locate(f *SanitizerFinding, line string) {
	if f.File == "" {
		if m := sanLocRE.FindStringSubmatch(line); m != nil {
			f.File = shortenPaths(m[1])
			f.Line, _ = strconv.Atoi(m[2])
		}
	}
	if !f.HasThread {
		if m := sanThreadRE.FindStringSubmatch(line); m != nil {
			n := make([]int, 6)
			for i := range n {
				n[i], _ = strconv.Atoi(m[i+1])
			}
			f.Thread, f.Block, f.HasThread = Dim3{n[0], n[1], n[2]}, Dim3{n[3], n[4], n[5]}, true
		}
	}
}

// pathRE matches a path to one of the generated program's files, whatever
// directory it was built in (up to a space in it: compile logs have the
// build directory cut whole first, cleanLog).
var pathRE = regexp.MustCompile(`(?:[^\s"'(:]*/)(kernel\.cu|coalesce_host\.cu)\b`)

// shortenPaths cuts the directories off the program's file names, so that
// a message says kernel.cu:3 wherever the kernel was built.
func shortenPaths(s string) string { return pathRE.ReplaceAllString(s, "$1") }
