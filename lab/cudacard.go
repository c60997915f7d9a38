package lab

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/coalescing-course/coalesce/cuda/toolkit"
	"github.com/coalescing-course/coalesce/cuda/twin"
	"github.com/coalescing-course/coalesce/lessons/exercises"
	"github.com/coalescing-course/coalesce/lessons/metrics"
	"github.com/coalescing-course/coalesce/lessons/simt"
	"github.com/coalescing-course/coalesce/units"
)

// This file is TryCUDA's card: the CUDA body's targets judged on the
// GPU, and the per-line table beside the Go twin (package twin).

// CUDATarget is one counter target of the CUDA body, judged on the GPU.
type CUDATarget struct {
	Metric string
	Want   float64
	// GPU is ncu's count: its hardware counter, except for the bank
	// conflicts, which are taken from its source counters (each shared
	// instruction's wavefronts less its ideal ones: the bank rule of its
	// addresses), since the hardware's counter grows past the rule on
	// large launches (simt's doc).
	GPU float64
	// Pass says the target is met: by the GPU's count, or, where the
	// compiler regrouped the instructions of some lines (OnModel), by the
	// Go twin's model count for those lines.
	Pass    bool
	OnModel bool
	Why     string
}

// RegroupAllowance bounds what the GPU's count may exceed a target by and
// still be judged on the model: a fraction of the target, and at least
// one. Regrouping by nvcc costs a few sectors in a launch (an unrolled
// grid-stride loop: +4 in 15,727, the warps whose lanes run different
// trip counts); every wrong solution of an exercise misses its target by
// a quarter or more.
const RegroupAllowance = 0.01

// judgeCUDA judges each of e's targets on the GPU's run r, with the Go
// twin's outcome model (nil: none) and the per-line table tb.
func judgeCUDA(e *exercises.Exercise, r *CUDAResult, tb twin.Table) []CUDATarget {
	var out []CUDATarget
	for _, m := range e.Metrics {
		t := CUDATarget{Metric: m}
		var mt *exercises.Target
		if r.Model != nil {
			if i := slices.IndexFunc(r.Model.Targets, func(x exercises.Target) bool { return x.Metric == m }); i >= 0 {
				mt = &r.Model.Targets[i]
			}
		}
		if mt != nil {
			t.Want = mt.Want
		} else if w, ok := targetOf(e, r); ok {
			t.Want = w[m]
		}
		v, ok := gpuValue(m, r)
		if !ok {
			t.Why = "ncu gave no count"
			out = append(out, t)
			continue
		}
		t.GPU = v
		t.Pass = v <= t.Want
		if !t.Pass {
			t.Pass, t.OnModel, t.Why = onModel(m, t, mt, r, tb)
		}
		out = append(out, t)
	}
	return out
}

// targetOf returns the variant's targets when no Go twin was run: those
// of the exercise's starter (the targets do not depend on the kernel).
func targetOf(e *exercises.Exercise, r *CUDAResult) (map[string]float64, bool) {
	out, err := e.Run(e.Variant(Learner()), e.Starter)
	if err != nil || out == nil {
		return nil, false
	}
	w := map[string]float64{}
	for _, t := range out.Targets {
		w[t.Metric] = t.Want
	}
	return w, true
}

// gpuValue is the GPU's count of metric m.
func gpuValue(m string, r *CUDAResult) (float64, bool) {
	if m == metrics.ShLdBankConflicts || m == metrics.ShStBankConflicts {
		if r.Run.Lines == nil {
			v, ok := r.Run.Counters[m]
			return v, ok
		}
		op := "Load"
		if m == metrics.ShStBankConflicts {
			op = "Store"
		}
		var n int64
		for _, l := range r.Run.Lines {
			for _, s := range l.SASS {
				if s.Space == "Shared" && s.Op == op {
					n += s.Wavefronts - s.WavefrontsIdeal
				}
			}
		}
		return float64(n), true
	}
	v, ok := r.Run.Counters[m]
	return v, ok
}

// onModel judges a target the GPU's count missed: met on the model when
// the Go twin is right and meets it, every line that differs from the
// twin in the target's kind differs only by a transformation the SASS
// shows, and the GPU's excess is within RegroupAllowance.
func onModel(m string, t CUDATarget, mt *exercises.Target, r *CUDAResult, tb twin.Table) (bool, bool, string) {
	allow := math.Max(1, math.Ceil(RegroupAllowance*t.Want))
	// The excess beside the allowance, with the digits that tell them apart.
	over, most := units.Apart(units.Count, t.GPU-t.Want, allow)
	if t.GPU-t.Want > allow {
		return false, false, fmt.Sprintf("over by %s, more than the compiler's regrouping explains (at most %s)", over, most)
	}
	if r.Model == nil {
		// No twin: the allowance holds where the SASS shows an unrolled
		// loop, the one regrouping that adds sectors.
		for _, row := range tb.Rows {
			if slices.Contains(row.Reasons, twin.Unrolled) && kindHas(m, row) {
				return true, true, fmt.Sprintf("the GPU is over by %s, within the allowance for nvcc's unrolled loop at line %d (at most %s; pass your Go twin to see it line by line)", over, row.Line, most)
			}
		}
		return false, false, "over by " + over + ", and no line of the body shows a loop nvcc regrouped"
	}
	if !r.Model.Correct || mt == nil || !mt.Pass {
		return false, false, "over by " + over + ", and the Go twin does not meet it either"
	}
	var lines []string
	for _, row := range tb.Rows {
		if !row.Differs || !kindDiffers(m, row) {
			continue
		}
		if !row.Explained() {
			return false, false, fmt.Sprintf("over by %s; line %d differs from the Go twin for no reason the SASS shows", over, row.Line)
		}
		var rs []string
		for _, why := range row.Reasons {
			rs = append(rs, string(why))
		}
		lines = append(lines, fmt.Sprintf("%d (%s)", row.Line, strings.Join(rs, ", ")))
	}
	if len(lines) == 0 {
		return false, false, "over by " + over + ", and no line of the body differs from the Go twin"
	}
	return true, true, fmt.Sprintf("the GPU is over by %s at lines %s, which nvcc regrouped; the model of your Go twin meets it", over, strings.Join(lines, ", "))
}

// kindHas reports whether row's GPU side counts what metric m counts.
func kindHas(m string, row twin.Row) bool {
	switch m {
	case metrics.LdSectors, metrics.LdRequests:
		return row.GPU.Ld > 0
	case metrics.StSectors, metrics.StRequests:
		return row.GPU.St > 0
	}
	return false
}

// kindDiffers reports whether row's two sides differ in what metric m
// counts.
func kindDiffers(m string, row twin.Row) bool {
	g, md := row.GPU, row.Model
	switch m {
	case metrics.LdSectors:
		return g.LdSectors != md.LdSectors
	case metrics.StSectors:
		return g.StSectors != md.StSectors
	case metrics.LdRequests:
		return g.Ld != md.Ld
	case metrics.StRequests:
		return g.St != md.St
	case metrics.ShLdBankConflicts:
		return g.ShLdWaves != md.ShLdWaves
	case metrics.ShStBankConflicts:
		return g.ShStWaves != md.ShStWaves
	}
	return g != md
}

// cudaPass is the CUDA body's verdict: right output, every target met.
func cudaPass(r *CUDAResult) bool {
	if r.Wrong != nil || r.Run == nil {
		return false
	}
	for _, t := range r.Targets {
		if !t.Pass {
			return false
		}
	}
	return true
}

// lineTable builds the per-line table of body beside the Go twin's sites.
func lineTable(p exercises.Problem, body string, r *CUDAResult) twin.Table {
	var ptrs []string
	for _, a := range p.Args {
		if !a.Scalar() {
			ptrs = append(ptrs, a.Name)
		}
	}
	var sites []simt.Site
	if r.Model != nil && r.Model.Result != nil {
		sites = r.Model.Result.Sites
	}
	var gpu []toolkit.SourceLine
	if r.Run != nil {
		gpu = r.Run.Lines
	}
	return twin.Build(body, ptrs, gpu, sites)
}

// goLine names a Go site as the learner wrote it: the kernel's name and
// the line within its function (line 1 is the func line), as GoNB's
// generated main.go numbers nothing the learner sees.
func goLine(kernel any, s simt.Site) string { return lineName(kernel, s.File, s.Line) }

// lineName is goLine for a file and line: "MyTranspose line 7", or
// "file:line" when the line is not in the kernel's function.
func lineName(kernel any, file string, line int) string {
	name, first := funcStart(kernel)
	if name == "" || first == 0 || line < first {
		return fmt.Sprintf("%s:%d", file, line)
	}
	return fmt.Sprintf("%s line %d", name, line-first+1)
}

// funcStart returns the name of the kernel's function and the source line
// it starts on; "" for a kernel that is no plain function.
func funcStart(kernel any) (string, int) {
	if g, ok := kernel.(exercises.Gather); ok {
		kernel = g.Kernel
	}
	name, line := fullStart(kernel)
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		name = name[i+1:]
	}
	return name, line
}

// noGPUNote is the card of a TryCUDA without a GPU: one sentence.
func noGPUNote(why string) string {
	why = strings.TrimPrefix(strings.TrimSpace(why), "no GPU here: ")
	if why == "" {
		return "No GPU is used here, so your CUDA body was not compiled or run, and nothing of it is graded."
	}
	return "No GPU is used here (" + why + "), so your CUDA body was not compiled or run, and nothing of it is graded."
}

func tableText(tb twin.Table, kernel any) string {
	var b strings.Builder
	b.WriteString(tb.String())
	for _, r := range tb.Rows {
		for _, s := range r.Sites {
			fmt.Fprintf(&b, "  line %d ↔ %s: %s\n", r.Line, goLine(kernel, s), s.Code)
		}
	}
	return b.String()
}

func tableHTML(tb twin.Table, kernel any) string {
	var b strings.Builder
	b.WriteString(`<table class="coalesce-lines"><tr><th></th><th>line</th><th>your CUDA</th><th>GPU (ncu, per line)</th><th>model (your Go twin)</th><th>Go</th></tr>`)
	for _, r := range tb.Rows {
		mark, style := "", ""
		if r.Differs {
			mark, style = "≠", ` style="background:#fff4e0"`
			if !r.Explained() {
				mark, style = "✗", ` style="background:#fde8e8"`
			}
		}
		var goSites []string
		for _, s := range r.Sites {
			goSites = append(goSites, goLine(kernel, s))
		}
		fmt.Fprintf(&b, `<tr%s><td>%s</td><td>%d</td><td><code>%s</code></td><td>%s</td><td>%s</td><td>%s</td></tr>`,
			style, mark, r.Line, esc(r.Code), esc(r.GPU.Short()), esc(r.Model.Short()), esc(strings.Join(goSites, ", ")))
		if r.Differs {
			var why []string
			for _, x := range r.Reasons {
				why = append(why, string(x)+": "+x.Why())
			}
			if len(why) == 0 {
				why = append(why, "not a transformation the course knows: the CUDA line does not do what its Go twin does")
			}
			var sass []string
			for _, s := range r.SASS {
				sass = append(sass, fmt.Sprintf("%04x  %-40s ×%s, %d lanes", s.Offset, s.Text, units.Count.Format(float64(s.Executed)), s.Active))
			}
			fmt.Fprintf(&b, `<tr%s><td></td><td colspan="5">%s<pre style="font-size:85%%;margin:0.2em 0">%s</pre></td></tr>`,
				style, esc(strings.Join(why, "; ")), esc(strings.Join(sass, "\n")))
		}
	}
	for _, s := range tb.Unpaired {
		fmt.Fprintf(&b, `<tr><td>✗</td><td></td><td></td><td></td><td>%s</td><td>%s: no access of the CUDA body pairs with it</td></tr>`, esc(s.String()), esc(goLine(kernel, s)))
	}
	b.WriteString(`</table>`)
	return b.String()
}
