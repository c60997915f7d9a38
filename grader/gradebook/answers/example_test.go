package answers_test

import (
	"fmt"

	"github.com/coalescing-course/coalesce/grader/gradebook/answers"
	"github.com/coalescing-course/coalesce/internal/notebook"
)

// Predictions are read from the source: numbers, and arithmetic on numbers
// evaluated as Go evaluates constants; anything else is not read.
func ExampleParsePrediction() {
	for _, src := range []string{"32", "64/2", "1/8", "1.0/8", "x"} {
		v, form, err := answers.ParsePrediction(src)
		if err != nil {
			fmt.Printf("%-6s %v\n", src, err)
			continue
		}
		fmt.Printf("%-6s %v (%v)\n", src, v, form)
	}
	// Output:
	// 32     32 (literal)
	// 64/2   32 (constant expression)
	// 1/8    0 (constant expression)
	// 1.0/8  0.125 (constant expression)
	// x      prediction not readable: x is a name, not a number written in the call
}

// The instructor's side: the calls of a saved notebook, read without
// running it.
func ExampleFindCalls() {
	nb, _ := notebook.Parse([]byte(`{"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [
		{"cell_type": "code", "source": ["import \"github.com/coalescing-course/coalesce/lab\"\n"]},
		{"cell_type": "code", "source": ["%%\n", "// lab.Check(\"03-strided/efficiency-stride-2\", 0.5)\n", "lab.Check(\"03-strided/sectors-stride-32\", 32)\n"]}]}`))
	found := answers.FindCalls(nb)
	for _, c := range found.Calls {
		fmt.Printf("cell %d, line %d: %s = %v\n", c.Cell+1, c.Line, c.ID, c.Value)
	}
	for _, m := range found.Mentions {
		fmt.Printf("cell %d, line %d: %s in %s, not graded\n", m.Cell+1, m.Line, m.ID, m.Where)
	}
	// Output:
	// cell 2, line 3: 03-strided/sectors-stride-32 = 32
	// cell 2, line 2: 03-strided/efficiency-stride-2 in a comment, not graded
}
