package toolkit

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coalescing-course/coalesce/lessons/metrics"
)

// testdata/ncusource holds what ncu 2025.3.1 printed on the course's H200
// (driver 580.159.04) for learner kernels built by usercuda's generated
// program (nvcc 13.0.88 -O3 -lineinfo -arch=sm_90): NAME.source.csv is
// `--page source --print-source cuda,sass --csv` of the SourceCounters
// section, NAME.raw.csv `--page raw --csv` of the same launch's report
// (runs/issue25_run1.sh, runs/log/issue25_run1.log).

func readSource(t *testing.T, name string) SourcePage {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata/ncusource", name+".source.csv"))
	require.NoError(t, err)
	pages, err := ParseNcuSource(data)
	require.NoError(t, err)
	require.Len(t, pages, 1)
	return pages[0]
}

// The hoisted-stride grid-stride copy (body lines: 2 `int i`, 3 `int
// stride`, 4 `for (...)`, 5 `out[e] = in[e];`): nvcc peels a remainder
// loop with one load and one store, then unrolls the main loop by four,
// so line 5 holds five LDGs and five STGs.
func TestParseNcuSourceHoisted(t *testing.T) {
	p := readSource(t, "sc_hoisted")
	assert.Equal(t, "strided_copy", p.Kernel)
	lines := p.File("kernel.cu")
	var five *SourceLine
	for i := range lines {
		if lines[i].Line == 5 {
			five = &lines[i]
		}
	}
	require.NotNil(t, five, "line 5 of the body")
	var ldg, stg []SASS
	for _, s := range five.SASS {
		switch {
		case s.Space == "Global" && s.Op == "Load":
			ldg = append(ldg, s)
		case s.Space == "Global" && s.Op == "Store":
			stg = append(stg, s)
		}
	}
	require.Len(t, ldg, 5)
	require.Len(t, stg, 5)
	// The remainder loop ran 33 warp-trips of 32 lanes, the unrolled one
	// 773, each 4 floats x 32 lanes = 4 sectors.
	assert.Equal(t, int64(33), ldg[0].Executed)
	assert.Equal(t, int64(33*4), ldg[0].Sectors)
	for _, s := range ldg[1:] {
		assert.Equal(t, int64(773), s.Executed)
		assert.Equal(t, int64(773*4), s.Sectors)
		assert.Equal(t, int64(773*32), s.Active)
		assert.Equal(t, 32, s.Bits)
		assert.Equal(t, "LDG.E", s.Opcode())
		assert.False(t, s.Predicated())
	}
	// The kernel's first instruction is at offset 0, and each is 16 bytes.
	assert.Equal(t, uint64(0x2b0), ldg[0].Offset)
	// Without the source file on disk the page has the same lines.
	nofile := readSource(t, "sc_hoisted-nofile")
	assert.Equal(t, lines, nofile.File("kernel.cu"))
}

// The predicated reduction: the guarded shared instructions run in every
// warp, 32 executions each, whatever the lanes.
func TestParseNcuSourcePredicated(t *testing.T) {
	p := readSource(t, "bl_reduce")
	var loads, predicated int
	for _, l := range p.File("kernel.cu") {
		for _, s := range l.SASS {
			if s.Space == "Shared" && s.Op == "Load" {
				loads++
				if s.Predicated() {
					predicated++
					assert.Equal(t, int64(32), s.Executed, s.Text)
				}
			}
		}
	}
	assert.Equal(t, 17, loads, "8 halvings x 2 loads, and s[0]")
	assert.Equal(t, 16, predicated)
}

// Every captured kernel: the source page's global sectors, summed over
// the learner's file, equal the hardware's L1 sector counters of the same
// launch, loads and stores; its shared instructions equal
// smsp__inst_executed_op_shared_*. (The shared wavefronts need not: the
// source page's are the bank rule of each instruction's addresses, the
// hardware's grow past it on large launches, bl_wave2048.)
func TestParseNcuSourceMatchesRaw(t *testing.T) {
	names, err := filepath.Glob("testdata/ncusource/*.raw.csv")
	require.NoError(t, err)
	require.NotEmpty(t, names)
	for _, raw := range names {
		name := strings.TrimSuffix(filepath.Base(raw), ".raw.csv")
		t.Run(name, func(t *testing.T) {
			p := readSource(t, name)
			data, err := os.ReadFile(raw)
			require.NoError(t, err)
			rows, err := ParseNcuCSV(data, metrics.Profiled[:4])
			require.NoError(t, err)
			require.Len(t, rows, 1)
			var sum [4]int64
			var sharedLd, sharedSt int64
			for _, l := range p.Lines {
				for _, s := range l.SASS {
					switch {
					case s.Space == "Global" && s.Op == "Load":
						sum[1] += s.Sectors
					case s.Space == "Global" && s.Op == "Store":
						sum[3] += s.Sectors
					case s.Space == "Shared" && s.Op == "Load":
						sharedLd += s.Executed
					case s.Space == "Shared" && s.Op == "Store":
						sharedSt += s.Executed
					}
				}
			}
			m := rows[0].Metrics
			assert.Equal(t, m[metrics.LdSectors], float64(sum[1]), "load sectors")
			assert.Equal(t, m[metrics.StSectors], float64(sum[3]), "store sectors")
			all, err := ParseNcuCSV(data, nil)
			require.NoError(t, err)
			if v, ok := all[0].Metrics[metrics.ShLdRequests]; ok {
				assert.Equal(t, v, float64(sharedLd))
				assert.Equal(t, all[0].Metrics[metrics.ShStRequests], float64(sharedSt))
			}
		})
	}
}

func TestParseNcuSourceRefuses(t *testing.T) {
	head := `"File Path","/x/kernel.cu"` + "\n" + `"Function Name","k"` + "\n" +
		`"Line No","Source","Address","Source","Instructions Executed","Thread Instructions Executed","Predicated-On Thread Instructions Executed","Address Space","Access Operation","Access Size","L2 Theoretical Sectors Global"` + "\n"
	tests := []struct{ name, data, want string }{
		{"empty", "", "no CSV rows"},
		{"only ncu's lines", "==PROF== Connected\n==WARNING== No kernels were profiled.\n", "no CSV rows"},
		{"raw page", `"ID","Kernel Name"` + "\n" + `"0","k"` + "\n", "before a \"File Path\""},
		{"one source column", `"File Path","k.cu"` + "\n" + `"Function Name","k"` + "\n" + `"Line No","Source","Address","Instructions Executed","Thread Instructions Executed","Predicated-On Thread Instructions Executed","Address Space","Access Operation"` + "\n", "want two"},
		{"no counters", `"File Path","k.cu"` + "\n" + `"Function Name","k"` + "\n" + `"Line No","Source","Address","Source"` + "\n", "no \"Instructions Executed\" column"},
		{"instruction first", head + `"","","0x10","LDG.E R1, [R2]","1","32","32","Global","Load","32","4"` + "\n", "before any source line"},
		{"bad line", head + `"x","a[i]","-","-","1","32","32","-","-","-","0"` + "\n", "line number"},
		{"bad address", head + `"3","a[i]","-","-","1","32","32","-","-","-","0"` + "\n" + `"","","1234","LDG.E","1","32","32","Global","Load","32","4"` + "\n", "want 0x"},
		{"bad count", head + `"3","a[i]","-","-","1","32","32","-","-","-","0"` + "\n" + `"","","0x10","LDG.E","1","32","32","Global","Load","32","four"` + "\n", "not a count"},
		{"too many lanes", head + `"3","a[i]","-","-","1","32","32","-","-","-","0"` + "\n" + `"","","0x10","LDG.E","1","64","32","Global","Load","32","4"` + "\n", "more lanes"},
		{"bad space", head + `"3","a[i]","-","-","1","32","32","-","-","-","0"` + "\n" + `"","","0x10","LDG.E","1","32","32","Heap","Load","32","4"` + "\n", "not an address space"},
		{"no function", `"File Path","k.cu"` + "\n", "no \"Function Name\""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseNcuSource([]byte(tt.data))
			var oe *OutputError
			require.ErrorAs(t, err, &oe)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

// FuzzParseNcuSource: no input panics, and what parses holds together.
// The seed corpus is testdata/fuzz/FuzzParseNcuSource (cut from the
// captured pages) plus the pages themselves.
func FuzzParseNcuSource(f *testing.F) {
	names, _ := filepath.Glob("testdata/ncusource/*.source.csv")
	for _, n := range names {
		if data, err := os.ReadFile(n); err == nil {
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		pages, err := ParseNcuSource(data)
		if err != nil {
			return
		}
		for _, p := range pages {
			for _, l := range p.Lines {
				if l.Line < 1 {
					t.Fatalf("line %d", l.Line)
				}
				for _, s := range l.SASS {
					if s.Active > s.Threads || s.Threads > 32*s.Executed || s.Sectors < 0 || s.Wavefronts < 0 {
						t.Fatalf("counts that do not hold together: %+v", s)
					}
				}
			}
			_ = p.File("kernel.cu")
		}
	})
}
