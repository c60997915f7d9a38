package plots_test

import (
	"fmt"
	"log"

	"gonum.org/v1/plot"

	"github.com/coalescing-course/coalesce/lessons/plots"
	"github.com/coalescing-course/coalesce/lessons/sectors"
	"github.com/coalescing-course/coalesce/lessons/spec"
)

// save writes ps side by side to testdata/name at the given size; the
// golden tests compare it with testdata/name's _golden twin.
func save(name string, size plots.Size, ps ...*plot.Plot) {
	if err := plots.Save("testdata/"+name, size, ps...); err != nil {
		log.Fatal(err)
	}
}

func mustParse(js string) spec.Spec {
	s, err := spec.Parse([]byte(js))
	if err != nil {
		log.Fatal(err)
	}
	return s
}

// The model's efficiency and sectors per request against stride, one line
// per element size; alone and side by side.
func ExampleEfficiencyVsStride() {
	specs, err := plots.StrideSpecs(plots.StrideBase, plots.ElemSizes, plots.Strides)
	if err != nil {
		log.Fatal(err)
	}
	preds, err := sectors.ModelAll(specs...)
	if err != nil {
		log.Fatal(err)
	}
	eff, err := plots.EfficiencyVsStride(preds)
	if err != nil {
		log.Fatal(err)
	}
	sec, err := plots.SectorsVsStride(preds)
	if err != nil {
		log.Fatal(err)
	}
	save("efficiency_stride.png", plots.Notebook, eff)
	save("sectors_stride.png", plots.Notebook, sec)
	save("stride.png", plots.Notebook.Row(2), eff, sec)
	save("stride.svg", plots.Notebook.Row(2), eff, sec)
}

// AoS against SoA: the efficiency of updating one float field as the
// struct grows.
func ExampleEfficiencyVsStruct() {
	specs, err := plots.StructSpecs(plots.StructBase, plots.StructSizes)
	if err != nil {
		log.Fatal(err)
	}
	preds, err := sectors.ModelAll(append(specs, plots.SoAOf(plots.StructBase))...)
	if err != nil {
		log.Fatal(err)
	}
	p, err := plots.EfficiencyVsStruct(preds[:len(specs)], preds[len(specs)])
	if err != nil {
		log.Fatal(err)
	}
	save("efficiency_struct.png", plots.Notebook, p)
}

// Model beside measurement, as a notebook draws it: read a recorded run,
// predict its launch at the chart's strides and at every measured one,
// and draw the chart, whose title says where each side comes from.
func ExampleBandwidthVsStride() {
	m := recorded()
	base := plots.MeasuredStrideBase // the recorded sweep's strided_copy
	specs, err := plots.StrideSpecs(base, nil, plots.WithMeasuredStrides(plots.Strides, base, m))
	if err != nil {
		log.Fatal(err)
	}
	preds, err := sectors.ModelAll(specs...)
	if err != nil {
		log.Fatal(err)
	}
	p, err := plots.BandwidthVsStride(preds, m)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(p.Title.Text)
	// Output:
	// Useful bandwidth against stride: strided_copy, n 2^26
	// model of the NVIDIA H200; measured: recorded on NVIDIA H200, 2026-11-29
}

// Warp diagrams of the access patterns of the course. The instruction
// index counts from 0 (1 is a copy's store); the titles count from 1.
func ExampleInstructionDiagram() {
	for _, d := range []struct {
		name, spec string
		warp       int64
		instr      int
	}{
		{"warp_coalesced", `{"kernel":"coalesced_copy","n":1024}`, 0, 0},
		{"warp_stride2", `{"kernel":"strided_copy","n":4096,"stride":2}`, 0, 0},
		{"warp_store", `{"kernel":"strided_copy","n":4096,"stride":2}`, 0, 1},
		{"warp_stride32", `{"kernel":"strided_copy","n":4096,"stride":32}`, 1, 0},
		{"warp_offset", `{"kernel":"offset_copy","n":1024,"offset":1}`, 0, 0},
		{"warp_aos", `{"kernel":"update_x_aos","n":1024,"struct_bytes":16}`, 0, 0},
		{"warp_gather", `{"kernel":"gather_copy","n":1048576,"index_pattern":"random"}`, 5, 1},
		{"warp_vector", `{"kernel":"vectorized_copy","n":4096,"width":4}`, 0, 0},
		{"warp_partial", `{"kernel":"coalesced_copy","n":1000}`, 31, 1},
	} {
		p, err := plots.InstructionDiagram(mustParse(d.spec), d.warp, d.instr)
		if err != nil {
			log.Fatal(err)
		}
		save(d.name+".png", plots.Diagram, p)
		if d.name == "warp_gather" {
			save(d.name+".svg", plots.Diagram, p)
		}
	}
}

// A warp built by hand: the seed's stride-32 example, which touches 32
// lines, one sector each.
func ExampleWarpDiagram() {
	w := sectors.Warp{Size: 4, Active: sectors.AllLanes}
	for lane := range sectors.WarpSize {
		w.Addr[lane] = uint64(lane) * 32 * 4
	}
	p, err := plots.WarpDiagram(w, "32 lanes reading floats 32 apart: out[i*32] = in[i*32]")
	if err != nil {
		log.Fatal(err)
	}
	save("warp_by_hand.png", plots.Diagram, p)
}

// The instructions of one warp of a gather, in program order.
func ExampleInstructions() {
	ins, err := plots.Instructions(mustParse(`{"kernel":"gather_copy","n":64,"index_pattern":"reverse"}`), 1)
	if err != nil {
		log.Fatal(err)
	}
	for i, in := range ins {
		a, _ := sectors.Coalesce(in.Warp)
		fmt.Printf("%d %-17s lane 0 at byte %3d, %d sectors\n", i, in, in.Warp.Addr[0], len(a.Sectors))
	}
	// Output:
	// 0 load idx[t]       lane 0 at byte 128, 4 sectors
	// 1 load in[idx[t]]   lane 0 at byte 124, 4 sectors
	// 2 store out[t]      lane 0 at byte 128, 4 sectors
}

// The tiled transpose's shared tile as the banks see it: the column read
// of phase 2 without padding (every lane in bank 0: 32 wavefronts) and
// with one word of padding a row (one lane a bank: 1), the row write of
// phase 1, and tile 16, whose warps hold two rows of the tile.
func ExampleBankDiagram() {
	for _, d := range []struct {
		name, spec string
		instr      int
	}{
		{"banks_pad0_load", `{"kernel":"transpose_tiled","rows":4096,"cols":4096,"pad":0}`, 8},
		{"banks_pad1_load", `{"kernel":"transpose_tiled","rows":4096,"cols":4096,"pad":1}`, 8},
		{"banks_pad1_store", `{"kernel":"transpose_tiled","rows":4096,"cols":4096,"pad":1}`, 1},
		{"banks_tile16_load", `{"kernel":"transpose_tiled","rows":4096,"cols":4096,"tile":16,"pad":0}`, 4},
	} {
		p, err := plots.BankDiagram(mustParse(d.spec), 0, d.instr)
		if err != nil {
			log.Fatal(err)
		}
		save(d.name+".png", plots.Banks, p)
	}
}
