package csvsafe_test

import (
	"os"

	"github.com/coalescing-course/coalesce/grader/gradebook/csvsafe"
)

func ExampleWriter() {
	w := csvsafe.NewWriter(os.Stdout)
	w.Header([]string{"learner", "points"})
	w.Write([]csvsafe.Cell{csvsafe.TextCell(`=HYPERLINK("x")`), csvsafe.NumCell(-0.5)})
	w.Write([]csvsafe.Cell{csvsafe.TextCell("ada, the first"), csvsafe.NumPtrCell(nil)})
	// Output:
	// learner,points
	// "'=HYPERLINK(""x"")",-0.5
	// "ada, the first",
}
