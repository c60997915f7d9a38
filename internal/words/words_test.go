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
		{1024, "byte", "1,024 bytes"}, // a count, as units writes one
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, Plural(tt.n, tt.noun))
	}
}

func ExamplePlural() {
	fmt.Println(Plural(4, "sector"), "in", Plural(1, "line"))
	// Output: 4 sectors in 1 line
}
