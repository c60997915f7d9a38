package plots

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"time"

	"github.com/coalescing-course/coalesce/lessons/metrics"
	"github.com/coalescing-course/coalesce/lessons/sectors"
	"github.com/coalescing-course/coalesce/lessons/spec"
)

// Measured is one launch measured on a GPU. This package takes
// measurements as plain data, so that it draws live and recorded runs
// alike and needs no GPU code.
type Measured struct {
	// Spec is the launch measured.
	Spec spec.Spec
	// Seconds is the time of one launch; 0 when it was not timed.
	Seconds float64
	// Metrics are Nsight Compute's counts, by metric name (lessons/metrics);
	// nil when the launch was not profiled.
	Metrics metrics.Set
}

// Measurements is a set of measured launches and where they come from.
// The zero value is no measurement: charts then draw the model alone.
type Measurements struct {
	// Source says where and when the points were measured, for the chart's
	// caption: "recorded on NVIDIA H200, 2026-11-29" or "measured live on
	// NVIDIA H200".
	Source string
	// Points are the launches, in the order given.
	Points []Measured
}

// ErrMeasured is a measurement that cannot be drawn.
var ErrMeasured = errors.New("plots: bad measurement")

// ErrNoSource is measurements given without saying where they come from;
// it wraps ErrMeasured.
var ErrNoSource = fmt.Errorf("%w: no source: say where and when the points were measured", ErrMeasured)

// NewMeasurements checks the points and returns them, copied, with their
// source. Times and metrics must be finite and not negative; points must
// come with a source, since a chart names where its measurements come from.
func NewMeasurements(source string, points []Measured) (Measurements, error) {
	if len(points) > 0 && source == "" {
		return Measurements{}, ErrNoSource
	}
	out := Measurements{Source: source, Points: make([]Measured, len(points))}
	for i, p := range points {
		if err := p.Spec.Validate(); err != nil {
			return Measurements{}, fmt.Errorf("%w: point %d: %w", ErrMeasured, i, err)
		}
		if math.IsNaN(p.Seconds) || math.IsInf(p.Seconds, 0) || p.Seconds < 0 {
			return Measurements{}, fmt.Errorf("%w: point %d (%s): time %v s, want a finite time, 0 or more", ErrMeasured, i, p.Spec, p.Seconds)
		}
		m := make(metrics.Set, len(p.Metrics))
		for name, v := range p.Metrics {
			if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
				return Measurements{}, fmt.Errorf("%w: point %d (%s): metric %s = %v, want a finite count, 0 or more", ErrMeasured, i, p.Spec, name, v)
			}
			m[name] = v
		}
		if p.Metrics == nil {
			m = nil
		}
		out.Points[i] = Measured{Spec: p.Spec, Seconds: p.Seconds, Metrics: m}
	}
	return out, nil
}

// record is one measured launch as `coalesce run` prints it; fields this
// package does not draw are ignored.
type record struct {
	Line    int             `json:"line"`
	Spec    json.RawMessage `json:"spec"`
	Error   string          `json:"error"`
	TimeMs  float64         `json:"time_ms"`
	Metrics metrics.Set     `json:"metrics"`
}

// reference is the part of a recorded reference file (cuda.Reference)
// that this package reads.
type reference struct {
	Provenance struct {
		Device struct {
			GPU string `json:"gpu"`
		} `json:"device"`
		Date string `json:"date"`
	} `json:"provenance"`
	Records []record `json:"records"`
}

// ReadMeasurements reads measurements in either of the forms the harness
// writes:
//
//   - JSON lines, as `coalesce run [-ncu]` prints them, one launch a line:
//     {"spec":{...},"time_ms":0.123,"metrics":{"dram__bytes_read.sum":...}}
//     time_ms is the median time of one launch in milliseconds and metrics
//     the ncu counts by name; both may be missing (untimed, unprofiled);
//     every other field is ignored, and a line with an "error" (a launch
//     that failed) is skipped and counted in skipped.
//   - a recorded reference (`coalesce run -record`, cuda/reference/*.json):
//     one JSON object {"provenance":{...},"records":[...]} whose records
//     are lines as above.
//
// source names where the measurements come from; when it is empty, a
// reference's provenance gives "recorded on GPU, DATE", and JSON lines
// without a source are an error wrapping ErrNoSource.
func ReadMeasurements(r io.Reader, source string) (m Measurements, skipped int, err error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return Measurements{}, 0, fmt.Errorf("plots: reading measurements: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	var points []Measured
	for num := 1; ; num++ {
		var raw map[string]json.RawMessage
		if err := dec.Decode(&raw); err == io.EOF {
			break
		} else if err != nil {
			return Measurements{}, 0, fmt.Errorf("%w: value %d: %v: want one JSON object per launch, as coalesce run prints", ErrMeasured, num, err)
		}
		var recs []record
		if _, ok := raw["records"]; ok {
			var ref reference
			if err := remarshal(raw, &ref); err != nil {
				return Measurements{}, 0, fmt.Errorf("%w: reference: %v", ErrMeasured, err)
			}
			if source == "" && ref.Provenance.Device.GPU != "" {
				source = "recorded on " + ref.Provenance.Device.GPU
				if t, err := time.Parse(time.RFC3339, ref.Provenance.Date); err == nil {
					source += ", " + t.Format(time.DateOnly)
				} else if ref.Provenance.Date != "" {
					source += ", " + ref.Provenance.Date
				}
			}
			recs = ref.Records
		} else {
			var rec record
			if err := remarshal(raw, &rec); err != nil {
				return Measurements{}, 0, fmt.Errorf("%w: value %d: %v", ErrMeasured, num, err)
			}
			recs = []record{rec}
		}
		for _, rec := range recs {
			if rec.Error != "" {
				skipped++
				continue
			}
			if rec.Spec == nil {
				return Measurements{}, 0, fmt.Errorf("%w: value %d: no \"spec\"", ErrMeasured, num)
			}
			s, err := spec.Parse(rec.Spec)
			if err != nil {
				return Measurements{}, 0, fmt.Errorf("%w: value %d: %w", ErrMeasured, num, err)
			}
			points = append(points, Measured{Spec: s, Seconds: rec.TimeMs / 1e3, Metrics: rec.Metrics})
		}
	}
	if len(points) == 0 {
		return Measurements{}, skipped, fmt.Errorf("%w: no measured launch in the input (%d failed ones skipped)", ErrMeasured, skipped)
	}
	m, err = NewMeasurements(source, points)
	return m, skipped, err
}

func remarshal(raw map[string]json.RawMessage, v any) error {
	b, err := json.Marshal(raw)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

// Like returns the points whose spec equals base once vary has cleared, in
// both, the fields that may differ: Like(base, func(s *spec.Spec) {
// s.Stride = 0 }) keeps the launches of base at every stride.
func (m Measurements) Like(base spec.Spec, vary func(*spec.Spec)) []Measured {
	want := base
	vary(&want)
	var out []Measured
	for _, p := range m.Points {
		s := p.Spec
		vary(&s)
		if s == want {
			out = append(out, p)
		}
	}
	return out
}

// sortedBy returns a copy of xs sorted, stably, by key of each one's spec.
func sortedBy[T any](xs []T, specOf func(T) spec.Spec, key func(spec.Spec) float64) []T {
	out := slices.Clone(xs)
	slices.SortStableFunc(out, func(a, b T) int { return cmp.Compare(key(specOf(a)), key(specOf(b))) })
	return out
}

func measuredSpec(m Measured) spec.Spec             { return m.Spec }
func predictionSpec(p sectors.Prediction) spec.Spec { return p.Spec }
