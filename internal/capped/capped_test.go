package capped

import (
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestWriter(t *testing.T) {
	tests := []struct {
		name        string
		max, keep   int
		writes      []string
		start, tail string
		dropped     int64
	}{
		{"within the bound", 8, 4, []string{"abc", "de"}, "abcde", "", 0},
		// 12 bytes into 5: "abcde" kept, 7 dropped, the last 3 of them kept.
		{"past the bound", 5, 3, []string{"abcdefg", "hijkl"}, "abcde", "jkl", 7},
		// The tail follows every write: "xyz" then "12" leaves "z12".
		{"the tail moves", 0, 3, []string{"xyz", "12"}, "", "z12", 5},
		{"no tail kept", 0, 0, []string{strings.Repeat("x", 1000)}, "", "", 1000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := &Writer{Max: tt.max, TailSize: tt.keep}
			for _, s := range tt.writes {
				n, err := w.Write([]byte(s))
				assert.NoError(t, err)
				assert.Equal(t, len(s), n, "a write always takes all it is given")
			}
			assert.Equal(t, tt.start, w.Start())
			assert.Equal(t, []byte(tt.start), append([]byte{}, w.Bytes()...))
			assert.Equal(t, tt.dropped, w.Dropped())
			assert.Equal(t, tt.tail, string(w.Tail()))
		})
	}
}

// Two writers at once (a command's stdout and stderr on one Writer) lose
// no count.
func TestWriterConcurrent(t *testing.T) {
	w := &Writer{Max: 100, TailSize: 10}
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				w.Write([]byte("0123456789"))
			}
		}()
	}
	wg.Wait()
	assert.Len(t, w.Start(), 100)
	assert.Equal(t, int64(4*100*10-100), w.Dropped())
}
