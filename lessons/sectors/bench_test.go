package sectors

import (
	"testing"

	"github.com/coalescing-course/coalesce/lessons/spec"
)

// BenchmarkGatherRandom is the model's speed goal (issue 13): a gather of
// 2^26 random indices, at least 300 million thread addresses per second
// on one core (go test -bench GatherRandom -cpu 1). Each thread of gather_copy sends
// three addresses (idx[t], in[idx[t]], out[t]); Maddr/s counts them all,
// Mthreads/s counts threads.
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
	threads := float64(s.N) * float64(b.N) / b.Elapsed().Seconds() / 1e6
	b.ReportMetric(3*threads, "Maddr/s")
	b.ReportMetric(threads, "Mthreads/s")
}

// BenchmarkTranspose is the 2D model's speed goal: a 4096x4096 tiled
// transpose, both global sides and both shared sides, well under a second
// (go test -bench Transpose -cpu 1).
func BenchmarkTranspose(b *testing.B) {
	s, err := spec.Parse([]byte(`{"kernel":"transpose_tiled","rows":4096,"cols":4096,"pad":1}`))
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		if _, err := predictWith(s, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(s.N)*float64(b.N)/b.Elapsed().Seconds()/1e6, "Melements/s")
}
