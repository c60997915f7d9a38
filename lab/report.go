package lab

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/coalescing-course/coalesce/lessons/exercises"
	"github.com/coalescing-course/coalesce/lessons/metrics"
	"github.com/coalescing-course/coalesce/lessons/sectors"
	"github.com/coalescing-course/coalesce/lessons/simt"
	"github.com/coalescing-course/coalesce/units"
)

// This file is the report Try's child writes and its parent reads: what
// the kernel did (its Outcome, its fault's kinds kept for errors.Is), or
// where the watchdog stopped it; and the reading of a goroutine's stack,
// which says where a kernel was.

// childReport is the one JSON object a child writes.
type childReport struct {
	// Error is why the kernel could not be run at all (Run's error).
	Error   string         `json:"error,omitempty"`
	Outcome *outcomeReport `json:"outcome,omitempty"`
	Stopped *stoppedReport `json:"stopped,omitempty"`
}

// outcomeReport is an exercises.Outcome, its Fault's text with the kinds
// of error it wraps, and the part of simt's Result that Try shows.
type outcomeReport struct {
	Fault    *faultReport        `json:"fault,omitempty"`
	Correct  bool                `json:"correct"`
	Mismatch *exercises.Mismatch `json:"mismatch,omitempty"`
	Targets  []exercises.Target  `json:"targets"`
	Pass     bool                `json:"pass"`
	Result   *resultReport       `json:"result,omitempty"`
}

type faultReport struct {
	Kinds []string `json:"kinds"`
	Msg   string   `json:"msg"`
}

type resultReport struct {
	Metrics       metrics.Set   `json:"metrics"`
	Warps         int64         `json:"warps"`
	L1UsefulBytes int64         `json:"l1_useful_bytes"`
	Threads       int64         `json:"threads"`
	Sites         []simt.Site   `json:"sites"`
	Races         []simt.Race   `json:"races"`
	RaceCount     int64         `json:"race_count"`
	Split         int64         `json:"split"`
	Trace         []simt.Traced `json:"trace"`
	Buffers       []*simt.Use   `json:"buffers"`
}

// stoppedReport is the watchdog's: why, after how long and how many
// accesses (the last Idle ago), the memory the process had added, and
// the kernel's goroutine's frames, innermost first.
type stoppedReport struct {
	Why      string        `json:"why"`
	After    time.Duration `json:"after"`
	Idle     time.Duration `json:"idle"`
	Accesses int64         `json:"accesses"`
	Memory   int64         `json:"memory"`
	Frames   []frame       `json:"frames"`
}

// frame is one frame of a goroutine's stack.
type frame struct {
	Func string `json:"func"`
	File string `json:"file"`
	Line int    `json:"line"`
}

// faultKinds are the errors a fault may wrap that a caller branches on,
// by the name a report gives them.
var faultKinds = []struct {
	name string
	err  error
}{
	{"launch", simt.ErrLaunch}, {"access", simt.ErrAccess}, {"barrier", simt.ErrBarrier}, {"panic", simt.ErrPanic},
	{"escape", simt.ErrEscape}, {"runaway", simt.ErrRunaway}, {"uncounted", exercises.ErrUncounted},
}

// reportFault is a fault read back from a report: its text, and the
// kinds it wrapped (errors.Is).
type reportFault struct {
	msg   string
	kinds []error
}

func (f *reportFault) Error() string   { return f.msg }
func (f *reportFault) Unwrap() []error { return f.kinds }

// reportOf is the report of an Outcome.
func reportOf(o *exercises.Outcome) *outcomeReport {
	r := &outcomeReport{Correct: o.Correct, Mismatch: o.Mismatch, Targets: o.Targets, Pass: o.Pass}
	if o.Fault != nil {
		f := &faultReport{Msg: o.Fault.Error(), Kinds: []string{}}
		for _, k := range faultKinds {
			if errors.Is(o.Fault, k.err) {
				f.Kinds = append(f.Kinds, k.name)
			}
		}
		r.Fault = f
	}
	if res := o.Result; res != nil {
		r.Result = &resultReport{Metrics: res.Modelled.Metrics, Warps: res.Modelled.Warps, L1UsefulBytes: res.Modelled.L1UsefulBytes,
			Threads: res.Threads, Sites: res.Sites, Races: res.Races, RaceCount: res.RaceCount, Split: res.Split, Trace: res.Trace, Buffers: res.Buffers}
	}
	return r
}

// outcome fills out, the Outcome of the kernel's exercise and variant, from
// the report; peak is the child's peak memory.
func (rep *childReport) outcome(out *exercises.Outcome, kernel any, peak int64) (*exercises.Outcome, error) {
	switch {
	case rep.Error != "":
		return nil, errors.New(rep.Error)
	case rep.Stopped != nil:
		s := rep.Stopped.stopped(kernel)
		s.Peak = peak
		out.Fault = s
		return out, nil
	case rep.Outcome == nil:
		return nil, errors.New("lab: the kernel's process wrote an empty report")
	}
	o := rep.Outcome
	out.Correct, out.Mismatch, out.Targets, out.Pass = o.Correct, o.Mismatch, o.Targets, o.Pass
	if o.Fault != nil {
		f := &reportFault{msg: o.Fault.Msg}
		for _, name := range o.Fault.Kinds {
			for _, k := range faultKinds {
				if k.name == name {
					f.kinds = append(f.kinds, k.err)
				}
			}
		}
		out.Fault = f
	}
	if r := o.Result; r != nil {
		out.Result = &simt.Result{Modelled: sectors.Launch{Metrics: r.Metrics, Warps: r.Warps, L1UsefulBytes: r.L1UsefulBytes},
			Threads: r.Threads, Sites: r.Sites, Races: r.Races, RaceCount: r.RaceCount, Split: r.Split, Trace: r.Trace, Buffers: r.Buffers}
	}
	return out, nil
}

// stopped is what the watchdog's report says, in words.
func (s *stoppedReport) stopped(kernel any) *Stopped {
	at := where(kernel, s.Frames)
	switch s.Why {
	case "memory":
		return &Stopped{Why: "memory", At: at, Msg: fmt.Sprintf("The kernel's process took %s of memory in %s, near its %s (%s): an allocation that never ends, or a buffer too big?",
			units.BinaryBytes.Format(float64(s.Memory)), s.After.Round(10*time.Millisecond), units.BinaryBytes.Format(float64(memoryOf())), TryMemoryEnv)}
	}
	idle := ""
	if s.Idle >= time.Second {
		idle = fmt.Sprintf(", none in its last %s", s.Idle.Round(100*time.Millisecond))
	}
	return &Stopped{Why: "time", At: at, Msg: fmt.Sprintf("The kernel did not finish after %s and %d accesses%s: a loop that never ends? (Try gives a kernel %s: %s.)",
		s.After.Round(100*time.Millisecond), s.Accesses, idle, timeoutOf(), TryTimeoutEnv)}
}

// memoryOf and timeoutOf are the limits in force, for a message.
func memoryOf() int64 {
	l, _ := tryLimits(os.Getenv)
	return l.Memory
}

func timeoutOf() time.Duration {
	l, _ := tryLimits(os.Getenv)
	return l.Timeout
}

// parseTraceback reads the goroutines of a Go traceback (runtime.Stack's,
// or a fatal error's on standard error): for each "goroutine N [...]:"
// block, its frames, innermost first, up to 64. What is not a traceback
// is skipped.
func parseTraceback(text string) [][]frame {
	var out [][]frame
	var cur []frame
	in := false
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		switch {
		case strings.HasPrefix(line, "goroutine ") && strings.HasSuffix(strings.TrimSpace(line), ":"):
			if in {
				out = append(out, cur)
			}
			cur, in = nil, true
		case !in:
		case line == "" || strings.HasPrefix(line, "created by "):
			out = append(out, cur)
			cur, in = nil, false
		case !strings.HasPrefix(line, "\t") && i+1 < len(lines) && strings.HasPrefix(lines[i+1], "\t"):
			fn := line
			if j := strings.LastIndexByte(fn, '('); j > 0 {
				fn = fn[:j]
			}
			// "\t/path/file.go:12 +0x1d", with " fp=... sp=... pc=..." in a
			// fatal error's frames.
			loc := strings.TrimSpace(lines[i+1])
			if j := strings.IndexByte(loc, ' '); j > 0 {
				loc = loc[:j]
			}
			file, l := loc, 0
			if j := strings.LastIndexByte(loc, ':'); j > 0 {
				file = loc[:j]
				l, _ = strconv.Atoi(loc[j+1:])
			}
			if len(cur) < 64 {
				cur = append(cur, frame{Func: fn, File: file, Line: l})
			}
			i++
		}
	}
	if in {
		out = append(out, cur)
	}
	return out
}

// kernelFrames picks the kernel's goroutine from a traceback: the one
// in one of the kernel's funcs (a gather's Order runs on a goroutine of
// its own), else the one that runs a simt thread, else (a fatal error's
// single goroutine) the first that is not the watchdog's.
func kernelFrames(gs [][]frame, kernel any) []frame {
	var names []string
	for _, k := range kernelFuncs(kernel) {
		if name, _ := fullStart(k); name != "" {
			names = append(names, name)
		}
	}
	in := func(g []frame, match func(string) bool) bool {
		return slices.ContainsFunc(g, func(f frame) bool { return match(f.Func) })
	}
	for _, g := range gs {
		if in(g, func(fn string) bool {
			return slices.ContainsFunc(names, func(n string) bool { return fn == n || strings.HasPrefix(fn, n+".") })
		}) {
			return g
		}
	}
	for _, g := range gs {
		if in(g, func(fn string) bool { return strings.HasSuffix(fn, "lessons/simt.(*run).call") }) {
			return g
		}
	}
	for _, g := range gs {
		if !in(g, func(fn string) bool { return strings.HasSuffix(fn, "/lab.watch") }) {
			return g
		}
	}
	return nil
}

// where names the place in frames (innermost first) where the learner's
// code was: the innermost frame of package main (a notebook's cells) or
// of the kernel's funcs, else the innermost outside the runtime and the
// course, as "MyCopy line 4: <its code>" for a line of the kernel's
// function (or the gather's Order), "helper line 2: <its code>" for a
// function of the learner's whose func line its file holds, "name
// (file.go:12): <its code>" for another; "" when none.
func where(kernel any, frames []frame) string {
	var names []string
	for _, k := range kernelFuncs(kernel) {
		if name, _ := fullStart(k); name != "" {
			names = append(names, name)
		}
	}
	pick := -1
	for i, f := range frames {
		if strings.HasPrefix(f.Func, "main.") || slices.ContainsFunc(names, func(n string) bool { return f.Func == n || strings.HasPrefix(f.Func, n+".") }) {
			pick = i
			break
		}
	}
	if pick < 0 {
		for i, f := range frames {
			if !strings.HasPrefix(f.Func, "runtime.") && !strings.Contains(f.Func, "coalescing-course/coalesce/") && !strings.HasPrefix(f.Func, "iter.") {
				pick = i
				break
			}
		}
	}
	if pick < 0 {
		return ""
	}
	f := frames[pick]
	name := f.Func
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
	}
	if i := strings.IndexByte(name, '.'); i >= 0 {
		name = name[i+1:]
	}
	lines := sourceLines(f.File)
	at := fmt.Sprintf("%s (%s:%d)", name, filepath.Base(f.File), f.Line)
	if first := funcLine(lines, name, f.Line); first > 0 {
		// A helper of the learner's: its line within its own func, as
		// the cell shows it, not the generated file's.
		at = fmt.Sprintf("%s line %d", name, f.Line-first+1)
	}
	for _, k := range kernelFuncs(kernel) {
		full, first := fullStart(k)
		switch {
		case full != f.Func || first == 0:
			continue
		case f.Line < first:
			// An empty loop (for {}) keeps no line of its own.
			return name
		}
		at = fmt.Sprintf("%s line %d", name, f.Line-first+1)
	}
	if code := codeOf(lines, f.Line); code != "" {
		at += ": " + code
	}
	return at
}

// funcLine returns the line, counted from 1, of the func line of the
// function name (a plain function or a method, "(*T).m" or "T.m"), at or
// above line in lines; 0 when there is none, as for a closure, which has
// no func line of its own name.
func funcLine(lines []string, name string, line int) int {
	if strings.Contains(name, ".func") || line < 1 || line > len(lines) {
		return 0
	}
	name, _, _ = strings.Cut(name, "[") // a generic function's "[...]"
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		name = name[i+1:]
	}
	decl := regexp.MustCompile(`^func\s+(\([^)]*\)\s*)?` + regexp.QuoteMeta(name) + `\s*[\[(]`)
	for n := line; n >= 1; n-- {
		if decl.MatchString(lines[n-1]) {
			return n
		}
		if n < line && strings.HasPrefix(lines[n-1], "func ") {
			return 0 // another function's: the line is not in one of name
		}
	}
	return 0
}

// kernelFuncs returns the funcs of a kernel: itself, or a gather's Order
// and Kernel.
func kernelFuncs(kernel any) []any {
	switch g := kernel.(type) {
	case exercises.Gather:
		return []any{g.Order, g.Kernel}
	case *exercises.Gather:
		if g != nil {
			return []any{g.Order, g.Kernel}
		}
	}
	return []any{kernel}
}

// fullStart is funcStart with the function's full name.
func fullStart(fn any) (string, int) {
	v := reflect.ValueOf(fn)
	if !v.IsValid() || v.Kind() != reflect.Func || v.IsNil() {
		return "", 0
	}
	f := runtime.FuncForPC(v.Pointer())
	if f == nil {
		return "", 0
	}
	_, line := f.FileLine(f.Entry())
	return f.Name(), line
}

// sourceLines returns the lines of the source file at path, or nil when
// it is no regular file of at most 4 MiB.
func sourceLines(path string) []string {
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > 4<<20 {
		return nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	return strings.Split(string(data), "\n")
}

// codeOf is line n of lines (from 1), trimmed and cut at 120 bytes; ""
// when there is none.
func codeOf(lines []string, n int) string {
	if n < 1 || n > len(lines) {
		return ""
	}
	s := strings.TrimSpace(lines[n-1])
	if len(s) > 120 {
		s = s[:120] + "…"
	}
	return s
}
