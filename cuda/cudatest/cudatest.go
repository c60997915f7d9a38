// Package cudatest opens the GPU for the tests that measure on one, once
// a test binary, and skips them, saying what is missing, where there is
// none: CI has neither nvcc nor a GPU, and the device machine both.
package cudatest

import (
	"context"
	"errors"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/coalescing-course/coalesce/cuda"
	"github.com/coalescing-course/coalesce/cuda/toolkit"
)

// openTimeout bounds building the harness and reading the device.
const openTimeout = 10 * time.Minute

// open builds the harness (in $COALESCE_CACHE, cuda.CacheEnv, where set)
// and opens the GPU, once for all the tests of a binary.
var open = sync.OnceValues(func() (*cuda.GPU, error) {
	ctx, cancel := context.WithTimeout(context.Background(), openTimeout)
	defer cancel()
	return cuda.OpenGPU(ctx, cuda.Builder{CacheDir: os.Getenv(cuda.CacheEnv)})
})

// NeedGPU returns the GPU, or skips t with the reason there is none (a
// tool missing: *toolkit.MissingError). Any other failure to open it fails
// t: a GPU machine whose harness does not build is a defect.
func NeedGPU(t testing.TB) *cuda.GPU {
	t.Helper()
	gpu, err := open()
	var missing *toolkit.MissingError
	if errors.As(err, &missing) {
		t.Skipf("no GPU to measure on: %v", err)
	}
	if err != nil {
		t.Fatalf("building the harness or reading the device: %v", err)
	}
	return gpu
}

// NeedNcu returns the GPU, which has ncu, or skips t.
func NeedNcu(t testing.TB) *cuda.GPU {
	t.Helper()
	g := NeedGPU(t)
	if g.Ncu == nil {
		t.Skipf("no ncu: %s", g.NoNcu)
	}
	return g
}
