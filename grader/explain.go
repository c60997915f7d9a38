package grader

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/coalescing-course/coalesce/internal/words"
	"github.com/coalescing-course/coalesce/lessons/devices"
	"github.com/coalescing-course/coalesce/lessons/figures"
	"github.com/coalescing-course/coalesce/lessons/metrics"
	"github.com/coalescing-course/coalesce/lessons/sectors"
	"github.com/coalescing-course/coalesce/lessons/spec"
	"github.com/coalescing-course/coalesce/units"
)

// Section is one part of an explanation. A line that starts with two
// spaces is preformatted (a table of lanes or sectors); the others are prose.
type Section struct {
	Title string
	Lines []string
	// Tells are the values the section shows besides the question's own
	// answer: a display withholds the section while one of them tells
	// another question the learner has not answered (Gate).
	Tells []Tell
}

// explain builds the question-level explanation of a key, about the
// question's own quantity: the warp's sectors for a question about the
// L1, its banks for one about shared memory, DRAM's bytes and the time
// for one about DRAM or time; then the arithmetic, and model against
// measurement. Each section says which values it shows (Tells), so that a
// notebook holds back a section that would answer another question the
// learner has not answered. Its numbers are one units.System: a number
// stated twice is written one way, with the digits every equation it is
// in needs to hold as printed. The sections are built twice, the first
// time only to put every equation in the system, so that a line written
// early has the digits a later one needs.
func explain(k *Key, sys *units.System) []Section {
	sections(k, sys)
	secs := sections(k, sys)
	sys.Solve() // verdicts read it, maybe at once
	return secs
}

func sections(k *Key, sys *units.System) []Section {
	e := k.Question
	fig := e.figure()
	var secs []Section
	switch fig.Level {
	case figures.L1:
		for i := range k.Parts {
			secs = append(secs, warpSection(e, &k.Parts[i], len(k.Parts)))
		}
	case figures.Shared:
		for i := range k.Parts {
			secs = append(secs, bankSection(e, &k.Parts[i], len(k.Parts)))
		}
	}
	secs = append(secs, arithmetic(k, fig, sys))
	switch fig.Level {
	case figures.DRAM:
		secs = append(secs, dramSection(k))
	case figures.Time:
		secs = append(secs, dramSection(k), timeSection(k))
	}
	secs = append(secs, comparison(k, fig, sys))
	return secs
}

// equation adds e to sys and writes it.
func equation(sys *units.System, e units.Equation) string { return sys.String(sys.Add(e)) }

// partTell is the model's value of figure f for a part, as a section
// shows it.
func partTell(p *Part, f figures.Figure) Tell {
	v := figures.Model(p.Modelled)
	x, _ := f.Of(v)
	return Tell{Spec: p.Spec, Figure: f.Name, Judge: Model, Value: x, Counts: CountsOf(v)}
}

// quantityTells are the question's quantity of each part, the model's and
// the measured: what the arithmetic and the comparison show.
func quantityTells(k *Key) []Tell {
	var ts []Tell
	fig := k.Question.figure()
	for i := range k.Parts {
		p := &k.Parts[i]
		ts = append(ts, partTell(p, fig))
		if p.HasMeasured {
			v := figures.Measured(p.Launch, &p.Modelled)
			ts = append(ts, Tell{Spec: p.Spec, Figure: fig.Name, Judge: Measurement, Value: p.Measured, Counts: CountsOf(v)})
		}
	}
	return ts
}

// InstructionTells are what a picture or a list of one instruction of the
// launch s shows: its sectors (or shared wavefronts) per request, and a
// global access's efficiency, of that launch.
func InstructionTells(s spec.Spec, in sectors.Instruction) []Tell {
	sh, err := InstructionShape(in)
	if err != nil {
		return []Tell{{Spec: s, Figure: figures.LdSectorsPerRequest.Name}}
	}
	v := float64(sh.Sectors)
	switch {
	case in.Shared && in.Store:
		return []Tell{{Spec: s, Figure: figures.ShStWavefrontsPerRequest.Name, Judge: Model, Value: v, Warp: &sh}}
	case in.Shared:
		return []Tell{{Spec: s, Figure: figures.ShLdWavefrontsPerRequest.Name, Judge: Model, Value: v, Warp: &sh}}
	}
	fig := figures.LdSectorsPerRequest
	if in.Store {
		fig = figures.StSectorsPerRequest
	}
	eff := 0.0
	if sh.Sectors > 0 {
		eff = float64(sh.Useful) / float64(sh.Sectors*sectors.SectorBytes)
	}
	return []Tell{
		{Spec: s, Figure: fig.Name, Judge: Model, Value: v, Warp: &sh},
		{Spec: s, Figure: figures.Efficiency.Name, Judge: Model, Value: eff, Warp: &sh},
	}
}

// model returns the model's value of f for a part, NaN when it has none.
func model(f figures.Figure, p Part) float64 {
	v, err := f.Of(figures.Model(p.Modelled))
	if err != nil {
		return math.NaN()
	}
	return v
}

// relevant reports whether an instruction bears on the quantity.
func relevant(quantity string, in instr) bool {
	store, ok := Asked(quantity)
	return !ok || in.Store == store
}

// Asked reports which of a warp's global instructions a question about
// quantity is about: the stores (store true) or the loads, with ok true;
// ok false for a quantity of neither alone.
func Asked(quantity string) (store, ok bool) {
	switch quantity {
	case figures.LdSectorsPerRequest.Name, metrics.LdSectors, metrics.LdRequests:
		return false, true
	case figures.StSectorsPerRequest.Name, metrics.StSectors, metrics.StRequests:
		return true, true
	}
	return false, false
}

func warpSection(e *Question, p *Part, n int) Section {
	s := p.Spec
	title := "One warp of " + string(s.Kernel)
	if n > 1 {
		title = "One warp of " + specLabel(s, e.Specs)
	}
	sec := Section{Title: title}
	if p.idxErr != nil {
		sec.Lines = append(sec.Lines, "The indices could not be generated: "+p.idxErr.Error())
		return sec
	}
	ins, err := sectors.WarpInstructions(s, p.idx, 0)
	if err != nil {
		sec.Lines = append(sec.Lines, err.Error())
		return sec
	}
	var relevantIns []sectors.Instruction
	for _, in := range ins {
		if in.Shared || in.Warp.Active == 0 || !relevantInstr(e.Quantity, in.Store) {
			continue
		}
		relevantIns = append(relevantIns, in)
	}
	lanes := min(int64(s.Block), sectors.WarpSize, s.Threads())
	what := "load"
	if store, ok := Asked(e.Quantity); ok && store {
		what = "store"
	} else if !ok {
		what = "global access"
	}
	sec.Lines = append(sec.Lines, fmt.Sprintf("Warp 0 (threads 0–%d) issues %s:", lanes-1, words.Plural(len(relevantIns), what)))
	const shownMax = 2
	for i, in := range relevantIns {
		sec.Tells = append(sec.Tells, InstructionTells(s, in)...)
		if i >= shownMax {
			continue
		}
		sec.Lines = append(sec.Lines, instrLines(instr{Store: in.Store, Buffer: in.Buffer, Expr: in.Access, Warp: in.Warp})...)
	}
	if more := len(relevantIns) - shownMax; more > 0 {
		sec.Lines = append(sec.Lines, fmt.Sprintf("(%s more like them.)", words.Plural(more, "instruction")))
	}
	if r := s.Block % sectors.WarpSize; r != 0 {
		sec.Lines = append(sec.Lines, fmt.Sprintf("Blocks of %s leave the last warp of each %s: it still issues a whole request for each instruction.",
			words.Plural(s.Block, "thread"), words.Plural(r, "active lane")))
	}
	return sec
}

// relevantInstr reports whether a global load (store false) or store
// bears on the quantity.
func relevantInstr(quantity string, store bool) bool {
	want, ok := Asked(quantity)
	return !ok || want == store
}

// bankSection explains a question about shared memory by its banks: the
// first shared instruction of the asked kind in warp 0, the bank each
// lane's word falls in, and the busiest bank, whose distinct words are
// the wavefronts the bank rule charges.
func bankSection(e *Question, p *Part, n int) Section {
	s := p.Spec
	title := "Warp 0's shared accesses, bank by bank"
	if n > 1 {
		title += ": " + specLabel(s, e.Specs)
	}
	sec := Section{Title: title}
	ins, err := sectors.WarpInstructions(s, p.idx, 0)
	if err != nil {
		sec.Lines = append(sec.Lines, err.Error())
		return sec
	}
	store := strings.Contains(e.Quantity, "_st_")
	for _, in := range ins {
		if !in.Shared || in.Store != store || in.Warp.Active == 0 {
			continue
		}
		sec.Tells = append(sec.Tells, InstructionTells(s, in)...)
		verb := "load"
		if store {
			verb = "store"
		}
		sec.Lines = append(sec.Lines, fmt.Sprintf("Shared memory is %d banks of %d bytes: word w lives in bank w %% %d. The %s %s, lane by lane (word: bank):", sectors.Banks, sectors.BankBytes, sectors.Banks, verb, in.Access))
		perBank := map[uint64]map[uint64]bool{}
		for row := 0; row < sectors.WarpSize; row += 8 {
			var b strings.Builder
			fmt.Fprintf(&b, "  lanes %2d–%2d:", row, row+7)
			for l := row; l < row+8; l++ {
				if in.Warp.Active&(1<<l) == 0 {
					b.WriteString("      ·")
					continue
				}
				word := in.Warp.Addr[l] / sectors.BankBytes
				bank := word % sectors.Banks
				if perBank[bank] == nil {
					perBank[bank] = map[uint64]bool{}
				}
				perBank[bank][word] = true
				fmt.Fprintf(&b, " %4d:%-2d", word, bank)
			}
			sec.Lines = append(sec.Lines, b.String())
		}
		busiest, most := uint64(0), 0
		for bank, ws := range perBank {
			if len(ws) > most || len(ws) == most && bank < busiest {
				busiest, most = bank, len(ws)
			}
		}
		sec.Lines = append(sec.Lines, fmt.Sprintf("  → %s in use; the busiest, bank %d, holds %s: %s for this request (%s).",
			words.Plural(len(perBank), "bank"), busiest, words.Plural(most, "distinct word"), words.Plural(most, "wavefront"), words.Plural(most-1, "bank conflict")))
		return sec
	}
	sec.Lines = append(sec.Lines, "Warp 0 issues no such shared access.")
	return sec
}

// instrLines draws one instruction: the lanes' byte offsets eight to a
// line, then the sectors they fall in and the share of their bytes used.
func instrLines(in instr) []string {
	verb := "load"
	if in.Store {
		verb = "store"
	}
	lines := []string{fmt.Sprintf("%s %s, %s a lane; byte offsets from the start of %s:", verb, in.Expr, words.Plural(int(in.Warp.Size), "byte"), in.Buffer)}
	width := 1
	for l := range sectors.WarpSize {
		if in.Warp.Active&(1<<l) != 0 {
			width = max(width, len(strconv.FormatUint(in.Warp.Addr[l], 10)))
		}
	}
	for row := 0; row < sectors.WarpSize; row += 8 {
		var b strings.Builder
		fmt.Fprintf(&b, "  lanes %2d–%2d:", row, row+7)
		for l := row; l < row+8; l++ {
			v := "·"
			if in.Warp.Active&(1<<l) != 0 {
				v = strconv.FormatUint(in.Warp.Addr[l], 10)
			}
			fmt.Fprintf(&b, " %*s", width, v)
		}
		lines = append(lines, b.String())
	}
	a, err := sectors.Coalesce(in.Warp)
	if err != nil {
		return append(lines, "  "+err.Error())
	}
	nums := make([]string, len(a.Sectors))
	used := make([]int, len(a.Sectors))
	for i, sec := range a.Sectors {
		nums[i] = strconv.FormatUint(sec.Addr/sectors.SectorBytes, 10)
		used[i] = sec.UsedBytes()
	}
	list := strings.Join(nums, ", ")
	if len(nums) > 8 {
		list = strings.Join(nums[:4], ", ") + ", …, " + nums[len(nums)-1]
	}
	lines = append(lines, fmt.Sprintf("  → %s (%s): %s", words.Plural(len(a.Sectors), "sector"), words.Plural(a.Lines, "128-byte line"), list))
	lines = append(lines, "  → "+usedLine(used))
	lines = append(lines, fmt.Sprintf("  → %s used of %d × 32 = %d fetched: %s",
		words.Plural(a.UsefulBytes, "byte"), len(a.Sectors), a.FetchedBytes(), pct(a.Efficiency())))
	return lines
}

func usedLine(used []int) string {
	if len(used) == 0 {
		return "no sector"
	}
	lo, hi := slices.Min(used), slices.Max(used)
	if lo == hi {
		return fmt.Sprintf("%d of each sector's 32 bytes used (sector k holds bytes 32k to 32k+31)", lo)
	}
	if len(used) <= 8 {
		parts := make([]string, len(used))
		for i, u := range used {
			parts[i] = strconv.Itoa(u)
		}
		return fmt.Sprintf("bytes used per sector: %s (of 32 each)", strings.Join(parts, ", "))
	}
	return fmt.Sprintf("%d to %d of each sector's 32 bytes used", lo, hi)
}

func arithmetic(k *Key, fig figures.Figure, sys *units.System) Section {
	e := k.Question
	sec := Section{Title: "The arithmetic", Tells: quantityTells(k)}
	for i := range k.Parts {
		sec.Lines = append(sec.Lines, partArithmetic(e, &k.Parts[i])...)
	}
	if e.Combine == Ratio {
		a, b, u := k.Parts[0], k.Parts[1], unitOf(e.Quantity)
		sec.Lines = append(sec.Lines, fmt.Sprintf("The ratio, the first over the second: %s.",
			equation(sys, units.Quotient(units.Term{V: k.Model, Unit: units.Ratio}, units.Term{V: a.Model, Unit: u}, units.Term{V: b.Model, Unit: u}))))
	}
	if !fig.Exact {
		sec.Lines = append(sec.Lines, "The model estimates this figure; the measurement is what the GPU did.")
	}
	return sec
}

// partArithmetic works one launch's value of the question's quantity out,
// in the quantity's own terms: per request for a figure per request, per
// warp for an efficiency, the requests times their sectors for a total.
func partArithmetic(e *Question, p *Part) []string {
	s, pr := p.Spec, p.Modelled
	m := pr.Metrics
	label := specLabel(s, e.Specs)
	perWarp := func(name string) float64 {
		if pr.Warps == 0 {
			return 0
		}
		return m[name] / float64(pr.Warps)
	}
	switch e.Quantity {
	case figures.LdSectorsPerRequest.Name, figures.StSectorsPerRequest.Name:
		sec, req, what := metrics.LdSectors, metrics.LdRequests, "load"
		if e.Quantity == figures.StSectorsPerRequest.Name {
			sec, req, what = metrics.StSectors, metrics.StRequests, "store"
		}
		return []string{fmt.Sprintf("%s: %s a warp, touching %s a warp: %s.",
			label, units.With(fmtNum(perWarp(req)), what+" requests"), units.With(fmtNum(perWarp(sec)), "sectors"), units.With(fmtNum(p.Model), "sectors per request"))}
	case figures.Efficiency.Name:
		fetched := sectors.SectorBytes * (perWarp(metrics.LdSectors) + perWarp(metrics.StSectors))
		used := float64(pr.L1UsefulBytes) / float64(max(pr.Warps, 1))
		return []string{fmt.Sprintf("%s, per warp: the lanes use %s of the %s bytes in the sectors they touch (32 × %s sectors): %s / %s = %s (%s).",
			label, fmtNum(used), fmtNum(fetched), fmtNum(fetched/sectors.SectorBytes), fmtNum(used), fmtNum(fetched), fmtNum(p.Model), pct(p.Model))}
	case figures.ShLdWavefrontsPerRequest.Name, figures.ShStWavefrontsPerRequest.Name, figures.ShLdConflictsPerRequest.Name, figures.ShStConflictsPerRequest.Name:
		req, wav := metrics.ShLdRequests, metrics.ShLdWavefronts
		if strings.Contains(e.Quantity, "_st_") {
			req, wav = metrics.ShStRequests, metrics.ShStWavefronts
		}
		return []string{fmt.Sprintf("%s: the bank rule gives its %s %s: %s / %s = %s.",
			label, units.With(fmtNum(m[req]), "shared requests"), units.With(fmtNum(m[wav]), "wavefronts"), fmtNum(m[wav]), fmtNum(m[req]), units.With(fmtNum(p.Model), e.Unit))}
	case metrics.LdRequests, metrics.StRequests:
		return []string{fmt.Sprintf("%s launches %s (%s of %d threads), each issuing %s: %s = %s.",
			label, units.With(fmtNum(float64(pr.Warps)), "warps"), units.With(fmtNum(float64(s.GridBlocks())), "blocks"), s.Block,
			units.With(fmtNum(perWarp(e.Quantity)), "requests"), e.Quantity, fmtNum(m[e.Quantity]))}
	case metrics.LdSectors, metrics.StSectors:
		req := metrics.LdRequests
		if e.Quantity == metrics.StSectors {
			req = metrics.StRequests
		}
		return []string{fmt.Sprintf("%s: %s × %s = %s.",
			label, units.With(fmtNum(m[req]), "requests"), units.With(fmtNum(m[e.Quantity]/math.Max(m[req], 1)), "sectors per request"), units.With(fmtNum(m[e.Quantity]), "sectors"))}
	case metrics.DRAMRead, metrics.DRAMWrite, figures.DRAMBytesPerUsefulByte.Name:
		useful := float64(s.UsefulBytes())
		return []string{fmt.Sprintf("%s: the model's L2 reads %s from DRAM and writes %s, for %s useful bytes: %s DRAM bytes per useful byte.",
			label, bytesStr(m[metrics.DRAMRead]), bytesStr(m[metrics.DRAMWrite]), fmtNum(useful), fmtNum((m[metrics.DRAMRead]+m[metrics.DRAMWrite])/useful))}
	case figures.TimeSeconds.Name, figures.UsefulBandwidth.Name, figures.FractionOfMemcpy.Name:
		d, _ := devices.Lookup(s.Device)
		line := fmt.Sprintf("%s: the time model says %s, set by %s.", label, duration(pr.TimeSeconds), pr.Time.Bound)
		dram := m[metrics.DRAMRead] + m[metrics.DRAMWrite]
		if plain := dram / d.Time.CopyBandwidth; pr.Time.Bandwidth > 1.005*plain {
			what := "its sparse accesses occupy"
			if slices.ContainsFunc(pr.Traffic.Rewrite.Blocks[:], func(b float64) bool { return b > 0 }) {
				what = "its sparse accesses, and the write-backs of lines its warps have just read, occupy"
			}
			line += fmt.Sprintf(" Its %s of DRAM traffic take %s at cudaMemcpy's bandwidth; it charges %s, as %s DRAM longer than their bytes.", bytesStr(dram), duration(plain), duration(pr.Time.Bandwidth), what)
		}
		if e.Quantity != figures.TimeSeconds.Name {
			line += fmt.Sprintf(" Useful bandwidth: %s useful bytes / %s = %s.", fmtNum(float64(s.UsefulBytes())), duration(pr.TimeSeconds), bandwidth(model(figures.UsefulBandwidth, *p)))
		}
		if e.Quantity == figures.FractionOfMemcpy.Name {
			line += fmt.Sprintf(" Over cudaMemcpy's %s: %s.", bandwidth(d.Time.CopyBandwidth), fmtNum(model(figures.FractionOfMemcpy, *p)))
		}
		return []string{line}
	}
	return []string{fmt.Sprintf("%s: %s.", label, fmtQ(e.Quantity, p.Model, false))}
}

func dramSection(k *Key) Section {
	sec := Section{Title: "Below the L1: DRAM"}
	s := k.Parts[0].Spec
	d, _ := devices.Lookup(s.Device)
	sec.Lines = append(sec.Lines, fmt.Sprintf(
		"On a miss the %s's L2 fetches the aligned block of %d bytes (l2_fetch_granularity) around the sector, so a lane with a sector to itself costs a whole block; a store that fills a sector only in part makes the L2 read it first.",
		d.GPU, s.L2Fetch))
	for i := range k.Parts {
		p := &k.Parts[i]
		t := partTell(p, figures.DRAMBytesPerUsefulByte)
		sec.Tells = append(sec.Tells, t)
		sec.Lines = append(sec.Lines, fmt.Sprintf("  %s: %s DRAM bytes per useful byte (model)", specLabel(p.Spec, k.Question.Specs), fmtNum(t.Value)))
	}
	return sec
}

func timeSection(k *Key) Section {
	sec := Section{Title: "What the time model counts"}
	for i := range k.Parts {
		sec.Tells = append(sec.Tells, partTell(&k.Parts[i], figures.TimeSeconds))
	}
	sec.Lines = append(sec.Lines, "The model takes the longest of its limits: DRAM's bytes at cudaMemcpy's bandwidth (a sparse access charged the DRAM time it occupies), Little's law on the load bytes an SM keeps in flight, and the rate blocks start. It leaves out DRAM's pages and the clocks of the run.")
	return sec
}

func comparison(k *Key, fig figures.Figure, sys *units.System) Section {
	e := k.Question
	sec := Section{Title: "Model and measurement", Tells: quantityTells(k)}
	if !k.HasMeasured {
		sec.Lines = append(sec.Lines, "No measured answer: "+k.NoMeasurement+".")
		if !k.Graded() {
			sec.Lines = append(sec.Lines, "This exercise is graded against the measurement, so without one it is not graded; the model's answer above is for information.")
		}
		return sec
	}
	tol := e.Tolerance.Measured
	agree := Within(k.Model, k.Measured, tol)
	// The measurement as a multiple of the model's answer, when they
	// differ, the two written with the digits that give it.
	u := answerUnit(e)
	var multiple string
	if !agree {
		multiple = sys.Result(sys.Add(units.Quotient(units.Term{V: k.Measured / k.Model, Unit: units.Multiple},
			units.Term{V: k.Measured, Unit: u}, units.Term{V: k.Model, Unit: u})))
	}
	model := answerFrom(e, sys.Text(units.Term{V: k.Model, Unit: u}), k.Model)
	measured := answerFrom(e, sys.Text(units.Term{V: k.Measured, Unit: u}), k.Measured)
	sec.Lines = append(sec.Lines, fmt.Sprintf("Model: %s. Measured (%s): %s.", model, k.Origin, measured))
	if e.Combine == Ratio {
		for _, p := range k.Parts {
			u := bareUnit(e.Quantity)
			sec.Lines = append(sec.Lines, fmt.Sprintf("  %s: model %s, measured %s", specLabel(p.Spec, e.Specs),
				quantityFrom(e.Quantity, sys.Text(units.Term{V: p.Model, Unit: u}), p.Model), quantityFrom(e.Quantity, sys.Text(units.Term{V: p.Measured, Unit: u}), p.Measured)))
		}
	}
	if agree {
		sec.Lines = append(sec.Lines, fmt.Sprintf("They agree within %s.", units.Percent.Format(tol)))
		return sec
	}
	sec.Lines = append(sec.Lines, fmt.Sprintf("They differ by more than %s: the measurement is %s the model's answer.", units.Percent.Format(tol), multiple))
	switch fig.Level {
	case figures.L1:
		sec.Lines = append(sec.Lines, "The L1 counts follow from the addresses alone, so a difference means the compiled kernel issued other memory instructions than its source suggests (a load split or merged by the compiler), or ncu counted launches the model does not. Look at the SASS: ncu --page source.")
	case figures.DRAM:
		for _, p := range k.Parts {
			if !p.HasMeasured || p.Launch.Metrics == nil {
				continue
			}
			pm, mm := p.Modelled.Metrics, p.Launch.Metrics
			sec.Lines = append(sec.Lines, fmt.Sprintf("  %s: DRAM read %s (model %s), written %s (model %s)",
				specLabel(p.Spec, e.Specs), bytesStr(mm[metrics.DRAMRead]), bytesStr(pm[metrics.DRAMRead]), bytesStr(mm[metrics.DRAMWrite]), bytesStr(pm[metrics.DRAMWrite])))
		}
		if k.Measured > k.Model {
			sec.Lines = append(sec.Lines, "More DRAM traffic than the model: the L2 may fetch more than l2_fetch_granularity on a miss (the limit is a hint, and neighbouring sectors can be prefetched), and partially written sectors are read before they are written back.")
		} else {
			sec.Lines = append(sec.Lines, "Less DRAM traffic than the model: data found again in the L2 (the model keeps only what it saw recently), and written bytes still in the L2 when the launch ended, which never reached DRAM inside it.")
		}
	case figures.Time:
		sec.Lines = append(sec.Lines, timeMisses(k)...)
	}
	if gpu := profileGPU(k.Parts[0].Spec); gpu != "" && !strings.Contains(k.Origin, gpu) {
		sec.Lines = append(sec.Lines, fmt.Sprintf("Note: the measurement comes from %s; the model's device profile describes an %s.", k.Origin, gpu))
	}
	return sec
}

// timeMisses says, launch by launch, which way the GPU's time left the
// model's and what the model leaves out in that direction. The two
// directions have different causes, so a reason given for one would point
// the learner the wrong way for the other.
func timeMisses(k *Key) []string {
	var lines []string
	slower, faster := false, false
	for _, p := range k.Parts {
		if !p.HasMeasured || !p.Launch.Timed() || p.Modelled.TimeSeconds <= 0 {
			continue
		}
		r := p.Launch.Seconds() / p.Modelled.TimeSeconds
		way := "slower"
		if r < 1 {
			way = "faster"
		}
		lines = append(lines, fmt.Sprintf("  %s: the GPU took %s the model's time (%s than the model, which called it %s bound)",
			specLabel(p.Spec, k.Question.Specs), units.Multiple.Format(r), way, p.Modelled.Time.Bound))
		if r > 1+k.Question.Tolerance.Measured {
			slower = true
		}
		if r < 1-k.Question.Tolerance.Measured {
			faster = true
		}
	}
	if slower {
		lines = append(lines, "Where the GPU is slower than the model: sparse accesses spread the same bytes over more DRAM pages, which DRAM serves more slowly, and the model times bytes only.")
	}
	if faster {
		lines = append(lines, "Where the GPU is faster than the model: loads that hit in the L1 or L2 return sooner than the DRAM latency the model waits out (go doc ./lessons/sectors lists the launches).")
	}
	if !slower && !faster && len(lines) > 1 {
		lines = append(lines, fmt.Sprintf("No launch is off by more than %s on its own: the ratio of two launches compounds their misses when one runs faster than the model and the other slower.", pct(k.Question.Tolerance.Measured)))
	}
	return lines
}

func profileGPU(s spec.Spec) string {
	d, err := devices.Lookup(s.Device)
	if err != nil {
		return ""
	}
	return d.GPU
}

// specLabel names a spec briefly by what sets it apart from the others of
// its question: "strided_copy (stride 32)", or its kernel when nothing does.
func specLabel(s spec.Spec, all []spec.Spec) string {
	if diff := s.Differences(all); len(diff) > 0 {
		return fmt.Sprintf("%s (%s)", s.Kernel, strings.Join(diff, ", "))
	}
	return string(s.Kernel)
}

// unitOf returns the unit a quantity's values are written in: its
// figure's (lessons/figures), a Ratio for a quantity of no figure.
func unitOf(quantity string) units.Unit {
	if f, ok := figures.Lookup(quantity); ok {
		return f.Unit
	}
	return units.Ratio
}

// count writes a whole number of things: 8,388,608.
func count(v float64) string { return units.Count.Format(v) }

// prediction writes a learner's number with every digit it has, as
// written: 16.67, 8,388,608.
func prediction(v float64) string { return units.AsWritten(v) }

// fraction writes a learner's percentage p as the fraction it stands for,
// with the digits p was written with: 16.67 is 0.1667.
func fraction(p float64) string {
	v, err := units.Parse(prediction(p) + "%")
	if err != nil {
		return prediction(p / 100)
	}
	return prediction(v.V)
}

// withUnit writes an exercise's answer and its unit, the unit agreeing
// with the number: "1 sector per request", "4 sectors per request". An
// answer graded exactly (tol 0) is written with every digit, so that it
// never reads as a prediction it is not; another as the explanation's
// numbers (nil for none) write it.
func withUnit(numbers *units.System, e *Question, v, tol float64) string {
	if tol == 0 || numbers == nil {
		return units.With(fmtAnswer(e, v, tol == 0), e.Unit)
	}
	return units.With(answerFrom(e, numbers.Text(units.Term{V: v, Unit: answerUnit(e)}), v), e.Unit)
}

// answerUnit is the unit of an answer's bare number: a ratio's, a
// fraction's (efficiency, of cudaMemcpy: written as a Ratio, with its
// percentage beside), else its quantity's.
func answerUnit(e *Question) units.Unit {
	if e.Combine == Ratio {
		return units.Ratio
	}
	return bareUnit(e.Quantity)
}

// answerFrom writes an answer v to e whose number is already written as
// text (in answerUnit), as fmtAnswer would write it around its number.
func answerFrom(e *Question, text string, v float64) string {
	if e.Combine == Ratio {
		return text
	}
	return quantityFrom(e.Quantity, text, v)
}

// bareUnit is the unit of the number of a quantity's value: a fraction's
// is a Ratio, written with its percentage beside (quantityFrom).
func bareUnit(quantity string) units.Unit {
	if u := unitOf(quantity); u != units.Percent {
		return u
	}
	return units.Ratio
}

// quantityFrom writes a value v of a quantity whose number is already
// written as text (in bareUnit), as fmtQ would write it around its number.
func quantityFrom(quantity, text string, v float64) string {
	switch {
	case quantity == metrics.DRAMRead || quantity == metrics.DRAMWrite:
		return bytesStr(v)
	case unitOf(quantity) == units.Percent:
		return fmt.Sprintf("%s (%s)", text, units.Percent.Format(v))
	}
	return text
}

// fmtAnswer writes an exercise's answer: a ratio as a bare number, else
// in the quantity's unit; every digit when precise.
func fmtAnswer(e *Question, v float64, precise bool) string {
	if e.Combine == Ratio {
		s := units.Ratio.Scale(v)
		if precise {
			s = s.Precise()
		}
		return s.Format(v)
	}
	return fmtQ(e.Quantity, v, precise)
}

// fmtQ writes a value of a quantity in its unit: a fraction (efficiency,
// of cudaMemcpy) as itself and as a percentage, "0.125 (12.5%)"; DRAM's
// bytes counted and scaled, "268,435,456 B (268 MB)"; every digit when
// precise.
func fmtQ(quantity string, v float64, precise bool) string {
	u := unitOf(quantity)
	scale := func(u units.Unit) units.Scaler {
		if precise {
			return u.Scale(v).Precise()
		}
		return u.Scale(v)
	}
	switch {
	case quantity == metrics.DRAMRead || quantity == metrics.DRAMWrite:
		return bytesStr(v)
	case u == units.Percent:
		return fmt.Sprintf("%s (%s)", scale(units.Ratio).Format(v), scale(units.Percent).Format(v))
	}
	return scale(u).Format(v)
}

// bytesStr writes bytes counted, and scaled from 10,000 on:
// "268,435,456 B (268 MB)", "512 B".
func bytesStr(b float64) string {
	if math.Abs(b) >= 1e4 {
		return fmt.Sprintf("%s B (%s)", count(b), units.Bytes.Format(b))
	}
	return count(b) + " B"
}

// fmtNum writes a number the explanations compute: a whole one as a
// Count (8,388,608), another as a Ratio (4.5), through units.
func fmtNum(v float64) string {
	if v == math.Trunc(v) && !math.IsInf(v, 0) {
		return count(v)
	}
	return units.Ratio.Format(v)
}

// pct writes a fraction as a percentage: 12.5%.
func pct(v float64) string { return units.Percent.Format(v) }

// duration writes seconds with their prefix: 197 µs.
func duration(sec float64) string { return units.Seconds.Format(sec) }

// bandwidth writes bytes a second with their prefix: 1.36 TB/s.
func bandwidth(bps float64) string { return units.Bandwidth.Format(bps) }

// reason is the one sentence a verdict gives after its answer: why the
// answer is what it is, in the question's own terms.
func reason(k *Key) string {
	e := k.Question
	fig := e.figure()
	p := &k.Parts[0]
	switch fig.Level {
	case figures.L1:
		return l1Reason(e, p)
	case figures.Shared:
		return sharedReason(e, p)
	case figures.DRAM:
		if e.Combine == Ratio {
			return fmt.Sprintf("a lane with a sector to itself costs DRAM a whole fetch block: %d bytes against %d", k.Parts[0].Spec.L2Fetch, k.Parts[1].Spec.L2Fetch)
		}
		return fmt.Sprintf("its loads touch %s, and on a miss the L2 fetches %d bytes around each",
			units.With(fmtNum(model(figures.LdSectorsPerRequest, *p)), "sectors per request"), p.Spec.L2Fetch)
	case figures.Time:
		return timeReason(k)
	}
	return ""
}

func l1Reason(e *Question, p *Part) string {
	ins, err := sectors.WarpInstructions(p.Spec, p.idx, 0)
	if err != nil {
		return err.Error()
	}
	var counts []string
	var first int
	used, fetched := 0, 0
	for _, in := range ins {
		if in.Shared || in.Warp.Active == 0 || !relevantInstr(e.Quantity, in.Store) {
			continue
		}
		a, err := sectors.Coalesce(in.Warp)
		if err != nil {
			return err.Error()
		}
		if len(counts) == 0 {
			first = len(a.Sectors)
		}
		counts = append(counts, fmt.Sprint(len(a.Sectors)))
		used += a.UsefulBytes
		fetched += a.FetchedBytes()
	}
	pr := p.Modelled
	switch e.Quantity {
	case figures.Efficiency.Name, figures.SectorBytesPerUsefulByte.Name:
		return fmt.Sprintf("warp 0's lanes use %d of the %d bytes in the sectors they touch", used, fetched)
	case metrics.LdRequests, metrics.StRequests:
		return fmt.Sprintf("%s each issue %s", units.With(fmtNum(float64(pr.Warps)), "warps"), units.With(fmtNum(pr.Metrics[e.Quantity]/float64(max(pr.Warps, 1))), "requests"))
	case metrics.LdSectors, metrics.StSectors:
		req := metrics.LdRequests
		if e.Quantity == metrics.StSectors {
			req = metrics.StRequests
		}
		return fmt.Sprintf("%s touch %s each", units.With(fmtNum(pr.Metrics[req]), "requests"), units.With(fmtNum(pr.Metrics[e.Quantity]/math.Max(pr.Metrics[req], 1)), "sectors"))
	}
	what := "load"
	if store, _ := Asked(e.Quantity); store {
		what = "store"
	}
	r := fmt.Sprintf("warp 0's %s touches %s for its %s", what, words.Plural(first, "sector"), words.Plural(used, "byte"))
	if len(counts) > 1 {
		r = fmt.Sprintf("warp 0's %d %ss touch %s sectors", len(counts), what, strings.Join(counts, " and "))
	}
	return r
}

func sharedReason(e *Question, p *Part) string {
	ins, err := sectors.WarpInstructions(p.Spec, p.idx, 0)
	if err != nil {
		return err.Error()
	}
	store := strings.Contains(e.Quantity, "_st_")
	for _, in := range ins {
		if !in.Shared || in.Store != store || in.Warp.Active == 0 {
			continue
		}
		n, err := sectors.Wavefronts(in.Warp)
		if err != nil {
			return err.Error()
		}
		return fmt.Sprintf("in warp 0's %s, the busiest of the %d banks holds %s, each a wavefront of its own", in.Access, sectors.Banks, words.Plural(n, "distinct word"))
	}
	return "warp 0 issues no such shared access"
}

func timeReason(k *Key) string {
	e := k.Question
	measured := k.HasMeasured
	var parts []string
	for _, p := range k.Parts {
		v := p.Model
		if measured {
			v = p.Measured
		}
		parts = append(parts, fmt.Sprintf("%s %s", fmtQ(e.Quantity, v, false), specShort(p.Spec, e.Specs)))
	}
	src := "the model gives"
	if measured {
		src = "measured: "
	}
	if e.Combine == Ratio {
		return fmt.Sprintf("%s %s against %s", strings.TrimSpace(src), parts[0], parts[1])
	}
	return strings.TrimSpace(src) + " " + parts[0]
}

// specShort names a spec by what sets it apart from the others of its
// question, for a sentence: "at stride 32"; "" when nothing does.
func specShort(s spec.Spec, all []spec.Spec) string {
	if diff := s.Differences(all); len(diff) > 0 {
		return "(" + strings.Join(diff, ", ") + ")"
	}
	return ""
}
