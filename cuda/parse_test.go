package cuda

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coalescing-course/coalesce/lessons/metrics"
)

const okTimed = `{"line":1,"time_ms":0.2,"time_ms_min":0.19,"time_ms_max":0.25,"timed_launches":20,"memcpy_ms":0.1,"memcpy_bytes":4,"threads":2,"grid_blocks":1,"block":256,"l2_fetch_granularity":64,"launched":true,"verified":true}`
const okProfile = `{"line":1,"threads":2,"grid_blocks":1,"block":256,"l2_fetch_granularity":64,"launched":true,"verified":true}`

func TestParseHarnessOutput(t *testing.T) {
	tests := []struct {
		name  string
		data  string
		n     int
		timed bool
		want  string // error substring; "" for success
	}{
		{"timed", okTimed + "\n", 1, true, ""},
		{"profile", okProfile + "\n", 1, false, ""},
		{"error line", `{"line":1,"error":"spec: stride = 0","launched":false}` + "\n", 1, true, ""},
		{"no final newline", okProfile, 1, false, ""},
		{"profile line where times are due", okProfile + "\n", 1, true, "without time_ms"},
		{"not verified", strings.Replace(okTimed, `"verified":true`, `"verified":false`, 1), 1, true, `"verified": true`},
		{"not launched", strings.Replace(okTimed, `"launched":true`, `"launched":false`, 1), 1, true, `"launched": true`},
		{"too few launches", strings.Replace(okTimed, `"timed_launches":20`, `"timed_launches":5`, 1), 1, true, "at least 9"},
		{"median outside range", strings.Replace(okTimed, `"time_ms":0.2,`, `"time_ms":0.3,`, 1), 1, true, "does not hold"},
		{"zero time", strings.Replace(okTimed, `"memcpy_ms":0.1`, `"memcpy_ms":0`, 1), 1, true, "memcpy_ms = 0"},
		{"no memcpy size", strings.Replace(okTimed, `"memcpy_bytes":4`, `"memcpy_bytes":0`, 1), 1, true, "memcpy_bytes = 0"},
		{"a field of the first build", strings.Replace(okProfile, `"threads":2`, `"useful_bytes":8,"threads":2`, 1), 1, false, `unknown field "useful_bytes"`},
		{"no threads", strings.Replace(okProfile, `"threads":2`, `"threads":0`, 1), 1, false, "positive"},
		{"wrong line number", strings.Replace(okProfile, `"line":1`, `"line":2`, 1), 1, false, "out of order"},
		{"two objects on a line", okProfile + okProfile, 1, false, "trailing data"},
		{"not JSON", "Segmentation fault\n", 1, false, "not the harness's JSON"},
		{"string where a number goes", strings.Replace(okProfile, `"threads":2`, `"threads":"2"`, 1), 1, false, "not the harness's JSON"},
		{"count short", okProfile + "\n", 2, false, "1 answers to 2 specs"},
		{"blank line", okProfile + "\n\n", 1, false, "empty line"},
		{"nothing", "", 1, false, "0 answers to 1 specs"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseHarnessOutput([]byte(tt.data), tt.n, tt.timed)
			if tt.want == "" {
				require.NoError(t, err)
				assert.Len(t, got, tt.n)
				return
			}
			var oe *OutputError
			require.ErrorAs(t, err, &oe)
			assert.Equal(t, "harness", oe.Source)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

// The harness's answers to the small launches of every kernel, as it gave
// them on the H200 under compute-sanitizer (cuda/device/check.sh), parse
// as they are.
func TestParseHarnessOutputRecorded(t *testing.T) {
	data, err := os.ReadFile("testdata/sanitize.txt")
	require.NoError(t, err)
	var lines []string
	for _, l := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(l, "{") {
			lines = append(lines, l)
		}
	}
	got, err := parseHarnessOutput([]byte(strings.Join(lines, "\n")), 39, false)
	require.NoError(t, err)
	for _, a := range got {
		assert.True(t, a.Verified)
	}
}

func TestParseNcuCSVRecorded(t *testing.T) {
	data, err := os.ReadFile("testdata/probe_ncu.csv")
	require.NoError(t, err)
	// The probe's ncu was asked for the global metrics only (metrics.All;
	// the shared ones came with the 2D kernels).
	rows, err := parseNcuCSV(data, metrics.All)
	require.NoError(t, err)
	require.Len(t, rows, 95, "one row per line of testdata/probe.jsonl")
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
	hdr      = `"ID","Kernel Name","dram__bytes_read.sum","l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"`
	unitsRow = `"","","byte","sector"`
)

func TestParseNcuCSV(t *testing.T) {
	tests := []struct {
		name string
		data string
		want []string // the metrics asked for; nil: DRAMRead and LdSectors
		got  []kernelMetrics
		err  string
	}{
		{
			name: "thousands separators",
			data: csvOf(hdr, unitsRow, `"0","k_a","1,051,392","32,768"`, `"1","k_b","0","7"`),
			got: []kernelMetrics{
				{ID: 0, Name: "k_a", Metrics: metrics.Set{metrics.DRAMRead: 1051392, metrics.LdSectors: 32768}},
				{ID: 1, Name: "k_b", Metrics: metrics.Set{metrics.DRAMRead: 0, metrics.LdSectors: 7}},
			},
		},
		{
			name: "scaled units",
			data: csvOf(hdr, `"","","Mbyte","Ksector"`, `"0","k_a","1.05","2.5"`),
			got:  []kernelMetrics{{ID: 0, Name: "k_a", Metrics: metrics.Set{metrics.DRAMRead: 1.05e6, metrics.LdSectors: 2500}}},
		},
		{
			name: "no units row",
			data: hdr + "\n" + `"3","k_a","10","20"` + "\n",
			got:  []kernelMetrics{{ID: 3, Name: "k_a", Metrics: metrics.Set{metrics.DRAMRead: 10, metrics.LdSectors: 20}}},
		},
		{
			name: "CRLF line ends",
			data: strings.ReplaceAll(csvOf(hdr, unitsRow, `"0","k_a","1","2"`), "\n", "\r\n"),
			got:  []kernelMetrics{{ID: 0, Name: "k_a", Metrics: metrics.Set{metrics.DRAMRead: 1, metrics.LdSectors: 2}}},
		},
		{name: "header only", data: csvOf(hdr, unitsRow), got: nil},
		{
			// ncu's base units of the shared counters: instructions,
			// wavefronts, and none for bank conflicts.
			name: "shared metrics",
			data: csvOf(hdr+`,"smsp__inst_executed_op_shared_ld.sum","l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum","l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"`,
				unitsRow+`,"inst","wavefront",""`, `"0","k_transpose_tiled","1","2","32,768","1,048,576","1,015,808"`),
			want: []string{metrics.DRAMRead, metrics.LdSectors, metrics.ShLdRequests, metrics.ShLdWavefronts, metrics.ShLdBankConflicts},
			got: []kernelMetrics{{ID: 0, Name: "k_transpose_tiled", Metrics: metrics.Set{metrics.DRAMRead: 1, metrics.LdSectors: 2,
				metrics.ShLdRequests: 32768, metrics.ShLdWavefronts: 1048576, metrics.ShLdBankConflicts: 1015808}}},
		},
		{name: "no table", data: "==WARNING== No kernels were profiled.\n", err: "no CSV table"},
		{name: "missing metric", data: csvOf(`"ID","Kernel Name","dram__bytes_read.sum"`, `"","","byte"`, `"0","k","1"`), err: "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum not among the columns"},
		{name: "no ID column", data: csvOf(`"Kernel Name","dram__bytes_read.sum"`, `"","byte"`), err: `no "ID" column`},
		{name: "no name column", data: csvOf(`"ID","dram__bytes_read.sum"`, `"","byte"`), err: `no "Kernel Name" column`},
		{name: "n/a value", data: csvOf(hdr, unitsRow, `"0","k","n/a","1"`), err: "no value"},
		{name: "text value", data: csvOf(hdr, unitsRow, `"0","k","lots","1"`), err: `"lots" is not a number`},
		{name: "unknown unit", data: csvOf(hdr, `"","","parsec","sector"`, `"0","k","1","1"`), err: `unknown unit "parsec"`},
		{name: "short row", data: csvOf(hdr, unitsRow, `"0","k","1"`), err: "3 cells, the header has 4"},
		{name: "ID not a number", data: csvOf(hdr, unitsRow, `"zero","k","1","1"`), err: "not an integer"},
		{name: "out of order", data: csvOf(hdr, unitsRow, `"1","k","1","1"`, `"0","k","1","1"`), err: "out of launch order"},
		{name: "second units row", data: csvOf(hdr, unitsRow, `"0","k","1","1"`, unitsRow), err: "a row without an ID"},
		{name: "broken quoting", data: csvOf(hdr, unitsRow, `"0","k","1,"2"`), err: "ncu output"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := tt.want
			if want == nil {
				want = []string{metrics.DRAMRead, metrics.LdSectors}
			}
			got, err := parseNcuCSV([]byte(tt.data), want)
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
	f.Add([]byte(csvOf(hdr, unitsRow, `"0","k_a","1,051,392","32,768"`)))
	f.Add([]byte(csvOf(hdr, `"","","Mbyte","Ksector"`, `"0","k_a","1.05","2.5"`)))
	f.Add([]byte("==WARNING== No kernels were profiled.\n"))
	if data, err := os.ReadFile("testdata/probe_ncu.csv"); err == nil && len(data) < 1<<20 {
		f.Add(data[:min(len(data), 8<<10)])
	}
	want := []string{metrics.DRAMRead, metrics.LdSectors}
	f.Fuzz(func(t *testing.T, data []byte) {
		rows, err := parseNcuCSV(data, want)
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

func FuzzParseHarnessOutput(f *testing.F) {
	f.Add([]byte(okTimed+"\n"), 1, true)
	f.Add([]byte(okProfile+"\n"), 1, false)
	f.Add([]byte(`{"line":1,"error":"x"}`+"\n"+okProfile), 2, false)
	f.Add([]byte("Segmentation fault"), 1, true)
	f.Add([]byte(okProfile+"\n"+`{"line":2,"error":"misaligned address","launched":true,"cuda_error":"cudaErrorMisalignedAddress","context_failed":true}`+"\n"), 3, false)
	f.Fuzz(func(t *testing.T, data []byte, n int, timed bool) {
		got, err := parseHarnessOutput(data, n, timed)
		if err != nil {
			var oe *OutputError
			if !assert.ErrorAs(t, err, &oe) {
				t.FailNow()
			}
			return
		}
		// Fewer answers than specs only after a fault: a profiler may
		// end the harness there.
		if len(got) > n || len(got) < n && faultAt(got) < 0 {
			t.Fatalf("%d answers accepted for %d specs", len(got), n)
		}
		for i, a := range got {
			if a.Line != i+1 {
				t.Fatalf("answer %d says line %d", i, a.Line)
			}
			if a.Error == "" && (!a.Verified || (timed && (a.TimeMs == nil || *a.TimeMs <= 0))) {
				t.Fatalf("an unverified or untimed result accepted: %+v", a)
			}
		}
	})
}
