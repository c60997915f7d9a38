package notebook_test

import (
	"fmt"

	"github.com/coalescing-course/coalesce/internal/notebook"
)

// A GoNB cell taken apart: the shell line set aside, the import a
// declaration, the lines after %% the body of main, line numbers kept.
func ExampleSplitGoNB() {
	c := notebook.SplitGoNB("!echo hi\nimport \"fmt\"\n%%\nfmt.Println(1)")
	fmt.Printf("decls %q\nbody  %q\nspecial lines %v\n", c.Decls, c.Body, c.Special)
	// Output:
	// decls "\nimport \"fmt\"\n\n"
	// body  "\n\n\nfmt.Println(1)"
	// special lines [1 3]
}

func ExampleParse() {
	_, err := notebook.Parse([]byte("{\n  \"nbformat\": 4,\n  \"cells\": [\n}"))
	fmt.Println(err)
	// Output:
	// notebook: line 4, column 1: not valid JSON: invalid character '}' looking for beginning of value
}
