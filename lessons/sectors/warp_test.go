package sectors

import (
	"errors"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// strided returns a warp whose lane l accesses base + l*step.
func strided(base, step uint64, size int, active uint32) Warp {
	w := Warp{Size: size, Active: active}
	for l := range WarpSize {
		w.Addr[l] = base + uint64(l)*step
	}
	return w
}

func TestCoalesce(t *testing.T) {
	tests := []struct {
		name              string
		warp              Warp
		sectors, lines    int
		requested, useful int
		efficiency        float64
	}{
		// 32 floats back to back: 128 bytes, one line, four sectors (seed, "Transactions and sectors").
		{"coalesced floats", strided(0, 4, 4, AllLanes), 4, 1, 128, 128, 1},
		// Stride 32 floats = 128 bytes: every lane its own line and sector, 4 of 32 bytes used.
		{"stride 32 floats", strided(0, 128, 4, AllLanes), 32, 32, 128, 128, 0.125},
		// 16-byte structs, x only: two lanes per sector, 512 bytes spanned = 16 sectors in 4 lines.
		{"AoS x of 16-byte structs", strided(0, 16, 4, AllLanes), 16, 4, 128, 128, 0.25},
		// Start 4 bytes in: 128 bytes straddle two lines and five sectors.
		{"misaligned by one float", strided(4, 4, 4, AllLanes), 5, 2, 128, 128, 128.0 / 160},
		// Every lane reads the same float: one sector, 4 distinct useful bytes.
		{"broadcast", strided(64, 0, 4, AllLanes), 1, 1, 128, 4, 4.0 / 32},
		// Half the warp off: 16 floats = 64 bytes = 2 sectors.
		{"half warp", strided(0, 4, 4, 0x0000ffff), 2, 1, 64, 64, 1},
		// Only lane 31 on, at byte 31*4 = 124: the last sector of line 0.
		{"one lane", strided(0, 4, 4, 1<<31), 1, 1, 4, 4, 4.0 / 32},
		{"no lane", strided(0, 4, 4, 0), 0, 0, 0, 0, 0},
		// 16-byte loads back to back: 512 bytes = 16 sectors, 4 lines.
		{"float4", strided(0, 16, 16, AllLanes), 16, 4, 512, 512, 1},
		// Bytes: 32 of them fill one sector.
		{"chars", strided(0, 1, 1, AllLanes), 1, 1, 32, 32, 1},
		// A float at byte 30 crosses into the next sector: 2 sectors, 4 of 64 bytes.
		{"straddling float", strided(30, 0, 4, 1), 2, 1, 4, 4, 4.0 / 64},
		// 8-byte elements 3 apart: 24 bytes per lane, 768 bytes spanned, each sector holds at most 2 lanes.
		{"doubles, stride 3", strided(0, 24, 8, AllLanes), 24, 6, 256, 256, 256.0 / 768},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := Coalesce(tt.warp)
			require.NoError(t, err)
			assert.Equal(t, tt.sectors, len(a.Sectors), "sectors")
			assert.Equal(t, tt.lines, a.Lines, "lines")
			assert.Equal(t, tt.requested, a.RequestedBytes, "requested bytes")
			assert.Equal(t, tt.useful, a.UsefulBytes, "useful bytes")
			assert.Equal(t, 32*tt.sectors, a.FetchedBytes(), "fetched bytes")
			assert.InDelta(t, tt.efficiency, a.Efficiency(), 1e-12, "efficiency")
			wantReq := 0
			if tt.warp.Active != 0 {
				wantReq = 1
			}
			assert.Equal(t, wantReq, a.Requests, "requests")
			assert.True(t, slices.IsSortedFunc(a.Sectors, func(x, y Sector) int { return int(x.Addr) - int(y.Addr) }))
		})
	}
}

func TestCoalesceSectorDetail(t *testing.T) {
	// Lanes 0 and 1 of a 16-byte AoS warp share sector 0: bytes 0-3 and 16-19.
	a, err := Coalesce(strided(0, 16, 4, 0b11))
	require.NoError(t, err)
	require.Len(t, a.Sectors, 1)
	assert.Equal(t, Sector{Addr: 0, Used: 0x000f000f, Lanes: 0b11}, a.Sectors[0])
	assert.Equal(t, 8, a.Sectors[0].UsedBytes())
	assert.Equal(t, uint64(0), a.Sectors[0].Line())
}

func TestCoalesceRejectsOddSizes(t *testing.T) {
	for _, size := range []int{0, 3, 5, 12, 32, -4} {
		_, err := Coalesce(strided(0, 4, size, AllLanes))
		assert.ErrorIs(t, err, ErrSize, "size %d", size)
		assert.ErrorContains(t, err, "1, 2, 4, 8 or 16")
	}
}

func randomWarp(r *rand.Rand) Warp {
	sizes := []int{1, 2, 4, 8, 16}
	w := Warp{Size: sizes[r.IntN(len(sizes))], Active: r.Uint32()}
	span := uint64(1) << r.IntN(16)
	base := r.Uint64N(1 << 40)
	for l := range WarpSize {
		w.Addr[l] = base + r.Uint64N(span)
	}
	if r.IntN(4) == 0 {
		w.Active = AllLanes
	}
	return w
}

// The launch-level coalescer must agree with Coalesce on any warp.
func TestCoalescerMatchesCoalesce(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var c coalescer
	for i := range 20000 {
		w := randomWarp(r)
		a, err := Coalesce(w)
		require.NoError(t, err)
		c.run(&w.Addr, w.Size, w.Active, request{threshold: math.MaxUint64})
		n, useful := c.n, c.useful
		require.Equal(t, len(a.Sectors), n, "warp %d: %+v", i, w)
		require.Equal(t, a.UsefulBytes, useful, "warp %d", i)
		got := make([]uint64, n)
		for j := range n {
			got[j] = c.sec[j] * SectorBytes
		}
		slices.Sort(got)
		want := make([]uint64, n)
		for j, s := range a.Sectors {
			want[j] = s.Addr
		}
		require.Equal(t, want, got, "warp %d", i)
	}
}

// Properties that hold for every warp, whatever its addresses.
func TestCoalesceProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 5000 {
		w := randomWarp(r)
		a, err := Coalesce(w)
		require.NoError(t, err)
		active := 0
		for l := range WarpSize {
			if w.Active&(1<<l) != 0 {
				active++
			}
		}
		// Each lane touches one sector, two when it straddles a boundary.
		assert.LessOrEqual(t, len(a.Sectors), 2*active)
		// The useful bytes must fit in the sectors fetched, and need at least this many.
		assert.LessOrEqual(t, a.UsefulBytes, a.FetchedBytes())
		assert.GreaterOrEqual(t, 32*len(a.Sectors), a.UsefulBytes)
		assert.GreaterOrEqual(t, len(a.Sectors), (a.UsefulBytes+31)/32)
		assert.LessOrEqual(t, a.Lines, len(a.Sectors))
		assert.GreaterOrEqual(t, 4*a.Lines, len(a.Sectors))
		// The order of the lanes does not matter.
		p := w
		perm := r.Perm(WarpSize)
		p.Active = 0
		for l, to := range perm {
			p.Addr[to] = w.Addr[l]
			if w.Active&(1<<l) != 0 {
				p.Active |= 1 << to
			}
		}
		b, err := Coalesce(p)
		require.NoError(t, err)
		assert.Equal(t, len(a.Sectors), len(b.Sectors))
		assert.Equal(t, a.UsefulBytes, b.UsefulBytes)
	}
}

func FuzzCoalesce(f *testing.F) {
	f.Add(uint64(0), uint64(4), 4, uint32(AllLanes))
	f.Add(uint64(4), uint64(128), 4, uint32(0xffff))
	f.Add(uint64(30), uint64(0), 16, uint32(1))
	f.Add(^uint64(0)-64, uint64(1), 8, uint32(AllLanes))
	f.Fuzz(func(t *testing.T, base, step uint64, size int, active uint32) {
		w := strided(base, step, size, active)
		a, err := Coalesce(w)
		if err != nil {
			if CheckSize(size) == nil && !errors.Is(err, ErrAddress) {
				t.Fatalf("valid size %d refused: %v", size, err)
			}
			return
		}
		var c coalescer
		c.run(&w.Addr, w.Size, w.Active, request{threshold: math.MaxUint64})
		n, useful := c.n, c.useful
		if n != len(a.Sectors) || useful != a.UsefulBytes {
			t.Fatalf("coalescer %d sectors %d bytes, Coalesce %d sectors %d bytes", n, useful, len(a.Sectors), a.UsefulBytes)
		}
		if a.UsefulBytes > a.FetchedBytes() {
			t.Fatalf("useful %d > fetched %d", a.UsefulBytes, a.FetchedBytes())
		}
	})
}

// coalescedRef is what the coalescer must hold after an instruction,
// worked out the slow way.
type coalescedRef struct {
	sec           []uint64
	used          []uint32
	useful        int
	lines, blocks int
	span          uint64
	tracked       uint64
}

// refCoalescer is the coalescer's specification: every active lane's
// sectors in lane order, each repeat merged into the sector's first
// place; lines and blocks counted as runs in that order; a sector tracked
// when its line is (mix(line) <= threshold).
func refCoalescer(addr *[WarpSize]uint64, size int, active uint32, r request) coalescedRef {
	var c coalescedRef
	for l := range WarpSize {
		if active&(1<<l) == 0 {
			continue
		}
		for a := addr[l]; a < addr[l]+uint64(size); a++ {
			s := a / SectorBytes
			i := slices.Index(c.sec, s)
			if i < 0 {
				i = len(c.sec)
				c.sec, c.used = append(c.sec, s), append(c.used, 0)
			}
			c.used[i] |= 1 << (a % SectorBytes)
		}
	}
	for i, s := range c.sec {
		c.useful += bits.OnesCount32(c.used[i])
		if i == 0 || s/sectorsPerLine != c.sec[i-1]/sectorsPerLine {
			c.lines++
		}
		if i == 0 || s>>r.shift != c.sec[i-1]>>r.shift {
			c.blocks++
		}
		if mix(s/sectorsPerLine) <= r.threshold {
			c.tracked |= 1 << i
		}
	}
	if len(c.sec) > 0 {
		c.span = (slices.Max(c.sec) - slices.Min(c.sec) + 1) * SectorBytes
	}
	return c
}

// held returns what c holds, in coalescedRef's terms.
func held(c *coalescer) coalescedRef {
	return coalescedRef{
		sec: slices.Clone(c.sec[:c.n]), used: slices.Clone(c.used[:c.n]),
		useful: c.useful, lines: c.lines, blocks: c.blocks, span: c.span(), tracked: c.tracked,
	}
}

// The coalescer's fast paths (a full warp in one pass, the contiguous
// sector walk, the seen filter) must keep the sectors in the order the
// specification does and describe them the same, bit for bit: the L2
// sees the sectors in that order, and the time model counts runs in it.
func TestCoalescerMatchesSpecification(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	sizes := []int{1, 2, 4, 8, 16}
	for _, tc := range []struct {
		name string
		warp func() Warp
	}{
		{"random warps", func() Warp { return randomWarp(r) }},
		// A gather: every lane on, aligned elements drawn from a range
		// that runs from 32 sectors (repeats every time) to 2^30 (hardly
		// ever a repeat, and the seen filter's false alarms alone).
		{"gathers", func() Warp {
			size := sizes[r.IntN(len(sizes))]
			w := Warp{Size: size, Active: AllLanes}
			elems := uint64(1) << (3 + r.IntN(28))
			for l := range WarpSize {
				w.Addr[l] = r.Uint64N(elems) * uint64(size)
			}
			return w
		}},
		// Affine lanes, as the kernels send them, any step and base.
		{"affine", func() Warp {
			size := sizes[r.IntN(len(sizes))]
			steps := []uint64{0, 1, 2, 3, 4, 6, 8, 16, 24, 32, 100, 128, 4096}
			step := steps[r.IntN(len(steps))] * uint64(size)
			if r.IntN(8) == 0 {
				step += 1 + r.Uint64N(uint64(size)) // lanes off their alignment
			}
			if r.IntN(4) == 0 {
				step = -step // descending, as the reverse gather
			}
			base := (1<<40 + r.Uint64N(1<<20)) * uint64(size)
			if r.IntN(8) == 0 {
				base += r.Uint64N(uint64(size)) // a misaligned first lane
			}
			active := AllLanes
			if r.IntN(3) == 0 {
				active >>= r.IntN(WarpSize)
			}
			return strided(base, step, size, active)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var c coalescer
			stridedSeen := 0
			defer func() {
				if tc.name == "affine" {
					assert.Greater(t, stridedSeen, 1000, "affine warps the strided walk takes")
				}
			}()
			for i := range 20000 {
				w := tc.warp()
				// Thresholds from none of the lines tracked to all of them.
				req := request{shift: uint(r.IntN(3)), threshold: []uint64{0, 1 << 58, 1 << 62, math.MaxUint64}[r.IntN(4)]}
				want := refCoalescer(&w.Addr, w.Size, w.Active, req)
				c.run(&w.Addr, w.Size, w.Active, req)
				require.Equal(t, want, held(&c), "warp %d: %+v, %+v", i, w, req)
				require.False(t, c.ascending, "run claims no order")
				// The gather walk is for 32 lanes gathering elements by
				// index.
				if idx, ok := gatherIndices(w); ok {
					require.True(t, c.gather(&idx, w.Size, req))
					require.Equal(t, want, held(&c), "gathered warp %d: %+v, %+v", i, w, req)
				}
				// The contiguous walk is for lanes 0..k-1 back to back from
				// an aligned base.
				if w.Active&(w.Active+1) == 0 && w.Active != 0 && w.Addr[0]%uint64(w.Size) == 0 && w == strided(w.Addr[0], uint64(w.Size), w.Size, w.Active) {
					c.contiguous(w.Addr[0], w.Size, bits.OnesCount32(w.Active), req)
					require.Equal(t, want, held(&c), "contiguous warp %d: %+v, %+v", i, w, req)
					require.True(t, c.ascending && slices.IsSorted(c.sec[:c.n]), "contiguous warp %d ascends", i)
				}
				// The strided walk is for a full warp of affine lanes that
				// stridedTakes takes.
				if base, step := w.Addr[0], w.Addr[1]-w.Addr[0]; w.Active == AllLanes && w == strided(base, step, w.Size, AllLanes) && stridedTakes(base, step, w.Size, req) {
					c.strided(base, step, w.Size, req)
					require.Equal(t, want, held(&c), "strided warp %d: %+v, %+v", i, w, req)
					require.True(t, c.ascending && slices.IsSorted(c.sec[:c.n]), "strided warp %d ascends", i)
					stridedSeen++
				}
			}
		})
	}
}

// gatherIndices returns the element indices of a warp whose 32 lanes all
// access whole elements of w.Size bytes, indices that fit an int32, and
// whether it is one.
func gatherIndices(w Warp) (idx [WarpSize]int32, ok bool) {
	if w.Active != AllLanes {
		return idx, false
	}
	for l, a := range w.Addr {
		if a%uint64(w.Size) != 0 || a/uint64(w.Size) > math.MaxInt32 {
			return idx, false
		}
		idx[l] = int32(a / uint64(w.Size))
	}
	return idx, true
}
