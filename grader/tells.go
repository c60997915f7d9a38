package grader

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strings"
	"sync"

	"github.com/coalescing-course/coalesce/lessons/figures"
	"github.com/coalescing-course/coalesce/lessons/metrics"
	"github.com/coalescing-course/coalesce/lessons/sectors"
	"github.com/coalescing-course/coalesce/lessons/spec"
)

// This file says what gives a question's answer away: which values a
// display may show before the learner has answered, and which it must
// hold back. lab asks it for every value it displays (a Gate); the leak
// test of `make test` (cmd/leaks) asks it for every
// value the executed notebooks showed.

// Tell is one value a display shows, with what it is a value of: a
// figure of a launch (a table cell, a chart's point, a verdict's line),
// one warp instruction (Explain, a warp diagram), or a fact of the device
// profile (Status). Whatever tells a question's answer before the learner
// has answered it is withheld.
type Tell struct {
	// Spec is the launch the value belongs to; its Kernel is "" for a
	// hand-built warp or a device fact.
	Spec spec.Spec `json:"-"`
	// Figure names the figure (lessons/figures: a derived figure or an
	// ncu metric) the value is of; "" for a device fact.
	Figure string `json:"figure,omitempty"`
	// Judge says whose value it is: the model's or a measurement's.
	Judge Judge `json:"judge,omitempty"`
	// Value is the value shown.
	Value float64 `json:"value"`
	// Counts are the launch's counts the value was computed from, when
	// known (CountsOf): they decide which other launches it is
	// equivalent to.
	Counts *Counts `json:"-"`
	// Warp is the one instruction shown, for a value of a single warp
	// instruction rather than of a launch.
	Warp *Shape `json:"warp,omitempty"`
	// Fact names a device fact (Facts) shown, such as the L2's fetch
	// granularity.
	Fact string `json:"fact,omitempty"`
}

// MarshalJSON writes a tell with its launch as the spec's canonical
// string, as the leak test reads it back from a notebook's outputs.
func (t Tell) MarshalJSON() ([]byte, error) {
	type plain Tell
	v := struct {
		Spec   string      `json:"spec,omitempty"`
		Counts *countsJSON `json:"counts,omitempty"`
		plain
	}{plain: plain(t)}
	if t.Spec.Kernel != "" {
		v.Spec = t.Spec.String()
	}
	if t.Counts != nil {
		c := countsToJSON(t.Counts)
		if !t.Counts.UsefulKnown {
			c.L1Useful = -1
		}
		v.Counts = &c
	}
	if math.IsNaN(t.Value) || math.IsInf(t.Value, 0) {
		v.plain.Value = 0
	}
	return json.Marshal(v)
}

// UnmarshalJSON reads a tell MarshalJSON wrote; its counts are not kept.
func (t *Tell) UnmarshalJSON(data []byte) error {
	type plain Tell
	var v struct {
		Spec   json.RawMessage `json:"spec"`
		Counts *countsJSON     `json:"counts"`
		plain
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		return fmt.Errorf("grader: a tell: %w", err)
	}
	*t = Tell(v.plain)
	if v.Counts != nil {
		t.Counts = v.Counts.counts()
		if v.Counts.L1Useful < 0 {
			t.Counts.L1Useful, t.Counts.UsefulKnown = 0, false
		}
	}
	if len(v.Spec) > 0 {
		var js string
		if err := json.Unmarshal(v.Spec, &js); err != nil {
			return fmt.Errorf("grader: a tell's spec: %w", err)
		}
		s, err := spec.Parse([]byte(js))
		if err != nil {
			return fmt.Errorf("grader: a tell's spec: %w", err)
		}
		t.Spec = s
	}
	return nil
}

// String names what the tell is of, for a message: "ld_sectors_per_request
// of strided_copy, stride 32, n 2^26 (model)".
func (t Tell) String() string {
	switch {
	case t.Fact != "":
		return "the device's " + t.Fact
	case t.Spec.Kernel != "":
		s := t.Figure + " of " + t.Spec.Brief()
		if t.Judge != "" {
			s += " (" + string(t.Judge) + ")"
		}
		return s
	case t.Warp != nil:
		return t.Figure + " of a warp of " + t.Warp.String()
	}
	return t.Figure
}

// Facts are the device facts a display may show that tell an answer, by
// the name a Tell and questions.json give them.
var Facts = []string{FactL2Fetch}

// FactL2Fetch is the L2's default fetch granularity, which Status prints.
const FactL2Fetch = "l2_fetch_granularity"

// Counts are a launch's counts, the model's or ncu's: what decides
// whether two launches are the same as far as a figure goes.
type Counts struct {
	Warps                  float64
	LdRequests, LdSectors  float64
	StRequests, StSectors  float64
	ShLdRequests, ShLdWave float64
	ShStRequests, ShStWave float64
	// L1Useful is the bytes the lanes use (sectors.Launch.L1UsefulBytes),
	// which only the model knows: valid when UsefulKnown. Useful is the
	// spec's useful bytes.
	L1Useful    float64
	UsefulKnown bool
	Useful      float64
}

// CountsOf returns the counts of a figure's values, nil when they hold no
// counters (a launch timed, not profiled).
func CountsOf(v figures.Values) *Counts {
	if v.Metrics == nil {
		return nil
	}
	m := v.Metrics
	c := &Counts{
		Warps:      float64(sectors.Warps(v.Spec)),
		LdRequests: m[metrics.LdRequests], LdSectors: m[metrics.LdSectors],
		StRequests: m[metrics.StRequests], StSectors: m[metrics.StSectors],
		Useful:       float64(v.Spec.UsefulBytes()),
		ShLdRequests: m[metrics.ShLdRequests], ShLdWave: m[metrics.ShLdWavefronts],
		ShStRequests: m[metrics.ShStRequests], ShStWave: m[metrics.ShStWavefronts],
	}
	if v.L1UsefulBytes >= 0 {
		c.L1Useful, c.UsefulKnown = float64(v.L1UsefulBytes), true
	}
	return c
}

// Shape is one warp instruction as the L1 sees it: what it touched and
// what its lanes used.
type Shape struct {
	// Op is "load" or "store"; "" for a warp built by hand, which may
	// stand for either.
	Op string `json:"op,omitempty"`
	// Shared marks an access to shared memory: Sectors then counts
	// wavefronts.
	Shared  bool `json:"shared,omitempty"`
	Sectors int  `json:"sectors"`
	Useful  int  `json:"useful"`
	Lanes   int  `json:"lanes"`
}

func (s Shape) String() string {
	what := "sectors"
	if s.Shared {
		what = "wavefronts"
	}
	return fmt.Sprintf("%d lanes: %d %s for %d bytes used", s.Lanes, s.Sectors, what, s.Useful)
}

// ShapeOf returns a global warp's shape; op is "load", "store" or "" for
// a warp built by hand.
func ShapeOf(w sectors.Warp, op string) (Shape, error) {
	a, err := sectors.Coalesce(w)
	if err != nil {
		return Shape{}, err
	}
	return Shape{Op: op, Sectors: len(a.Sectors), Useful: a.UsefulBytes, Lanes: bits.OnesCount32(w.Active)}, nil
}

// sharedShape returns a shared access's shape, its wavefronts as sectors.
func sharedShape(w sectors.Warp, op string) Shape {
	n, _ := sectors.Wavefronts(w)
	return Shape{Op: op, Shared: true, Sectors: n, Useful: bits.OnesCount32(w.Active) * w.Size, Lanes: bits.OnesCount32(w.Active)}
}

// InstructionShape returns the shape of one instruction of a launch.
func InstructionShape(in sectors.Instruction) (Shape, error) {
	op := "load"
	if in.Store {
		op = "store"
	}
	if in.Shared {
		return sharedShape(in.Warp, op), nil
	}
	return ShapeOf(in.Warp, op)
}

// A family says which shown figures tell a question's figure, and on
// which launches: the same counts per warp (the L1's and shared memory's
// figures per request, which do not depend on the launch's size), the
// same counts in all (the totals ncu reports), or the same launch (DRAM
// and time, which depend on everything).
type family struct {
	tellers []string
	same    sameness
	// counts are the counts, per warp or in all, that two launches must
	// share.
	counts func(*Counts) []float64
	// useful marks counts that include the bytes the lanes use.
	useful bool
	// side is the instructions a warp's shape must match: "load",
	// "store", "" for both, "shared load", "shared store".
	side string
}

type sameness int

const (
	perWarp sameness = iota + 1
	inAll
	sameLaunch
)

var (
	l1Fetched = []string{figures.Efficiency.Name, figures.SectorBytesPerUsefulByte.Name}
	dramFigs  = []string{metrics.DRAMRead, metrics.DRAMWrite, figures.DRAMBytesPerUsefulByte.Name, figures.DRAMReadPerUsefulByte.Name, figures.DRAMWritePerUsefulByte.Name, figures.DRAMBandwidth.Name}
	timeFigs  = []string{figures.TimeSeconds.Name, figures.UsefulBandwidth.Name, figures.TimePerUsefulMB.Name, figures.FractionOfMemcpy.Name, figures.DRAMBandwidth.Name}
	shLdFigs  = []string{figures.ShLdWavefrontsPerRequest.Name, figures.ShLdConflictsPerRequest.Name, metrics.ShLdWavefronts, metrics.ShLdBankConflicts}
	shStFigs  = []string{figures.ShStWavefrontsPerRequest.Name, figures.ShStConflictsPerRequest.Name, metrics.ShStWavefronts, metrics.ShStBankConflicts}
)

func ld(c *Counts) []float64      { return []float64{c.LdRequests, c.LdSectors} }
func st(c *Counts) []float64      { return []float64{c.StRequests, c.StSectors} }
func ldReq(c *Counts) []float64   { return []float64{c.LdRequests} }
func stReq(c *Counts) []float64   { return []float64{c.StRequests} }
func fetched(c *Counts) []float64 { return []float64{c.LdSectors, c.StSectors, c.L1Useful} }
func perUse(c *Counts) []float64  { return []float64{c.LdSectors, c.StSectors, c.Useful} }
func reqUse(c *Counts) []float64  { return []float64{c.LdRequests, c.StRequests, c.L1Useful} }
func shLd(c *Counts) []float64    { return []float64{c.ShLdRequests, c.ShLdWave} }
func shSt(c *Counts) []float64    { return []float64{c.ShStRequests, c.ShStWave} }

// familyOf returns the family of a question's figure; ok is false for a
// figure no table of families lists (TestEveryFigureHasAFamily).
func familyOf(name string) (family, bool) {
	switch name {
	case figures.LdSectorsPerRequest.Name:
		return family{tellers: append([]string{name, metrics.LdSectors}, l1Fetched...), same: perWarp, counts: ld, side: "load"}, true
	case figures.StSectorsPerRequest.Name:
		return family{tellers: append([]string{name, metrics.StSectors}, l1Fetched...), same: perWarp, counts: st, side: "store"}, true
	case figures.Efficiency.Name:
		return family{tellers: append([]string{figures.LdSectorsPerRequest.Name, figures.StSectorsPerRequest.Name, metrics.LdSectors, metrics.StSectors}, l1Fetched...), same: perWarp, counts: fetched, useful: true}, true
	case figures.SectorBytesPerUsefulByte.Name:
		return family{tellers: append([]string{figures.LdSectorsPerRequest.Name, figures.StSectorsPerRequest.Name, metrics.LdSectors, metrics.StSectors}, l1Fetched...), same: perWarp, counts: perUse}, true
	case figures.UsefulBytesPerRequest.Name:
		return family{tellers: []string{name}, same: perWarp, counts: reqUse, useful: true}, true
	// A total is told by itself: the figures per request are half of it,
	// and the other half (the requests a launch issues) is what a
	// question about a total asks to work out.
	case metrics.LdRequests:
		return family{tellers: []string{name}, same: inAll, counts: ldReq}, true
	case metrics.StRequests:
		return family{tellers: []string{name}, same: inAll, counts: stReq}, true
	case metrics.LdSectors:
		return family{tellers: []string{name}, same: inAll, counts: ld}, true
	case metrics.StSectors:
		return family{tellers: []string{name}, same: inAll, counts: st}, true
	case figures.ShLdWavefrontsPerRequest.Name, figures.ShLdConflictsPerRequest.Name:
		return family{tellers: shLdFigs, same: perWarp, counts: shLd, side: "shared load"}, true
	case figures.ShStWavefrontsPerRequest.Name, figures.ShStConflictsPerRequest.Name:
		return family{tellers: shStFigs, same: perWarp, counts: shSt, side: "shared store"}, true
	case metrics.ShLdWavefronts, metrics.ShLdBankConflicts, metrics.ShLdRequests:
		return family{tellers: append([]string{metrics.ShLdRequests}, shLdFigs...), same: inAll, counts: shLd}, true
	case metrics.ShStWavefronts, metrics.ShStBankConflicts, metrics.ShStRequests:
		return family{tellers: append([]string{metrics.ShStRequests}, shStFigs...), same: inAll, counts: shSt}, true
	case metrics.L2ReadSectors, metrics.L2WriteSectors:
		return family{tellers: []string{metrics.L2ReadSectors, metrics.L2WriteSectors}, same: sameLaunch}, true
	}
	if slices.Contains(dramFigs, name) {
		return family{tellers: dramFigs, same: sameLaunch}, true
	}
	if slices.Contains(timeFigs, name) {
		return family{tellers: timeFigs, same: sameLaunch}, true
	}
	return family{}, false
}

// The question side of the relation: what the model says of each
// question's launches, made once (tells.json, TestTellsTable) because the
// model takes a minute over all of them and a notebook cell is a program
// of its own.

//go:embed tells.json
var tellsJSON []byte

// partTells are one launch of a question as the gate compares it.
type partTells struct {
	// Spec is the launch's canonical string (spec.Spec.String).
	Spec string `json:"spec"`
	// Counts are the model's, in all.
	Counts countsJSON `json:"counts"`
	// Warp0 are the shapes of warp 0's instructions, in order.
	Warp0 []Shape `json:"warp0"`
	// Model and Recorded are the launch's value of the question's
	// quantity, the model's and the course's recording's: the halves of a
	// ratio, which a text must not state either.
	Model    float64  `json:"model"`
	Recorded *float64 `json:"recorded,omitempty"`
}

// countsJSON is Counts as tells.json writes them.
type countsJSON struct {
	Warps        float64 `json:"warps"`
	LdRequests   float64 `json:"ld_requests"`
	LdSectors    float64 `json:"ld_sectors"`
	StRequests   float64 `json:"st_requests"`
	StSectors    float64 `json:"st_sectors"`
	L1Useful     float64 `json:"l1_useful_bytes"`
	Useful       float64 `json:"useful_bytes"`
	ShLdRequests float64 `json:"shared_ld_requests,omitempty"`
	ShLdWave     float64 `json:"shared_ld_wavefronts,omitempty"`
	ShStRequests float64 `json:"shared_st_requests,omitempty"`
	ShStWave     float64 `json:"shared_st_wavefronts,omitempty"`
}

func (c countsJSON) counts() *Counts {
	return &Counts{Warps: c.Warps, LdRequests: c.LdRequests, LdSectors: c.LdSectors, StRequests: c.StRequests, StSectors: c.StSectors,
		L1Useful: c.L1Useful, Useful: c.Useful, ShLdRequests: c.ShLdRequests, ShLdWave: c.ShLdWave, ShStRequests: c.ShStRequests, ShStWave: c.ShStWave,
		UsefulKnown: true}
}

func countsToJSON(c *Counts) countsJSON {
	return countsJSON{Warps: c.Warps, LdRequests: c.LdRequests, LdSectors: c.LdSectors, StRequests: c.StRequests, StSectors: c.StSectors,
		L1Useful: c.L1Useful, Useful: c.Useful, ShLdRequests: c.ShLdRequests, ShLdWave: c.ShLdWave, ShStRequests: c.ShStRequests, ShStWave: c.ShStWave}
}

// tellsFile is tells.json: per question, its answers and its parts in
// the bank's order.
type tellsFile struct {
	Note      string                   `json:"note"`
	Questions map[string]questionTells `json:"questions"`
}

// questionTells is one question's entry of tells.json.
type questionTells struct {
	// Model is the model's answer; Recorded the answer of the course's
	// recording (cuda/reference), when it holds the question's launches.
	Model    float64     `json:"model"`
	Recorded *float64    `json:"recorded,omitempty"`
	Parts    []partTells `json:"parts"`
}

var tellsTable = sync.OnceValues(func() (map[string]questionTells, error) {
	var f tellsFile
	dec := json.NewDecoder(bytes.NewReader(tellsJSON))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("grader: tells.json: %w", err)
	}
	return f.Questions, nil
})

// PartAnswer is one launch's value of a question's quantity, as
// tells.json holds it: the model's, and the course's recording's when ok.
type PartAnswer struct {
	Model, Recorded float64
	HasRecorded     bool
}

// PartAnswers returns the values of q's quantity for each of its
// launches (a ratio's numerator and denominator).
func PartAnswers(q *Question) ([]PartAnswer, error) {
	parts, err := partsOf(q)
	if err != nil {
		return nil, err
	}
	out := make([]PartAnswer, len(parts))
	for i, p := range parts {
		out[i].Model = p.Model
		if p.Recorded != nil {
			out[i].Recorded, out[i].HasRecorded = *p.Recorded, true
		}
	}
	return out, nil
}

// Answers returns question q's answers as tells.json holds them: the
// model's on the course's H200, and the course's recording's when it
// measured q's launches (ok false otherwise). The leak test looks for
// them in what a notebook's text states.
func Answers(q *Question) (model, recorded float64, ok bool, err error) {
	table, err := tellsTable()
	if err != nil {
		return 0, 0, false, err
	}
	e, found := table[q.ID]
	if !found {
		return 0, 0, false, fmt.Errorf("grader: tells.json has no entry for %s: run go test ./grader -run TestTellsTable -update", q.ID)
	}
	if e.Recorded == nil {
		return e.Model, 0, false, nil
	}
	return e.Model, *e.Recorded, true, nil
}

// makePartTells computes a question part's entry of tells.json from the
// model's launch of it.
func makePartTells(p Part) (partTells, error) {
	pt := partTells{Spec: p.Spec.String(), Counts: countsToJSON(CountsOf(figures.Model(p.Modelled)))}
	ins, err := sectors.WarpInstructions(p.Spec, p.idx, 0)
	if err != nil {
		return pt, fmt.Errorf("grader: %s: %w", p.Spec.Brief(), err)
	}
	for _, in := range ins {
		if in.Warp.Active == 0 {
			continue
		}
		sh, err := InstructionShape(in)
		if err != nil {
			return pt, fmt.Errorf("grader: %s: %w", p.Spec.Brief(), err)
		}
		pt.Warp0 = append(pt.Warp0, sh)
	}
	return pt, nil
}

// partsOf returns a question's parts as the gate compares them, and
// whether tells.json has them, for the bank's current specs.
func partsOf(q *Question) ([]partTells, error) {
	key := q.ID + "\x00" + q.Specs[0].Device
	if v, ok := checkedParts.Load(key); ok {
		return v.([]partTells), nil
	}
	table, err := tellsTable()
	if err != nil {
		return nil, err
	}
	entry, ok := table[q.ID]
	parts := entry.Parts
	if !ok || len(parts) != len(q.Specs) {
		return nil, fmt.Errorf("grader: tells.json has no entry for %s: run go test ./grader -run TestTellsTable -update", q.ID)
	}
	for i, s := range q.Specs {
		if deviceFree(parts[i].Spec) != deviceFree(s.String()) {
			return nil, fmt.Errorf("grader: tells.json is stale for %s (its spec %d changed): run go test ./grader -run TestTellsTable -update", q.ID, i+1)
		}
	}
	checkedParts.Store(key, parts)
	return parts, nil
}

// checkedParts are the entries of tells.json partsOf has held to the
// bank's specs, by question id and device.
var checkedParts sync.Map

// deviceFree is a spec's canonical string without its device and L2
// fetch granularity, which follow the profile chosen for this machine's
// GPU: tells.json was made with the course's H200, and the counts it
// holds (the L1's and shared memory's) are the same on every profile.
func deviceFree(js string) string {
	s, err := spec.Parse([]byte(js))
	if err != nil {
		return js
	}
	s.Device, s.L2Fetch = "", 0
	b, err := json.Marshal(s)
	if err != nil {
		return js
	}
	return string(b)
}

// tellFloor is the relative difference below which two counts are the
// same, for a question stated exactly.
const tellFloor = 1e-9

// Tells reports whether showing t tells the answer of question q: the
// value is of a figure of q's figure's family (the same count, or one a
// learner turns into it with the launch's spec alone: sectors per request
// and sectors per useful byte, a time and a bandwidth) on a launch that
// has the same counts as one of q's as far as that figure goes, within q's
// tolerance; or of a launch or device fact that questions.json lists
// under q's "told_by". A ratio is told by either of its launches: the
// other is usually shown somewhere else.
func Tells(q *Question, t Tell) (bool, error) {
	parts, err := partsOf(q)
	if err != nil {
		return false, err
	}
	for _, g := range q.ToldBy {
		if g.Fact != "" {
			if g.Fact == t.Fact {
				return true, nil
			}
			continue
		}
		if t.Fact != "" {
			continue
		}
		f, ok := familyOf(g.Quantity)
		if !ok || !slices.Contains(f.tellers, t.Figure) {
			continue
		}
		if t.Spec.Kernel != "" && t.Spec.String() == g.Spec.String() {
			return true, nil
		}
	}
	if t.Fact != "" {
		return false, nil
	}
	f, ok := familyOf(q.Quantity)
	if !ok || !slices.Contains(f.tellers, t.Figure) {
		return false, nil
	}
	tol := max(q.Tolerance.Model, tellFloor)
	for i, p := range parts {
		if same(f, t, q.Specs[i], p, tol) {
			return true, nil
		}
		// A ratio of two totals is the same at any size: the two launches
		// at another size tell it.
		if q.Combine == Ratio && f.same == inAll && t.Spec.Kernel != "" && sizeFree(t.Spec) == sizeFree(q.Specs[i]) {
			return true, nil
		}
	}
	return false, nil
}

// same reports whether t is of a launch the same as the question's part
// p (spec s) for the family f.
func same(f family, t Tell, s spec.Spec, p partTells, tol float64) bool {
	if t.Spec.Kernel != "" && t.Spec.String() == s.String() {
		return true
	}
	switch f.same {
	case sameLaunch:
		return false
	case perWarp:
		if t.Spec.Kernel != "" && sizeFree(t.Spec) == sizeFree(s) {
			return true // the same launch at another size
		}
		if t.Warp != nil {
			return sameShape(f.side, *t.Warp, p.Warp0)
		}
	}
	if t.Counts == nil || f.counts == nil || f.useful && !t.Counts.UsefulKnown {
		return false
	}
	if f.same == perWarp && (t.Counts.Warps <= 0 || p.Counts.Warps <= 0) {
		return false
	}
	a, b := f.counts(t.Counts), f.counts(p.Counts.counts())
	for i := range a {
		x, y := a[i], b[i]
		if f.same == perWarp {
			x, y = x/t.Counts.Warps, y/p.Counts.Warps
		}
		if !Within(x, y, tol) {
			return false
		}
	}
	return true
}

// sameShape reports whether a shown instruction w is warp 0's only
// instruction of each kind the side counts (its load, its store, or
// both for a figure of both): then the picture of w is the picture of the
// question's warp. A warp of several loads (a gather's index and its
// gathered value) is not told by one picture.
func sameShape(side string, w Shape, warp0 []Shape) bool {
	seen := map[string]int{}
	for _, in := range warp0 {
		if !onSide(side, in) {
			continue
		}
		seen[in.Op]++
		op := in.Op
		if w.Op == "" {
			op = ""
		}
		if in.Shared != w.Shared || op != w.Op || in.Sectors != w.Sectors || in.Useful != w.Useful || in.Lanes != w.Lanes {
			return false
		}
	}
	for _, n := range seen {
		if n != 1 {
			return false
		}
	}
	return len(seen) > 0
}

func onSide(side string, in Shape) bool {
	switch side {
	case "load":
		return !in.Shared && in.Op == "load"
	case "store":
		return !in.Shared && in.Op == "store"
	case "shared load":
		return in.Shared && in.Op == "load"
	case "shared store":
		return in.Shared && in.Op == "store"
	}
	return !in.Shared
}

// sizeFree is a spec's identity without its size: launches that differ
// only in n (or rows and cols) have the same counts per warp.
func sizeFree(s spec.Spec) string {
	s.N, s.Rows, s.Cols = 0, 0, 0
	b, err := json.Marshal(s)
	if err != nil {
		return ""
	}
	return string(b)
}

// TellsAny returns the questions among qs that t tells, in their order.
func TellsAny(qs []*Question, t Tell) ([]*Question, error) {
	var out []*Question
	for _, q := range qs {
		ok, err := Tells(q, t)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, q)
		}
	}
	return out, nil
}

// Gate decides, for one notebook, which values its displays withhold: a
// value that tells the answer of a question of this lesson or a later
// one, which the learner has not answered (no recorded attempt), waits
// until they have. Questions of earlier lessons are the learner's past:
// their answers may be shown.
type Gate struct {
	guarded []*Question
}

// NewGate returns the gate of a notebook of lesson (its notebook's name,
// "03-strided"; "" or a name of no lesson guards every question whose
// lesson is numbered as high or higher: index guards all, 10-kernels
// none) for a learner who has answered what answered reports.
func NewGate(b *Bank, lesson string, answered func(id string) bool) *Gate {
	from := lessonNumber(lesson)
	g := &Gate{}
	for i := range b.Questions {
		q := &b.Questions[i]
		if lessonNumber(q.Lesson) >= from && !answered(q.ID) {
			g.guarded = append(g.guarded, q)
		}
	}
	return g
}

// OpenGate is a gate that withholds nothing: the instructor's view, and a
// program that is not a learner's notebook.
func OpenGate() *Gate { return &Gate{} }

// lessonNumber is the number a lesson's id starts with, 0 for none.
func lessonNumber(id string) int {
	n := 0
	for i, r := range id {
		if r < '0' || r > '9' {
			if i == 0 {
				return 0
			}
			break
		}
		n = 10*n + int(r-'0')
	}
	return n
}

// Withheld returns the questions t would tell that the gate guards, in
// bank order; none means t may be shown.
func (g *Gate) Withheld(t Tell) ([]*Question, error) {
	if g == nil {
		return nil, nil
	}
	return TellsAny(g.guarded, t)
}

// Guarded returns the questions the gate guards.
func (g *Gate) Guarded() []*Question {
	if g == nil {
		return nil
	}
	return g.guarded
}

// Wait says, in a few words, what a learner does to see what a display
// withheld for qs, seen from a notebook of lesson: "answer
// 03-strided/slowdown-stride-32 in this notebook first", "lesson 8 asks
// 08-h200/one-float-copy-of-memcpy: answer it there first".
func Wait(lesson string, qs []*Question) string {
	var here, later []string
	for _, q := range qs {
		if q.Lesson == lesson {
			here = append(here, q.ID)
		} else {
			later = append(later, q.ID)
		}
	}
	var parts []string
	if len(here) > 0 {
		parts = append(parts, "answer "+andList(here)+" in this notebook first")
	}
	if len(later) > 0 {
		ls := lessonsOf(later)
		parts = append(parts, fmt.Sprintf("%s %s %s: answer %s there first", ls, verbFor(ls), andList(later), itThem(len(later))))
	}
	return strings.Join(parts, "; ")
}

func andList(xs []string) string {
	switch len(xs) {
	case 0:
		return ""
	case 1:
		return xs[0]
	}
	return strings.Join(xs[:len(xs)-1], ", ") + " and " + xs[len(xs)-1]
}

func lessonsOf(ids []string) string {
	var ns []string
	for _, id := range ids {
		n := fmt.Sprint(lessonNumber(id))
		if !slices.Contains(ns, n) {
			ns = append(ns, n)
		}
	}
	if len(ns) == 1 {
		return "lesson " + ns[0]
	}
	return "lessons " + andList(ns)
}

// verbFor is the verb that agrees with "lesson 8" or "lessons 3 and 8".
func verbFor(lessons string) string {
	if strings.HasPrefix(lessons, "lessons ") {
		return "ask"
	}
	return "asks"
}

func itThem(n int) string {
	if n == 1 {
		return "it"
	}
	return "them"
}

// ShownMIMEType is the MIME type under which a notebook output carries
// its Shown record, beside what a front end displays: the saved notebook
// keeps it for the leak test, which reads what every output showed.
const ShownMIMEType = "application/vnd.coalesce.shown+json"

// Shown is what one output of a notebook showed and withheld.
type Shown struct {
	// Tells are the values it showed.
	Tells []Tell `json:"tells"`
	// Withheld are the values it held back, each with the questions it
	// would have told.
	Withheld []Withheld `json:"withheld,omitempty"`
	// Untagged are the cells of a table that hold a number no Tell
	// names (a table a cell filled with its own numbers), with their
	// column's header: the leak test reads them as text.
	Untagged []Untagged `json:"untagged,omitempty"`
}

// Withheld is a value held back, and the questions it tells.
type Withheld struct {
	Tell      Tell     `json:"tell"`
	Questions []string `json:"questions"`
}

// Untagged is a table cell that holds a number of unknown origin.
type Untagged struct {
	Column string `json:"column"`
	Text   string `json:"text"`
}
