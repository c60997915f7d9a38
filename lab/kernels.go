package lab

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"html"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/coalescing-course/coalesce/cuda"
	"github.com/coalescing-course/coalesce/cuda/toolkit"
	"github.com/coalescing-course/coalesce/cuda/twin"
	"github.com/coalescing-course/coalesce/cuda/usercuda"
	"github.com/coalescing-course/coalesce/grader"
	"github.com/coalescing-course/coalesce/lessons/exercises"
	"github.com/coalescing-course/coalesce/lessons/metrics"
	"github.com/coalescing-course/coalesce/lessons/plots"
	"github.com/coalescing-course/coalesce/lessons/sectors"
	"github.com/coalescing-course/coalesce/lessons/simt"
	"github.com/coalescing-course/coalesce/lessons/spec"
	"github.com/coalescing-course/coalesce/units"
)

// This file is the notebook face of the "fix this kernel" exercises
// (lessons/exercises): Try runs a learner's Go kernel through the model,
// TryCUDA the same kernel's CUDA body on this machine's GPU.

// LearnerEnv names the learner whose exercise variant a notebook shows;
// without it, JupyterHub's JUPYTERHUB_USER, the name of the folder an
// instructor collects the notebooks into (coalesce grade reads the same
// name there); without either, the exercises' default variant.
const LearnerEnv = "COALESCE_LEARNER"

// Learner returns who the notebook's learner is, for their variant.
func Learner() string {
	for _, k := range []string{LearnerEnv, "JUPYTERHUB_USER"} {
		if v := strings.TrimSpace(os.Getenv(k)); v != "" {
			return v
		}
	}
	return ""
}

// Gather is the answer to 10-kernels/gather: the host step that orders
// the keys, and the kernel.
type Gather = exercises.Gather

// Exercise shows kernel exercise id for this notebook's learner: the goal,
// their variant's parameters, the Go signature and the starter kernel.
func Exercise(id string) {
	e, v, err := variantOf(id)
	if err != nil {
		fail(err)
		return
	}
	var b, t strings.Builder
	fmt.Fprintf(&b, `<div class="coalesce-exercise"><h4 style="margin:0.2em 0">%s</h4><p>%s</p>`, esc(e.Title), esc(e.Goal))
	fmt.Fprintf(&t, "%s\n%s\n", e.Title, e.Goal)
	fmt.Fprintf(&b, `<p><b>Your variant</b> (%s): %s</p>`, esc(who(v.Learner)), esc(params(e, v)))
	fmt.Fprintf(&t, "Your variant (%s): %s\n", who(v.Learner), params(e, v))
	fmt.Fprintf(&b, `<p>Targets: %s.</p>`, esc(strings.Join(e.Metrics, ", ")))
	fmt.Fprintf(&b, `<pre style="font-size:90%%">%s</pre></div>`, esc(e.StarterGo))
	fmt.Fprintf(&t, "Targets: %s\n%s\n", strings.Join(e.Metrics, ", "), e.StarterGo)
	// The exercise's text and parameters are no value of a launch.
	newDisplay().emit(output{text: t.String(), html: b.String()})
}

// fail ends the cell with err, as Must does.
func fail(err error) { Must(0, err) }

func variantOf(id string) (*exercises.Exercise, exercises.Variant, error) {
	e, err := exercises.Lookup(id)
	if err != nil {
		return nil, exercises.Variant{}, err
	}
	return e, e.Variant(Learner()), nil
}

func who(learner string) string {
	if learner == "" {
		return "the default variant: set " + LearnerEnv + " for your own"
	}
	return "learner " + learner
}

func params(e *exercises.Exercise, v exercises.Variant) string {
	var ps []string
	for _, p := range e.Params {
		ps = append(ps, fmt.Sprintf("%s = %d", p.Name, v.Params[p.Name]))
	}
	return strings.Join(ps, ", ")
}

// Try runs kernel, the learner's Go kernel for exercise id, on their
// variant through the model (lessons/simt), and shows whether its output
// is right, each counter target with the model's count, what every access
// site of the kernel costs, and a picture of the access behind the first
// target missed: a shared access by its banks (a bank-conflict or
// wavefront target), a global one by its sectors; with every target met,
// the costliest global access. It returns the outcome; a kernel of the
// wrong type ends the cell with the signature wanted.
//
// The kernel runs in a process of its own, under TryLimits (see "Learner
// kernels, bounded" in the package documentation): one that does not
// finish, takes too much memory or recurses without end is stopped
// within seconds, and its Outcome's Fault (a *Stopped) says what happened
// and where the kernel was.
func Try(id string, kernel any) *exercises.Outcome {
	e, v, err := variantOf(id)
	if err != nil {
		fail(err)
		return nil
	}
	out, err := runKernel(e, v, kernel)
	if err != nil {
		fail(err)
		return nil
	}
	// A learner's own kernel is no launch a question asks about; the
	// picture of its warp is told like any warp's.
	newDisplay().emit(output{text: outcomeText(e, out, kernel), html: outcomeHTML(e, out, kernel)})
	if tr := diagramOf(out); tr != nil {
		showTraced(*tr)
	}
	return out
}

// showTraced draws one traced instruction of a learner's kernel as an
// output of its own, through the gate like any picture of a warp: a
// global access by its sectors (plots.TracedDiagram), a shared one by its
// banks (plots.TracedBankDiagram). One the model cannot draw says why.
func showTraced(tr simt.Traced) {
	in := tr.Instruction
	draw, size, kind := plots.TracedDiagram, plots.Diagram, "warp diagram"
	if in.Shared {
		draw, size, kind = plots.TracedBankDiagram, plots.Banks, "bank diagram"
	}
	p, err := draw(tr)
	if err != nil {
		// The access's name and the model's limit: no value of it.
		printf("No picture of this access: %v\n", err)
		return
	}
	d := newDisplay()
	if !d.showAll(grader.InstructionTells(spec.Spec{}, in)) {
		d.emit(output{text: "The picture of this warp waits for your prediction."})
		return
	}
	d.emit(output{text: "[" + kind + "] " + strings.ReplaceAll(p.Title.Text, "\n", " ") + "\n", png: renderPNG(size, p)})
}

func outcomeText(e *exercises.Exercise, out *exercises.Outcome, kernel any) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s, %s (%s): %s\n", e.ID, out.Variant, who(out.Variant.Learner), verdictWord(out))
	switch {
	case out.Fault != nil:
		fmt.Fprintf(&b, "The kernel stopped: %s\n", faultText(out.Fault))
	case !out.Correct:
		fmt.Fprintf(&b, "Wrong output: %s\n", out.Mismatch)
	default:
		b.WriteString("Output: right.\n")
	}
	if why := raceNote(out, kernel); why != "" {
		b.WriteString(why + "\n")
	}
	if len(out.Targets) == 0 {
		b.WriteString("Targets: not judged, the kernel did not finish.\n")
	}
	for _, t := range out.Targets {
		got, want := units.Apart(units.Count, t.Got, t.Want)
		fmt.Fprintf(&b, "%s %s: %s (target at most %s)", mark(t.Pass), t.Metric, got, want)
		if t.Why != "" {
			fmt.Fprintf(&b, " — %s", t.Why)
		}
		b.WriteByte('\n')
	}
	if out.Result != nil {
		b.WriteString(sitesText(out.Result, kernel))
	}
	return b.String()
}

func outcomeHTML(e *exercises.Exercise, out *exercises.Outcome, kernel any) string {
	var b strings.Builder
	color := "#b00"
	if out.Pass {
		color = "#070"
	}
	fmt.Fprintf(&b, `<div class="coalesce-try" style="border-left:4px solid %s;padding-left:0.6em">`, color)
	fmt.Fprintf(&b, `<p style="margin:0.2em 0"><b style="color:%s">%s</b> — %s, %s (%s)</p>`, color, esc(verdictWord(out)), esc(e.ID), esc(out.Variant.String()), esc(who(out.Variant.Learner)))
	switch {
	case out.Fault != nil:
		fmt.Fprintf(&b, `<p style="margin:0.2em 0">The kernel stopped: %s</p>`, esc(faultText(out.Fault)))
	case !out.Correct:
		fmt.Fprintf(&b, `<p style="margin:0.2em 0">Wrong output: %s</p>`, esc(out.Mismatch.String()))
	default:
		b.WriteString(`<p style="margin:0.2em 0">Output: right.</p>`)
	}
	if why := raceNote(out, kernel); why != "" {
		fmt.Fprintf(&b, `<p style="margin:0.2em 0;color:#b00">%s</p>`, esc(why))
	}
	if len(out.Targets) == 0 {
		b.WriteString(`<p style="margin:0.2em 0">Targets: not judged, the kernel did not finish.</p>`)
	} else {
		b.WriteString(`<table><tr><th></th><th>metric (Nsight Compute)</th><th>model</th><th>target, at most</th><th>why</th></tr>`)
		for _, t := range out.Targets {
			got, want := units.Apart(units.Count, t.Got, t.Want)
			fmt.Fprintf(&b, `<tr><td>%s</td><td><code>%s</code></td><td>%s</td><td>%s</td><td>%s</td></tr>`,
				mark(t.Pass), esc(t.Metric), got, want, esc(t.Why))
		}
		b.WriteString(`</table>`)
	}
	if out.Result != nil {
		fmt.Fprintf(&b, `<pre style="font-size:90%%">%s</pre>`, esc(sitesText(out.Result, kernel)))
	}
	b.WriteString(`</div>`)
	return b.String()
}

// raceNote says what simt saw when threads of a block raced on shared
// memory: a read of a word another thread writes with no Sync between is
// why an output is wrong, which the mismatch alone does not say.
func raceNote(out *exercises.Outcome, kernel any) string {
	if out.Result == nil || out.Result.RaceCount == 0 {
		return ""
	}
	r := out.Result.Races[0]
	what := "a t.Sync() is missing between the two accesses"
	if r.Kind == "read after write" || r.Kind == "write after read" {
		what = "one thread reads a word another writes with no t.Sync() between: put t.Sync() after the writes and before the reads"
	}
	return fmt.Sprintf("simt saw %d data races on shared memory (%s): the first, %s, on %s[%d] in block %s, threads %s and %s, at %s",
		out.Result.RaceCount, what, r.Kind, r.Shared, r.Index, r.Block, r.First, r.Second, lineName(kernel, r.File, r.Line))
}

func verdictWord(out *exercises.Outcome) string {
	switch {
	case out.Pass:
		return "passed"
	case errors.Is(out.Fault, ErrStopped):
		return "stopped"
	case out.Fault != nil:
		return "faulted"
	case !out.Correct:
		return "wrong output"
	}
	return "right output, target missed"
}

// faultText is a fault in words: a *Stopped's sentence and where the
// kernel was, any other error's text.
func faultText(err error) string {
	var s *Stopped
	if errors.As(err, &s) {
		if s.At != "" {
			return s.Msg + " It was at " + s.At + "."
		}
		return s.Msg
	}
	return err.Error()
}

func mark(ok bool) string {
	if ok {
		return "✓"
	}
	return "✗"
}

var esc = html.EscapeString

// sitesText lists what each access site of the kernel cost: a global one
// its requests and sectors per request, a shared one its wavefronts per
// instruction, and the instructions some lanes sat out.
func sitesText(r *simt.Result, kernel any) string {
	var b strings.Builder
	b.WriteString("site                      access        requests  sectors/request  partial  code\n")
	for _, s := range r.Sites {
		op := "load"
		if s.Store {
			op = "store"
		}
		where := goLine(kernel, s)
		if s.Shared {
			per := 0.0
			if s.Instructions > 0 {
				per = float64(s.Wavefronts) / float64(s.Instructions)
			}
			fmt.Fprintf(&b, "%-25s %-5s %-7s %9s  %5s wavefronts  %7s  %s\n", where, op, s.Buffer+"[]", units.Count.Format(float64(s.Instructions)), units.Ratio.Format(per), units.Count.Format(float64(s.Partial)), s.Code)
			continue
		}
		per := 0.0
		if s.Instructions > 0 {
			per = float64(s.Sectors) / float64(s.Instructions)
		}
		fmt.Fprintf(&b, "%-25s %-5s %-7s %9s  %15s  %7s  %s\n", where, op, s.Buffer+"[]", units.Count.Format(float64(s.Instructions)), units.Ratio.Format(per), units.Count.Format(float64(s.Partial)), s.Code)
	}
	return b.String()
}

// diagramOf picks the traced instruction to draw: the access behind the
// first target the kernel missed, on that metric's memory and side (a
// shared metric's shared loads or stores, drawn by their banks; a global
// one's loads or stores, by their sectors); with every target met, or
// none judged, the costliest global access. nil when none was traced.
func diagramOf(out *exercises.Outcome) *simt.Traced {
	if out.Result == nil || len(out.Result.Trace) == 0 {
		return nil
	}
	for _, t := range out.Targets {
		if t.Pass {
			continue
		}
		shared, store := metrics.IsShared(t.Metric), metrics.IsStore(t.Metric)
		if tr := worstTraced(out.Result, func(s simt.Site) bool { return s.Shared == shared && s.Store == store }, countsRequests(t.Metric)); tr != nil {
			return tr
		}
	}
	return worstTraced(out.Result, func(s simt.Site) bool { return !s.Shared }, false)
}

// countsRequests reports whether metric counts instructions, not what
// each costs.
func countsRequests(metric string) bool {
	switch metric {
	case metrics.LdRequests, metrics.StRequests, metrics.ShLdRequests, metrics.ShStRequests:
		return true
	}
	return false
}

// worstTraced returns the costliest traced instruction of the costliest
// site among those of r that keep admits and the trace reached: a site
// costs its sectors (global) or wavefronts (shared) per instruction, or,
// for a metric of requests, its instructions; ties go to the site, and
// the instruction, first in the kernel's order. Sites and instructions
// are matched by their position (simt.Site.Where, the instruction's
// Access), buffer, memory and side. nil when no traced instruction is of
// an admitted site.
func worstTraced(r *simt.Result, keep func(simt.Site) bool, requests bool) *simt.Traced {
	var sites []simt.Site
	for _, s := range r.Sites {
		if s.Instructions > 0 && keep(s) {
			sites = append(sites, s)
		}
	}
	cost := func(s simt.Site) float64 {
		if requests {
			return float64(s.Instructions)
		}
		return s.PerRequest()
	}
	slices.SortStableFunc(sites, func(a, b simt.Site) int { return cmp.Compare(cost(b), cost(a)) })
	for _, s := range sites {
		best, most := -1, -1
		for i, tr := range r.Trace {
			in := tr.Instruction
			if in.Access != s.Where || in.Buffer != s.Buffer || in.Shared != s.Shared || in.Store != s.Store {
				continue
			}
			if n := instructionCost(in); n > most {
				best, most = i, n
			}
		}
		if best >= 0 {
			return &r.Trace[best]
		}
	}
	return nil
}

// instructionCost is one instruction's sectors, or its wavefronts for a
// shared one; 0 when the model cannot price it.
func instructionCost(in sectors.Instruction) int {
	if in.Shared {
		n, _ := sectors.Wavefronts(in.Warp)
		return n
	}
	a, err := sectors.Coalesce(in.Warp)
	if err != nil {
		return 0
	}
	return len(a.Sectors)
}

// CUDAResult is what TryCUDA found: the GPU's run of the learner's body,
// the output's check, its targets judged on the GPU, the model's counts
// for the Go kernel beside, and the two line by line.
type CUDAResult struct {
	// Run is the GPU's run; nil when the body was not run (no GPU, or
	// the body failed to compile, launch or finish).
	Run *usercuda.Result
	// Wrong is the output check's error: nil when the output is right.
	Wrong error
	// Model is the Go kernel's outcome through the model, nil when none
	// was given.
	Model *exercises.Outcome
	// Targets are the exercise's targets judged on the GPU (empty when
	// the body did not run): see the exercises' doc, "The CUDA side".
	Targets []CUDATarget
	// Lines is the body beside the Go kernel, line by line.
	Lines twin.Table
	// Pass is the CUDA body's verdict: it ran, its output is right and
	// every target is met. False whenever the body was not run.
	Pass bool
}

// TryCUDA compiles body, the learner's CUDA text for exercise id (what
// goes between the braces of the exercise's fixed signature), runs it on
// this machine's GPU on the learner's variant, checks its output, times it
// with CUDA events and reads its counters with Nsight Compute, its total
// counts and, line by line, its source counters, and shows them beside
// the model's counts for goKernel, the learner's Go version (nil: none).
// The targets are judged on the GPU's counts (CUDAResult.Targets). For
// 10-kernels/gather, goKernel is the Gather whose Order sorts the keys
// the GPU gets, and is required. Without a GPU the cell says, in one
// sentence, that the body was not compiled or run, and grades nothing; a
// body nvcc refuses shows nvcc's message, with the lines of the body.
func TryCUDA(id, body string, goKernel any) *CUDAResult {
	return TryCUDAWith(id, body, goKernel, CUDAOptions{})
}

// CUDAOptions are TryCUDAWith's: the checks of compute-sanitizer to run
// the kernel under (toolkit.Memcheck, toolkit.Racecheck; "" none) and the time
// allowed.
type CUDAOptions struct {
	Sanitizer toolkit.Check
	Timeout   time.Duration
}

// TryCUDAWith is TryCUDA with options.
func TryCUDAWith(id, body string, goKernel any, o CUDAOptions) *CUDAResult {
	res, e, p, err := cudaProblem(id, goKernel)
	if err != nil {
		fail(err)
		return nil
	}
	g, why := liveGPU()
	if g == nil {
		note := noGPUNote(why)
		newDisplay().emit(output{text: note + "\n", html: `<p class="coalesce-nogpu">` + esc(note) + `</p>`})
		return res
	}
	k := userKernel(p, body)
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	line := statusLine()
	fmt.Fprintf(line, "cuda: compiling and running %s on %s\n", p.Name, g.Info.GPU)
	run, err := usercuda.Run(ctx, g, k, usercuda.Options{Timeout: o.Timeout, Check: o.Sanitizer, Counters: true, Lines: true})
	line.Close()
	if err != nil {
		if note, ok := kernelFailure(err); ok {
			newDisplay().emit(output{text: note + "\n", html: `<pre class="coalesce-cuda-failed" style="color:#b00">` + esc(note) + `</pre>`})
			res.Wrong = err
			return res
		}
		fail(err)
		return nil
	}
	res.Run = run
	if g.Strict && (run.CountersErr != nil || run.LinesErr != nil) {
		// make test-gpu: a cell without ncu's own counts fails.
		fail(fmt.Errorf("lab: %w: %v", cuda.ErrStandIn, errors.Join(run.CountersErr, run.LinesErr)))
		return nil
	}
	res.Wrong = p.Check(run.Outputs)
	res.Lines = lineTable(p, body, res)
	if run.CountersErr == nil {
		res.Targets = judgeCUDA(e, res, res.Lines)
	}
	res.Pass = cudaPass(res) && run.CountersErr == nil
	// The GPU's counts of a learner's own kernel answer no question.
	newDisplay().emit(output{text: cudaText(e, p, res, goKernel), html: cudaHTML(e, p, res, goKernel)})
	return res
}

// kernelFailure says what went wrong when the fault is the kernel's, not
// the machine's: nvcc refused it, it faulted, the sanitizer found errors,
// it ran past its time. Those are the learner's to fix, and the cell
// shows them as a result.
func kernelFailure(err error) (string, bool) {
	var (
		ce *usercuda.CompileError
		le *usercuda.LaunchError
		se *usercuda.SanitizerError
		te *usercuda.TimeoutError
	)
	switch {
	case errors.As(err, &ce):
		return "nvcc refused the kernel:\n" + ce.Log, true
	case errors.As(err, &le), errors.As(err, &te):
		return err.Error(), true
	case errors.As(err, &se):
		return err.Error() + "\n" + se.Report.Text, true
	}
	return "", false
}

// cudaProblem returns the learner's variant of exercise id on the CUDA
// side, and the model's outcome for their Go kernel when given.
func cudaProblem(id string, goKernel any) (*CUDAResult, *exercises.Exercise, exercises.Problem, error) {
	res := &CUDAResult{}
	e, v, err := variantOf(id)
	if err != nil {
		return nil, nil, exercises.Problem{}, err
	}
	if goKernel != nil {
		if res.Model, err = runKernel(e, v, goKernel); err != nil {
			return nil, nil, exercises.Problem{}, err
		}
	}
	p, err := e.CUDA(v)
	if err != nil {
		return nil, nil, p, err
	}
	if g, ok := goKernel.(exercises.Gather); ok {
		if p, err = p.Ordered(g.Order); err != nil {
			return nil, nil, p, err
		}
	} else if id == "10-kernels/gather" {
		return nil, nil, p, errors.New("lab: TryCUDA for 10-kernels/gather needs your lab.Gather{Order, Kernel}: the GPU runs on the keys your Order sorts")
	}
	return res, e, p, nil
}

// userKernel is the CUDA harness's description of a problem's launch.
func userKernel(p exercises.Problem, body string) *usercuda.Kernel {
	k := &usercuda.Kernel{Name: p.Name, Body: body, SharedBytes: p.DynamicShared,
		Grid:  usercuda.Dim3{X: p.Grid.X, Y: p.Grid.Y, Z: 1},
		Block: usercuda.Dim3{X: p.Block.X, Y: p.Block.Y, Z: 1}}
	for _, a := range p.Args {
		u := usercuda.Arg{Name: a.Name, CType: a.CType, Out: a.Output}
		if a.Scalar() {
			u.Int = a.Value
		} else {
			u.Data, u.Bytes = a.Data, int64(len(a.Data))
		}
		k.Args = append(k.Args, u)
	}
	return k
}

// liveGPU returns this machine's GPU when the notebook measures live, or
// why not, in words that fit a sentence ("no GPU here: nvcc not found
// on PATH").
func liveGPU() (*cuda.GPU, string) {
	src, err := measurer()
	if err != nil {
		return nil, err.Error()
	}
	if g := gpuOf(src); g != nil {
		return g, ""
	}
	if o := src.Origin(); o.Why != "" {
		return nil, o.Why
	}
	return nil, "the notebook measures from " + src.Origin().String()
}

func cudaText(e *exercises.Exercise, p exercises.Problem, r *CUDAResult, goKernel any) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s on %s: %s\n", p.Name, r.Run.GPU, cudaVerdict(r))
	if r.Wrong != nil {
		fmt.Fprintf(&b, "wrong output: %v\n", r.Wrong)
	} else {
		b.WriteString("output right\n")
	}
	fmt.Fprintf(&b, "time: %s (median of %d launches, CUDA events)\n", units.Seconds.Format(r.Run.MedianMs/1e3), len(r.Run.TimesMs))
	for _, row := range counterRows(e, r) {
		fmt.Fprintf(&b, "%s %s: GPU %s, model %s, target %s", row[4], row[0], row[1], row[2], row[3])
		if row[5] != "" {
			fmt.Fprintf(&b, " — %s", row[5])
		}
		b.WriteByte('\n')
	}
	if r.Run.CountersErr != nil {
		fmt.Fprintf(&b, "counters: %v\n", r.Run.CountersErr)
	}
	if r.Run.LinesErr != nil {
		fmt.Fprintf(&b, "source counters: %v\n", r.Run.LinesErr)
	} else {
		b.WriteString(tableText(r.Lines, goKernel))
	}
	if r.Run.Sanitizer != nil {
		fmt.Fprintf(&b, "compute-sanitizer %s: %d errors\n", r.Run.Sanitizer.Check, r.Run.Sanitizer.Errors)
	}
	return b.String()
}

// cudaVerdict is the CUDA body's verdict in words.
func cudaVerdict(r *CUDAResult) string {
	switch {
	case r.Pass:
		return "passed"
	case r.Wrong != nil:
		return "wrong output"
	case r.Run != nil && r.Run.CountersErr != nil:
		return "output right, targets not judged (no counters)"
	}
	return "right output, target missed"
}

func cudaHTML(e *exercises.Exercise, p exercises.Problem, r *CUDAResult, goKernel any) string {
	var b strings.Builder
	color := "#b00"
	if r.Pass {
		color = "#070"
	}
	word := cudaVerdict(r)
	if r.Wrong != nil {
		word += ": " + r.Wrong.Error()
	}
	fmt.Fprintf(&b, `<div class="coalesce-cuda" style="border-left:4px solid %s;padding-left:0.6em">`, color)
	fmt.Fprintf(&b, `<p style="margin:0.2em 0"><b>%s</b> on %s: <b style="color:%s">%s</b></p>`, esc(p.Name), esc(r.Run.GPU), color, esc(word))
	fmt.Fprintf(&b, `<p style="margin:0.2em 0">Time: %s, the median of %d launches (CUDA events).</p>`, units.Seconds.Format(r.Run.MedianMs/1e3), len(r.Run.TimesMs))
	b.WriteString(`<table><tr><th></th><th>metric</th><th>GPU (ncu)</th><th>model (your Go kernel)</th><th>target, at most</th><th>how judged</th></tr>`)
	for _, row := range counterRows(e, r) {
		fmt.Fprintf(&b, `<tr><td>%s</td><td><code>%s</code></td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>`, row[4], esc(row[0]), row[1], row[2], row[3], esc(row[5]))
	}
	b.WriteString(`</table>`)
	if r.Run.CountersErr != nil {
		fmt.Fprintf(&b, `<p>Counters: %s</p>`, esc(r.Run.CountersErr.Error()))
	}
	if r.Run.LinesErr != nil {
		fmt.Fprintf(&b, `<p>Source counters: %s</p>`, esc(r.Run.LinesErr.Error()))
	} else {
		b.WriteString(`<p style="margin:0.4em 0 0.2em 0">Line by line: ncu's source counters of each line of your body (instructions/sectors, shared instructions/wavefronts), beside simt's count of the same accesses in your Go kernel, paired by buffer and access order. ≠ marks a line the compiler changed, ✗ one that does not do what its twin does.</p>`)
		b.WriteString(tableHTML(r.Lines, goKernel))
	}
	if s := r.Run.Sanitizer; s != nil {
		fmt.Fprintf(&b, `<pre>compute-sanitizer %s: %d errors
%s</pre>`, esc(string(s.Check)), s.Errors, esc(s.Text))
	}
	b.WriteString(`</div>`)
	return b.String()
}

// counterRows are the exercise's targets: the metric, the GPU's count,
// the model's for the Go kernel, the target, the verdict mark and how it
// was judged.
func counterRows(e *exercises.Exercise, r *CUDAResult) [][6]string {
	var rows [][6]string
	for _, m := range e.Metrics {
		gpu, model, target, mk, how := "—", "—", "—", "", ""
		if v, ok := r.Run.Counters[m]; ok {
			gpu = units.Count.Format(v)
		}
		if r.Model != nil {
			if i := slices.IndexFunc(r.Model.Targets, func(t exercises.Target) bool { return t.Metric == m }); i >= 0 {
				model, target = units.Apart(units.Count, r.Model.Targets[i].Got, r.Model.Targets[i].Want)
			}
		}
		if i := slices.IndexFunc(r.Targets, func(t CUDATarget) bool { return t.Metric == m }); i >= 0 {
			t := r.Targets[i]
			gpu, target = units.Apart(units.Count, t.GPU, t.Want)
			mk, how = mark(t.Pass), t.Why
			if how == "" {
				how = "on the GPU's count"
			}
		}
		rows = append(rows, [6]string{m, gpu, model, target, mk, how})
	}
	return rows
}
