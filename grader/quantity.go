package grader

import (
	"errors"
	"fmt"

	"github.com/coalescing-course/coalesce/lessons/devices"
	"github.com/coalescing-course/coalesce/lessons/metrics"
	"github.com/coalescing-course/coalesce/lessons/sectors"
	"github.com/coalescing-course/coalesce/lessons/spec"
)

// The derived quantities an exercise may ask for, besides the ncu metrics
// of lessons/metrics (whose model values are exact for the L1 counts and
// estimates for the DRAM bytes).
const (
	// LdSectorsPerRequest is l1tex ld sectors / ld requests (exact in the model).
	LdSectorsPerRequest = "ld_sectors_per_request"
	// StSectorsPerRequest is l1tex st sectors / st requests (exact).
	StSectorsPerRequest = "st_sectors_per_request"
	// Efficiency is the bytes the lanes use over the bytes of the sectors
	// they touch, loads and stores together (exact). Measured, it is the
	// same used bytes over 32 × the sectors ncu counted.
	Efficiency = "efficiency"
	// DRAMBytesPerUsefulByte is (DRAM read + write) / spec.UsefulBytes (estimated).
	DRAMBytesPerUsefulByte = "dram_bytes_per_useful_byte"
	// TimeSeconds is one launch's time (estimated; measured: the median).
	TimeSeconds = "time_seconds"
	// UsefulBandwidth is spec.UsefulBytes per second of TimeSeconds.
	UsefulBandwidth = "useful_bandwidth"
	// FractionOfMemcpy is UsefulBandwidth over cudaMemcpy's device-to-device
	// bandwidth (read plus write); the model takes the device profile's.
	FractionOfMemcpy = "fraction_of_memcpy"
)

// Kinds of quantity, which decide what an explanation shows.
type kind int

const (
	l1Kind   kind = iota // fixed by the addresses: the L1 counts
	dramKind             // what crossed the DRAM bus
	timeKind             // times and bandwidths
)

type quantity struct {
	metric bool // an ncu metric name
	exact  bool // the model's value is exact
	kind   kind
	needs  func(spec.Spec) error
	model  func(p *sectors.Prediction, d devices.Profile) (float64, error)
	// measured computes the quantity from a measurement; p is the model's
	// prediction of the same spec, for what the program fixes (used bytes).
	measured func(m Measured, p *sectors.Prediction) (float64, error)
}

// errNoData is a measurement that lacks what a quantity needs.
var errNoData = errors.New("not in the measurement")

var quantities = map[string]quantity{}

func init() {
	for _, m := range metrics.All {
		quantities[m] = quantity{
			metric: true,
			exact:  metrics.Exact(m),
			kind:   map[bool]kind{true: l1Kind, false: dramKind}[metrics.Exact(m)],
			model: func(p *sectors.Prediction, _ devices.Profile) (float64, error) {
				return p.Metrics.Get(m)
			},
			measured: func(ms Measured, _ *sectors.Prediction) (float64, error) {
				return metricOf(ms, m)
			},
		}
	}
	quantities[LdSectorsPerRequest] = quantity{
		exact: true, kind: l1Kind, needs: needsLoads,
		model: func(p *sectors.Prediction, _ devices.Profile) (float64, error) {
			return p.LdSectorsPerRequest, nil
		},
		measured: func(ms Measured, _ *sectors.Prediction) (float64, error) {
			return metricRatio(ms, metrics.LdSectors, metrics.LdRequests)
		},
	}
	quantities[StSectorsPerRequest] = quantity{
		exact: true, kind: l1Kind, needs: needsStores,
		model: func(p *sectors.Prediction, _ devices.Profile) (float64, error) {
			return p.StSectorsPerRequest, nil
		},
		measured: func(ms Measured, _ *sectors.Prediction) (float64, error) {
			return metricRatio(ms, metrics.StSectors, metrics.StRequests)
		},
	}
	quantities[Efficiency] = quantity{
		exact: true, kind: l1Kind,
		model: func(p *sectors.Prediction, _ devices.Profile) (float64, error) {
			return p.Efficiency, nil
		},
		measured: func(ms Measured, p *sectors.Prediction) (float64, error) {
			ld, err := metricOf(ms, metrics.LdSectors)
			if err != nil {
				return 0, err
			}
			st, err := metricOf(ms, metrics.StSectors)
			if err != nil {
				return 0, err
			}
			if ld+st == 0 {
				return 0, errors.New("ncu counted no sectors")
			}
			return float64(p.L1UsefulBytes) / (sectors.SectorBytes * (ld + st)), nil
		},
	}
	quantities[DRAMBytesPerUsefulByte] = quantity{
		kind: dramKind,
		model: func(p *sectors.Prediction, _ devices.Profile) (float64, error) {
			return p.DRAMBytesPerUsefulByte, nil
		},
		measured: func(ms Measured, p *sectors.Prediction) (float64, error) {
			rd, err := metricOf(ms, metrics.DRAMRead)
			if err != nil {
				return 0, err
			}
			wr, err := metricOf(ms, metrics.DRAMWrite)
			if err != nil {
				return 0, err
			}
			return (rd + wr) / float64(p.UsefulBytes), nil
		},
	}
	quantities[TimeSeconds] = quantity{
		kind: timeKind,
		model: func(p *sectors.Prediction, _ devices.Profile) (float64, error) {
			return p.TimeSeconds, nil
		},
		measured: func(ms Measured, _ *sectors.Prediction) (float64, error) {
			if ms.TimeSeconds <= 0 {
				return 0, fmt.Errorf("time %w", errNoData)
			}
			return ms.TimeSeconds, nil
		},
	}
	quantities[UsefulBandwidth] = quantity{
		kind: timeKind,
		model: func(p *sectors.Prediction, _ devices.Profile) (float64, error) {
			return float64(p.UsefulBytes) / p.TimeSeconds, nil
		},
		measured: func(ms Measured, p *sectors.Prediction) (float64, error) {
			if ms.TimeSeconds <= 0 {
				return 0, fmt.Errorf("time %w", errNoData)
			}
			return float64(p.UsefulBytes) / ms.TimeSeconds, nil
		},
	}
	quantities[FractionOfMemcpy] = quantity{
		kind: timeKind,
		model: func(p *sectors.Prediction, d devices.Profile) (float64, error) {
			return float64(p.UsefulBytes) / p.TimeSeconds / d.Time.CopyBandwidth, nil
		},
		measured: func(ms Measured, p *sectors.Prediction) (float64, error) {
			if ms.TimeSeconds <= 0 || ms.MemcpyBandwidth <= 0 {
				return 0, fmt.Errorf("time and cudaMemcpy bandwidth %w", errNoData)
			}
			return float64(p.UsefulBytes) / ms.TimeSeconds / ms.MemcpyBandwidth, nil
		},
	}
}

func metricOf(ms Measured, m string) (float64, error) {
	v, ok := ms.Metrics[m]
	if !ok {
		if len(ms.Metrics) == 0 {
			return 0, fmt.Errorf("ncu metrics %w (it was timed, not profiled)", errNoData)
		}
		return 0, fmt.Errorf("%s %w", m, errNoData)
	}
	return v, nil
}

func metricRatio(ms Measured, num, den string) (float64, error) {
	a, err := metricOf(ms, num)
	if err != nil {
		return 0, err
	}
	b, err := metricOf(ms, den)
	if err != nil {
		return 0, err
	}
	if b == 0 {
		return 0, fmt.Errorf("ncu counted no requests (%s is 0)", den)
	}
	return a / b, nil
}

func needsLoads(s spec.Spec) error {
	if s.Kernel == spec.StridedWrite {
		return fmt.Errorf("%s issues no loads: %s would be 0/0", s.Kernel, LdSectorsPerRequest)
	}
	return nil
}

func needsStores(s spec.Spec) error {
	if s.Kernel == spec.StridedRead {
		return fmt.Errorf("%s issues no stores: %s would be 0/0", s.Kernel, StSectorsPerRequest)
	}
	return nil
}
