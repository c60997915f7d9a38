package plots

import (
	"errors"

	"github.com/janpfeifer/gonb/gonbui"
	"gonum.org/v1/plot"

	"github.com/coalescing-course/coalesce/lessons/spec"
)

// ErrNotNotebook is returned by Show and its kin when the program is not
// running in a GoNB notebook cell: they draw nothing then, and never
// block. Save writes the same pictures to files anywhere.
var ErrNotNotebook = errors.New("plots: not running under GoNB: nothing displayed (use Save or PNG to write the picture)")

// Show displays the plots side by side in the notebook cell's output, as
// a PNG at the Notebook size (widened by Size.Row for several plots), and
// waits until GoNB has taken it. Outside GoNB (gonbui.IsNotebook false) it
// renders nothing and returns ErrNotNotebook.
func Show(ps ...*plot.Plot) error {
	return ShowSized(Notebook.Row(len(ps)), ps...)
}

// ShowSized is Show at the given size.
func ShowSized(size Size, ps ...*plot.Plot) error {
	if !gonbui.IsNotebook {
		return ErrNotNotebook
	}
	png, err := PNG(size, ps...)
	if err != nil {
		return err
	}
	return display(png)
}

// ShowWarp displays the warp diagram of instruction instr of warp w of the
// launch s (InstructionDiagram) at the Diagram size. Outside GoNB it
// returns ErrNotNotebook, having drawn nothing.
func ShowWarp(s spec.Spec, w int64, instr int) error {
	if !gonbui.IsNotebook {
		return ErrNotNotebook
	}
	p, err := InstructionDiagram(s, w, instr)
	if err != nil {
		return err
	}
	return ShowSized(Diagram, p)
}

// display sends a PNG to GoNB and flushes it to the front end.
func display(png []byte) error {
	gonbui.DisplayPng(png)
	gonbui.Sync()
	if err := gonbui.Error(); err != nil {
		return wrap(err)
	}
	return nil
}
