package words

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestPlural(t *testing.T) {
	tests := []struct {
		n    int
		noun string
		want string
	}{
		{1, "sector", "1 sector"},
		{0, "sector", "0 sectors"},
		{32, "line", "32 lines"},
		{2, "launch", "2 launches"},
		{3, "pass", "3 passes"},
		{1, "launch", "1 launch"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, Plural(tt.n, tt.noun))
	}
}

func ExamplePlural() {
	fmt.Println(Plural(4, "sector"), "in", Plural(1, "line"))
	// Output: 4 sectors in 1 line
}

func TestUnit(t *testing.T) {
	tests := []struct {
		value, unit, want string
	}{
		// The learner's report: a ratio of exactly 1 read "1 sectors per request".
		{"1", "sectors per request", "1 sector per request"},
		{"4", "sectors per request", "4 sectors per request"},
		{"1.5", "sectors per request", "1.5 sectors per request"},
		{"1.00", "sectors per request", "1.00 sectors per request"},
		{"1", "requests", "1 request"},
		{"1", "DRAM bytes per useful byte", "1 DRAM byte per useful byte"},
		{"1", "launches", "1 launch"},
		{"1", "load sectors", "1 load sector"},
		{"1", "times more DRAM bytes", "1 times more DRAM bytes"},
		{"1", "passes", "1 pass"},
		// Head nouns that are not plural, and "times", stay.
		{"1", "fraction of fetched bytes used", "1 fraction of fetched bytes used"},
		{"1", "times faster", "1 times faster"},
		{"1", "GB/s", "1 GB/s"},
	}
	for _, tt := range tests {
		t.Run(tt.value+" "+tt.unit, func(t *testing.T) {
			assert.Equal(t, tt.want, Unit(tt.value, tt.unit))
		})
	}
}
