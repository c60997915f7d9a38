package plots

import (
	"fmt"
	"math/bits"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/plot/vg"

	"github.com/coalescing-course/coalesce/lessons/metrics"
	"github.com/coalescing-course/coalesce/lessons/sectors"
	"github.com/coalescing-course/coalesce/lessons/spec"
)

// Instructions must give the addresses the model coalesces: over every
// warp of a launch, the requests, sectors and useful bytes of its
// instructions add up to sectors.Predict's counts. One-warp launches, a
// block that is not a multiple of 32 (partial warps), bounds checks that
// cut a warp, and every kernel of the course.
func TestInstructionsMatchModel(t *testing.T) {
	for _, js := range []string{
		`{"kernel":"coalesced_copy","n":32}`,
		`{"kernel":"coalesced_copy","n":1000,"block":96,"elem_bytes":2}`,
		`{"kernel":"strided_copy","n":1024,"stride":32,"block":32}`,
		`{"kernel":"strided_copy","n":3000,"stride":7,"elem_bytes":8,"block":80}`,
		`{"kernel":"strided_read","n":4096,"stride":3,"elem_bytes":16}`,
		`{"kernel":"strided_write","n":4096,"stride":5,"elem_bytes":1}`,
		`{"kernel":"offset_copy","n":32,"offset":1}`,
		`{"kernel":"offset_copy","n":2000,"offset":7,"elem_bytes":2,"block":64}`,
		`{"kernel":"vectorized_copy","n":4096,"width":2}`,
		`{"kernel":"vectorized_copy","n":1000,"width":4,"block":100}`,
		`{"kernel":"grid_stride_copy","n":8192,"width":4,"unroll":3,"grid":2,"block":64}`,
		`{"kernel":"grid_stride_copy","n":5000,"width":1,"unroll":2,"grid":3,"block":96}`,
		`{"kernel":"gather_copy","n":32,"index_pattern":"random"}`,
		`{"kernel":"gather_copy","n":3000,"index_pattern":"random","block":128}`,
		`{"kernel":"gather_copy","n":2048,"index_pattern":"broadcast_warp"}`,
		`{"kernel":"gather_copy","n":2048,"index_pattern":"reverse"}`,
		`{"kernel":"update_x_aos","n":32,"struct_bytes":16}`,
		`{"kernel":"update_x_aos","n":1000,"struct_bytes":36,"field_offset":8,"block":160}`,
		`{"kernel":"update_x_soa","n":777}`,
		`{"kernel":"sum_fields_aos","n":1000,"struct_bytes":12}`,
		`{"kernel":"sum_fields_aos","n":512,"struct_bytes":48,"vector":true}`,
	} {
		t.Run(js, func(t *testing.T) {
			s := mustSpec(js)
			p, err := sectors.Predict(s)
			require.NoError(t, err)
			var ldReq, ldSec, stReq, stSec, useful int64
			warps := Warps(s)
			assert.Equal(t, p.Warps, warps, "warps launched")
			for w := range warps {
				ins, err := Instructions(s, w)
				require.NoError(t, err)
				for _, in := range ins {
					a, err := sectors.Coalesce(in.Warp)
					require.NoError(t, err)
					if in.Op == "load" {
						ldReq += int64(a.Requests)
						ldSec += int64(len(a.Sectors))
					} else {
						stReq += int64(a.Requests)
						stSec += int64(len(a.Sectors))
					}
					useful += int64(a.UsefulBytes)
				}
			}
			assert.Equal(t, p.Metrics[metrics.LdRequests], float64(ldReq), "load requests")
			assert.Equal(t, p.Metrics[metrics.LdSectors], float64(ldSec), "load sectors")
			assert.Equal(t, p.Metrics[metrics.StRequests], float64(stReq), "store requests")
			assert.Equal(t, p.Metrics[metrics.StSectors], float64(stSec), "store sectors")
			assert.Equal(t, p.L1UsefulBytes, useful, "useful bytes")
		})
	}
}

// The seed's examples, one warp each.
func TestWarpOf(t *testing.T) {
	for _, tt := range []struct {
		spec     string
		warp     int64
		instr    int
		lane0    uint64
		step     uint64
		sectors  int
		lines    int
		active   int
		describe string
	}{
		{`{"kernel":"coalesced_copy","n":1024}`, 3, 0, 384, 4, 4, 1, 32, "load in[t]"},
		{`{"kernel":"strided_copy","n":4096,"stride":32}`, 1, 1, 4096, 128, 32, 32, 32, "store out[t*stride]"},
		{`{"kernel":"update_x_aos","n":1024}`, 0, 0, 0, 16, 16, 4, 32, "load p[t].x"},
		{`{"kernel":"update_x_soa","n":1024}`, 0, 1, 0, 4, 4, 1, 32, "store x[t]"},
		{`{"kernel":"offset_copy","n":1024,"offset":1}`, 0, 0, 4, 4, 5, 2, 32, "load in[t+offset]"},
		{`{"kernel":"coalesced_copy","n":40}`, 1, 0, 128, 4, 1, 1, 8, "load in[t]"},
		{`{"kernel":"sum_fields_aos","n":64,"struct_bytes":16}`, 0, 2, 8, 16, 16, 4, 32, "load p[t] bytes 8-11"},
	} {
		t.Run(tt.spec, func(t *testing.T) {
			s := mustSpec(tt.spec)
			w, err := WarpOf(s, tt.warp, tt.instr)
			require.NoError(t, err)
			in, err := InstructionOf(s, tt.warp, tt.instr)
			require.NoError(t, err)
			assert.Equal(t, tt.describe, in.String())
			assert.Equal(t, tt.lane0, w.Addr[0])
			assert.Equal(t, tt.lane0+tt.step, w.Addr[1])
			assert.Equal(t, tt.active, bits.OnesCount32(w.Active))
			a, err := sectors.Coalesce(w)
			require.NoError(t, err)
			assert.Len(t, a.Sectors, tt.sectors)
			assert.Equal(t, tt.lines, a.Lines)
		})
	}
}

func TestWarpErrors(t *testing.T) {
	s := mustSpec(`{"kernel":"coalesced_copy","n":64}`)
	for _, tt := range []struct {
		name  string
		s     spec.Spec
		warp  int64
		instr int
		want  error
		msg   string
	}{
		{"warp past the launch", s, 8, 0, ErrWarp, "warp 8 of a launch of 8 warps (0 to 7)"},
		{"negative warp", s, -1, 0, ErrWarp, ""},
		{"instruction past the program", s, 0, 2, ErrInstr, "coalesced_copy issues 2 per warp: 0 load in[t], 1 store out[t]"},
		{"negative instruction", s, 0, -1, ErrInstr, ""},
		{"invalid spec", spec.Spec{Kernel: "nope"}, 0, 0, spec.ErrUnknownKernel, ""},
		{"missing index file", mustSpec(`{"kernel":"gather_copy","n":64,"index_file":"/nonexistent/idx.bin"}`), 0, 0, spec.ErrIndices, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := WarpOf(tt.s, tt.warp, tt.instr)
			require.ErrorIs(t, err, tt.want)
			assert.Contains(t, err.Error(), tt.msg)
			_, err = InstructionDiagram(tt.s, tt.warp, tt.instr)
			require.ErrorIs(t, err, tt.want)
		})
	}
}

func TestWarpDiagramErrors(t *testing.T) {
	w := sectors.Warp{Size: 3, Active: 1}
	_, err := WarpDiagram(w, "")
	require.ErrorIs(t, err, sectors.ErrSize)
	assert.Contains(t, err.Error(), "plots: ")
	w = sectors.Warp{Size: 4, Active: 1}
	w.Addr[0] = sectors.MaxAddress
	_, err = WarpDiagram(w, "")
	require.ErrorIs(t, err, sectors.ErrAddress)
	// An idle warp draws: no lane, no line.
	p, err := WarpDiagram(sectors.Warp{Size: 4}, "idle")
	require.NoError(t, err)
	_, err = PNG(Diagram, p)
	require.NoError(t, err)
}

// The band shows only the touched lines, a break between lines apart in
// memory, none between neighbours.
func TestLayoutBand(t *testing.T) {
	for _, tt := range []struct {
		name   string
		lines  []uint64
		breaks int
	}{
		{"one line", []uint64{0}, 0},
		{"neighbours", []uint64{0, 128, 256}, 0},
		{"stride 64 floats", []uint64{0, 256, 512, 768}, 3},
		{"mixed", []uint64{0, 128, 1024, 1152, 1 << 30}, 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			width := vg.Points(700)
			b := layoutBand(tt.lines, 0, width)
			n := 0
			for _, g := range b.gapL {
				if g {
					n++
				}
			}
			assert.Equal(t, tt.breaks, n)
			last := b.x[len(b.x)-1] + b.lineW
			assert.InDelta(t, float64(width), float64(last), 1e-6, "the lines fill the band")
			// Addresses map left to right, in order.
			prev := vg.Length(-1)
			for _, l := range tt.lines {
				for _, off := range []float64{0, 31, 64, 127} {
					x := b.xOf(float64(l) + off)
					assert.Greater(t, x, prev, fmt.Sprintf("address %d", l+uint64(off)))
					prev = x
				}
			}
		})
	}
}
