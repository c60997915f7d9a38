package simt_test

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coalescing-course/coalesce/lessons/metrics"
	"github.com/coalescing-course/coalesce/lessons/simt"
)

// line returns the line it is called from, for the sites a test expects.
func line() int {
	_, _, l, _ := runtime.Caller(1)
	return l
}

// siteAt returns the result's site at line l, or fails the test.
func siteAt(t *testing.T, r *simt.Result, l int) simt.Site {
	t.Helper()
	for _, s := range r.Sites {
		if s.Line == l {
			return s
		}
	}
	require.Failf(t, "no site", "no site at line %d among %v", l, r.Sites)
	return simt.Site{}
}

// Lanes of one warp that take different sides of a branch, or loop a
// different number of times, issue an instruction per site and per trip,
// each with only its own lanes active. Every expectation is worked out in
// its comment; the launches are one block of 64 threads (2 warps) over
// floats, so 32 lanes' consecutive floats span one 128-byte line.
func TestDivergence(t *testing.T) {
	type want struct {
		instructions, lanes, partial, sectors int64
		firstActive                           uint32
	}
	in, out := simt.NewGlobal("in", make([]float32, 256)), simt.NewGlobal("out", make([]float32, 256))
	lines := map[string]int{}
	// mark names the access on the line above it.
	mark := func(name string) {
		_, _, l, _ := runtime.Caller(1)
		lines[name] = l - 1
	}
	tests := []struct {
		name   string
		kernel func(t *simt.Thread)
		want   map[string]want
	}{
		{
			// Even lanes load and store element i, odd ones element i
			// times 2, at other sites: each of the four sites runs once a
			// warp with the 16 even (0x55555555) or odd lanes. 16 floats
			// 8 bytes apart span the warp's 128 bytes: 4 sectors.
			name: "if/else on the lane",
			kernel: func(t *simt.Thread) {
				if i := thread(t); i%2 == 0 {
					v := in.Load(t, i)
					mark("even load")
					out.Store(t, i, v)
					mark("even store")
				} else {
					v := in.Load(t, i)
					mark("odd load")
					out.Store(t, i, 2*v)
					mark("odd store")
				}
			},
			want: map[string]want{
				"even load": {2, 32, 2, 8, 0x55555555}, "even store": {2, 32, 2, 8, 0x55555555},
				"odd load": {2, 32, 2, 8, 0xaaaaaaaa}, "odd store": {2, 32, 2, 8, 0xaaaaaaaa},
			},
		},
		{
			// Lane l loops l%4 times: trip 0 has the 24 lanes with
			// l%4 >= 1 (0xeeeeeeee), trip 1 the 16 with l%4 >= 2, trip 2
			// the 8 with l%4 = 3: 3 instructions a warp, 48 lanes, all
			// partial. Each trip's lanes lie in 128 bytes at k*256, one
			// in every 4 floats at least: 4 sectors. The store after the
			// loop has every lane.
			name: "loop trips by lane",
			kernel: func(t *simt.Thread) {
				var sum float32
				for k := range t.ThreadIdx.X % 4 {
					sum += in.Load(t, k*64+t.ThreadIdx.X)
					mark("load")
				}
				out.Store(t, thread(t), sum)
				mark("store")
			},
			want: map[string]want{"load": {6, 96, 6, 24, 0xeeeeeeee}, "store": {2, 64, 0, 8, 0}},
		},
		{
			// A bounds check past the 40th thread: warp 0 whole, warp 1
			// with lanes 0-7, whose 32 bytes are one sector.
			name: "bounds check",
			kernel: func(t *simt.Thread) {
				if i := thread(t); i < 40 {
					v := in.Load(t, i)
					mark("load")
					out.Store(t, i, v)
					mark("store")
				}
			},
			want: map[string]want{"load": {2, 40, 1, 5, 0xff}, "store": {2, 40, 1, 5, 0xff}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clear(lines)
			r, err := simt.Launch{Grid: simt.Dim{X: 1}, Block: simt.Dim{X: 64}}.Run(tt.kernel)
			require.NoError(t, err)
			require.Len(t, r.Sites, len(tt.want))
			for name, w := range tt.want {
				s := siteAt(t, r, lines[name])
				got := want{s.Instructions, s.Lanes, s.Partial, s.Sectors, 0}
				if s.FirstPartial != nil {
					got.firstActive = s.FirstPartial.Active
				}
				assert.Equal(t, w, got, "%s: %v", name, s)
			}
			assert.Zero(t, r.Split)
			partial := 0
			for _, w := range tt.want {
				if w.partial > 0 {
					partial++
				}
			}
			assert.Len(t, r.Divergent(), partial, "Divergent lists the sites with partial instructions")
		})
	}
}

// A warp's instructions go to the model in an order every lane agrees
// with: the loop's three trips, then the store after it.
func TestTraceOrder(t *testing.T) {
	in, out := simt.NewGlobal("in", make([]float32, 256)), simt.NewGlobal("out", make([]float32, 64))
	r, err := simt.Launch{Grid: simt.Dim{X: 1}, Block: simt.Dim{X: 64}, Trace: 1}.Run(func(t *simt.Thread) {
		var sum float32
		for k := range t.ThreadIdx.X % 4 {
			sum += in.Load(t, k*64+t.ThreadIdx.X)
		}
		out.Store(t, thread(t), sum)
	})
	require.NoError(t, err)
	var got []string
	var masks []uint32
	for _, in := range r.Trace {
		assert.Equal(t, int64(0), in.Warp, "Trace 1 keeps warp 0 alone")
		got = append(got, in.Instruction.Buffer)
		masks = append(masks, in.Instruction.Warp.Active)
	}
	assert.Equal(t, []string{"in", "in", "in", "out"}, got)
	assert.Equal(t, []uint32{0xeeeeeeee, 0xcccccccc, 0x88888888, 0xffffffff}, masks)
	assert.Equal(t, uint64((64+2)*4), r.Trace[1].Instruction.Warp.Addr[2], "trip 1, lane 2: element 64+2")
}

// load is a helper that Go does not inline: its Load is one site,
// whichever call of load reached it. (An inlined helper has a site for
// each of its calls, as in CUDA, where the compiler inlines device
// functions.)
//
//go:noinline
func load(in *simt.Global[float32], t *simt.Thread, i int) float32 { return in.Load(t, i) }

// Code whose lanes reach the same site in different orders, a helper that
// loads called under a divergent branch and after it, is split where the
// lanes would wait on each other: even lanes run h (first call), c, h
// (second); odd lanes c, h. simt issues h for the even lanes, then c for
// all, then h for the odd lanes and h for the even: one split, and the
// values are still right.
func TestSplit(t *testing.T) {
	inData, otherData := count[float32](64), make([]float32, 32)
	for i := range otherData {
		otherData[i] = float32(1000 * i)
	}
	got := make([]float32, 32)
	in, other, out := simt.NewGlobal("in", inData), simt.NewGlobal("other", otherData), simt.NewGlobal("out", got)
	r, err := simt.Launch{Grid: simt.Dim{X: 1}, Block: simt.Dim{X: 32}}.Run(func(t *simt.Thread) {
		get := func(i int) float32 { return load(in, t, i) }
		i := t.ThreadIdx.X
		var a float32
		if i%2 == 0 {
			a = get(i)
		}
		b := other.Load(t, i)
		c := get(i + 32)
		out.Store(t, i, a+b+c)
	})
	require.NoError(t, err)
	assert.Equal(t, int64(1), r.Split)
	// in: h(even), h(odd), h(even) = 3 requests; other and out: 1 each.
	assert.Equal(t, 4.0, r.Modelled.Metrics[metrics.LdRequests])
	assert.Equal(t, 1.0, r.Modelled.Metrics[metrics.StRequests])
	for i, v := range got {
		want := otherData[i] + inData[i+32]
		if i%2 == 0 {
			want += inData[i]
		}
		assert.Equal(t, want, v, "out[%d]", i)
	}
}

func TestSharedIsPerBlockAndZeroed(t *testing.T) {
	// Each block's thread 0 reads word 0 before anyone writes it, then
	// writes its block number + 1: every block must read 0.
	seen := make([]int32, 4)
	s := simt.NewShared[int32]("flag", 1)
	out := simt.NewGlobal("seen", seen)
	_, err := simt.Launch{Grid: simt.Dim{X: 4}, Block: simt.Dim{X: 32}}.Run(func(t *simt.Thread) {
		if t.ThreadIdx.X == 0 {
			out.Store(t, t.BlockIdx.X, s.Load(t, 0)+100)
			s.Store(t, 0, int32(t.BlockIdx.X+1))
		}
	})
	require.NoError(t, err)
	assert.Equal(t, []int32{100, 100, 100, 100}, seen)
}

// A 2D block forms its warps from threads ty*Block.X + tx: a block of 16x4
// is 2 warps, each two rows of 16 threads.
func TestThreadCoordinates(t *testing.T) {
	var got []simt.Thread
	_, err := simt.Launch{Grid: simt.Dim{X: 2, Y: 3}, Block: simt.Dim{X: 16, Y: 4}}.Run(func(t *simt.Thread) {
		if t.BlockIdx == (simt.Dim{X: 1, Y: 2}) && t.ThreadIdx.X == 15 {
			got = append(got, simt.Thread{BlockIdx: t.BlockIdx, ThreadIdx: t.ThreadIdx, BlockDim: t.BlockDim, GridDim: t.GridDim})
		}
	})
	require.NoError(t, err)
	require.Len(t, got, 4)
	assert.Equal(t, simt.Dim{X: 15, Y: 3}, got[3].ThreadIdx, "threads run in order, the last row last")
	assert.Equal(t, simt.Dim{X: 16, Y: 4}, got[0].BlockDim)
	assert.Equal(t, simt.Dim{X: 2, Y: 3}, got[0].GridDim)

	in := simt.NewGlobal("in", make([]float32, 64))
	r, err := simt.Launch{Grid: simt.Dim{X: 1}, Block: simt.Dim{X: 16, Y: 4}}.Run(func(t *simt.Thread) {
		in.Load(t, t.ThreadIdx.Y*16+t.ThreadIdx.X)
	})
	require.NoError(t, err)
	assert.Equal(t, int64(2), r.Modelled.Warps)
	assert.Equal(t, 2.0, r.Modelled.Metrics[metrics.LdRequests], "two warps, one request each")
	assert.Equal(t, 8.0, r.Modelled.Metrics[metrics.LdSectors], "each 32 consecutive floats")
}

// A block of 48 threads has a warp of 16 lanes: an instruction of all 16
// is not partial.
func TestPartialWarpOfABlock(t *testing.T) {
	in := simt.NewGlobal("in", make([]float32, 48))
	r, err := simt.Launch{Grid: simt.Dim{X: 1}, Block: simt.Dim{X: 48}}.Run(func(t *simt.Thread) { in.Load(t, t.ThreadIdx.X) })
	require.NoError(t, err)
	require.Len(t, r.Sites, 1)
	assert.Equal(t, int64(0), r.Sites[0].Partial)
	assert.Equal(t, int64(48), r.Sites[0].Lanes)
	assert.Equal(t, int64(2), r.Modelled.Warps)
}

// Vector loads through As: a float buffer read as float4 moves 16 bytes a
// lane, 512 a warp: 16 sectors a request.
func TestVectorLoads(t *testing.T) {
	data := make([]float32, 1024)
	for i := range data {
		data[i] = float32(i)
	}
	got := make([][4]float32, 256)
	in, out := simt.As[[4]float32](simt.NewGlobal("in", data), 0), simt.NewGlobal("out", got)
	r, err := simt.Launch{Grid: simt.Dim{X: 1}, Block: simt.Dim{X: 256}}.Run(func(t *simt.Thread) {
		out.Store(t, t.ThreadIdx.X, in.Load(t, t.ThreadIdx.X))
	})
	require.NoError(t, err)
	assert.Equal(t, [4]float32{4, 5, 6, 7}, got[1])
	assert.Equal(t, 16.0, r.Modelled.Metrics[metrics.LdSectors]/r.Modelled.Metrics[metrics.LdRequests])
	assert.Equal(t, 256, in.Len())
}

// Shared-memory races: two threads of a block touch one word between
// barriers, at least one writing. A Sync between them is no race.
func TestRaces(t *testing.T) {
	tests := []struct {
		name  string
		body  func(t *simt.Thread, s *simt.Shared[float32])
		count int64
		kind  string
	}{
		// Threads 1..63 each write word 0 after thread 0 did: 63 races.
		{"all write one word", func(t *simt.Thread, s *simt.Shared[float32]) { s.Store(t, 0, 1) }, 63, "write after write"},
		// Thread 0 writes word 0, and the 63 others read it with no Sync.
		{"read without sync", func(t *simt.Thread, s *simt.Shared[float32]) {
			if t.ThreadIdx.X == 0 {
				s.Store(t, 0, 1)
			} else {
				s.Load(t, 0)
			}
		}, 63, "read after write"},
		// The threads read word 0, then thread 63 writes it: one race.
		{"write after reads", func(t *simt.Thread, s *simt.Shared[float32]) {
			s.Load(t, 0)
			if t.ThreadIdx.X == 63 {
				s.Store(t, 0, 1)
			}
		}, 1, "write after read"},
		{"sync between", func(t *simt.Thread, s *simt.Shared[float32]) {
			if t.ThreadIdx.X == 0 {
				s.Store(t, 0, 1)
			}
			t.Sync()
			s.Load(t, 0)
		}, 0, ""},
		{"own words", func(t *simt.Thread, s *simt.Shared[float32]) {
			s.Store(t, t.ThreadIdx.X, 1)
			s.Load(t, t.ThreadIdx.X)
		}, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := simt.NewShared[float32]("s", 64)
			r, err := simt.Launch{Grid: simt.Dim{X: 2}, Block: simt.Dim{X: 64}}.Run(func(t *simt.Thread) { tt.body(t, s) })
			require.NoError(t, err)
			assert.Equal(t, 2*tt.count, r.RaceCount, "per block")
			if tt.count > 0 {
				require.NotEmpty(t, r.Races)
				assert.Equal(t, tt.kind, r.Races[0].Kind)
				assert.Equal(t, "s", r.Races[0].Shared)
				assert.Equal(t, 0, r.Races[0].Index)
				assert.LessOrEqual(t, len(r.Races), simt.MaxRaces)
			}
		})
	}
}

// Shared memory's banks: a column of a 32x32 float tile is 32 words 128
// bytes apart, all in bank 0 (32 wavefronts); padded to 33, every word in a
// bank of its own (1).
func TestBankConflicts(t *testing.T) {
	for _, tt := range []struct{ pitch, wavefronts int }{{32, 32}, {33, 1}} {
		s := simt.NewShared[float32]("tile", 32*tt.pitch)
		r, err := simt.Launch{Grid: simt.Dim{X: 1}, Block: simt.Dim{X: 32}}.Run(func(t *simt.Thread) { s.Load(t, t.ThreadIdx.X*tt.pitch) })
		require.NoError(t, err)
		assert.Equal(t, float64(tt.wavefronts), r.Modelled.Metrics[metrics.ShLdWavefronts], "pitch %d", tt.pitch)
		assert.Equal(t, float64(tt.wavefronts-1), r.Modelled.Metrics[metrics.ShLdBankConflicts], "pitch %d", tt.pitch)
		assert.Equal(t, 1.0, r.Modelled.Metrics[metrics.ShLdRequests])
	}
}

// A site is where its Load or Store is called, whichever element type.
func TestSitePosition(t *testing.T) {
	f, i := simt.NewGlobal("f", make([]float64, 32)), simt.NewGlobal("i", make([]int32, 32))
	var lf, li int
	r, err := simt.Launch{Grid: simt.Dim{X: 1}, Block: simt.Dim{X: 32}}.Run(func(t *simt.Thread) {
		f.Store(t, t.ThreadIdx.X, 1)
		lf = line() - 1
		i.Store(t, t.ThreadIdx.X, 2)
		li = line() - 1
	})
	require.NoError(t, err)
	require.Len(t, r.Sites, 2)
	assert.Equal(t, "simt_test.go", r.Sites[0].File)
	assert.Equal(t, []int{lf, li}, []int{r.Sites[0].Line, r.Sites[1].Line})
	assert.Equal(t, []string{"f", "i"}, []string{r.Sites[0].Buffer, r.Sites[1].Buffer})
	assert.Equal(t, []int{8, 4}, []int{r.Sites[0].Size, r.Sites[1].Size})
	assert.Equal(t, []string{"f.Store(t, t.ThreadIdx.X, 1)", "i.Store(t, t.ThreadIdx.X, 2)"}, []string{r.Sites[0].Code, r.Sites[1].Code},
		"each site's line of source, read from the file")
}
