// Package exercises is a stand-in for lessons/exercises in the sandbox's
// tests: one exercise with the contract's Observe, so that the sandbox's
// limits are tested on a small, fast exercise whose report is a verdict
// (the real exercises report observations, which their parent judges). It lives under testdata
// so that go test ./... never builds it on its own; the sandbox's child
// imports it by its path (Config.GradePackage).
package exercises

import (
	"fmt"

	"github.com/coalescing-course/coalesce/lessons/metrics"
	"github.com/coalescing-course/coalesce/lessons/simt"
)

// Report is what Observe returns, as the child writes it in JSON.
type Report struct {
	ID        string  `json:"id"`
	Learner   string  `json:"learner"`
	Correct   bool    `json:"correct"`
	Pass      bool    `json:"pass"`
	Points    float64 `json:"points"`
	MaxPoints float64 `json:"max_points"`
	Message   string  `json:"error"`
}

// Copy is the kernel type of the one exercise, "10-kernels/strided-copy".
type Copy = func(t *simt.Thread, in, out *simt.Global[float32], n int)

// Observe runs kernel over a copy of 4096 floats: correct when out holds
// in, passed when the loads also take 4 sectors per request (coalesced).
// An order is refused: the stand-in has no gather.
func Observe(id, learner string, kernel, order any) (rep Report) {
	rep = Report{ID: id, Learner: learner, MaxPoints: 1}
	defer func() {
		if p := recover(); p != nil {
			rep.Correct, rep.Pass, rep.Points = false, false, 0
			rep.Message = fmt.Sprintf("the grading panicked: %v", p)
		}
	}()
	if order != nil {
		rep.Message = "the stand-in takes no order"
		return rep
	}
	if id != "10-kernels/strided-copy" {
		rep.Message = fmt.Sprintf("no exercise %q: the stand-in has 10-kernels/strided-copy", id)
		return rep
	}
	k, ok := kernel.(Copy)
	if !ok {
		rep.Message = fmt.Sprintf("the kernel is a %T; want func(t *simt.Thread, in, out *simt.Global[float32], n int)", kernel)
		return rep
	}
	const n = 4096
	src, dst := make([]float32, n), make([]float32, n)
	for i := range src {
		src[i] = float32(i) + 0.5
	}
	in, out := simt.NewGlobal("in", src), simt.NewGlobal("out", dst)
	r, err := simt.Launch{Grid: simt.Dim{X: n / 256}, Block: simt.Dim{X: 256}}.Run(func(t *simt.Thread) { k(t, in, out, n) })
	if err != nil {
		rep.Message = err.Error()
		return rep
	}
	for i := range dst {
		if dst[i] != src[i] {
			rep.Message = fmt.Sprintf("out[%d] is %g, want %g", i, dst[i], src[i])
			return rep
		}
	}
	rep.Correct = true
	m := r.Modelled.Metrics
	per := m[metrics.LdSectors] / m[metrics.LdRequests]
	if per != 4 {
		rep.Message = fmt.Sprintf("correct, but the loads take %g sectors per request; want 4", per)
		return rep
	}
	rep.Pass, rep.Points, rep.Message = true, 1, "correct and coalesced"
	return rep
}
