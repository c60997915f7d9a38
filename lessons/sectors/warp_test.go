package sectors

import (
	"errors"
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
		n, useful := c.run(&w.Addr, w.Size, w.Active)
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
		n, useful := c.run(&w.Addr, w.Size, w.Active)
		if n != len(a.Sectors) || useful != a.UsefulBytes {
			t.Fatalf("coalescer %d sectors %d bytes, Coalesce %d sectors %d bytes", n, useful, len(a.Sectors), a.UsefulBytes)
		}
		if a.UsefulBytes > a.FetchedBytes() {
			t.Fatalf("useful %d > fetched %d", a.UsefulBytes, a.FetchedBytes())
		}
	})
}
