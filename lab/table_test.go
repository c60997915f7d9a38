package lab

import (
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coalescing-course/coalesce/cuda"
	"github.com/coalescing-course/coalesce/grader"
	"github.com/coalescing-course/coalesce/lessons/measure"
	"github.com/coalescing-course/coalesce/lessons/metrics"
	"github.com/coalescing-course/coalesce/lessons/sectors"
	"github.com/coalescing-course/coalesce/units"
)

func TestFormat(t *testing.T) {
	tests := []struct {
		v    any
		want string
	}{
		{"text", "text"},
		{8388608, "8,388,608"},
		{int64(-1234567), "-1,234,567"},
		{128.0, "128"},
		{4.999999523, "5"},
		{0.125, "0.125"},
		{16.294952392578125, "16.3"}, // three significant digits, as units.Ratio
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, Format(tt.v), "Format(%v)", tt.v)
	}
	assert.Equal(t, "100%", Percent(1))
	assert.Equal(t, "12.5%", Percent(0.125))
	assert.Equal(t, "88.9%", Percent(0.888888922738442))
	// The example: 1/32 was 3.12% in a verdict, 3.13% in a table and
	// 3.125% on a chart; units writes it 3.13% for all three.
	assert.Equal(t, "3.13%", Percent(1.0/32))
	assert.Equal(t, "4.42", Ratio(4.419588330030506))
	assert.Equal(t, "16.2", Ratio(16.184852048353697))
	assert.Equal(t, "0", Ratio(0))
	assert.Equal(t, "999", Count(999))
	assert.Equal(t, "1,000", Count(999.6))
}

func TestTable(t *testing.T) {
	tb := NewTable("case", "sectors", "share")
	tb.Caption = "Model: the sector model."
	tb.AddRow("a <b>", 4, "latency")
	tb.AddRow("short row")
	tb.AddRow("long row", 1, 2, 3)
	tb.Notes = []string{"a note"}

	text := tb.String()
	assert.Equal(t, "Model: the sector model.\n"+
		"case       sectors  share\n"+
		"a <b>      4        latency\n"+
		"short row  —        —\n"+
		"long row   1        2\n"+
		"a note\n", text)

	html := tb.HTML()
	assert.Contains(t, html, "<i>Model: the sector model.</i>")
	assert.Contains(t, html, ">a &lt;b&gt;</td>", "cells are escaped")
	assert.Equal(t, 4, strings.Count(html, "<tr>"), "a header and three rows")
	assert.Contains(t, html, `<td style="text-align:right;padding:0.15em 0 0.15em 1.2em">4</td>`, "figures to the right")
	assert.Contains(t, html, `<td style="text-align:left;padding:0.15em 1em 0.15em 0">latency</td>`, "words to the left")
	assert.Contains(t, html, `<td style="text-align:right;padding:0.15em 0 0.15em 1.2em">—</td>`, "missing figures too")

	out := capture(t)
	tb.Show()
	assert.Equal(t, text, out.String(), "outside GoNB, Show prints the text")
}

// The seed's table, through ModelTable: the figures the notebooks assert.
func TestModelTableSeed(t *testing.T) {
	tb, err := ModelTable([]Case{
		{"coalesced", Spec(`{"kernel":"coalesced_copy","n":65536}`)},
		{"stride 32", Spec(`{"kernel":"strided_copy","n":65536,"stride":32}`)},
		{"AoS 16 B", Spec(`{"kernel":"update_x_aos","n":65536,"struct_bytes":16}`)},
		{"SoA", Spec(`{"kernel":"update_x_soa","n":65536}`)},
	}, LdSectorsPerRequest, UsefulBytesPerRequest, Efficiency)
	require.NoError(t, err)
	assert.Equal(t, [][]string{
		{"coalesced", "4", "128", "100%"},
		{"stride 32", "32", "128", "12.5%"},
		{"AoS 16 B", "16", "128", "25%"},
		{"SoA", "4", "128", "100%"},
	}, tb.Rows)
	assert.Equal(t, "Model: the sector model of the NVIDIA H200.", tb.Caption)

	_, err = ModelTable(nil, Efficiency)
	assert.ErrorContains(t, err, "no case")
}

func TestOnDevices(t *testing.T) {
	s := Spec(`{"kernel":"vectorized_copy","n":67108864}`)
	cases, err := OnDevices(s, "h200", "a100-80gb")
	require.NoError(t, err)
	require.Len(t, cases, 2)
	assert.Equal(t, "NVIDIA H200", cases[0].Name, "a measured profile is no estimate")
	assert.Equal(t, "NVIDIA A100-SXM4-80GB (estimate)", cases[1].Name)
	assert.Equal(t, "a100-80gb", cases[1].Spec.Device)
	assert.Equal(t, s.Kernel, cases[1].Spec.Kernel)
	assert.Equal(t, "h200", s.Device, "the spec given is left as it was")

	tb, err := ModelTable(cases, TimeMicroseconds, UsefulGBps, TimeBound)
	require.NoError(t, err)
	assert.Equal(t, "Model: the sector model of the NVIDIA H200, NVIDIA A100-SXM4-80GB.", tb.Caption)
	for _, row := range tb.Rows {
		assert.Equal(t, "bandwidth", row[3], "%s: a float4 copy of 512 MB is bound by bandwidth on both", row[0])
	}

	// A granularity the spec sets is kept; its device's default follows the device.
	fetch128 := Spec(`{"kernel":"strided_read","n":1024,"stride":32,"l2_fetch_granularity":128}`)
	cases, err = OnDevices(fetch128, "t4")
	require.NoError(t, err)
	assert.Equal(t, 128, cases[0].Spec.L2Fetch)

	_, err = OnDevices(s, "h200", "a100")
	assert.ErrorContains(t, err, `"a100": want one of a100-40gb, a100-80gb,`)
}

func TestCompareRecorded(t *testing.T) {
	recorded(t)
	tb, err := Compare([]Case{
		{"stride 32", Spec(`{"kernel":"strided_copy","n":67108864,"stride":32}`)},
		{"stride 128", Spec(`{"kernel":"strided_copy","n":67108864,"stride":128}`)},
	}, LdSectorsPerRequest, Efficiency, UsefulGBps, InFlightPerSM, TimeBound, MeasuredOnly(OfMemcpy))
	require.NoError(t, err)
	assert.Equal(t, []string{"case", "ld sectors/request, model", "ld sectors/request, measured",
		"efficiency (useful ÷ fetched), model", "useful bandwidth (GB/s), model", "useful bandwidth (GB/s), measured",
		"load bytes in flight per SM, model", "time set by, model", "of cudaMemcpy, measured"}, tb.Header,
		"figures with one side get one column")
	require.Len(t, tb.Rows, 2)
	assert.Equal(t, []string{"stride 32", "32", "32", "12.5%"}, tb.Rows[0][:4])
	assert.NotEqual(t, Missing, tb.Rows[0][5], "a measured bandwidth")
	assert.Contains(t, []string{sectors.BoundBandwidth, sectors.BoundLatency, sectors.BoundBlocks, sectors.BoundL1Lines, sectors.BoundL2Stores, sectors.BoundShared}, tb.Rows[0][7])
	assert.Regexp(t, `^\d+(\.\d+)?%$`, tb.Rows[0][8])
	assert.Contains(t, tb.Caption, "Model: the sector model of the NVIDIA H200. Measured: recorded on NVIDIA H200, ")

	_, err = Compare([]Case{{"not recorded", Spec(`{"kernel":"strided_copy","n":4096,"stride":32}`)}}, UsefulGBps)
	assert.ErrorIs(t, err, measure.ErrNotMeasured)
}

func TestVersusRecorded(t *testing.T) {
	recorded(t)
	tb, err := Versus(
		Case{"stride 1", Spec(`{"kernel":"strided_copy","n":67108864,"stride":1}`)},
		Case{"stride 32", Spec(`{"kernel":"strided_copy","n":67108864,"stride":32}`)},
	)
	require.NoError(t, err)
	require.Len(t, tb.Rows, 3)
	// The L1's multiple is the seed's 8, in the model and in ncu's counts.
	assert.Equal(t, []string{"L1 sector bytes per useful byte", "1", "8", "8×", "1", "8", "8×"}, tb.Rows[0])
	// A useful MB at stride 1 takes about 0.35 µs: the row is in ns.
	assert.Equal(t, "time per useful MB (ns)", tb.Rows[2][0])
	assert.Regexp(t, `^1[0-9](\.\d+)?×$`, tb.Rows[2][6], "stride 32 is measured well over 8 times slower")
	assert.Contains(t, tb.Notes[0], "stride 32: strided_copy, stride 32, n 2^26.")
	// Each multiple is the quotient of the two values printed beside it,
	// as printed: the row reads "a, b, b÷a", a learner divides b by a.
	for _, r := range tb.Rows {
		for _, c := range [][]string{r[1:4], r[4:7]} {
			if slices.Contains(c, Missing) {
				continue
			}
			bare := func(x string) string { return strings.TrimSuffix(strings.TrimSuffix(x, " (model)"), " (recorded)") }
			eq := units.FindEquations(bare(c[1]) + " ÷ " + bare(c[0]) + " = " + bare(c[2]))
			if assert.Len(t, eq, 1, "%s: %v", r[0], c) {
				assert.True(t, eq[0].Holds, "%s: %v: %s works out to %v", r[0], c, eq[0].Text, eq[0].Worked)
			}
		}
	}
}

func TestCountersRecorded(t *testing.T) {
	recorded(t)
	tb, err := Counters([]Case{{"stride 2", Spec(`{"kernel":"strided_copy","n":67108864,"stride":2}`)}})
	require.NoError(t, err)
	require.Len(t, tb.Rows, len(metrics.All))
	for _, r := range tb.Rows {
		if r[4] == "exact" {
			assert.Equal(t, r[2], r[3], "%s: the model's L1 counts equal ncu's", r[1])
		} else {
			assert.Equal(t, "an estimate", r[4])
		}
	}
	assert.Equal(t, []string{"stride 2", metrics.LdSectors, "8,388,608", "8,388,608", "exact"}, tb.Rows[1])
}

func TestMeasurementsTable(t *testing.T) {
	recorded(t)
	m, err := Measure(Spec(`{"kernel":"gather_copy","n":33554432,"index_pattern":"random_perm"}`))
	require.NoError(t, err)
	text := m.Table().String()
	assert.Regexp(t, `(?m)^gather_copy, random_perm, n 2\^25 +[\d,.]+ +[\d,.]+ +\d+(\.\d+)?% +18 +4 +\d+(\.\d+)?$`, text)
	assert.Contains(t, text, "Counters: ncu ")
}

func TestDescribe(t *testing.T) {
	tests := map[string]string{
		`{"kernel":"strided_copy","n":67108864,"stride":32}`:                    "strided_copy, stride 32, n 2^26",
		`{"kernel":"coalesced_copy","n":1000,"elem_bytes":8,"block":100}`:       "coalesced_copy, elem 8 B, block 100, n 1000",
		`{"kernel":"update_x_aos","n":16,"struct_bytes":16,"field_offset":4}`:   "update_x_aos, struct 16 B, x at 4, n 2^4",
		`{"kernel":"sum_fields_aos","n":16,"struct_bytes":32,"vector":true}`:    "sum_fields_aos, struct 32 B, float4 loads, n 2^4",
		`{"kernel":"strided_read","n":64,"stride":2,"l2_fetch_granularity":32}`: "strided_read, stride 2, L2 fetch 32 B, n 2^6",
		`{"kernel":"grid_stride_copy","n":64,"width":4,"unroll":2,"grid":3}`:    "grid_stride_copy, width 4, unroll 2, grid 3, n 2^6",
		`{"kernel":"gather_copy","n":64,"index_pattern":"sorted_random"}`:       "gather_copy, sorted_random, n 2^6",
	}
	for js, want := range tests {
		assert.Equal(t, want, Describe(Spec("%s", js)))
	}
}

func TestPlanted(t *testing.T) {
	src := recorded(t)
	g, err := grader.New(grader.Options{Measurer: src})
	require.NoError(t, err)
	out := capture(t)
	require.NoError(t, planted(g, "01-sectors/sectors-float", 128))
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Len(t, lines, 3)
	assert.Equal(t, "planted right answer 4: 01-sectors/sectors-float: RIGHT (1 of 1 point)", lines[0])
	assert.Equal(t, "planted wrong answer 128: 01-sectors/sectors-float: WRONG (0 of 1 point)", lines[1])
	assert.Contains(t, lines[2], "Hint: ")

	assert.ErrorIs(t, planted(g, "01-sectors/no-such-exercise", 1), grader.ErrUnknownQuestion)
}

// An exercise graded by measurement plants the measured answer.
func TestPlantedMeasured(t *testing.T) {
	src := recorded(t)
	g, err := grader.New(grader.Options{Measurer: src})
	require.NoError(t, err)
	out := capture(t)
	require.NoError(t, planted(g, "08-h200/dram-stride-32", 1))
	assert.Regexp(t, `^planted right answer \S+: 08-h200/dram-stride-32: RIGHT \(2 of 2 points\)\n`, out.String())
	assert.Contains(t, out.String(), "planted wrong answer 1: 08-h200/dram-stride-32: WRONG")
}

// Check grades against the notebook's own source: the verdicts and the
// tables of a lesson name the same measurements.
func TestCheckUsesTheNotebooksSource(t *testing.T) {
	src := recorded(t)
	out := capture(t)
	v := Check("08-h200/dram-stride-32", 16)
	require.NoError(t, v.Err)
	assert.Equal(t, src.Origin().String(), v.Origin)
	assert.True(t, strings.HasPrefix(out.String(), "RIGHT 08-h200/dram-stride-32 "), "outside GoNB the verdict prints as text")

	useMeasurer(nil, cuda.ErrNoMeasurer)
	v = Check("08-h200/dram-stride-32", 16)
	require.NoError(t, v.Err)
	assert.Nil(t, v.Measurement, "no source: the model's answer only")
	assert.Contains(t, v.NoMeasurement, "no measurement source")

	v = Check("08-h200/no-such-exercise", 16)
	assert.ErrorIs(t, v.Err, grader.ErrUnknownQuestion)
}
