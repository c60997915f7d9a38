package units

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestFindEquations(t *testing.T) {
	tests := []struct {
		name, text string
		found      []string
		holds      []bool
	}{
		// The lesson 7: 2,097,152 × 5 = 10,485,760, not 10,485,759;
		// 2,684,356 × 1 is not 2,684,354.
		{"lesson 7 as it was", "  2,097,152 requests × 5 sectors per request = 10,485,759 sectors\n  2,684,356 warps × 1 load per warp = 2,684,354 requests",
			[]string{"2,097,152 requests × 5 sectors per request = 10,485,759", "2,684,356 warps × 1 load per warp = 2,684,354"}, []bool{false, false}},
		// 2,097,152 × 4.9999995 = 10,485,758.95, which rounds to 10,485,759.
		{"lesson 7 now", "  2,097,152 requests × 4.9999995 sectors per request = 10,485,759 sectors",
			[]string{"2,097,152 requests × 4.9999995 sectors per request = 10,485,759"}, []bool{true}},
		// 536,870,912 / 187.6e-6 = 2.8618e12: 2.862 TB/s at three decimals.
		{"units", "Useful bandwidth: 536,870,912 useful bytes ÷ 187.6 µs = 2.862 TB/s.",
			[]string{"536,870,912 useful bytes ÷ 187.6 µs = 2.862 TB/s"}, []bool{true}},
		// 2.86 / 0.189 = 15.13, written 15.2: false as printed.
		{"a ratio of rounded terms", "The ratio: 2.86 TB/s ÷ 189 GB/s = 15.2.", []string{"2.86 TB/s ÷ 189 GB/s = 15.2"}, []bool{false}},
		// 4.49 + 183 = 187.49, not 187.6.
		{"a sum", "4.49 µs + 183 µs = 187.6 µs", []string{"4.49 µs + 183 µs = 187.6 µs"}, []bool{false}},
		{"a percentage", "128 ÷ 1,024 = 12.5%", []string{"128 ÷ 1,024 = 12.5%"}, []bool{true}},
		{"a multiple", "3.625 sectors per request ÷ 4 sectors per request = 0.906× the minimum",
			[]string{"3.625 sectors per request ÷ 4 sectors per request = 0.906×"}, []bool{true}},
		{"no equation", "DRAM 518,954,752 B (519 MB) at 4.26 TB/s (122 µs)", nil, nil},
		{"a number in parentheses starts none", "32 × (12,582,912 + 12,582,912) = 805,306,368", nil, nil},
		{"words between numbers", "32 fetch blocks of 64 bytes = 2,048 bytes", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var found []string
			var holds []bool
			for _, f := range FindEquations(tt.text) {
				found = append(found, f.Text)
				holds = append(holds, f.Holds)
			}
			assert.Equal(t, tt.found, found)
			assert.Equal(t, tt.holds, holds)
		})
	}
}

// TestFindEquationsReadsEquation holds the builder and the reader to each
// other: whatever Equation writes, FindEquations finds and finds true.
func TestFindEquationsReadsEquation(t *testing.T) {
	for _, e := range []Equation{
		Product(Term{V: 10485759, Unit: Count, Noun: "sectors"}, Term{V: 2097152, Unit: Count, Noun: "requests"}, Term{V: 10485759.0 / 2097152, Unit: Ratio, Noun: "sectors per request"}),
		Quotient(Term{V: 536870912 / 187.59e-6, Unit: Bandwidth}, Term{V: 536870912, Unit: Count, Noun: "useful bytes"}, Term{V: 187.59e-6, Unit: Seconds}),
		Product(Term{V: 3.35e12 * 620e-9 / 132, Unit: Count, Noun: "bytes"}, Term{V: 3.35e12, Unit: Bandwidth}, Term{V: 620e-9, Unit: Seconds}).Then(Over, Term{V: 132, Unit: Count, Noun: "SMs"}),
	} {
		found := FindEquations(e.String())
		if assert.Len(t, found, 1, e.String()) {
			assert.True(t, found[0].Holds, e.String())
		}
	}
}
