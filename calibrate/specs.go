package calibrate

import (
	"bufio"
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"math"
	"slices"

	"github.com/coalescing-course/coalesce/lessons/measure"
	"github.com/coalescing-course/coalesce/lessons/spec"
)

//go:embed specs.jsonl
var specsJSONL []byte

// The steps of a calibration, in the order coalesce calibrate runs them
// and numbers its progress lines. The launches of specs.jsonl each belong
// to one of the middle four.
const (
	StepDevice    = "device"
	StepLatency   = "latency"
	StepBandwidth = "bandwidth"
	StepInFlight  = "bytes in flight"
	StepFetch     = "fetch granularity"
	StepFootprint = "footprint sweep"
	StepCounters  = "counters"
	StepFit       = "fit"
)

// Steps lists the steps in order.
var Steps = []string{StepDevice, StepLatency, StepBandwidth, StepInFlight, StepFetch, StepFootprint, StepCounters, StepFit}

// Planned is one calibration launch: its step, its spec sized for the
// GPU, and whether its counters decide a parameter.
type Planned struct {
	Step     string
	Spec     spec.Spec
	Counters bool
}

// template is one line of specs.jsonl.
type template struct {
	Step      string          `json:"step"`
	L2        float64         `json:"l2"`
	GridPerSM int64           `json:"grid_per_sm"`
	Counters  bool            `json:"counters"`
	Spec      json.RawMessage `json:"spec"`
}

// Specs returns the calibration launches for the GPU info describes: the
// lines of specs.jsonl with each n set so the launch's buffers add up to
// its multiple of info's L2 (at most a quarter of the free memory, so a
// small card is not asked for more than it has), grids in blocks per SM,
// and the GPU's default L2 fetch granularity.
func Specs(info measure.DeviceInfo) ([]Planned, error) {
	if info.L2Bytes <= 0 || info.SMs <= 0 {
		return nil, fmt.Errorf("calibrate: device %q with %d SMs and an L2 of %d B: want both positive", info.GPU, info.SMs, info.L2Bytes)
	}
	var out []Planned
	sc := bufio.NewScanner(bytes.NewReader(specsJSONL))
	for num := 1; sc.Scan(); num++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		var t template
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&t); err != nil {
			return nil, fmt.Errorf("calibrate: specs.jsonl:%d: %w", num, err)
		}
		if !slices.Contains(Steps[2:6], t.Step) {
			return nil, fmt.Errorf("calibrate: specs.jsonl:%d: step %q: want one of %q", num, t.Step, Steps[2:6])
		}
		s, err := t.size(info)
		if err != nil {
			return nil, fmt.Errorf("calibrate: specs.jsonl:%d: %w", num, err)
		}
		out = append(out, Planned{Step: t.Step, Spec: s, Counters: t.Counters})
	}
	return out, sc.Err()
}

// nQuantum rounds every n down to a multiple of 2^16, which every
// kernel's rules (widths, strides) divide.
const nQuantum = 1 << 16

// size turns a template into the spec for the GPU info describes.
func (t template) size(info measure.DeviceInfo) (spec.Spec, error) {
	var fields map[string]any
	dec := json.NewDecoder(bytes.NewReader(t.Spec))
	dec.UseNumber()
	if err := dec.Decode(&fields); err != nil {
		return spec.Spec{}, err
	}
	k := spec.Kernel(fmt.Sprint(fields[spec.FieldKernel]))
	if spec.Takes(k, spec.FieldL2Fetch) && info.DefaultL2Fetch > 0 {
		fields[spec.FieldL2Fetch] = info.DefaultL2Fetch
	}
	if t.GridPerSM > 0 {
		fields[spec.FieldGrid] = t.GridPerSM * int64(info.SMs)
	}
	if t.L2 > 0 {
		// The bytes of one n, from the kernel's own buffers at n = 2^20.
		fields[spec.FieldN] = 1 << 20
		probe, err := parseFields(fields)
		if err != nil {
			return spec.Spec{}, err
		}
		var perN float64
		for _, b := range probe.Buffers() {
			perN += float64(b.Bytes) / (1 << 20)
		}
		want := t.L2 * float64(info.L2Bytes)
		if info.FreeBytes > 0 {
			want = min(want, float64(info.FreeBytes)/4)
		}
		n := int64(want/perN) / nQuantum * nQuantum
		fields[spec.FieldN] = max(nQuantum, min(n, math.MaxInt32/nQuantum*nQuantum))
	}
	return parseFields(fields)
}

func parseFields(fields map[string]any) (spec.Spec, error) {
	data, err := json.Marshal(fields)
	if err != nil {
		return spec.Spec{}, err
	}
	return spec.Parse(data)
}
