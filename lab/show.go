package lab

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"

	"github.com/coalescing-course/coalesce/grader"
	"github.com/coalescing-course/coalesce/lessons/plots"
	"github.com/coalescing-course/coalesce/lessons/sectors"
	"github.com/coalescing-course/coalesce/lessons/spec"
)

// This file shows pictures: the charts of lessons/plots and the warp
// diagrams, through the gate (gate.go) like everything else.

// renderPNG renders plots side by side, ending the cell on an error.
func renderPNG(size plots.Size, ps ...*plot.Plot) []byte {
	if !inNotebook {
		return []byte{} // not drawn: emit says there is no picture
	}
	png, err := plots.PNG(size, ps...)
	Must(0, err)
	return png
}

// chartTell is what a chart's point shows.
func chartTell(p plots.Point) grader.Tell {
	j := grader.Model
	if p.Measured {
		j = grader.Measurement
	}
	return grader.Tell{Spec: p.Spec, Figure: p.Figure.Name, Judge: j, Value: p.Value, Counts: grader.CountsOf(p.Values)}
}

// Show displays charts of lessons/plots side by side in the cell, at the
// notebook's size (plots.Notebook, widened for several), without the
// points that would give away an answer the learner has not given yet: a
// line has a gap there, a measured point is not drawn, and a note under
// the charts says what to answer first. A chart that cannot be drawn ends
// the cell with the error.
func Show(charts ...*plots.Chart) {
	done := working(fmt.Sprintf("drawing %d %s", len(charts), map[bool]string{true: "chart", false: "charts"}[len(charts) == 1]))
	defer done()
	d := newDisplay()
	var ps []*plot.Plot
	for _, c := range charts {
		p, err := c.PlotWithout(func(pt plots.Point) bool { return !d.show(chartTell(pt)) })
		if errors.Is(err, plots.ErrAllHidden) {
			continue
		}
		Must(0, err)
		ps = append(ps, p)
	}
	if len(ps) == 0 {
		d.emit(output{text: "The chart waits for your prediction."})
		return
	}
	d.emit(output{text: chartsText(charts), png: renderPNG(plots.Notebook.Row(len(ps)), ps...)})
}

// chartsText is the text of charts: their titles.
func chartsText(charts []*plots.Chart) string {
	var b strings.Builder
	for _, c := range charts {
		b.WriteString("[chart] " + strings.ReplaceAll(c.Title(), "\n", " ") + "\n")
	}
	return b.String()
}

// ShowWarp draws a warp built by hand (Lanes) as the course's warp
// diagram: its lanes, the addresses they access, and the sectors and lines
// those fall in, coloured by the bytes used. A warp that is the warp of a
// question the learner has not answered waits until they have.
func ShowWarp(w sectors.Warp, title string) {
	d := newDisplay()
	a, err := sectors.Coalesce(w)
	Must(0, err)
	if !d.showAll(warpTells(w, a)) {
		d.emit(output{text: "The picture of this warp waits for your prediction."})
		return
	}
	p := Must(plots.WarpDiagram(w, title))
	d.emit(output{text: "[warp diagram] " + title + "\n", png: renderPNG(plots.Diagram, p)})
}

// ShowInstruction draws instruction instr of warp w of the launch s
// (plots.InstructionDiagram): instr counts from 0, so for a copy
// instruction 0 is the load and 1 the store; the picture's title counts
// from 1 ("instruction 2 of 2: store out[t]"). A picture that shows a
// question's answer waits until the learner has answered.
func ShowInstruction(s spec.Spec, w int64, instr int) {
	d := newDisplay()
	if !showInstruction(d, s, w, instr) {
		d.emit(output{text: "The picture of this warp waits for your prediction."})
	}
}

// showInstruction draws the instruction as one output of d, unless what
// it shows is withheld; it reports whether it drew.
func showInstruction(d *display, s spec.Spec, w int64, instr int) bool {
	done := working("drawing warp " + fmt.Sprint(w) + " of " + s.Brief())
	defer done()
	ins, err := sectors.Instructions(s, w)
	if err != nil || instr < 0 || instr >= len(ins) {
		_, err := plots.InstructionOf(s, w, instr) // says what there is
		Must(0, err)
	}
	if !d.showAll(grader.InstructionTells(s, ins[instr])) {
		return false
	}
	p := Must(plots.InstructionDiagram(s, w, instr))
	d.emit(output{text: "[warp diagram] " + strings.ReplaceAll(p.Title.Text, "\n", " ") + "\n", png: renderPNG(plots.Diagram, p)})
	return true
}

// ShowBanks draws shared-memory instruction instr of warp w of the
// tiled transpose s as its banks see it (plots.BankDiagram): the tile in
// rows of 32 words, one a bank, the words the lanes access, and the
// busiest bank's count, the access's wavefronts. instr counts from 0, as
// in ShowInstruction.
// Like every picture of a warp, it waits while its wavefronts answer a
// question the learner has not answered.
func ShowBanks(s spec.Spec, w int64, instr int) {
	d := newDisplay()
	p, err := plots.BankDiagram(s, w, instr) // says what there is
	if err != nil {
		fail(err)
		return
	}
	ins, err := sectors.Instructions(s, w)
	if err != nil {
		fail(err)
		return
	}
	if !d.showAll(grader.InstructionTells(s, ins[instr])) {
		d.emit(output{text: "The picture of these banks waits for your prediction."})
		return
	}
	d.emit(output{text: "[bank diagram] " + strings.ReplaceAll(p.Title.Text, "\n", " ") + "\n", png: renderPNG(plots.Banks, p)})
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
