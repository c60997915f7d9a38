package exercises

import "testing"

// BenchmarkLargest runs the solution of each exercise on its largest
// variant, every parameter at its Max (the gather's n at 4m): the speed
// goal is a second or two on one core
// (go test -run NONE -bench Largest -cpu 1 ./lessons/exercises).
func BenchmarkLargest(b *testing.B) {
	largest := map[string]map[string]int{
		"10-kernels/strided-copy":   {"n": 300_000, "k": 3},
		"10-kernels/aos-soa":        {"n": 65536, "fields": 16, "fx": 0, "fv": 15},
		"10-kernels/transpose":      {"rows": 768, "cols": 768},
		"10-kernels/gather":         {"m": 65536, "n": 4 * 65536},
		"10-kernels/aligned-vector": {"off": 63, "n": 300_000},
	}
	for _, e := range all {
		v := e.Variant("bench")
		v.Params = largest[e.ID]
		for _, kernel := range []struct {
			name string
			k    any
		}{{"starter", e.Starter}, {"solution", answers[e.ID].solution}} {
			b.Run(e.ID+"/"+kernel.name, func(b *testing.B) {
				for b.Loop() {
					if _, err := e.Run(v, kernel.k); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
