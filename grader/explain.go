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
}

// explain builds the exercise-level explanation of a key. Its numbers
// are one units.System: a number stated twice (a time, then the bandwidth
// it gives, then a ratio of two bandwidths) is written one way, with the
// digits every equation it is in needs to hold as printed. The sections
// are built twice, the first time only to put every equation in the
// system, so that a line written early has the digits a later one needs.
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
	for i := range k.Parts {
		secs = append(secs, warpSection(e, &k.Parts[i], len(k.Parts)))
	}
	secs = append(secs, arithmetic(k, fig, sys))
	switch fig.Level {
	case figures.DRAM:
		secs = append(secs, dramSection(k, sys))
	case figures.Time:
		secs = append(secs, dramSection(k, sys), timeSection(k))
	}
	secs = append(secs, comparison(k, fig, sys))
	return secs
}

// equation adds e to sys and writes it.
func equation(sys *units.System, e units.Equation) string { return sys.String(sys.Add(e)) }

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
	sec := Section{Title: title, Lines: []string{"Spec: " + s.String()}}
	idx := p.idx
	if p.idxErr != nil {
		sec.Lines = append(sec.Lines, "The indices could not be generated: "+p.idxErr.Error())
		return sec
	}
	ins := warpInstrs(s, idx, 0, 0)
	lanes := min(int64(s.Block), sectors.WarpSize, s.Threads())
	sec.Lines = append(sec.Lines, fmt.Sprintf("Warp 0 of block 0 (threads 0–%d) issues %s:",
		lanes-1, words.Plural(len(ins), "memory instruction")))
	shown := 0
	for _, in := range ins {
		if !relevant(e.Quantity, in) {
			continue
		}
		shown++
		sec.Lines = append(sec.Lines, instrLines(in)...)
	}
	if shown < len(ins) {
		sec.Lines = append(sec.Lines, fmt.Sprintf("(%d more %s not shown: the question counts %s only.)",
			len(ins)-shown, words.Noun(len(ins)-shown, "instruction"), map[bool]string{true: "stores", false: "loads"}[strings.HasPrefix(e.Quantity, "st_") || strings.Contains(e.Quantity, "_op_st")]))
	}
	if r := s.Block % sectors.WarpSize; r != 0 {
		warps := (s.Block + sectors.WarpSize - 1) / sectors.WarpSize
		last := "the last"
		if warps == 1 {
			last = "it"
		}
		sec.Lines = append(sec.Lines, fmt.Sprintf("Blocks of %s run as %s; %s has %s, and still issues a whole request for each instruction.",
			words.Plural(s.Block, "thread"), words.Plural(warps, "warp"), last, words.Plural(r, "active lane")))
	}
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
	lines = append(lines, fmt.Sprintf("  → %s used of %s × 32 = %s fetched: %s",
		words.Plural(a.UsefulBytes, "byte"), count(float64(len(a.Sectors))), count(float64(a.FetchedBytes())), units.Percent.Format(a.Efficiency())))
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
	sec := Section{Title: "The arithmetic"}
	for _, p := range k.Parts {
		sec.Lines = append(sec.Lines, partArithmetic(e, p, sys)...)
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

func partArithmetic(e *Question, p Part, sys *units.System) []string {
	s, pr := p.Spec, p.Modelled
	m := pr.Metrics
	useful := float64(s.UsefulBytes())
	launch := fmt.Sprintf("%s launches %s in %s of %d: %s.",
		specLabel(s, e.Specs), units.With(count(float64(s.Threads())), "threads"), units.With(count(float64(s.GridBlocks())), "blocks"), s.Block,
		units.With(count(float64(pr.Warps)), "warps"))
	switch e.Quantity {
	case figures.LdSectorsPerRequest.Name:
		return []string{launch, fmt.Sprintf("The model counts %s in %s: %s.",
			units.With(count(m[metrics.LdSectors]), "load sectors"), units.With(count(m[metrics.LdRequests]), "load requests"),
			equation(sys, units.Quotient(units.Term{V: p.Model, Unit: units.Ratio, Noun: "sectors per request"}, units.Term{V: m[metrics.LdSectors], Unit: units.Count}, units.Term{V: m[metrics.LdRequests], Unit: units.Count})))}
	case figures.StSectorsPerRequest.Name:
		return []string{launch, fmt.Sprintf("The model counts %s in %s: %s.",
			units.With(count(m[metrics.StSectors]), "store sectors"), units.With(count(m[metrics.StRequests]), "store requests"),
			equation(sys, units.Quotient(units.Term{V: p.Model, Unit: units.Ratio, Noun: "sectors per request"}, units.Term{V: m[metrics.StSectors], Unit: units.Count}, units.Term{V: m[metrics.StRequests], Unit: units.Count})))}
	case figures.Efficiency.Name:
		fetched := sectors.SectorBytes * (m[metrics.LdSectors] + m[metrics.StSectors])
		return []string{launch, fmt.Sprintf("Bytes the lanes use (each instruction's distinct bytes, loads and stores): %s. Bytes of the sectors they touch: 32 × (%s + %s) = %s. %s (%s).",
			count(float64(pr.L1UsefulBytes)), count(m[metrics.LdSectors]), count(m[metrics.StSectors]), count(fetched),
			equation(sys, units.Quotient(units.Term{V: p.Model, Unit: units.Ratio}, units.Term{V: float64(pr.L1UsefulBytes), Unit: units.Count}, units.Term{V: fetched, Unit: units.Count})),
			units.Percent.Format(p.Model))}
	case metrics.LdRequests, metrics.StRequests, metrics.LdSectors, metrics.StSectors:
		return []string{launch, fmt.Sprintf("%s = %s, counted over every warp (warp 0 is drawn above).", e.Quantity, count(m[e.Quantity]))}
	case metrics.DRAMRead, metrics.DRAMWrite:
		return []string{launch, fmt.Sprintf("The model's L2 turns its %s load and %s store sectors into %s = %s.",
			count(m[metrics.LdSectors]), count(m[metrics.StSectors]), e.Quantity, fmtQ(e.Quantity, m[e.Quantity], false))}
	case figures.DRAMBytesPerUsefulByte.Name:
		return []string{launch, fmt.Sprintf("DRAM read %s + written %s, over the %s useful bytes the kernel must move (%s): %s.",
			bytesStr(m[metrics.DRAMRead]), bytesStr(m[metrics.DRAMWrite]), count(useful), spec.UsefulDoc(s.Kernel), sys.Text(units.Term{V: p.Model, Unit: units.Ratio}))}
	case figures.TimeSeconds.Name, figures.UsefulBandwidth.Name, figures.FractionOfMemcpy.Name:
		return append([]string{launch}, timeArithmetic(e, p, sys)...)
	}
	return []string{launch}
}

// timeArithmetic works out the time model's estimate of a part, and the
// useful bandwidth and share of cudaMemcpy it gives, each as equations of
// sys: the launch overhead and the longest limit add up to the time as
// printed, the DRAM bytes over the copy bandwidth come to the DRAM time,
// the useful bytes over the time to the bandwidth.
func timeArithmetic(e *Question, p Part, sys *units.System) []string {
	s, pr := p.Spec, p.Modelled
	m, tp := pr.Metrics, pr.Time
	d, _ := devices.Lookup(s.Device)
	sec := func(v float64) units.Term { return units.Term{V: v, Unit: units.Seconds} }
	longest := max(tp.Bandwidth, tp.Latency, tp.Blocks, tp.L1Lines, tp.L2Stores, tp.Shared)
	sum := sys.Add(units.Equation{Terms: []units.Term{sec(tp.Launch), sec(longest)}, Ops: []units.Op{units.Plus}, Result: sec(pr.TimeSeconds)})
	limit := func(v float64) string { return sys.Text(sec(v)) }

	dram := m[metrics.DRAMRead] + m[metrics.DRAMWrite]
	copyBW := d.Time.CopyBandwidth
	plain := sys.Add(units.Quotient(sec(dram/copyBW), units.Term{V: dram, Unit: units.Count}, units.Term{V: copyBW, Unit: units.Bandwidth}))
	dramLimit := fmt.Sprintf("DRAM %s at %s (%s)", bytesStr(dram), sys.Terms(plain)[1], sys.Result(plain))
	if tp.Bandwidth > dram/copyBW*(1+1e-9) {
		what := "its sparse accesses occupy"
		if slices.ContainsFunc(pr.Traffic.Rewrite.Blocks[:], func(b float64) bool { return b > 0 }) {
			what = "its sparse accesses, and the write-backs of lines its warps have just read, occupy"
		}
		dramLimit += fmt.Sprintf(", charged %s as %s DRAM longer than their bytes", limit(tp.Bandwidth), what)
	}
	// The limits of lines, store packets and banks, where they count.
	var more string
	for _, l := range []struct {
		what    string
		n       float64
		seconds float64
	}{
		{"lines the L1s look up", float64(pr.Traffic.LdLines + pr.Traffic.StLines), tp.L1Lines},
		{"store packets to the L2", float64(pr.Traffic.StPackets), tp.L2Stores},
		{"shared-memory wavefronts", m[metrics.ShLdWavefronts] + m[metrics.ShStWavefronts], tp.Shared},
	} {
		if l.seconds > 0 {
			more += fmt.Sprintf(", %s %s (%s)", count(l.n), l.what, limit(l.seconds))
		}
	}
	lines := []string{fmt.Sprintf("Time model: %s launch overhead + the longest of %s, waiting out the loads with %s in flight per SM at %s each (%s)%s, and starting %s blocks (%s): %s bound, %s.",
		sys.Terms(sum)[0], dramLimit, bytesStr(tp.InFlightPerSM), units.Seconds.Format(tp.Latency1), limit(tp.Latency), more,
		count(float64(s.GridBlocks())), limit(tp.Blocks), tp.Bound, sys.Result(sum))}
	if e.Quantity == figures.TimeSeconds.Name {
		return lines
	}
	bw := model(figures.UsefulBandwidth, p)
	line := fmt.Sprintf("Useful bandwidth (%s): %s.", spec.UsefulDoc(s.Kernel), equation(sys, units.Quotient(units.Term{V: bw, Unit: units.Bandwidth},
		units.Term{V: float64(s.UsefulBytes()), Unit: units.Count, Noun: "useful bytes"}, sec(pr.TimeSeconds))))
	if e.Quantity == figures.FractionOfMemcpy.Name {
		f := model(figures.FractionOfMemcpy, p)
		line += fmt.Sprintf(" Over cudaMemcpy's: %s (%s).", equation(sys, units.Quotient(units.Term{V: f, Unit: units.Ratio},
			units.Term{V: bw, Unit: units.Bandwidth}, units.Term{V: copyBW, Unit: units.Bandwidth})), units.Percent.Format(f))
	}
	return append(lines, line)
}

func dramSection(k *Key, sys *units.System) Section {
	sec := Section{Title: "Below the L1: DRAM"}
	s := k.Parts[0].Spec
	d, _ := devices.Lookup(s.Device)
	sec.Lines = append(sec.Lines, fmt.Sprintf(
		"The L1 counts 32-byte sectors; DRAM moves what the L2 misses. On a load miss the %s's L2 fetches the whole aligned block of l2_fetch_granularity bytes (%d here) that holds the sector, so a lane that uses a sector alone costs a whole block.",
		d.GPU, s.L2Fetch))
	for _, p := range k.Parts {
		if line := coldWarpLine(p.Spec, k.Question.Specs); line != "" {
			sec.Lines = append(sec.Lines, line)
		}
	}
	if len(k.Parts) > 1 || k.Question.figure().Level == figures.Time {
		var per []float64
		for _, p := range k.Parts {
			per = append(per, model(figures.DRAMBytesPerUsefulByte, p))
		}
		// The second's DRAM bytes per useful byte as a multiple of the
		// first's, with the digits that make the listed values give it.
		texts := make([]string, len(per))
		var multiple string
		for i, v := range per {
			texts[i] = units.Ratio.Format(v)
		}
		if len(per) == 2 && per[0] > 0 && per[1] > 0 {
			i := sys.Add(units.Quotient(units.Term{V: per[1] / per[0], Unit: units.Multiple},
				units.Term{V: per[1], Unit: units.Ratio}, units.Term{V: per[0], Unit: units.Ratio}))
			multiple = sys.Result(i)
		}
		for i, v := range per {
			texts[i] = sys.Text(units.Term{V: v, Unit: units.Ratio})
		}
		for i, p := range k.Parts {
			sec.Lines = append(sec.Lines, fmt.Sprintf("  %s: %s (model)", specLabel(p.Spec, k.Question.Specs), units.With(texts[i], "DRAM bytes per useful byte")))
		}
		if multiple != "" {
			dram := func(p Part) float64 {
				return p.Modelled.Metrics[metrics.DRAMRead] + p.Modelled.Metrics[metrics.DRAMWrite]
			}
			switch k.Question.Quantity {
			case figures.UsefulBandwidth.Name:
				sec.Lines = append(sec.Lines, fmt.Sprintf("A streaming kernel's time follows its DRAM bytes, not its sectors: per useful byte the second moves %s the DRAM bytes of the first.", multiple))
			case figures.TimeSeconds.Name:
				sec.Lines = append(sec.Lines, fmt.Sprintf("A streaming kernel's time follows its DRAM bytes, not its sectors: the first moves %s the DRAM bytes of the second.", units.Multiple.Format(dram(k.Parts[0])/dram(k.Parts[1]))))
			}
		}
	}
	hasStore := false
	for _, p := range k.Parts {
		hasStore = hasStore || p.Modelled.Metrics[metrics.StRequests] > 0
	}
	if hasStore {
		sec.Lines = append(sec.Lines, fmt.Sprintf(
			"Stores allocate their sector in the L2 without reading DRAM; a sector written only in part is read first and written back whole (32 + 32 bytes). Written bytes still in the L2 when the launch ends are not written back within it: those with less than %s of traffic after them, and no more than %s in all.",
			bytesStr(float64(d.DRAM.DirtyL2Bytes)), bytesStr(float64(d.DRAM.DirtyWatermarkBytes))))
	}
	return sec
}

// coldWarpLine says what warp 0's loads cost from a cold L2, as the
// model's L2 works it out (sectors.ColdWarp): the fetch blocks they touch.
func coldWarpLine(s spec.Spec, all []spec.Spec) string {
	if s.Kernel == spec.GatherCopy {
		return ""
	}
	fetched, used, err := sectors.ColdWarp(s, nil, 0)
	if err != nil || used == 0 {
		return ""
	}
	blocks := int(fetched) / s.L2Fetch
	return fmt.Sprintf("Warp 0 of %s, from a cold L2: its loads touch %s of %d bytes = %s bytes from DRAM for %s bytes used: %s per useful byte.",
		specLabel(s, all), words.Plural(blocks, "fetch block"), s.L2Fetch, count(float64(fetched)), count(float64(used)), units.Ratio.Format(float64(fetched)/float64(used)))
}

func timeSection(k *Key) Section {
	s := k.Parts[0].Spec
	d, _ := devices.Lookup(s.Device)
	return Section{Title: "What the time model leaves out", Lines: []string{
		fmt.Sprintf("The time model's latency limit is Little's law: an SM finishes (bytes in flight) / (latency) bytes a second, and on the %s the latency grows from %s with what is in flight. It charges a sparse access the DRAM time it occupies, by how far apart its request's blocks lie, and the sparse write-back of a line a warp has just read (a read-modify-write) more, but not DRAM refresh or the clocks of the run.",
			d.GPU, units.Seconds.Format(d.Time.LatencySeconds)),
		fmt.Sprintf("A copy with one 4-byte load per thread has at most %s threads × 4 bytes = %s in flight per SM, and fewer when small blocks cap the threads an SM holds (at most %d resident blocks per SM on the %s: blocks of 32 threads fill %s of its %s thread slots).",
			count(float64(d.MaxThreadsPerSM)), bytesStr(float64(4*d.MaxThreadsPerSM)), d.MaxBlocksPerSM, d.GPU, count(float64(min(d.MaxThreadsPerSM, 32*d.MaxBlocksPerSM))), count(float64(d.MaxThreadsPerSM))),
	}}
}

func comparison(k *Key, fig figures.Figure, sys *units.System) Section {
	e := k.Question
	sec := Section{Title: "Model and measurement"}
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
		lines = append(lines, "Where the GPU is slower than the model: the model charges DRAM for bytes only, but sparse accesses (a sector or two per 128-byte line, strides of 32 floats and more, structs of 64 bytes and more, random gathers) spread the same bytes over many more DRAM pages and bursts, which DRAM serves more slowly; and it does not model the clocks of the run.")
	}
	if faster {
		lines = append(lines, "Where the GPU is faster than the model: the model's Little's-law limit waits out every load at DRAM's latency, one dependent step after another. Loads that hit in the L1 or L2 (the later field loads of a whole-struct sum, a dense gather's reads of lines its neighbours just fetched, the index loads of a gather) return far sooner, and the GPU keeps more of them in flight than the model assumes, so the launch beats the limit. On the H200 this is so for dense gathers (identity, warp_shuffle, sorted indices), strided_read at strides 2 to 16 and sum_fields_aos (the lessons/sectors documentation lists them).")
	}
	if !slower && !faster && len(lines) > 1 {
		lines = append(lines, fmt.Sprintf("No launch is off by more than %s on its own: the ratio of two launches compounds their misses when one runs faster than the model and the other slower.", units.Percent.Format(k.Question.Tolerance.Measured)))
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
