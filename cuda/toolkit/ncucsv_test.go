package toolkit

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coalescing-course/coalesce/lessons/metrics"
)

// What ncu printed for the probe on the course's H200
// (cuda/testdata/probe_ncu.csv, the harness's --profile run of
// cuda/testdata/probe.jsonl), read back.
func TestParseNcuCSVRecorded(t *testing.T) {
	data, err := os.ReadFile("../testdata/probe_ncu.csv")
	require.NoError(t, err)
	// The probe's ncu was asked for the global metrics only (metrics.All;
	// the shared ones came with the 2D kernels).
	rows, err := ParseNcuCSV(data, metrics.All)
	require.NoError(t, err)
	require.Len(t, rows, 95, "one row per line of cuda/testdata/probe.jsonl")
	// Row 0 is the probe's first line, a 1-byte coalesced copy of 2^20
	// elements: 2^15 warps, one request each of one sector (32 lanes x 1 B).
	first := rows[0]
	assert.Equal(t, 0, first.ID)
	assert.Equal(t, "void k_coalesced_copy<unsigned char>(const T1 *, T1 *, long long)", first.Name)
	assert.Equal(t, metrics.Set{
		metrics.LdRequests: 32768, metrics.LdSectors: 32768,
		metrics.StRequests: 32768, metrics.StSectors: 32768,
		metrics.DRAMRead: 1051392, metrics.DRAMWrite: 0,
	}, first.Metrics)
	last := rows[94]
	assert.Equal(t, 94, last.ID)
	assert.True(t, strings.HasPrefix(last.Name, "void k_grid_stride_copy<float4, 4>"))
	// 2^26 floats as 2^24 float4s: 2^19 warp requests of 16 sectors each.
	assert.Equal(t, float64(1<<19), last.Metrics[metrics.LdRequests])
	assert.Equal(t, float64(1<<23), last.Metrics[metrics.LdSectors])
	for i, r := range rows {
		assert.Equal(t, i, r.ID)
		assert.True(t, strings.HasPrefix(r.Name, "k_") || strings.HasPrefix(r.Name, "void k_"), r.Name)
	}
}

// csvOf builds a small raw-page CSV: the header, a units row, then rows.
func csvOf(header, units string, rows ...string) string {
	return "==PROF== Connected to process 1 (harness)\n" + header + "\n" + units + "\n" + strings.Join(rows, "\n") + "\n==PROF== Disconnected from process 1\n"
}

const (
	hdr   = `"ID","Kernel Name","dram__bytes_read.sum","l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"`
	units = `"","","byte","sector"`
)

func TestParseNcuCSV(t *testing.T) {
	tests := []struct {
		name string
		data string
		want []string // the metrics asked for; nil: DRAMRead and LdSectors
		got  []KernelMetrics
		err  string
	}{
		{
			name: "thousands separators",
			data: csvOf(hdr, units, `"0","k_a","1,051,392","32,768"`, `"1","k_b","0","7"`),
			got: []KernelMetrics{
				{ID: 0, Name: "k_a", Metrics: metrics.Set{metrics.DRAMRead: 1051392, metrics.LdSectors: 32768}},
				{ID: 1, Name: "k_b", Metrics: metrics.Set{metrics.DRAMRead: 0, metrics.LdSectors: 7}},
			},
		},
		{
			name: "scaled units",
			data: csvOf(hdr, `"","","Mbyte","Ksector"`, `"0","k_a","1.05","2.5"`),
			got:  []KernelMetrics{{ID: 0, Name: "k_a", Metrics: metrics.Set{metrics.DRAMRead: 1.05e6, metrics.LdSectors: 2500}}},
		},
		{
			name: "no units row",
			data: hdr + "\n" + `"3","k_a","10","20"` + "\n",
			got:  []KernelMetrics{{ID: 3, Name: "k_a", Metrics: metrics.Set{metrics.DRAMRead: 10, metrics.LdSectors: 20}}},
		},
		{
			name: "CRLF line ends",
			data: strings.ReplaceAll(csvOf(hdr, units, `"0","k_a","1","2"`), "\n", "\r\n"),
			got:  []KernelMetrics{{ID: 0, Name: "k_a", Metrics: metrics.Set{metrics.DRAMRead: 1, metrics.LdSectors: 2}}},
		},
		{name: "header only", data: csvOf(hdr, units), got: nil},
		{
			// ncu's base units of the shared counters: instructions,
			// wavefronts, and none for bank conflicts.
			name: "shared metrics",
			data: csvOf(hdr+`,"smsp__inst_executed_op_shared_ld.sum","l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum","l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"`,
				units+`,"inst","wavefront",""`, `"0","k_transpose_tiled","1","2","32,768","1,048,576","1,015,808"`),
			want: []string{metrics.DRAMRead, metrics.LdSectors, metrics.ShLdRequests, metrics.ShLdWavefronts, metrics.ShLdBankConflicts},
			got: []KernelMetrics{{ID: 0, Name: "k_transpose_tiled", Metrics: metrics.Set{metrics.DRAMRead: 1, metrics.LdSectors: 2,
				metrics.ShLdRequests: 32768, metrics.ShLdWavefronts: 1048576, metrics.ShLdBankConflicts: 1015808}}},
		},
		{name: "no table", data: "==WARNING== No kernels were profiled.\n", err: "no CSV table"},
		{name: "missing metric", data: csvOf(`"ID","Kernel Name","dram__bytes_read.sum"`, `"","","byte"`, `"0","k","1"`), err: "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum not among the columns"},
		{name: "no ID column", data: csvOf(`"Kernel Name","dram__bytes_read.sum"`, `"","byte"`), err: `no "ID" column`},
		{name: "no name column", data: csvOf(`"ID","dram__bytes_read.sum"`, `"","byte"`), err: `no "Kernel Name" column`},
		{name: "n/a value", data: csvOf(hdr, units, `"0","k","n/a","1"`), err: "no value"},
		{name: "text value", data: csvOf(hdr, units, `"0","k","lots","1"`), err: `"lots" is not a number`},
		{name: "unknown unit", data: csvOf(hdr, `"","","parsec","sector"`, `"0","k","1","1"`), err: `unknown unit "parsec"`},
		{name: "short row", data: csvOf(hdr, units, `"0","k","1"`), err: "3 cells, the header has 4"},
		{name: "ID not a number", data: csvOf(hdr, units, `"zero","k","1","1"`), err: "not an integer"},
		{name: "out of order", data: csvOf(hdr, units, `"1","k","1","1"`, `"0","k","1","1"`), err: "out of launch order"},
		{name: "second units row", data: csvOf(hdr, units, `"0","k","1","1"`, units), err: "a row without an ID"},
		{name: "broken quoting", data: csvOf(hdr, units, `"0","k","1,"2"`), err: "ncu output"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := tt.want
			if want == nil {
				want = []string{metrics.DRAMRead, metrics.LdSectors}
			}
			got, err := ParseNcuCSV([]byte(tt.data), want)
			if tt.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.got, got)
		})
	}
}

func FuzzParseNcuCSV(f *testing.F) {
	f.Add([]byte(csvOf(hdr, units, `"0","k_a","1,051,392","32,768"`)))
	f.Add([]byte(csvOf(hdr, `"","","Mbyte","Ksector"`, `"0","k_a","1.05","2.5"`)))
	f.Add([]byte("==WARNING== No kernels were profiled.\n"))
	if data, err := os.ReadFile("../testdata/probe_ncu.csv"); err == nil && len(data) < 1<<20 {
		f.Add(data[:min(len(data), 8<<10)])
	}
	want := []string{metrics.DRAMRead, metrics.LdSectors}
	f.Fuzz(func(t *testing.T, data []byte) {
		rows, err := ParseNcuCSV(data, want)
		if err != nil {
			var oe *OutputError
			if !assert.ErrorAs(t, err, &oe) {
				t.FailNow()
			}
			return
		}
		for i, r := range rows {
			if i > 0 && r.ID <= rows[i-1].ID {
				t.Fatalf("rows out of order: %d after %d", r.ID, rows[i-1].ID)
			}
			for _, m := range want {
				if _, ok := r.Metrics[m]; !ok {
					t.Fatalf("row %d without %s", i, m)
				}
			}
		}
	})
}
