package progress_test

import (
	"fmt"
	"os"

	"github.com/coalescing-course/coalesce/internal/progress"
)

// A log, where lines cannot be rewritten, gets each step once.
func ExampleLines() {
	l := progress.New(progress.Lines(os.Stdout), 0)
	fmt.Fprintln(l, "calibrate: 1/2 probe")
	fmt.Fprintln(l, "calibrate: 2/2 fit")
	l.Close()
	// Output:
	// calibrate: 1/2 probe (0 s)
	// calibrate: 2/2 fit (0 s)
	// calibrate: 2/2 fit (done in 0 s)
}
