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
	out := fmt.Sprintf("%s:%d %s.%s (%d B): %s %s, %s %s", s.File, s.Line, s.Buffer, verb, s.Size, units.Count.Format(float64(s.Instructions)), unit, units.Ratio.Format(s.PerRequest()), per)
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

// where writes position(pc) as file:line.
func where(pc uintptr) string {
	file, line := position(pc)
	return fmt.Sprintf("%s:%d", file, line)
}

func base(file string) string { return filepath.Base(file) }
