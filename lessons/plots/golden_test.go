package plots_test

import (
	"bufio"
	"encoding/json"
	"log"
	"os"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/cmpimg"

	"github.com/coalescing-course/coalesce/lessons/measure"
	"github.com/coalescing-course/coalesce/lessons/plots"
	"github.com/coalescing-course/coalesce/lessons/sectors"
	"github.com/coalescing-course/coalesce/lessons/spec"
)

// The golden images, as gonum/plot tests its own: each function writes
// testdata/NAME, and the test compares it with testdata/NAME_golden.
// After a deliberate change to a picture, look at the new one, then
//
//	go test ./lessons/plots -regen
//
// rewrites the goldens (cmpimg's -regen flag); review them before commit.
//
// The charts of the model's L1 counts (sectors, efficiency) and the warp
// diagrams come from the live model: those numbers are exact, and a change
// in them is a change in the model worth seeing. The bandwidth and DRAM
// charts draw testdata/model_snapshot.jsonl (the model's launches, as
// coalesce model printed them when the goldens were made) beside
// testdata/h200_recorded.jsonl (the strided_copy, update_x_aos and
// update_x_soa launches of cuda/reference/h200.jsonl, recorded on the
// course's H200 on 2026-11-29, and its coalesced_copy launches of 2^26
// floats at every block size, at the default fetch granularity, recorded
// on 2026-12-01), so that tuning the model's DRAM and time parameters, or
// re-recording, does not move them.

// Approximate comparison absorbs the last bit of anti-aliasing that a
// different CPU's floating point may flip.
const goldenDelta = 0.01

func TestGoldenCharts(t *testing.T) {
	for _, tt := range []struct {
		name  string
		draw  func()
		files []string
	}{
		{"stride", ExampleEfficiencyVsStride, []string{"efficiency_stride.png", "sectors_stride.png", "stride.png", "stride.svg"}},
		{"struct", ExampleEfficiencyVsStruct, []string{"efficiency_struct.png"}},
		{"bandwidth", goldenBandwidth, []string{"bandwidth_stride.png", "bandwidth_struct.png", "bandwidth_model_only.png"}},
		{"dram", goldenDRAM, []string{"dram_stride.png", "dram_stride.svg"}},
		{"block", goldenBlock, []string{"time_block.png"}},
		{"warp", ExampleInstructionDiagram, []string{
			"warp_coalesced.png", "warp_stride2.png", "warp_store.png", "warp_stride32.png", "warp_offset.png",
			"warp_aos.png", "warp_gather.png", "warp_gather.svg", "warp_vector.png", "warp_partial.png",
		}},
		{"warp by hand", ExampleWarpDiagram, []string{"warp_by_hand.png"}},
		{"banks", ExampleBankDiagram, []string{"banks_pad0_load.png", "banks_pad1_load.png", "banks_pad1_store.png", "banks_tile16_load.png"}},
		{"traced banks", ExampleTracedBankDiagram, []string{"traced_banks_pad0_load.png", "traced_banks_pad1_load.png", "traced_banks_pad0_store.png"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cmpimg.CheckPlotApprox(tt.draw, t, goldenDelta, tt.files...)
		})
	}
}

// snapshot reads the model's launches saved in testdata, by kernel.
func snapshot() map[spec.Kernel][]sectors.Launch {
	f, err := os.Open("testdata/model_snapshot.jsonl")
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	out := map[spec.Kernel][]sectors.Launch{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var p sectors.Launch
		if err := json.Unmarshal(sc.Bytes(), &p); err != nil {
			log.Fatal(err)
		}
		out[p.Spec.Kernel] = append(out[p.Spec.Kernel], p)
	}
	return out
}

// recorded reads testdata/h200_recorded.jsonl, a part of the course's
// recording (cuda/reference/h200.jsonl), provenance and all.
func recorded() *measure.Set {
	f, err := os.Open("testdata/h200_recorded.jsonl")
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	m, err := measure.ReadSet(f, "h200_recorded.jsonl", measure.Origin{Kind: measure.Recorded})
	if err != nil {
		log.Fatal(err)
	}
	return m
}

func goldenBandwidth() {
	snap, m := snapshot(), recorded()
	p, err := plotOf(plots.BandwidthVsStride(snap[spec.StridedCopy], m))
	if err != nil {
		log.Fatal(err)
	}
	save("bandwidth_stride.png", plots.Notebook, p)
	q, err := plotOf(plots.BandwidthVsStruct(snap[spec.UpdateXAoS], snap[spec.UpdateXSoA][0], m))
	if err != nil {
		log.Fatal(err)
	}
	save("bandwidth_struct.png", plots.Notebook, q)
	r, err := plotOf(plots.BandwidthVsStride(snap[spec.StridedCopy], nil))
	if err != nil {
		log.Fatal(err)
	}
	save("bandwidth_model_only.png", plots.Notebook, r)
}

func goldenDRAM() {
	p, err := plotOf(plots.DRAMVsStride(snapshot()[spec.StridedCopy], recorded()))
	if err != nil {
		log.Fatal(err)
	}
	save("dram_stride.png", plots.Notebook, p)
	save("dram_stride.svg", plots.Notebook, p)
}

func goldenBlock() {
	p, err := plotOf(plots.TimeVsBlock(snapshot()[spec.CoalescedCopy], recorded()))
	if err != nil {
		log.Fatal(err)
	}
	save("time_block.png", plots.Notebook, p)
}

// plotOf draws a chart whole.
func plotOf(c *plots.Chart, err error) (*plot.Plot, error) {
	if err != nil {
		return nil, err
	}
	return c.Plot()
}
