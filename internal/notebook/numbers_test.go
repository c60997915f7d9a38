package notebook

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coalescing-course/coalesce/units"
)

func TestScanNumbers(t *testing.T) {
	type num struct {
		text    string
		value   float64
		dec     int
		percent bool
	}
	for _, tc := range []struct {
		name, in string
		want     []num
	}{
		{"integer with unit", "258 GB/s", []num{{"258", 258, 0, false}}},
		{"thousands separators", "n = 1,048,576 floats", []num{{"1,048,576", 1048576, 0, false}}},
		{"a list is no thousands", "strides 3, 5 and 7", []num{{"3", 3, 0, false}, {"5", 5, 0, false}, {"7", 7, 0, false}}},
		{"decimals and percent", "64.50 % of memcpy", []num{{"64.50", 64.5, 2, true}}},
		{"attached multiplier", "×8 and 1.5× slower", []num{{"8", 8, 0, false}, {"1.5", 1.5, 1, false}}},
		// 2^24 = 16777216; 2^25 = 33554432; 1 << 20 = 1048576.
		{"caret power", "2^24 elements", []num{{"2^24", 16777216, 0, false}}},
		{"superscript power", "over 2²⁵ floats", []num{{"2²⁵", 33554432, 0, false}}},
		{"html power", "2<sup>24</sup>", []num{{"2<sup>24</sup>", 16777216, 0, false}}},
		{"shift in code", "n := 1 << 20", []num{{"1 << 20", 1048576, 0, false}}},
		{"exponent", "1.2e+06 bytes", []num{{"1.2e+06", 1.2e6, 1, false}}},
		{"names are not numbers", "H200, L2, sm_90, float4, v1.2", nil},
		{"words with digits are not numbers", "a 2D grid, the 3rd lane, 64bit", nil},
		{"hyphenated size", "a 32-byte sector", []num{{"32", 32, 0, false}}},
		{"attached unit", "4MB and 80µs", []num{{"4", 4, 0, false}, {"80", 80, 0, false}}},
		{"date", "2026-11-29", []num{{"2026", 2026, 0, false}, {"11", 11, 0, false}, {"29", 29, 0, false}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []num
			for _, n := range ScanNumbers(tc.in) {
				got = append(got, num{n.Text, n.Value, n.Decimals, n.Percent})
				assert.Equal(t, n.Text, tc.in[n.Offset:n.Offset+len(n.Text)], "Offset locates Text")
			}
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestProseNumbers(t *testing.T) {
	for _, tc := range []struct {
		name, md string
		want     []string // Text of each number
	}{
		{"plain prose", "The copy reaches 258 GB/s.", []string{"258"}},
		{"code span skipped", "With `stride = 32` it is 8 times slower.", []string{"8"}},
		{"fenced block skipped", "Before 3.\n```cuda\nint x = 42;\n```\nAfter 4.", []string{"3", "4"}},
		{"tilde fence skipped", "~~~\n99\n~~~\n", nil},
		{"heading lesson number skipped", "# 3 · Strided access\n\n## 2 predictions, of 5 bytes", []string{"5"}},
		{"list numbering skipped", "1. with 32 lanes\n2) and 64 bytes", []string{"32", "64"}},
		{"link target skipped", "see [the table](https://x.org/a/12345) and [doc](docs/2024.md)", nil},
		{"link to a lesson skipped", "[3 · Strided](03-strided.ipynb) shows 7", []string{"7"}},
		{"url and image skipped", "![fig 9](img/9.png) at https://h.org/7 ok", nil},
		{"html comment and tag skipped", "<!-- 12 --><td width=\"40\">5</td>", []string{"5"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, s := range ProseNumbers(tc.md) {
				got = append(got, s.Text)
			}
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestProseNumbersSentence(t *testing.T) {
	md := "The model says 8. The GPU measures 1.5× more,\nnot 2.\n\n* Try 9 here. Then 10."
	want := map[string]string{
		"8":   "The model says 8.",
		"1.5": "The GPU measures 1.5× more, not 2.",
		"2":   "The GPU measures 1.5× more, not 2.",
		"9":   "* Try 9 here.",
		"10":  "Then 10.",
	}
	got := map[string]string{}
	for _, s := range ProseNumbers(md) {
		got[s.Text] = s.Sentence
	}
	assert.Equal(t, want, got)
}

// executed builds the JSON of an executed notebook from cells given as
// (type, source, printed output).
func executed(t *testing.T, cells ...[3]string) []byte {
	t.Helper()
	var cs []map[string]any
	for _, c := range cells {
		cell := map[string]any{"cell_type": c[0], "source": c[1], "metadata": map[string]any{}}
		if c[0] == Code {
			cell["outputs"] = []map[string]any{{"output_type": "stream", "name": "stdout", "text": c[2]}}
		}
		cs = append(cs, cell)
	}
	data, err := json.Marshal(map[string]any{"nbformat": 4, "nbformat_minor": 5, "metadata": map[string]any{}, "cells": cs})
	require.NoError(t, err)
	return data
}

func TestCheckNumbers(t *testing.T) {
	const (
		md   = Markdown
		code = Code
	)
	for _, tc := range []struct {
		name  string
		cells [][3]string
		bad   []string // the unbacked numbers
	}{
		{"typed result absent from outputs fails",
			[][3]string{{md, "The copy reaches 258 GB/s.", ""}, {code, "lab.Measure(s)", "useful GB/s: 251.3\n"}},
			[]string{"258"}},
		{"printed result passes",
			[][3]string{{md, "The copy reaches 251.3 GB/s.", ""}, {code, "lab.Measure(s)", "useful GB/s: 251.3\n"}},
			nil},
		// 251.26 rounds to 251.3 at the prose's one decimal; 3.97 rounds to 4.
		{"prose rounds a printed result",
			[][3]string{{md, "It reaches 251.3 GB/s, 4× the strided copy.", ""}, {code, "x", "251.26 GB/s, ×3.97\n"}},
			nil},
		// 3.4 rounds to 3, not 4.
		{"prose that does not round the printed value fails",
			[][3]string{{md, "It is 4× slower.", ""}, {code, "x", "×3.4\n"}},
			[]string{"4"}},
		{"printed with separators, stated plain",
			[][3]string{{md, "It moves 1048576 sectors.", ""}, {code, "x", "1,048,576 sectors\n"}},
			nil},
		// 2²⁴ = 16777216.
		{"power stated, plain integer in code",
			[][3]string{{md, "Over 2²⁴ floats.", ""}, {code, `{"n":16777216}`, ""}},
			nil},
		{"input in a code cell's source passes",
			[][3]string{{md, "Try stride 9.", ""}, {code, `{"stride":9}`, ""}},
			nil},
		// 25% is the 0.25 the code writes.
		{"percentage of a fraction in code",
			[][3]string{{md, "within 25%", ""}, {code, "tol := 0.25", ""}},
			nil},
		{"a number only in another markdown cell fails",
			[][3]string{{md, "It takes 80 µs.", ""}, {md, "Yes, 80 µs.", ""}, {code, "x", "done\n"}},
			[]string{"80", "80"}},
		{"definitions pass",
			[][3]string{{md, "A warp's 32 lanes load 32-byte sectors of 128-byte lines; lesson 8 says why; a 16-byte load.", ""}, {code, "x", ""}},
			nil},
		{"a definition's value in another role fails",
			[][3]string{{md, "It is 32 times slower, 128 GB/s.", ""}, {code, "x", ""}},
			[]string{"32", "128"}},
		{"errors and code spans back nothing and state nothing",
			[][3]string{{md, "Set `n = 77`.", ""}, {code, "x", ""}},
			nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := executed(t, tc.cells...)
			nb, err := Parse(data)
			require.NoError(t, err)
			outs, err := OutputTexts(data)
			require.NoError(t, err)
			var bad []string
			for _, f := range CheckNumbers(nb, outs) {
				bad = append(bad, f.Text)
				assert.Equal(t, Markdown, nb.Cells[f.Cell].Type)
				assert.Contains(t, f.String(), f.Sentence)
			}
			assert.Equal(t, tc.bad, bad)
		})
	}
}

func TestOutputTexts(t *testing.T) {
	data := []byte(`{"nbformat":4,"nbformat_minor":5,"metadata":{},"cells":[
	 {"cell_type":"markdown","source":"x"},
	 {"cell_type":"code","source":"y","outputs":[
	   {"output_type":"stream","name":"stdout","text":["a 1\n","b 2\n"]},
	   {"output_type":"display_data","data":{"text/html":"<style>td{width:77px}</style><td>3&nbsp;&times;</td>","image/png":"iVBOR"}},
	   {"output_type":"error","ename":"E","evalue":"99","traceback":["99"]}]}]}`)
	got, err := OutputTexts(data)
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.Contains(t, got[1], "a 1\nb 2\n")
	assert.Contains(t, got[1], "3\u00a0×")
	assert.NotContains(t, got[1], "77", "styles are no output")
	assert.NotContains(t, got[1], "99", "errors are no output")

	_, err = OutputTexts([]byte(`{"nbformat":4,"cells":"no"}`))
	assert.ErrorIs(t, err, ErrNotNotebook)
}

func FuzzProseNumbers(f *testing.F) {
	for _, s := range []string{
		"The copy reaches 258 GB/s, 1,048,576 sectors, 2²⁴ floats, 64.5 %.",
		"# 3 · Strided\n```\n42\n```\n1. a `7` [b](03-x.ipynb) <sup>2</sup>",
		"2^999 1e400 ×8 1.5× 2<sup>24</sup> 1 << 20",
		"", "\n\n* 9.\n", "~~~\n1\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, md string) {
		for _, s := range ProseNumbers(md) {
			if s.Offset < 0 || s.Offset+len(s.Text) > len(md) || md[s.Offset:s.Offset+len(s.Text)] != s.Text {
				t.Fatalf("number %q at %d is not in the text", s.Text, s.Offset)
			}
			if !strings.ContainsAny(s.Text, "0123456789") {
				t.Fatalf("number %q has no digit", s.Text)
			}
			if utf8.ValidString(md) && !utf8.ValidString(s.Sentence) {
				t.Fatalf("sentence %q of valid text is not valid UTF-8", s.Sentence)
			}
			if s.Value < 0 {
				t.Fatalf("number %q has a negative value %v", s.Text, s.Value)
			}
		}
	})
}

// TestSupportRoundsAsUnits holds the check to units' rounding:
// a printed 3.125% states 3.13% (half away from zero, as units prints
// 1/32), not 3.12%; a printed 1.005 states 1.01, as a person rounds what
// is written (math.Round of 100.49999... would say 1.00).
func TestSupportRoundsAsUnits(t *testing.T) {
	ev := Evidence{}
	for _, n := range ScanNumbers("3.125% and 1.005 and " + units.Percent.Scale(1).Precise().Format(1.0/32)) {
		ev.Printed = append(ev.Printed, Fact{Cell: 2, Number: n})
	}
	for _, tt := range []struct {
		stated string
		backed bool
	}{{"3.13%", true}, {"3.12%", false}, {"1.01", true}, {"1.00", false}, {units.Percent.Format(1.0 / 32), true}} {
		n := ScanNumbers(tt.stated)
		require.Len(t, n, 1, tt.stated)
		assert.Equal(t, tt.backed, ev.support(n[0]) != "", "%s stated, %v printed", tt.stated, ev.Printed)
	}
}

// TestCheckEquations finds the equation lesson 7 printed false, and not
// the one it prints now.
func TestCheckEquations(t *testing.T) {
	bad := CheckEquations(map[int]string{
		3: "offset_copy\n  2,097,152 requests × 5 sectors per request = 10,485,759 sectors\n",
		5: "  2,097,152 requests × 4.9999995 sectors per request = 10,485,759 sectors\n",
	})
	require.Len(t, bad, 1)
	assert.Equal(t, 3, bad[0].Cell)
	assert.Equal(t, 10485760.0, bad[0].Worked)
}

// A value a display withheld counts as printed: the cell prints it once
// the learner has answered.
func TestOutputTextsWithheld(t *testing.T) {
	rec := `{\"tells\":[],\"withheld\":[{\"tell\":{\"figure\":\"ld_sectors_per_request\",\"value\":4.9999995},\"questions\":[\"02-coalescing/sectors-offset-1\"]}]}`
	data := `{"nbformat":4,"nbformat_minor":5,"metadata":{},"cells":[{"cell_type":"code","metadata":{},"source":"x","outputs":[` +
		`{"output_type":"display_data","metadata":{},"data":{"text/plain":"(hidden)","` + ShownMIMEType + `":"` + rec + `"}}]}]}`
	texts, err := OutputTexts([]byte(data))
	require.NoError(t, err)
	assert.Contains(t, texts[0], "withheld until answered: 5\n")
	assert.Contains(t, texts[0], "(hidden)")
}
