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

// explain builds the question-level explanation of a key.
func explain(k *Key) []Section {
	e := k.Question
	fig := e.figure()
	var secs []Section
	for i := range k.Parts {
		secs = append(secs, warpSection(e, &k.Parts[i], len(k.Parts)))
	}
	secs = append(secs, arithmetic(k, fig))
	switch fig.Level {
	case figures.DRAM:
		secs = append(secs, dramSection(k))
	case figures.Time:
		secs = append(secs, dramSection(k), timeSection(k))
	}
	secs = append(secs, comparison(k, fig))
	return secs
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

func arithmetic(k *Key, fig figures.Figure) Section {
	e := k.Question
	sec := Section{Title: "The arithmetic"}
	for _, p := range k.Parts {
		sec.Lines = append(sec.Lines, partArithmetic(e, p)...)
	}
	if e.Combine == Ratio {
		a, b := k.Parts[0], k.Parts[1]
		sec.Lines = append(sec.Lines, fmt.Sprintf("The ratio, the first over the second: %s / %s = %s.",
			fmtQ(e.Quantity, a.Model), fmtQ(e.Quantity, b.Model), fmtNum(k.Model)))
	}
	if !fig.Exact {
		sec.Lines = append(sec.Lines, "The model estimates this figure; the measurement is what the GPU did.")
	}
	return sec
}

func partArithmetic(e *Question, p Part) []string {
	s, pr := p.Spec, p.Modelled
	m := pr.Metrics
	useful := float64(s.UsefulBytes())
	launch := fmt.Sprintf("%s launches %s in %s of %d: %s.",
		specLabel(s, e.Specs), words.Unit(fmtNum(float64(s.Threads())), "threads"), words.Unit(fmtNum(float64(s.GridBlocks())), "blocks"), s.Block,
		words.Unit(fmtNum(float64(pr.Warps)), "warps"))
	switch e.Quantity {
	case figures.LdSectorsPerRequest.Name:
		return []string{launch, fmt.Sprintf("The model counts %s in %s: %s / %s = %s.",
			words.Unit(fmtNum(m[metrics.LdSectors]), "load sectors"), words.Unit(fmtNum(m[metrics.LdRequests]), "load requests"),
			fmtNum(m[metrics.LdSectors]), fmtNum(m[metrics.LdRequests]), words.Unit(fmtNum(p.Model), "sectors per request"))}
	case figures.StSectorsPerRequest.Name:
		return []string{launch, fmt.Sprintf("The model counts %s in %s: %s / %s = %s.",
			words.Unit(fmtNum(m[metrics.StSectors]), "store sectors"), words.Unit(fmtNum(m[metrics.StRequests]), "store requests"),
			fmtNum(m[metrics.StSectors]), fmtNum(m[metrics.StRequests]), words.Unit(fmtNum(p.Model), "sectors per request"))}
	case figures.Efficiency.Name:
		fetched := sectors.SectorBytes * (m[metrics.LdSectors] + m[metrics.StSectors])
		return []string{launch, fmt.Sprintf("Bytes the lanes use (each instruction's distinct bytes, loads and stores): %s. Bytes of the sectors they touch: 32 × (%s + %s) = %s. %s / %s = %s (%s).",
			fmtNum(float64(pr.L1UsefulBytes)), fmtNum(m[metrics.LdSectors]), fmtNum(m[metrics.StSectors]), fmtNum(fetched),
			fmtNum(float64(pr.L1UsefulBytes)), fmtNum(fetched), fmtNum(p.Model), pct(p.Model))}
	case metrics.LdRequests, metrics.StRequests, metrics.LdSectors, metrics.StSectors:
		return []string{launch, fmt.Sprintf("%s = %s, counted over every warp (warp 0 is drawn above).", e.Quantity, fmtNum(m[e.Quantity]))}
	case metrics.DRAMRead, metrics.DRAMWrite:
		return []string{launch, fmt.Sprintf("The model's L2 turns its %s load and %s store sectors into %s = %s.",
			fmtNum(m[metrics.LdSectors]), fmtNum(m[metrics.StSectors]), e.Quantity, fmtQ(e.Quantity, m[e.Quantity]))}
	case figures.DRAMBytesPerUsefulByte.Name:
		return []string{launch, fmt.Sprintf("DRAM read %s + written %s, over the %s useful bytes the kernel must move (%s): %s.",
			bytesStr(m[metrics.DRAMRead]), bytesStr(m[metrics.DRAMWrite]), fmtNum(useful), spec.UsefulDoc(s.Kernel), fmtNum(p.Model))}
	case figures.TimeSeconds.Name, figures.UsefulBandwidth.Name, figures.FractionOfMemcpy.Name:
		d, _ := devices.Lookup(s.Device)
		dram := m[metrics.DRAMRead] + m[metrics.DRAMWrite]
		tp := pr.Time
		dramLimit := fmt.Sprintf("DRAM %s at %s (%s)", bytesStr(dram), bandwidth(d.Time.CopyBandwidth), duration(tp.Bandwidth))
		if plain := dram / d.Time.CopyBandwidth; tp.Bandwidth > 1.005*plain {
			what := "its sparse accesses occupy"
			if slices.ContainsFunc(pr.Traffic.Rewrite.Blocks[:], func(b float64) bool { return b > 0 }) {
				what = "its sparse accesses, and the write-backs of lines its warps have just read, occupy"
			}
			dramLimit = fmt.Sprintf("DRAM %s at %s (%s), charged %s as %s DRAM longer than their bytes", bytesStr(dram), bandwidth(d.Time.CopyBandwidth), duration(plain), duration(tp.Bandwidth), what)
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
				more += fmt.Sprintf(", %s %s (%s)", fmtNum(l.n), l.what, duration(l.seconds))
			}
		}
		lines := []string{launch, fmt.Sprintf("Time model: %s launch overhead + the longest of %s, waiting out the loads with %s in flight per SM at %s each (%s)%s, and starting %s blocks (%s): %s bound, %s.",
			duration(tp.Launch), dramLimit, bytesStr(tp.InFlightPerSM), duration(tp.Latency1), duration(tp.Latency), more,
			fmtNum(float64(s.GridBlocks())), duration(tp.Blocks), tp.Bound, duration(pr.TimeSeconds))}
		if e.Quantity != figures.TimeSeconds.Name {
			bw := model(figures.UsefulBandwidth, p)
			line := fmt.Sprintf("Useful bandwidth: %s useful bytes (%s) / %s = %s.", fmtNum(useful), spec.UsefulDoc(s.Kernel), duration(pr.TimeSeconds), bandwidth(bw))
			if e.Quantity == figures.FractionOfMemcpy.Name {
				line += fmt.Sprintf(" Over cudaMemcpy's %s: %s.", bandwidth(d.Time.CopyBandwidth), fmtNum(model(figures.FractionOfMemcpy, p)))
			}
			lines = append(lines, line)
		}
		return lines
	}
	return []string{launch}
}

func dramSection(k *Key) Section {
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
			v := model(figures.DRAMBytesPerUsefulByte, p)
			per = append(per, v)
			sec.Lines = append(sec.Lines, fmt.Sprintf("  %s: %s DRAM bytes per useful byte (model)", specLabel(p.Spec, k.Question.Specs), fmtNum(v)))
		}
		if len(per) == 2 && per[0] > 0 && per[1] > 0 {
			dram := func(p Part) float64 {
				return p.Modelled.Metrics[metrics.DRAMRead] + p.Modelled.Metrics[metrics.DRAMWrite]
			}
			switch k.Question.Quantity {
			case figures.UsefulBandwidth.Name:
				sec.Lines = append(sec.Lines, fmt.Sprintf("A streaming kernel's time follows its DRAM bytes, not its sectors: per useful byte the second moves %s× the DRAM bytes of the first.", fmtNum(per[1]/per[0])))
			case figures.TimeSeconds.Name:
				sec.Lines = append(sec.Lines, fmt.Sprintf("A streaming kernel's time follows its DRAM bytes, not its sectors: the first moves %s× the DRAM bytes of the second.", fmtNum(dram(k.Parts[0])/dram(k.Parts[1]))))
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
	return fmt.Sprintf("Warp 0 of %s, from a cold L2: its loads touch %s of %d bytes = %d bytes from DRAM for %d bytes used: %s per useful byte.",
		specLabel(s, all), words.Plural(blocks, "fetch block"), s.L2Fetch, fetched, used, fmtNum(float64(fetched)/float64(used)))
}

func timeSection(k *Key) Section {
	s := k.Parts[0].Spec
	d, _ := devices.Lookup(s.Device)
	return Section{Title: "What the time model leaves out", Lines: []string{
		fmt.Sprintf("The time model's latency limit is Little's law: an SM finishes (bytes in flight) / (latency) bytes a second, and on the %s the latency grows from %s with what is in flight. It charges a sparse access the DRAM time it occupies, by how far apart its request's blocks lie, and the sparse write-back of a line a warp has just read (a read-modify-write) more, but not DRAM refresh or the clocks of the run.",
			d.GPU, duration(d.Time.LatencySeconds)),
		fmt.Sprintf("A copy with one 4-byte load per thread has at most %d threads × 4 bytes = %s in flight per SM, and fewer when small blocks cap the threads an SM holds (at most %d resident blocks per SM on the %s: blocks of 32 threads fill %d of its %d thread slots).",
			d.MaxThreadsPerSM, bytesStr(float64(4*d.MaxThreadsPerSM)), d.MaxBlocksPerSM, d.GPU, min(d.MaxThreadsPerSM, 32*d.MaxBlocksPerSM), d.MaxThreadsPerSM),
	}}
}

func comparison(k *Key, fig figures.Figure) Section {
	e := k.Question
	sec := Section{Title: "Model and measurement"}
	if !k.HasMeasured {
		sec.Lines = append(sec.Lines, "No measured answer: "+k.NoMeasurement+".")
		if !k.Graded() {
			sec.Lines = append(sec.Lines, "This exercise is graded against the measurement, so without one it is not graded; the model's answer above is for information.")
		}
		return sec
	}
	sec.Lines = append(sec.Lines, fmt.Sprintf("Model: %s. Measured (%s): %s.", fmtAnswer(e, k.Model), k.Origin, fmtAnswer(e, k.Measured)))
	if e.Combine == Ratio {
		for _, p := range k.Parts {
			sec.Lines = append(sec.Lines, fmt.Sprintf("  %s: model %s, measured %s", specLabel(p.Spec, e.Specs), fmtQ(e.Quantity, p.Model), fmtQ(e.Quantity, p.Measured)))
		}
	}
	tol := e.Tolerance.Measured
	if Within(k.Model, k.Measured, tol) {
		sec.Lines = append(sec.Lines, fmt.Sprintf("They agree within %s.", pct(tol)))
		return sec
	}
	sec.Lines = append(sec.Lines, fmt.Sprintf("They differ by more than %s: the measurement is %s× the model's answer.", pct(tol), fmtNum(k.Measured/k.Model)))
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
		lines = append(lines, fmt.Sprintf("  %s: the GPU took %s× the model's time (%s than the model, which called it %s bound)",
			specLabel(p.Spec, k.Question.Specs), fmtNum(r), way, p.Modelled.Time.Bound))
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

// fmtNum prints a number for a person: integers whole, others to four
// significant digits.
func fmtNum(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return fmt.Sprint(v)
	}
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return strconv.FormatInt(int64(v), 10)
	}
	s := strconv.FormatFloat(v, 'g', 4, 64)
	if strings.ContainsAny(s, "e") {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return s
}

// withUnit prints a question's answer and its unit, the unit agreeing
// with the number: "1 sector per request", "4 sectors per request".
func withUnit(e *Question, v float64) string { return words.Unit(fmtAnswer(e, v), e.Unit) }

// fmtAnswer prints a question's answer: a ratio as a bare number, else
// with the quantity's unit.
func fmtAnswer(e *Question, v float64) string {
	if e.Combine == Ratio {
		return fmtNum(v)
	}
	return fmtQ(e.Quantity, v)
}

// fmtQ prints a value of a quantity with its unit where it has one.
func fmtQ(quantity string, v float64) string {
	switch quantity {
	case figures.TimeSeconds.Name:
		return duration(v)
	case figures.UsefulBandwidth.Name:
		return bandwidth(v)
	case metrics.DRAMRead, metrics.DRAMWrite:
		return bytesStr(v)
	case figures.Efficiency.Name, figures.FractionOfMemcpy.Name:
		return fmt.Sprintf("%s (%s)", fmtNum(v), pct(v))
	}
	return fmtNum(v)
}

// pct prints a fraction as a percentage with at most two decimals: 12.5%.
func pct(v float64) string {
	s := strconv.FormatFloat(100*v, 'f', 2, 64)
	return strings.TrimRight(strings.TrimRight(s, "0"), ".") + "%"
}

func duration(sec float64) string {
	switch {
	case sec >= 1:
		return fmt.Sprintf("%.4g s", sec)
	case sec >= 1e-3:
		return fmt.Sprintf("%.4g ms", sec*1e3)
	}
	return fmt.Sprintf("%.4g µs", sec*1e6)
}

func bandwidth(bps float64) string {
	if bps >= 1e12 {
		return fmt.Sprintf("%.4g TB/s", bps/1e12)
	}
	return fmt.Sprintf("%.4g GB/s", bps/1e9)
}

func bytesStr(b float64) string {
	switch {
	case b >= 1e9:
		return fmt.Sprintf("%s B (%.4g GB)", fmtNum(b), b/1e9)
	case b >= 1e6:
		return fmt.Sprintf("%s B (%.4g MB)", fmtNum(b), b/1e6)
	case b >= 1e4:
		return fmt.Sprintf("%s B (%.4g kB)", fmtNum(b), b/1e3)
	}
	return fmtNum(b) + " B"
}
