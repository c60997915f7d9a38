package lab

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"gonum.org/v1/plot"

	"github.com/coalescing-course/coalesce/lessons/plots"
	"github.com/coalescing-course/coalesce/lessons/sectors"
	"github.com/coalescing-course/coalesce/lessons/spec"
)

// shown reports what a Show function of the plots package did: nothing
// to say when it displayed the picture, a note outside a notebook, the end
// of the cell on any other error.
func shown(err error) {
	if errors.Is(err, plots.ErrNotNotebook) {
		fmt.Fprintln(Output, "(not in a notebook: no picture; plots.Save writes one to a file)")
		return
	}
	Must(0, err)
}

// Show displays charts side by side in the cell (plots.Show). A chart
// that cannot be drawn ends the cell with the error.
func Show(ps ...*plot.Plot) { shown(plots.Show(ps...)) }

// ShowWarp draws a warp built by hand (Lanes) as the course's warp
// diagram: its lanes, the addresses they access, and the sectors and lines
// those fall in, coloured by the bytes used.
func ShowWarp(w sectors.Warp, title string) {
	p, err := plots.WarpDiagram(w, title)
	if err != nil {
		Must(0, err)
		return
	}
	shown(plots.ShowSized(plots.Diagram, p))
}

// ShowInstruction draws instruction instr of warp w of the launch s
// (plots.ShowWarp): for a copy, instruction 0 is the load and 1 the store.
func ShowInstruction(s spec.Spec, w int64, instr int) {
	shown(plots.ShowWarp(s, w, instr))
}

// WithIndices returns the gather s reading the indices idx instead of its
// index_pattern: idx is written as an index file (little-endian int32) in
// the temporary directory, named by its content, so that writing the same
// indices twice reuses the file. n becomes len(idx); every index must lie
// in 0..n-1.
func WithIndices(s spec.Spec, idx []int32) (spec.Spec, error) {
	if s.Kernel != spec.GatherCopy {
		return spec.Spec{}, fmt.Errorf("lab: WithIndices wants a gather_copy spec, not %s", s.Kernel)
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
