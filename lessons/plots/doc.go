// Package plots draws the course's pictures with gonum.org/v1/plot: what
// coalescing does to the sectors a warp fetches, to its efficiency and to
// bandwidth, from the sector model (lessons/sectors) and from measurements
// of a GPU, live or recorded.
//
// A warp of 32 threads reading 32 floats 32 apart touches 32 sectors of 32
// bytes to use 4 bytes of each: 1024 bytes fetched for 128 used, an
// efficiency of 12.5 %. The charts show that arithmetic across strides,
// element sizes and struct sizes, and set the hardware's answer beside it:
//
//	specs, _ := plots.StrideSpecs(plots.StrideBase, plots.ElemSizes, plots.Strides)
//	preds, _ := sectors.ModelAll(specs...)
//	eff, _ := plots.EfficiencyVsStride(preds) // 1/stride, floored at elem/32
//	sec, _ := plots.SectorsVsStride(preds)
//	plots.Save("stride.svg", plots.Notebook.Row(2), eff, sec)
//	lab.Show(eff, sec)                        // in a notebook cell
//
// The charts:
//
//   - EfficiencyVsStride, SectorsVsStride: the model's L1 figures for a
//     strided launch, one line per element size.
//   - EfficiencyVsStruct: updating one field of an array of structs as the
//     struct grows, the struct of arrays as the reference line.
//   - BandwidthVsStride, BandwidthVsStruct: useful bandwidth, the model's
//     line with the measured launches as points over it; the title names
//     the GPU and where the measurements come from (measure.Set.Label).
//   - DRAMVsStride: bytes moved per useful byte at the L1 (sectors, the
//     seed's arithmetic) and at DRAM (what ncu counts), model and measured.
//   - TimeVsBlock: a launch's time against its threads per block, the
//     model's line named by the limit that sets it, the measured launches
//     as points, the time at the copy bandwidth as the floor.
//   - WarpDiagram, InstructionDiagram: one warp instruction, lane by lane,
//     down to the sectors and lines it touches; Instructions and WarpOf give
//     the addresses the model uses for any warp of any spec. Instruction
//     indices count from 0 in the API, from 1 in the titles a reader sees.
//   - BankDiagram: one warp's shared-memory access of the tiled transpose
//     as the 32 banks see it: the tile laid out in rows of 32 words, the
//     words the lanes access, and each bank's distinct words, whose most
//     is the access's wavefronts.
//   - TracedDiagram, TracedBankDiagram: the same pictures of one warp
//     instruction of a learner's kernel, as lessons/simt traced it: a
//     global access by its sectors, a shared one by its banks (the
//     array's words in the banks' rows of 32, its shape being the
//     kernel's own).
//
// Every chart is a *plot.Plot: change its title, axes or legend as with
// any gonum plot before drawing it. Render, PNG, SVG and Save draw one or
// several side by side. This package draws and never displays: the
// notebook face (lab.Show) shows a picture in a cell. Measurements come in
// as a *measure.Set (live, recorded or read from a file), and every figure
// of a launch, modelled or measured, is computed by lessons/figures, so
// this package needs no GPU code and defines no figure of its own.
//
// The look is the course's: the Okabe-Ito colours (Palette, ElemColor,
// ModelColor, MeasuredColor), colour-blind safe, with shapes and direct
// labels so that no colour carries meaning alone; viridis for bytes used
// (UsedColor); Liberation Sans from gonum's embedded fonts, so pictures are
// the same on every machine; log2 axes, since strides, sizes and
// bandwidths all move by factors of two; 16 × 10 cm at 120 dpi (Notebook),
// text at least 11 points. SVG output names Liberation Sans, then Arial
// and Helvetica, which have the same metrics.
//
// Errors start with "plots: "; bad data (NaN, no points, launches of the
// wrong kernel) is refused when a chart is built, not drawn wrong.
package plots
