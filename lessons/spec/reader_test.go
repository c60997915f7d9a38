package spec

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReaderAnswersEveryLine(t *testing.T) {
	in := strings.Join([]string{
		`# a sweep`,
		`{"kernel":"coalesced_copy","n":1024}`,
		``,
		`{"kernel":"strided_copy","n":1024,"stride":0}`,
		`not json`,
		`   {"kernel":"update_x_soa","n":8}   `,
		`{"kernel":"gather_copy","n":8}`, // no newline at the end
	}, "\n")
	lines, err := ReadAll(strings.NewReader(in))
	require.NoError(t, err)
	require.Len(t, lines, 5)
	assert.Equal(t, []int{2, 4, 5, 6, 7}, []int{lines[0].Num, lines[1].Num, lines[2].Num, lines[3].Num, lines[4].Num})
	assert.NoError(t, lines[0].Err)
	assert.Equal(t, CoalescedCopy, lines[0].Spec.Kernel)
	assert.ErrorIs(t, lines[1].Err, ErrValue)
	var le *LineError
	require.ErrorAs(t, lines[1].Err, &le)
	assert.Equal(t, 4, le.Line)
	assert.Contains(t, lines[1].Err.Error(), "line 4: spec: field \"stride\"")
	assert.ErrorIs(t, lines[2].Err, ErrSyntax)
	assert.NoError(t, lines[3].Err)
	assert.NoError(t, lines[4].Err)
	assert.Equal(t, GatherCopy, lines[4].Spec.Kernel)
}

func TestReaderLongLine(t *testing.T) {
	long := `{"kernel":"coalesced_copy","n":1,"x":"` + strings.Repeat("a", MaxLineBytes) + `"}`
	lines, err := ReadAll(strings.NewReader(long + "\n" + `{"kernel":"update_x_soa","n":8}` + "\n"))
	require.NoError(t, err)
	require.Len(t, lines, 2)
	assert.ErrorIs(t, lines[0].Err, ErrSyntax)
	assert.ErrorContains(t, lines[0].Err, "longer than")
	assert.NoError(t, lines[1].Err, "the line after a long one is still read")
	assert.Equal(t, 2, lines[1].Num)
}

func TestReaderIOError(t *testing.T) {
	boom := errors.New("disk gone")
	_, err := ReadAll(io.MultiReader(strings.NewReader(`{"kernel":"update_x_soa","n":8}`+"\n"), iotest.ErrReader(boom)))
	assert.ErrorIs(t, err, boom)
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"kernel":"coalesced_copy","n":1024}`))
	f.Add([]byte(`{"kernel":"strided_copy","n":1048576,"stride":32,"elem_bytes":16}`))
	f.Add([]byte(`{"kernel":"gather_copy","n":64,"index_pattern":"random_perm","seed":3}`))
	f.Add([]byte(`{"kernel":"sum_fields_aos","n":9,"struct_bytes":48,"vector":true}`))
	f.Add([]byte(`{"kernel":"offset_copy","n":9,"offset":8.0}`))
	f.Add([]byte(`{"kernel":1e400}`))
	f.Add([]byte(`{"kernel":"transpose_tiled","rows":100,"cols":37,"tile":16,"block_rows":4,"pad":1}`))
	f.Add([]byte(`{"kernel":"copy_columns","rows":4096,"cols":4096,"n":1}`))
	f.Add([]byte(`{"kernel":"vectorized_copy","n":64,"width":4,"offset":3}`))
	f.Add([]byte(`{"kernel":"sum_fields_soa","n":9,"struct_bytes":32}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse(data)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "spec: ") {
				t.Fatalf("error without prefix: %v", err)
			}
			return
		}
		// A spec that parsed is valid and survives a round trip unchanged.
		if err := s.Validate(); err != nil {
			t.Fatalf("Parse accepted an invalid spec %v: %v", s, err)
		}
		again, err := Parse([]byte(s.String()))
		if err != nil || again != s {
			t.Fatalf("round trip of %s: %v, %v", s, again, err)
		}
	})
}

func FuzzReader(f *testing.F) {
	f.Add("{\"kernel\":\"coalesced_copy\",\"n\":1}\n# c\n\nbad\n")
	f.Add("\r\n{\"kernel\":\"update_x_soa\",\"n\":2}")
	f.Fuzz(func(t *testing.T, in string) {
		lines, err := ReadAll(strings.NewReader(in))
		if err != nil {
			t.Fatalf("no I/O error possible from a string, got %v", err)
		}
		prev := 0
		for _, l := range lines {
			if l.Num <= prev {
				t.Fatalf("line numbers not increasing: %d after %d", l.Num, prev)
			}
			prev = l.Num
			if l.Num > strings.Count(in, "\n")+1 {
				t.Fatalf("line %d beyond the input", l.Num)
			}
		}
	})
}
