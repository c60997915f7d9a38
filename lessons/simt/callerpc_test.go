package simt

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
)

// both returns what callerPC and runtime.Callers say its caller returns
// to; generic and not inlined, as Load is.
//
//go:noinline
func both[T any](T) (fast, portable, slow uintptr) {
	var pc [1]uintptr
	runtime.Callers(2, pc[:])
	return callerPC(), callersPC(), pc[0]
}

// callerPC, and callersPC for other architectures, must name the call site
// as runtime.Callers does, for every shape of a generic caller: two calls,
// two sites.
func TestCallerPC(t *testing.T) {
	f1, p1, s1 := both(float32(1))
	f2, p2, s2 := both([4]float32{})
	f3, p3, s3 := both(int64(1))
	assert.Equal(t, []uintptr{s1, s2, s3}, []uintptr{f1, f2, f3})
	assert.Equal(t, []uintptr{s1, s2, s3}, []uintptr{p1, p2, p3})
	assert.NotEqual(t, f1, f2)
	_, l1 := position(f1)
	_, l3 := position(f3)
	assert.Equal(t, l1+2, l3, "each site is the line of its call")
}

// site is a caller of callerPC or callersPC, as Load is.
//
//go:noinline
func site(f func() uintptr) uintptr { return f() }

// BenchmarkCallerPC and BenchmarkCallersPC time what each access pays to
// name its site (go test -bench PC -cpu 1 ./lessons/simt).
func BenchmarkCallerPC(b *testing.B) {
	for b.Loop() {
		site(callerPC)
	}
}

func BenchmarkCallersPC(b *testing.B) {
	for b.Loop() {
		site(callersPC)
	}
}
