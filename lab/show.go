package lab

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"html"
	"os"
	"path/filepath"
	"time"

	"github.com/janpfeifer/gonb/gonbui"
	"github.com/janpfeifer/gonb/gonbui/protocol"
	"gonum.org/v1/plot"

	"github.com/coalescing-course/coalesce/internal/attempt"
	"github.com/coalescing-course/coalesce/internal/progress"
	"github.com/coalescing-course/coalesce/lessons/plots"
	"github.com/coalescing-course/coalesce/lessons/sectors"
	"github.com/coalescing-course/coalesce/lessons/spec"
)

// This file is where the course meets the notebook: every picture, table
// and verdict goes to GoNB from here, and nowhere else.

// inNotebook reports whether the program runs in a GoNB cell; tests set it.
var inNotebook = gonbui.IsNotebook

// flush waits until GoNB has what was displayed, so that it lands in this
// cell's output and not the next one's.
func flush() {
	if inNotebook {
		gonbui.Sync()
	}
}

// showHTML displays an HTML fragment, with text as the plain-text
// alternative that text exports and headless checks read; outside a
// notebook it prints the text.
func showHTML(htmlText, text string) {
	if !inNotebook {
		fmt.Fprint(stdout(), text)
		return
	}
	gonbui.SendData(&protocol.DisplayData{Data: map[protocol.MIMEType]any{
		protocol.MIMETextHTML:  htmlText,
		protocol.MIMETextPlain: text,
	}})
	gonbui.Sync()
}

// showAttempt is showHTML with a Check's attempt record (JSON) in the
// same output, under attempt.MIMEType, for the saved notebook to keep: a
// front end shows the HTML and ignores the type it does not know.
func showAttempt(htmlText, text, record string) {
	if !inNotebook {
		fmt.Fprint(stdout(), text)
		return
	}
	gonbui.SendData(&protocol.DisplayData{Data: map[protocol.MIMEType]any{
		protocol.MIMETextHTML:  htmlText,
		protocol.MIMETextPlain: text,
		attempt.MIMEType:       record,
	}})
	gonbui.Sync()
}

// statusLine returns a status line for a slow step of this cell (the
// harness's first build, a sweep): in a notebook an output GoNB updates in
// place while it runs and clears at the end, elsewhere a line on stderr
// for each new status.
func statusLine() *progress.Line {
	if !inNotebook {
		return progress.New(progress.Lines(stderr()), 0)
	}
	id := "coalesce-progress-" + gonbui.UniqueID()
	return progress.New(func(text string, final bool) {
		if final {
			gonbui.UpdateHTML(id, "")
			return
		}
		gonbui.UpdateHTML(id, `<div class="coalesce-progress" style="color:#555">`+html.EscapeString(text)+`</div>`)
	}, time.Second)
}

// showPNG displays a picture; outside a notebook it says there is none.
func showPNG(size plots.Size, ps ...*plot.Plot) {
	if !inNotebook {
		fmt.Fprintln(stdout(), "(not in a notebook: no picture; plots.Save writes one to a file)")
		return
	}
	png, err := plots.PNG(size, ps...)
	Must(0, err)
	gonbui.DisplayPng(png)
	gonbui.Sync()
	Must(0, gonbui.Error())
}

// Show displays charts of lessons/plots side by side in the cell, at the
// notebook's size (plots.Notebook, widened for several). A chart that
// cannot be drawn ends the cell with the error.
func Show(ps ...*plot.Plot) { showPNG(plots.Notebook.Row(len(ps)), ps...) }

// ShowWarp draws a warp built by hand (Lanes) as the course's warp
// diagram: its lanes, the addresses they access, and the sectors and lines
// those fall in, coloured by the bytes used.
func ShowWarp(w sectors.Warp, title string) {
	showPNG(plots.Diagram, Must(plots.WarpDiagram(w, title)))
}

// ShowInstruction draws instruction instr of warp w of the launch s
// (plots.InstructionDiagram): instr counts from 0, so for a copy
// instruction 0 is the load and 1 the store; the picture's title counts
// from 1 ("instruction 2 of 2: store out[t]").
func ShowInstruction(s spec.Spec, w int64, instr int) {
	showPNG(plots.Diagram, Must(plots.InstructionDiagram(s, w, instr)))
}

// ShowBanks draws shared-memory instruction instr of warp w of the
// tiled transpose s as its banks see it (plots.BankDiagram): the tile in
// rows of 32 words, one a bank, the words the lanes access, and the
// busiest bank's count, the access's wavefronts. instr counts from 0, as
// in ShowInstruction.
func ShowBanks(s spec.Spec, w int64, instr int) {
	showPNG(plots.Banks, Must(plots.BankDiagram(s, w, instr)))
}

// WithIndices returns the gather s reading the indices idx instead of its
// index_pattern: idx is written as an index file (little-endian int32) in
// the temporary directory, named by its content, so that writing the same
// indices twice reuses the file. n becomes len(idx); every index must lie
// in 0..n-1.
func WithIndices(s spec.Spec, idx []int32) (spec.Spec, error) {
	if !spec.Takes(s.Kernel, spec.FieldIndexFile) {
		return spec.Spec{}, fmt.Errorf("lab: WithIndices wants a kernel that reads an index array (gather_copy), not %s", s.Kernel)
	}
	h := sha256.New()
	if err := binary.Write(h, binary.LittleEndian, idx); err != nil {
		return spec.Spec{}, fmt.Errorf("lab: %w", err)
	}
	path := filepath.Join(os.TempDir(), "coalesce-idx-"+hex.EncodeToString(h.Sum(nil))[:16]+".bin")
	if err := spec.WriteIndexFile(path, idx); err != nil {
		return spec.Spec{}, fmt.Errorf("lab: %w", err)
	}
	s.N, s.IndexFile, s.IndexPattern, s.Seed = int64(len(idx)), path, "", 0
	if err := s.Validate(); err != nil {
		return spec.Spec{}, fmt.Errorf("lab: %w", err)
	}
	if _, err := s.Indices(); err != nil {
		return spec.Spec{}, fmt.Errorf("lab: %w", err)
	}
	return s, nil
}
