package spec

import (
	"encoding/json"
	"slices"
	"strings"
)

// Brief writes the launch in a few words, as tables, captions and chart
// titles name it: the kernel, the fields that tell this launch apart (its
// own fields, and the common ones set away from their defaults) and n as a
// power of two when it is one:
//
//	strided_copy, stride 32, n 2^26
//	update_x_aos, struct 24 B, block 128, n 1000
//	transpose_tiled, tile 16, pad 1, 4096x4096
//
// Fields named in omit are left out, as a chart leaves out the field it
// sweeps.
func (s Spec) Brief(omit ...string) string {
	parts := []string{string(s.Kernel)}
	for _, name := range briefOrder(s.Kernel) {
		if slices.Contains(omit, name) {
			continue
		}
		if w := fieldNamed(name).brief(s); w != "" {
			parts = append(parts, w)
		}
	}
	return strings.Join(parts, ", ")
}

// briefOrder is the order Brief names fields in: the kernel's own first,
// then the common ones, the size (n, or rows x cols) last.
func briefOrder(k Kernel) []string {
	var own, common, size []string
	for _, name := range Fields(k) {
		switch name {
		case FieldKernel:
		case FieldN, FieldRows, FieldCols:
			size = append(size, name)
		case FieldBlock, FieldL2Fetch, FieldDevice:
			common = append(common, name)
		default:
			own = append(own, name)
		}
	}
	return append(append(own, common...), size...)
}

// Differences returns the fields that set s apart from the other specs of
// all of its kernel, as Brief words them ("stride 32"), in Brief's order:
// how a lesson names the launches of one comparison. A field that Brief
// leaves unsaid at its default is named with its value ("block 256").
func (s Spec) Differences(all []Spec) []string {
	var diff []string
	for _, name := range briefOrder(s.Kernel) {
		f := fieldNamed(name)
		mine := f.value(s)
		for _, o := range all {
			if o.Kernel == s.Kernel && f.value(o) != mine {
				if w := f.brief(s); w != "" {
					diff = append(diff, w)
				} else {
					diff = append(diff, name+" "+jsonText(mine))
				}
				break
			}
		}
	}
	return diff
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
