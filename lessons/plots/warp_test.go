package plots

import (
	"fmt"
	"math"
	"math/bits"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/recorder"

	"github.com/coalescing-course/coalesce/lessons/metrics"
	"github.com/coalescing-course/coalesce/lessons/sectors"
	"github.com/coalescing-course/coalesce/lessons/spec"
)

// Instructions must give the addresses the model coalesces: over every
// warp of a launch, the requests, sectors and useful bytes of its
// instructions add up to sectors.Model's counts. One-warp launches, a
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
			p, err := sectors.Model(s)
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

// textBoxes draws p at size into a recorder and returns, for every string
// drawn, its corners on the canvas (in points): the box from the lowest
// descender to the highest ascender, rotated as the string is.
func textBoxes(t *testing.T, p *plot.Plot, size Size) map[string][4]vg.Point {
	t.Helper()
	var rec recorder.Canvas
	p.Draw(draw.NewCanvas(&rec, size.Width, size.Height))
	out := map[string][4]vg.Point{}
	angle := []float64{0}
	for _, a := range rec.Actions {
		switch a := a.(type) {
		case *recorder.Push:
			angle = append(angle, angle[len(angle)-1])
		case *recorder.Pop:
			angle = angle[:len(angle)-1]
		case *recorder.Rotate:
			angle[len(angle)-1] += a.Angle
		case *recorder.Translate, *recorder.Scale:
			t.Fatalf("the diagram draws with %s: textBoxes knows only rotation", a.Call())
		case *recorder.FillString:
			face := font.DefaultCache.Lookup(a.Font, a.Size)
			e := face.Extents()
			w := face.Width(a.String)
			sin, cos := math.Sincos(angle[len(angle)-1])
			var box [4]vg.Point
			for i, q := range []vg.Point{{X: 0, Y: -e.Descent}, {X: w, Y: -e.Descent}, {X: 0, Y: e.Ascent}, {X: w, Y: e.Ascent}} {
				x, y := a.Point.X+q.X, a.Point.Y+q.Y
				// The recorder keeps points in the rotated frame.
				box[i] = vg.Point{X: x*vg.Length(cos) - y*vg.Length(sin), Y: x*vg.Length(sin) + y*vg.Length(cos)}
			}
			out[a.String] = box
		}
	}
	return out
}

// Every line of text of a warp diagram, the caption's last line above
// all, lies inside the picture, at the size the course draws it and at
// narrower ones (coalesce plot warp -width 20; the title, one line, needs about 19 cm): before the layout kept the
// descenders in mind, "efficiency 12.5%." lost the bottom of its y's.
func TestDiagramTextInside(t *testing.T) {
	narrow := Diagram
	narrow.Width = 20 * vg.Centimeter
	for _, js := range []string{
		`{"kernel":"coalesced_copy","n":1024}`,
		`{"kernel":"strided_copy","n":4096,"stride":32}`,
		`{"kernel":"gather_copy","n":1048576,"index_pattern":"random"}`,
		`{"kernel":"update_x_aos","n":1024,"struct_bytes":16}`,
	} {
		for _, size := range []Size{Diagram, narrow} {
			t.Run(fmt.Sprintf("%s at %.0f cm", js, size.Width/vg.Centimeter), func(t *testing.T) {
				p, err := InstructionDiagram(mustSpec(js), 1, 1)
				require.NoError(t, err)
				boxes := textBoxes(t, p, size)
				require.NotEmpty(t, boxes)
				var lowest vg.Length = math.MaxFloat64
				for s, box := range boxes {
					if s == p.Title.Text {
						// gonum places the title; the font's ascent, a
						// little above its tallest glyph, may touch the
						// top edge: check its baseline side only.
						box[2], box[3] = box[0], box[1]
					}
					for _, q := range box {
						// A hundredth of a point for rounding.
						assert.True(t, q.X >= -0.01 && q.X <= size.Width+0.01 && q.Y >= -0.01 && q.Y <= size.Height+0.01,
							"%q reaches %v, outside %v by %v", s, q, size.Width, size.Height)
						lowest = min(lowest, q.Y)
					}
				}
				assert.Less(t, float64(lowest), float64(vg.Points(6)), "the caption sits at the bottom")
			})
		}
	}
}

// The words of a diagram: a store's sectors are written, not fetched; the
// title counts instructions from 1; the addresses count from the start of
// the instruction's buffer; a sector says how many of its 32 bytes are
// used, inside it where it is wide enough, under the picture where not.
func TestDiagramWords(t *testing.T) {
	for _, tt := range []struct {
		name  string
		spec  string
		instr int
		want  []string // substrings some drawn string holds
		never []string // substrings no drawn string holds
	}{
		// A copy issues 2 instructions: index 1 is the second, the store.
		{"copy's store", `{"kernel":"coalesced_copy","n":1024}`, 1,
			[]string{"instruction 2 of 2: store out[t]", "start of out[]", "4 sectors written (128 B) in 1 line", "0 (not written)", "32/32 B"},
			[]string{"fetched", "instruction 1 of", "memory[]"}},
		{"copy's load", `{"kernel":"coalesced_copy","n":1024}`, 0,
			[]string{"instruction 1 of 2: load in[t]", "start of in[]", "4 sectors fetched", "0 (not fetched)"},
			[]string{"written", "instruction 0 of"}},
		// A gather issues idx[t], in[idx[t]], out[t]: index 0 is the first.
		{"gather's index load", `{"kernel":"gather_copy","n":1024,"index_pattern":"reverse"}`, 0,
			[]string{"instruction 1 of 3: load idx[t]", "start of idx[]"}, nil},
		{"struct field", `{"kernel":"update_x_aos","n":1024,"struct_bytes":16}`, 0,
			[]string{"start of p[]"}, nil},
		// Stride 2: each sector holds 4 floats of 4 bytes = 16 of 32 bytes,
		// a label that fits in a sector of a 2-line band.
		{"stride 2 labels inside", `{"kernel":"strided_copy","n":4096,"stride":2}`, 0,
			[]string{"16/32 B"}, []string{"Bytes used of the"}},
		// Stride 32: 32 lines, one float (4 of 32 bytes) in one sector of
		// each; the sectors are too narrow, the caption says it.
		{"stride 32 usage in words", `{"kernel":"strided_copy","n":4096,"stride":32}`, 0,
			[]string{"Bytes used of the 32 sectors fetched: 4/32 B in each."}, nil},
		{"stride 32 store", `{"kernel":"strided_copy","n":4096,"stride":32}`, 1,
			[]string{"Bytes used of the 32 sectors written: 4/32 B in each.", "32 sectors written (1,024 B) in 32 lines"}, []string{"fetched"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p, err := InstructionDiagram(mustSpec(tt.spec), 0, tt.instr)
			require.NoError(t, err)
			all := ""
			for s := range textBoxes(t, p, Diagram) {
				all += s + "\n"
			}
			for _, w := range tt.want {
				assert.Contains(t, all, w)
			}
			for _, n := range tt.never {
				assert.NotContains(t, all, n)
			}
		})
	}
	// A warp built by hand belongs to no buffer: plain byte addresses.
	p, err := WarpDiagram(sectors.Warp{Size: 4, Active: sectors.AllLanes}, "by hand")
	require.NoError(t, err)
	all := ""
	for s := range textBoxes(t, p, Diagram) {
		all += s + "\n"
	}
	assert.Contains(t, all, "the byte address it accesses:")
	assert.NotContains(t, all, "[]")
}
