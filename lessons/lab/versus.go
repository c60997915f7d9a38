package lab

import (
	"fmt"

	"github.com/coalescing-course/coalesce/cuda"
	"github.com/coalescing-course/coalesce/lessons/metrics"
	"github.com/coalescing-course/coalesce/lessons/sectors"
	"github.com/coalescing-course/coalesce/lessons/spec"
)

// SectorBytesPerUseful is the L1's traffic per useful byte: 32 bytes for
// every sector a load or store request touches, over spec.UsefulBytes.
// It is the inverse of the seed's efficiency for the course's copies.
var SectorBytesPerUseful = Column{
	Name: "L1 sector bytes per useful byte",
	Model: func(p sectors.Prediction) (float64, bool) {
		return float64(p.FetchedBytes) / float64(p.UsefulBytes), p.UsefulBytes > 0
	},
	Measured: func(r cuda.Result) (float64, bool) {
		ld, ok1 := metric(r, metrics.LdSectors)
		st, ok2 := metric(r, metrics.StSectors)
		useful := r.Spec.UsefulBytes()
		return sectors.SectorBytes * (ld + st) / float64(useful), ok1 && ok2 && useful > 0
	},
	Format: func(v float64) string { return fixed(v, 2) },
}

// DRAMReadPerUseful and DRAMWritePerUseful split DRAMPerUseful into the
// bytes DRAM reads and the bytes it writes, per useful byte.
var (
	DRAMReadPerUseful  = dramColumn("DRAM read bytes per useful byte", metrics.DRAMRead)
	DRAMWritePerUseful = dramColumn("DRAM write bytes per useful byte", metrics.DRAMWrite)
)

func dramColumn(name, m string) Column {
	return Column{
		Name: name,
		Model: func(p sectors.Prediction) (float64, bool) {
			v, ok := p.Metrics[m]
			return v / float64(p.UsefulBytes), ok && p.UsefulBytes > 0
		},
		Measured: func(r cuda.Result) (float64, bool) {
			v, ok := metric(r, m)
			useful := r.Spec.UsefulBytes()
			return v / float64(useful), ok && useful > 0
		},
		Format: func(v float64) string { return fixed(v, 2) },
	}
}

// InFlightPerSM is the time model's count of the load bytes one SM
// keeps in flight (sectors.TimeParts): resident warps times the loads each
// has outstanding times the bytes each load request touches. It is the
// model's side of Little's law; no counter measures it.
var InFlightPerSM = Column{
	Name:   "load bytes in flight per SM",
	Model:  func(p sectors.Prediction) (float64, bool) { return p.Time.InFlightPerSM, p.Time.InFlightPerSM > 0 },
	Format: Count,
}

// TimeBound names the limit that sets the model's time for a launch:
// "bandwidth" (DRAM bytes at the copy bandwidth), "latency" (too few bytes
// in flight to cover DRAM's latency) or "block starts".
var TimeBound = Column{
	Name:      "time set by",
	ModelText: func(p sectors.Prediction) (string, bool) { return p.Time.Bound, p.Time.Bound != "" },
}

// MeasuredOnly returns c without its model side, for a figure the model
// is not built to estimate for the launches at hand.
func MeasuredOnly(c Column) Column {
	c.Model, c.ModelText = nil, nil
	return c
}

// costs are the rows of Versus: what a launch spends per useful byte.
var costs = []struct {
	name     string
	model    func(sectors.Prediction) (float64, bool)
	measured func(cuda.Result) (float64, bool)
}{
	{"L1 sector bytes per useful byte", SectorBytesPerUseful.Model, SectorBytesPerUseful.Measured},
	{"DRAM bytes per useful byte", DRAMPerUseful.Model, DRAMPerUseful.Measured},
	{"time per useful MB (µs)",
		func(p sectors.Prediction) (float64, bool) {
			return p.TimeSeconds * 1e12 / float64(p.UsefulBytes), p.UsefulBytes > 0 && p.TimeSeconds > 0
		},
		func(r cuda.Result) (float64, bool) { return 1e3 / r.UsefulGBps, r.UsefulGBps > 0 },
	},
}

// Versus sets two launches side by side, per useful byte so that launches
// of different sizes compare fairly: the sector bytes the L1 fetches, the
// bytes DRAM moves and the time, each from the model and from the
// measurement, with b's cost as a multiple of a's. The time row's multiple
// is how many times slower b does the same useful work.
func Versus(a, b Case) (*Table, error) {
	src, err := source()
	if err != nil {
		return nil, err
	}
	return src.Versus(a, b)
}

// Versus is the package's Versus on this source.
func (src *Source) Versus(a, b Case) (*Table, error) {
	m, err := src.Measure(a.Spec, b.Spec)
	if err != nil {
		return nil, err
	}
	preds, err := predict([]Case{a, b})
	if err != nil {
		return nil, err
	}
	ra, _ := m.Result(a.Spec)
	rb, _ := m.Result(b.Spec)
	by := b.Name + " ÷ " + a.Name
	t := NewTable("per useful byte", "model: "+a.Name, "model: "+b.Name, "model: "+by,
		"measured: "+a.Name, "measured: "+b.Name, "measured: "+by)
	t.Caption = modelCaption([]Case{a, b}) + " " + m.Caption()
	for _, c := range costs {
		row := []string{c.name}
		ma, okA := c.model(preds[0])
		mb, okB := c.model(preds[1])
		row = append(row, pair(ma, mb, okA, okB)...)
		xa, okA := c.measured(ra)
		xb, okB := c.measured(rb)
		row = append(row, pair(xa, xb, okA, okB)...)
		t.addRow(row)
	}
	t.Notes = append(t.Notes, fmt.Sprintf("%s: %s. %s: %s.", a.Name, a.Spec.Brief(), b.Name, b.Spec.Brief()))
	return t, nil
}

// pair writes a, b and b÷a, with Missing for what is not known.
func pair(a, b float64, okA, okB bool) []string {
	out := []string{Missing, Missing, Missing}
	if okA {
		out[0] = Ratio(a)
	}
	if okB {
		out[1] = Ratio(b)
	}
	if okA && okB && a != 0 {
		out[2] = "×" + Ratio(b/a)
	}
	return out
}

// Counters sets the model's counts beside the ncu counters of each case
// (Profile: live under ncu, else recorded), one row per case and metric of
// lessons/metrics, and says which the model has exactly (the L1's, fixed
// by the addresses) and which it estimates (DRAM's, decided by the L2).
func Counters(cases []Case) (*Table, error) {
	src, err := source()
	if err != nil {
		return nil, err
	}
	return src.Counters(cases)
}

// Counters is the package's Counters on this source.
func (src *Source) Counters(cases []Case) (*Table, error) {
	specs := make([]spec.Spec, len(cases))
	for i, c := range cases {
		specs[i] = c.Spec
	}
	m, err := src.Profile(specs...)
	if err != nil {
		return nil, err
	}
	preds, err := predict(cases)
	if err != nil {
		return nil, err
	}
	t := NewTable("case", "metric", "model", "ncu", "model is")
	t.Caption = modelCaption(cases) + " " + m.Caption()
	for i, p := range preds {
		r, _ := m.Result(cases[i].Spec)
		for _, name := range metrics.All {
			kind := "an estimate"
			if metrics.Exact(name) {
				kind = "exact"
			}
			mv, ncu := Missing, Missing
			if v, ok := p.Metrics[name]; ok {
				mv = Count(v)
			}
			if v, ok := r.Metrics[name]; ok {
				ncu = Count(v)
			}
			t.addRow([]string{cases[i].Name, name, mv, ncu, kind})
		}
	}
	if m.Command != "" {
		t.Notes = append(t.Notes, "Counters: "+m.Command)
	}
	return t, nil
}
