package exercises

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/coalescing-course/coalesce/lessons/simt"
)

// ErrUncounted is a right output that the graded launch's own accesses
// did not make: a word of it no thread stored, or a word of input it
// holds that no thread loaded (simt's Result.Buffers). Its bytes were read
// or written where simt did not see them (worked out on the host, written
// around Store, read from a copy of the inputs), so the launch's counts
// say nothing of the kernel, and it is not graded right.
var ErrUncounted = errors.New("exercises: work done outside the graded launch")

// counted returns an ErrUncounted error when the launch r did not make
// the output itself: an output word that is not 0 (every output starts
// zeroed) that no thread stored, or an input word the output depends on
// (in.needs) that no thread loaded.
func (in *instance) counted(r *simt.Result) error {
	names := make([]string, 0, len(in.outputs))
	for name := range in.outputs {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		u := r.Buffer(name)
		var i int
		var v string
		switch o := in.outputs[name].(type) {
		case []float32:
			i = slices.IndexFunc(o, func(x float32) bool { return math.Float32bits(x) != 0 })
			for ; i >= 0 && i < len(o); i++ {
				if math.Float32bits(o[i]) != 0 && u.Unstored(4*int64(i), 4*int64(i)+4) >= 0 {
					v = fmt.Sprint(o[i])
					break
				}
			}
		case []int32:
			i = slices.IndexFunc(o, func(x int32) bool { return x != 0 })
			for ; i >= 0 && i < len(o); i++ {
				if o[i] != 0 && u.Unstored(4*int64(i), 4*int64(i)+4) >= 0 {
					v = fmt.Sprint(o[i])
					break
				}
			}
		default:
			panic(fmt.Sprintf("exercises: output %s is a %T", name, o)) // the exercise's table is wrong: its tests fail
		}
		if v != "" {
			return fmt.Errorf("%w: %s[%d] holds %s, but no thread of the launch stored it: "+
				"a right output is the kernel's own Stores, in the launch that is graded", ErrUncounted, name, i, v)
		}
	}
	if in.needs == nil {
		return nil
	}
	loaded := func(buf string, i int) bool { return r.Buffer(buf).Unloaded(4*int64(i), 4*int64(i)+4) < 0 }
	if buf, i, ok := in.needs(loaded); !ok {
		return fmt.Errorf("%w: %s[%d] is in the output, but no thread of the launch loaded it: a right output comes from "+
			"the kernel's own Loads (a value worked out on the host, or read from a copy of the inputs, is not counted)", ErrUncounted, buf, i)
	}
	return nil
}

// loadedAll is a needs for a copy of elements [from, to) of buffer buf.
func loadedAll(buf string, from, to int) func(func(string, int) bool) (string, int, bool) {
	return func(loaded func(string, int) bool) (string, int, bool) {
		for i := from; i < to; i++ {
			if !loaded(buf, i) {
				return buf, i, false
			}
		}
		return "", 0, true
	}
}
