package lab

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/janpfeifer/gonb/gonbui/protocol"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coalescing-course/coalesce/lessons/exercises"
	"github.com/coalescing-course/coalesce/lessons/exercises/exercisestest"
	"github.com/coalescing-course/coalesce/lessons/figures"
	"github.com/coalescing-course/coalesce/lessons/metrics"
	"github.com/coalescing-course/coalesce/lessons/sectors"
	"github.com/coalescing-course/coalesce/lessons/simt"
)

var pictureTitle = regexp.MustCompile(`^\[(bank|warp) diagram\] warp 0: (shared )?(load|store) (\w+) at (\S+)\n`)

// Try draws the access behind the first target missed: the shared load a
// bank-conflict target on loads misses, by its banks, not a global access
// (which meets its targets); the shared store for a target on stores; and
// for a kernel that misses a global target, that global access by its
// sectors. Each picture goes through the gate with the instruction's own
// count: 32 wavefronts for a column of an unpadded tile (every lane in
// bank 0), 32 sectors for the starters' accesses, whose lanes are a
// sector or more apart (the transpose's stores rows = 500 floats apart,
// the strided copy's loads k = 8 floats, 32 bytes).
func TestTryDrawsTheMiss(t *testing.T) {
	transpose, err := exercises.Lookup("10-kernels/transpose")
	require.NoError(t, err)
	strided, err := exercises.Lookup("10-kernels/strided-copy")
	require.NoError(t, err)
	for _, tt := range []struct {
		name   string
		id     string
		kernel any
		missed []string
		// The picture: its kind, the access and the line it is on, the
		// figure it tells and the instruction's count.
		kind, access, code, figure string
		count                      float64
	}{
		{"unpadded tile", transpose.ID, exercises.TransposeKernel(exercisestest.TransposeUnpadded), []string{metrics.ShLdBankConflicts},
			"bank", "shared load tile", "tile.Load(t, tx*32+ty+j)", figures.ShLdWavefrontsPerRequest.Name, 32},
		{"column store", transpose.ID, exercises.TransposeKernel(exercisestest.TransposeColumnStore), []string{metrics.ShStBankConflicts},
			"bank", "shared store tile", "tile.Store(t, tx*32+ty+j", figures.ShStWavefrontsPerRequest.Name, 32},
		{"naive transpose", transpose.ID, transpose.Starter, []string{metrics.StSectors},
			"warp", "store out", "out.Store(t, c*rows+r", figures.StSectorsPerRequest.Name, 32},
		// Both its sides miss: the first target's, the load, is drawn.
		{"strided copy", strided.ID, strided.Starter, []string{metrics.LdSectors, metrics.StSectors},
			"warp", "load in", "in.Load(t, e)", figures.LdSectorsPerRequest.Name, 32},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(LearnerEnv, "")
			t.Setenv("JUPYTERHUB_USER", "")
			recorded(t)
			shown := notebook(t, "10-kernels")
			out := Try(tt.id, tt.kernel)
			require.NotNil(t, out)
			require.True(t, out.Correct, "%v", out.Mismatch)
			var missed []string
			for _, tg := range out.Targets {
				if !tg.Pass {
					missed = append(missed, tg.Metric)
				}
			}
			require.Equal(t, tt.missed, missed, "the targets missed")

			var pic *protocol.DisplayData
			for _, d := range *shown {
				if pictureTitle.MatchString(d.Data[protocol.MIMETextPlain].(string)) {
					require.Nil(t, pic, "one picture")
					pic = d
				}
			}
			require.NotNil(t, pic, "a picture among %d outputs", len(*shown))
			m := pictureTitle.FindStringSubmatch(pic.Data[protocol.MIMETextPlain].(string))
			assert.Equal(t, tt.kind, m[1])
			assert.Equal(t, tt.access, strings.TrimSpace(m[2]+m[3]+" "+m[4]))
			i := slices.IndexFunc(out.Result.Sites, func(s simt.Site) bool { return s.Where == m[5] && s.Buffer == m[4] })
			require.GreaterOrEqual(t, i, 0, "the picture's site %s is one of the kernel's", m[5])
			assert.Contains(t, out.Result.Sites[i].Code, tt.code, "the access drawn")
			assert.NotEmpty(t, pic.Data[protocol.MIMEImagePNG], "drawn")

			sh := shownOf(t, pic)
			assert.Empty(t, sh.Withheld, "lesson 10 asks no question these tell")
			require.NotEmpty(t, sh.Tells)
			assert.Equal(t, tt.figure, sh.Tells[0].Figure)
			assert.Equal(t, tt.count, sh.Tells[0].Value)
			require.NotNil(t, sh.Tells[0].Warp)
			assert.Equal(t, tt.kind == "bank", sh.Tells[0].Warp.Shared)
		})
	}
}

// tracedOf is a traced instruction of warp 0 at site where whose lane l
// accesses byte addr(l) of buf.
func tracedOf(where, buf string, shared, store bool, addr func(l int) uint64) simt.Traced {
	w := sectors.Warp{Active: ^uint32(0), Size: 4}
	for l := range sectors.WarpSize {
		w.Addr[l] = addr(l)
	}
	return simt.Traced{Instruction: sectors.Instruction{Access: where, Buffer: buf, Shared: shared, Store: store, Warp: w}}
}

// diagramOf on a kernel of four sites, costs by hand: a global load of
// 4-byte lanes 8 bytes apart (8 sectors a request), a global store 4 bytes
// apart (4), a shared load whose two traced instructions are 2-way (lanes
// 2 words apart) and 32-way (32 words apart), and a conflict-free shared
// store. Whatever target is missed, the picture is of its memory and side;
// of a shared site, the costliest instruction traced; all met, the
// costliest global site, the load.
func TestDiagramOf(t *testing.T) {
	r := &simt.Result{
		Sites: []simt.Site{
			{Where: "k.go:3", Buffer: "in", Instructions: 10, Sectors: 80},
			{Where: "k.go:4", Buffer: "out", Store: true, Instructions: 10, Sectors: 40},
			{Where: "k.go:5", Buffer: "tile", Shared: true, Instructions: 20, Wavefronts: 340},
			{Where: "k.go:6", Buffer: "tile", Shared: true, Store: true, Instructions: 20, Wavefronts: 20},
		},
		Trace: []simt.Traced{
			tracedOf("k.go:3", "in", false, false, func(l int) uint64 { return uint64(8 * l) }),
			tracedOf("k.go:6", "tile", true, true, func(l int) uint64 { return uint64(4 * l) }),
			tracedOf("k.go:5", "tile", true, false, func(l int) uint64 { return uint64(8 * l) }),
			tracedOf("k.go:5", "tile", true, false, func(l int) uint64 { return uint64(128 * l) }),
			tracedOf("k.go:4", "out", false, true, func(l int) uint64 { return uint64(4 * l) }),
		},
	}
	for _, tt := range []struct {
		missed []string
		want   int // the index in Trace
	}{
		{nil, 0},
		{[]string{metrics.LdSectors}, 0},
		{[]string{metrics.StSectors}, 4},
		{[]string{metrics.DRAMWrite}, 4},
		{[]string{metrics.ShLdBankConflicts}, 3},
		{[]string{metrics.ShLdWavefronts}, 3},
		{[]string{metrics.ShStBankConflicts}, 1},
		{[]string{metrics.ShStWavefronts, metrics.LdSectors}, 1},
		{[]string{metrics.StSectors, metrics.ShLdBankConflicts}, 4},
	} {
		t.Run(strings.Join(tt.missed, ","), func(t *testing.T) {
			out := &exercises.Outcome{Result: r}
			for _, m := range []string{metrics.LdSectors, metrics.StSectors, metrics.DRAMWrite, metrics.ShLdWavefronts, metrics.ShLdBankConflicts, metrics.ShStWavefronts, metrics.ShStBankConflicts} {
				out.Targets = append(out.Targets, exercises.Target{Metric: m, Pass: !slices.Contains(tt.missed, m)})
			}
			// The order of the exercise's targets decides between two misses.
			slices.SortStableFunc(out.Targets, func(a, b exercises.Target) int {
				return slices.Index(tt.missed, a.Metric) - slices.Index(tt.missed, b.Metric)
			})
			got := diagramOf(out)
			require.NotNil(t, got)
			assert.Equal(t, &r.Trace[tt.want], got)
		})
	}
	// No traced instruction of the side missed: the costliest global one.
	r2 := &simt.Result{Sites: r.Sites, Trace: r.Trace[:1]}
	got := diagramOf(&exercises.Outcome{Result: r2, Targets: []exercises.Target{{Metric: metrics.ShLdBankConflicts}}})
	assert.Equal(t, &r2.Trace[0], got)
	assert.Nil(t, diagramOf(&exercises.Outcome{Result: &simt.Result{Sites: r.Sites}}), "nothing traced")
}
