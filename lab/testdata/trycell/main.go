// Command trycell is a notebook cell's program, as GoNB builds one (a main
// that parses its flags, then the cell's code), that calls lab.Try with
// the kernel its first argument names: lab's tests of the bounded child
// run it, hostile kernels and all (bounded_test.go). It prints the
// cell's own line before the call, Try's output, and a last line,
// "trycell: verdict=... elapsed=...", for the test to read.
package main

import (
	"flag"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/coalescing-course/coalesce/lab"
	"github.com/coalescing-course/coalesce/lessons/simt"
)

const copyID = "10-kernels/strided-copy"

// Copy is a right, coalesced copy.
func Copy(t *simt.Thread, in, out *simt.Global[float32], n, k int) {
	i := t.BlockIdx.X*t.BlockDim.X + t.ThreadIdx.X
	threads := t.GridDim.X * t.BlockDim.X
	for j := 0; j < k; j++ {
		if e := j*threads + i; e < n {
			out.Store(t, e, in.Load(t, e))
		}
	}
}

// StuckLoop is the strided copy with j += 0: an endless loop of accesses.
func StuckLoop(t *simt.Thread, in, out *simt.Global[float32], n, k int) {
	i := t.BlockIdx.X*t.BlockDim.X + t.ThreadIdx.X
	for j := 0; j < k; j += 0 {
		if e := i*k + j; e < n {
			out.Store(t, e, in.Load(t, e))
		}
	}
}

// Spin loops without an access.
func Spin(t *simt.Thread, in, out *simt.Global[float32], n, k int) {
	x := 0
	for {
		x++
	}
}

var hoard [][]byte

// Hoard allocates without end, and keeps it all, touching every page.
func Hoard(t *simt.Thread, in, out *simt.Global[float32], n, k int) {
	for {
		b := make([]byte, 8<<20)
		for i := 0; i < len(b); i += 4096 {
			b[i] = 1
		}
		hoard = append(hoard, b)
	}
}

// Huge asks for one buffer of 8 GiB.
func Huge(t *simt.Thread, in, out *simt.Global[float32], n, k int) {
	b := make([]float32, 2<<30)
	b[len(b)-1] = 1
	out.Store(t, 0, b[len(b)-1])
}

func depth(n int) int {
	var pad [64]byte
	pad[n%64] = byte(n)
	return depth(n+1) + int(pad[0])
}

// Recurse recurses without end.
func Recurse(t *simt.Thread, in, out *simt.Global[float32], n, k int) {
	out.Store(t, 0, float32(depth(0)))
}

// Flood prints without end.
func Flood(t *simt.Thread, in, out *simt.Global[float32], n, k int) {
	for {
		fmt.Println("the kernel prints a line, and another, and another")
	}
}

// Nested launches the copy itself, from one thread.
func Nested(t *simt.Thread, in, out *simt.Global[float32], n, k int) {
	if t.BlockIdx.X == 0 && t.ThreadIdx.X == 0 {
		simt.Launch{Grid: simt.Dim{X: (n + 255) / 256}, Block: simt.Dim{X: 256}}.Run(func(u *simt.Thread) {
			if i := u.BlockIdx.X*256 + u.ThreadIdx.X; i < n {
				out.Store(u, i, in.Load(u, i))
			}
		})
	}
}

// Hidden stores past the end behind a recover.
func Hidden(t *simt.Thread, in, out *simt.Global[float32], n, k int) {
	defer func() { recover() }()
	Copy(t, in, out, n, k)
	out.Store(t, n, 0)
}

// Exit ends the program.
func Exit(t *simt.Thread, in, out *simt.Global[float32], n, k int) {
	os.Exit(0)
}

// GoPanic panics in a goroutine of its own, which no recover reaches.
func GoPanic(t *simt.Thread, in, out *simt.Global[float32], n, k int) {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		panic("a goroutine of the kernel's")
	}()
	wg.Wait()
}

// NoLookups is a gather's kernel that looks nothing up.
func NoLookups(t *simt.Thread, table *simt.Global[float32], keys, outKey *simt.Global[int32], outVal *simt.Global[float32], n int) {
}

// SlowOrder is a gather's Order that never returns.
func SlowOrder(keys []int32) []int32 {
	for {
		keys[0] = keys[0] + 0
	}
}

var kernels = map[string]any{
	"copy": Copy, "stuck": StuckLoop, "spin": Spin, "hoard": Hoard, "huge": Huge, "recurse": Recurse,
	"flood": Flood, "nested": Nested, "hidden": Hidden, "exit": Exit, "gopanic": GoPanic,
}

func main() {
	flag.Parse()
	fmt.Println("trycell: the cell's code before lab.Try")
	name := flag.Arg(0)
	id, k := copyID, kernels[name]
	if name == "slow-order" {
		id, k = "10-kernels/gather", lab.Gather{Order: SlowOrder, Kernel: NoLookups}
	}
	if name == "after-spin" {
		k = Spin
	}
	if k == nil {
		fmt.Fprintf(os.Stderr, "trycell: no kernel %q\n", name)
		os.Exit(2)
	}
	if name == "after-spin" {
		// A cell that tries a kernel that never ends, then another: the
		// second's child must not run the first again.
		lab.Try(id, Spin)
		k = Copy
	}
	start := time.Now()
	out := lab.Try(id, k)
	verdict := "nil"
	if out != nil {
		verdict = fmt.Sprint(out.Pass)
	}
	fmt.Printf("trycell: pass=%s elapsed=%s\n", verdict, time.Since(start).Round(time.Millisecond))
}
