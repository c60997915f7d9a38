package simt

import (
	"fmt"
	"math/bits"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/coalescing-course/coalesce/units"
)

// Site is one Load or Store call in the kernel's source, and what the warp
// instructions it issued cost: ncu's source view, for a kernel in Go.
type Site struct {
	// File and Line are where the call is (the file's base name).
	File string
	// Where names the call for a reader: "kernel.go:12", or in a
	// notebook, where File is GoNB's main.go, the line within the
	// function the call is in, its func line being line 1: "MyKernel
	// line 5" (see place). The Access of the site's traced instructions
	// is the same text.
	Where string
	// Code is the text of that line, trimmed, when the source file can be
	// read where the kernel runs ("" otherwise): in a notebook, where the
	// file is GoNB's and its line numbers are not the cell's, it is what
	// says which access the site is.
	Code string
	Line int
	// Buffer names what it accesses: a Global, a Field or As view of one
	// (by its allocation's name), or a Shared.
	Buffer string
	Store  bool
	Shared bool
	// Size is the bytes each lane moves.
	Size int
	// Instructions counts its warp instructions: the requests of a global
	// access, the shared instructions of a shared one.
	Instructions int64
	// Sectors sums the sectors its global requests touch; Wavefronts the
	// bank rule's wavefronts of its shared instructions.
	Sectors, Wavefronts int64
	// Lanes sums the active lanes of its instructions.
	Lanes int64
	// Partial counts its instructions with fewer lanes active than their
	// warp has: divergence, a bounds check that fails for some lanes, or
	// lanes that ran the site more often than others. FirstPartial is the
	// first of them.
	Partial      int64
	FirstPartial *Partial
}

// Partial is a warp instruction some of whose lanes sat out.
type Partial struct {
	// Block is the block, Warp the warp's number in it.
	Block Dim
	Warp  int
	// Active has bit l set for each lane that took part, Present for each
	// lane the warp has (all 32 unless the block's threads end mid-warp).
	Active, Present uint32
}

// PerRequest returns the sectors (global) or wavefronts (shared) of the
// site's average instruction.
func (s Site) PerRequest() float64 {
	if s.Instructions == 0 {
		return 0
	}
	if s.Shared {
		return float64(s.Wavefronts) / float64(s.Instructions)
	}
	return float64(s.Sectors) / float64(s.Instructions)
}

// String is one line of a source view: "kernel.go:12 in.Load (4 B):
// 32,768 requests, 4 sectors/request".
func (s Site) String() string {
	verb, unit, per := "Load", "requests", "sectors/request"
	if s.Store {
		verb = "Store"
	}
	if s.Shared {
		unit, per = "shared instructions", "wavefronts/instruction"
	}
	out := fmt.Sprintf("%s %s.%s (%d B): %s %s, %s %s", s.Where, s.Buffer, verb, s.Size, units.Count.Format(float64(s.Instructions)), unit, units.Ratio.Format(s.PerRequest()), per)
	if s.Partial > 0 {
		out += fmt.Sprintf(", %s with lanes inactive (first: warp %d of block %s, %d of %d lanes)",
			units.Count.Format(float64(s.Partial)), s.FirstPartial.Warp, s.FirstPartial.Block, bits.OnesCount32(s.FirstPartial.Active), bits.OnesCount32(s.FirstPartial.Present))
	}
	return out
}

// siteKey tells sites apart: a call, and the allocation it reached.
type siteKey struct {
	pc    uintptr
	buf   int32
	flags uint8
}

type siteCount struct {
	key  siteKey
	r    *run
	site Site
}

// count adds an instruction issued by the lanes in mask at a's site, which
// cost n sectors or wavefronts.
func (r *run) count(a *access, mask uint32, n int) {
	key := siteKey{a.pc, int32(a.buf), a.flags}
	s := r.siteOf[key]
	if s == nil {
		s = &siteCount{key: key, r: r, site: Site{Store: a.flags&isStore != 0, Shared: a.flags&isShared != 0, Size: int(a.size)}}
		r.siteOf[key] = s
		r.sites = append(r.sites, s)
	}
	c := &s.site
	c.Instructions++
	c.Lanes += int64(bits.OnesCount32(mask))
	if c.Shared {
		c.Wavefronts += int64(n)
	} else {
		c.Sectors += int64(n)
	}
	if mask != r.present {
		c.Partial++
		if c.FirstPartial == nil {
			c.FirstPartial = &Partial{Block: r.block0, Warp: r.warp, Active: mask, Present: r.present}
		}
	}
}

// named returns the site with its source position and buffer filled in.
func (s *siteCount) named() Site {
	out := s.site
	var path string
	path, out.Line = fullPosition(s.key.pc)
	out.File, out.Code = base(path), sourceLine(path, out.Line)
	out.Where = where(s.key.pc)
	if out.Shared {
		out.Buffer = s.r.shareds[s.key.buf].name
	} else {
		out.Buffer = s.r.globals[s.key.buf].name
	}
	return out
}

// position returns the file (base name) and line of the call that returns
// to pc.
func position(pc uintptr) (string, int) {
	path, line := fullPosition(pc)
	return base(path), line
}

// fullPosition is position with the file's whole path.
func fullPosition(pc uintptr) (string, int) {
	f, _ := runtime.CallersFrames([]uintptr{pc}).Next()
	return f.File, f.Line
}

// maxSourceBytes bounds the file sourceLine reads: a kernel's source, not
// whatever a path may name.
const maxSourceBytes = 4 << 20

// sourceLine returns line n (from 1) of the file at path, trimmed, or ""
// when it cannot be read.
func sourceLine(path string, n int) string {
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > maxSourceBytes || n < 1 {
		return ""
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	lines := strings.Split(string(data), "\n")
	if n > len(lines) {
		return ""
	}
	return strings.TrimSpace(lines[n-1])
}

// where is place for the call that returns to pc.
func where(pc uintptr) string {
	f, _ := runtime.CallersFrames([]uintptr{pc}).Next()
	return place(f, os.Getenv(NotebookDirEnv))
}

// NotebookDirEnv names the environment variable in which GoNB, the
// notebooks' Go kernel, gives a cell's program the directory of the Go
// file it made of the notebook's cells (main.go).
const NotebookDirEnv = "GONB_TMP_DIR"

// place names the position of the frame f in a kernel's source for a
// reader: "file:line" (the file's base name), which an editor finds; but
// for a file of GoNB's (one in dir, its $GONB_TMP_DIR) the line within
// the function the position is in, counted from its func line as line 1:
// "MyKernel line 5". GoNB writes a notebook's cells into one main.go,
// declarations sorted by name, so main.go's line numbers are none the
// learner sees, and its map from them back to the cells stays in the
// kernel (which rewrites only the program's stderr with it): nothing a
// program can read says which cell a line came from. A function's text,
// though, is its cell's, line for line, so its own lines are the
// learner's. Every site, race, fault and traced instruction of simt
// names its position this way.
func place(f runtime.Frame, dir string) string {
	if dir != "" && filepath.Dir(f.File) == filepath.Clean(dir) && f.Func != nil {
		if _, first := f.Func.FileLine(f.Entry); first > 0 && first <= f.Line {
			return fmt.Sprintf("%s line %d", funcName(f.Function), f.Line-first+1)
		}
	}
	return fmt.Sprintf("%s:%d", base(f.File), f.Line)
}

// funcName is a function's name without its package path: "MyKernel",
// "MyKernel.func1" for a function literal inside it.
func funcName(full string) string {
	if i := strings.LastIndexByte(full, '/'); i >= 0 {
		full = full[i+1:]
	}
	if _, name, ok := strings.Cut(full, "."); ok {
		return name
	}
	return full
}

func base(file string) string { return filepath.Base(file) }
