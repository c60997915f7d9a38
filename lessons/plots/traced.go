package plots

import (
	"errors"
	"fmt"

	"gonum.org/v1/plot"

	"github.com/coalescing-course/coalesce/lessons/simt"
)

// ErrShared is a traced instruction that accesses shared memory, which
// banks serve, not sectors: a warp diagram of sectors would mislead.
var ErrShared = errors.New("plots: a shared-memory instruction has no sectors to draw")

// TracedDiagram draws one warp instruction of a learner's kernel, as
// lessons/simt traced it (simt.Launch.Trace), the way InstructionDiagram
// draws one of the course's kernels: the lanes that ran it, their byte
// addresses from the start of the buffer, and the sectors they touch. A
// lane that sat the instruction out (divergence, a bounds check) has no
// address and no arrow. The title names the warp, the access site in the
// learner's source and the buffer.
func TracedDiagram(tr simt.Traced) (*plot.Plot, error) {
	in := tr.Instruction
	if in.Shared {
		return nil, fmt.Errorf("%w: %s at %s (see the launch's bank conflicts, Result.Sites)", ErrShared, in.Buffer, in.Access)
	}
	op := "load"
	if in.Store {
		op = "store"
	}
	title := fmt.Sprintf("warp %d: %s %s at %s", tr.Warp, op, in.Buffer, in.Access)
	return warpDiagram(Instruction{Op: op, Access: in.Access, Buffer: in.Buffer, Warp: in.Warp}, title)
}
