package exercises

import (
	"errors"
	"fmt"
	"slices"

	"github.com/coalescing-course/coalesce/lessons/simt"
)

// Problem is the CUDA side of one variant: a kernel body the learner
// writes under a fixed signature, the arguments it is launched with, and
// the check of what it wrote. It is plain data (no CUDA is run here): the
// course's CUDA harness compiles Signature { body } and launches it.
type Problem struct {
	// Name is the kernel's name in Signature: "strided_copy".
	Name string
	// Signature is the kernel's first line, without the brace:
	// `__global__ void strided_copy(const float* __restrict__ in, ...)`.
	Signature string
	// Starter, Solution and Wrong are kernel bodies, the text between the
	// braces: the learner's starting point (right output, the targets
	// missed; 10-kernels/aligned-vector's faults), one that meets the
	// targets, and one whose output is wrong. For 10-kernels/gather the
	// solution's body is the starter's: what changes is the order of the
	// keys (Ordered).
	Starter, Solution, Wrong string
	// Args are the kernel's parameters, in Signature's order.
	Args []Arg
	// Grid and Block are the launch, DynamicShared its dynamic shared
	// bytes (0 for all five: the transpose's tile is static).
	Grid, Block   simt.Dim
	DynamicShared int

	check    func(outputs map[string]any) *Mismatch
	validKey func(keys []int32) error // the gather's, for Ordered
}

// Arg is one kernel parameter: a pointer to a buffer of ElemBytes-byte
// elements whose content before the launch is Data (an output's is zeros,
// all of its Bytes), or a scalar (Data nil) whose value is Value.
type Arg struct {
	Name string
	// CType is the C type of the parameter as Signature writes it, less
	// __restrict__: "const float*", "float*", "int".
	CType     string
	ElemBytes int
	// Data is a buffer's content before the launch, as the GPU holds it
	// (little endian); nil for a scalar.
	Data []byte
	// Output says the kernel writes the buffer and Check reads it.
	Output bool
	// Value is a scalar's value (every scalar of the five is an int).
	Value int64
}

// Scalar reports whether the argument is passed by value.
func (a Arg) Scalar() bool { return a.Data == nil }

// ErrWrong is output that differs from the reference.
var ErrWrong = errors.New("exercises: wrong output")

// Check compares the kernel's outputs, by argument name, each the bytes
// of the buffer after the launch, with the variant's reference: the same
// comparison as Run's. A missing output, one of the wrong size or a
// wrong element is an error wrapping ErrWrong that names the first
// difference.
func (p Problem) Check(outputs map[string][]byte) error {
	if p.check == nil {
		return errors.New("exercises: a Problem not made by Exercise.CUDA has no reference")
	}
	in := map[string]any{}
	for k, v := range outputs {
		in[k] = v
	}
	if m := p.check(in); m != nil {
		return fmt.Errorf("%w: %s", ErrWrong, m)
	}
	return nil
}

// Ordered returns the gather's problem with its keys in the order the
// learner's host step gives them (Gather.Order): the GPU runs on what
// the learner's Order made of the keys, as Run does. An Order that does
// not return a reordering of its keys is an error, and a problem with no
// keys (any other exercise's) too.
func (p Problem) Ordered(order func(keys []int32) []int32) (Problem, error) {
	i := slices.IndexFunc(p.Args, func(a Arg) bool { return a.Name == "keys" })
	if i < 0 || p.validKey == nil {
		return p, fmt.Errorf("exercises: %s has no keys to order: only 10-kernels/gather has", p.Name)
	}
	keys, _ := intsOut(map[string]any{"keys": p.Args[i].Data}, "keys", len(p.Args[i].Data)/4)
	got, err := callOrder(order, keys)
	if err == nil {
		err = p.validKey(got)
	}
	if err != nil {
		return p, err
	}
	p.Args = slices.Clone(p.Args)
	p.Args[i].Data = intBytes(got)
	return p, nil
}
