package sectors

import (
	"testing"

	"github.com/coalescing-course/coalesce/lessons/spec"
)

// BenchmarkGatherRandom is the model's speed goal: a gather of 2^26 random
// indices, reported in thread addresses (one per thread of the gathered
// read) per second. The goal is at least 200 million on one core.
func BenchmarkGatherRandom(b *testing.B) {
	s, err := spec.Parse([]byte(`{"kernel":"gather_copy","n":67108864,"index_pattern":"random"}`))
	if err != nil {
		b.Fatal(err)
	}
	idx, err := s.Indices()
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		if _, err := predictWith(s, idx); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(s.N)*float64(b.N)/b.Elapsed().Seconds()/1e6, "Maddr/s")
}
