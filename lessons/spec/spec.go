// Package spec holds the experiment spec: the one JSON object that describes
// one kernel launch of the course. The sector model predicts a spec, the CUDA
// harness measures it, the grader asks about it and the notebooks show it, so
// every one of them reads it through this package.
//
// A spec names a kernel and its problem size; every other field has a
// default, and a field that does not apply to the kernel is an error rather
// than something silently ignored:
//
//	{"kernel": "strided_copy", "n": 1048576, "stride": 32}
//
// is a launch of ceil(n/stride) threads in blocks of 256, each copying one
// 4-byte element 32 elements apart from its neighbour.
//
// Kernel semantics, with thread t = blockIdx.x*blockDim.x + threadIdx.x and
// every buffer a separate allocation starting 256-byte aligned (Doc gives
// each line, Buffers the allocations):
//
//	coalesced_copy   n threads; t < n: out[t] = in[t]
//	strided_copy     ceil(n/stride) threads; i = t*stride; i < n: out[i] = in[i]
//	strided_read     as strided_copy, the load only (the value is kept alive)
//	strided_write    as strided_copy, the store only
//	offset_copy      n threads; t+offset < n: out[t] = in[t+offset]
//	vectorized_copy  (n-offset)/width threads; thread t copies floats offset+t*width..
//	                 of in to t*width.. of out, one width*4-byte load and store
//	grid_stride_copy n floats in vectors of width floats; grid*block threads walk
//	                 them with a grid-stride loop, unroll independent loads in
//	                 flight before the stores; a warp loops while any of its
//	                 lanes has a vector left
//	gather_copy      n threads; out[t] = in[idx[t]], idx int32, elements 4 bytes
//	update_x_aos     n structs of struct_bytes; p[t].x += 1 (x at field_offset)
//	update_x_soa     n floats; x[t] += 1
//	sum_fields_aos   n structs of struct_bytes; out[t] = sum of the 4-byte fields,
//	                 one 4-byte load per field, or one 16-byte load per 16 bytes
//	                 when vector is true
//	sum_fields_soa   struct_bytes/4 float fields of n elements, field-major:
//	                 out[t] = sum over f of p[f*n+t]
//
// The 2D kernels walk a rows x cols row-major matrix of floats. A block is
// tile x block_rows threads (tx, ty) covering a tile x tile square; each
// thread loops j = 0, block_rows, ... below tile; blocks are numbered
// by*gridX+bx and warps by the linear thread ty*tile+tx. Their n
// (rows*cols) and block (tile*block_rows) are derived, not fields:
//
//	copy_rows        c = bx*tile+tx, r = by*tile+ty+j: out[r*cols+c] = in[r*cols+c]
//	copy_columns     r = bx*tile+tx, c = by*tile+ty+j: the same copy, down columns
//	transpose_coalesced_read   as copy_rows, writing out[c*rows+r]
//	transpose_coalesced_write  as copy_columns, writing out[c*rows+r]
//	transpose_tiled  rows of in into s[tile][tile+pad], __syncthreads, then
//	                 columns of s out as rows of out
//
// # Two tables
//
// Everything the course knows about a kernel is one entry of the kernel
// table (kernels.go): its fields, its own rules, its threads, its buffers,
// its useful bytes and the buffer its cudaMemcpy ceiling copies. Everything
// it knows about a field is one entry of the field table (fields.go): how
// it is read with its default, checked, written and described. Parse,
// Validate, MarshalJSON, Brief, the model's buffers and the harness's
// launch plan all read these two tables.
//
// To add a kernel:
//
//  1. its entry in the kernel table, and its name among the Kernel constants;
//  2. its CUDA body in cuda/src/kernels.cuh and its line in the harness's
//     kernel table (cuda/src/harness.cu), which launches and checks it;
//  3. its address function in lessons/sectors (addresses.go): the
//     addresses each warp instruction touches.
//
// TestKernelTablesAgree (cuda) and TestEveryKernelHasAddresses (sectors)
// fail until all three are in place.
//
// A valid spec is one the model can predict; a GPU may still refuse to run
// it. Beyond its memory, the one limit the spec cannot know is registers: a
// block's threads share an SM's 65536, so a body that needs many (a
// grid_stride_copy of width 4 holding 11 or more vectors in flight, on the
// H200 with CUDA 13) starts only smaller blocks, and the harness refuses the
// launch with the largest block that fits.
package spec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/coalescing-course/coalesce/lessons/devices"
)

// IndexPatterns lists the generated index patterns of gather_copy:
//
//	identity        idx[t] = t (coalesced)
//	reverse         idx[t] = n-1-t (coalesced, lanes in descending order)
//	random_perm     a random permutation of 0..n-1
//	random          n indices drawn uniformly from 0..n-1, with repeats
//	sorted_random   the random indices, sorted: the fix the lessons teach
//	warp_shuffle    each warp's 32 indices shuffled among themselves
//	broadcast_warp  every lane of a warp reads the warp's first element
//	block_shuffle   whole 32-element chunks placed in random order
var IndexPatterns = []string{
	"identity", "reverse", "random_perm", "random", "sorted_random",
	"warp_shuffle", "broadcast_warp", "block_shuffle",
}

// Spec describes one kernel launch. Build one with Parse (or a literal,
// then Validate); the zero value is not a valid spec. Fields that do not
// apply to Kernel hold their zero value. For a 2D kernel N and Block are
// derived, rows*cols and tile*block_rows: Parse fills them in, and a
// literal must set them so.
type Spec struct {
	Kernel       Kernel `json:"kernel"`
	N            int64  `json:"n"`
	Block        int    `json:"block"`
	ElemBytes    int    `json:"elem_bytes"`
	Stride       int64  `json:"stride"`
	Offset       int64  `json:"offset"`
	Width        int    `json:"width"`
	Unroll       int    `json:"unroll"`
	Grid         int64  `json:"grid"`
	StructBytes  int    `json:"struct_bytes"`
	FieldOffset  int    `json:"field_offset"`
	Vector       bool   `json:"vector"`
	Rows         int64  `json:"rows"`
	Cols         int64  `json:"cols"`
	Tile         int    `json:"tile"`
	BlockRows    int    `json:"block_rows"`
	Pad          int    `json:"pad"`
	IndexPattern string `json:"index_pattern"`
	Seed         uint64 `json:"seed"`
	IndexFile    string `json:"index_file"`
	L2Fetch      int    `json:"l2_fetch_granularity"`
	Device       string `json:"device"`
}

// Errors a caller may branch on with errors.Is.
var (
	// ErrSyntax is a line that is not one JSON object.
	ErrSyntax = errors.New("not a JSON object")
	// ErrUnknownKernel is a kernel name the course does not have.
	ErrUnknownKernel = errors.New("unknown kernel")
	// ErrUnknownField is a field no kernel has.
	ErrUnknownField = errors.New("unknown field")
	// ErrNotApplicable is a field that exists but not for this kernel.
	ErrNotApplicable = errors.New("field does not apply to this kernel")
	// ErrMissing is a required field left out.
	ErrMissing = errors.New("required field missing")
	// ErrValue is a field whose value has the wrong type or is out of range.
	ErrValue = errors.New("value not allowed")
	// ErrIndices is an index file or index that cannot be used.
	ErrIndices = errors.New("bad indices")
)

// FieldError says which field of a spec is wrong, with what, and what is allowed.
type FieldError struct {
	Field   string // JSON name of the field
	Value   string // the value as written, JSON-encoded; empty when missing
	Allowed string // what the field accepts
	Err     error  // one of the Err variables
}

// Error reads as a sentence about the field, then what is allowed:
//
//	spec: field "stride": value 0 not allowed: want an integer from 1 to ...
//	spec: field "elem_bytes" does not apply to this kernel: update_x_aos takes ...
func (e *FieldError) Error() string {
	switch {
	case errors.Is(e.Err, ErrMissing):
		return fmt.Sprintf("spec: field %q is required: %s", e.Field, e.Allowed)
	case errors.Is(e.Err, ErrUnknownField):
		return fmt.Sprintf("spec: unknown field %q: %s", e.Field, e.Allowed)
	case errors.Is(e.Err, ErrNotApplicable):
		return fmt.Sprintf("spec: field %q does not apply to this kernel: %s", e.Field, e.Allowed)
	case errors.Is(e.Err, ErrUnknownKernel):
		return fmt.Sprintf("spec: field %q: %s %s: %s", e.Field, e.Err, e.Value, e.Allowed)
	default:
		return fmt.Sprintf("spec: field %q: value %s not allowed: %s", e.Field, e.Value, e.Allowed)
	}
}

// Unwrap returns the sentinel error the FieldError wraps.
func (e *FieldError) Unwrap() error { return e.Err }

// Parse reads one spec from a JSON object, fills in the defaults and
// validates every field. Unknown fields, fields that do not apply to the
// kernel, wrong types and values out of range are errors of type *FieldError.
// An index_file is not opened here; Indices reads and checks it.
func Parse(data []byte) (Spec, error) {
	var raw map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&raw); err != nil || raw == nil {
		msg := "want one JSON object such as {\"kernel\":\"coalesced_copy\",\"n\":1024}"
		if err != nil {
			msg = err.Error() + ": " + msg
		}
		return Spec{}, fmt.Errorf("spec: %w: %s", ErrSyntax, msg)
	}
	if dec.More() {
		return Spec{}, fmt.Errorf("spec: %w: trailing data after the object", ErrSyntax)
	}
	if _, err := dec.Token(); err == nil {
		return Spec{}, fmt.Errorf("spec: %w: trailing data after the object", ErrSyntax)
	}
	p := parser{raw: raw}
	return p.spec()
}

type parser struct {
	raw map[string]json.RawMessage
	err error
}

func (p *parser) spec() (Spec, error) {
	kraw, ok := p.raw[FieldKernel]
	if !ok {
		return Spec{}, &FieldError{Field: FieldKernel, Err: ErrMissing, Allowed: "want one of " + kernelList()}
	}
	var kname string
	if err := json.Unmarshal(kraw, &kname); err != nil {
		return Spec{}, &FieldError{Field: FieldKernel, Value: string(kraw), Err: ErrValue, Allowed: "want a string, one of " + kernelList()}
	}
	k := Kernel(kname)
	allowed := Fields(k)
	if allowed == nil {
		return Spec{}, &FieldError{Field: FieldKernel, Value: strconv.Quote(kname), Err: ErrUnknownKernel, Allowed: "want one of " + kernelList()}
	}
	if is2D(k) {
		// n and block are no fields of a 2D kernel: say why, rather than
		// only that they do not apply.
		for _, f := range []string{FieldN, FieldBlock} {
			if p.has(f) {
				return Spec{}, &FieldError{Field: f, Err: ErrNotApplicable, Allowed: derivedDoc(k)}
			}
		}
	}
	keys := make([]string, 0, len(p.raw))
	for key := range p.raw {
		keys = append(keys, key)
	}
	slices.Sort(keys)
	for _, key := range keys {
		if slices.Contains(allowed, key) {
			continue
		}
		err := ErrUnknownField
		if fieldNamed(key) != nil {
			err = ErrNotApplicable
		}
		return Spec{}, &FieldError{Field: key, Err: err, Allowed: fmt.Sprintf("%s takes %s", k, strings.Join(allowed, ", "))}
	}
	required := []string{FieldN}
	if is2D(k) {
		required = []string{FieldRows, FieldCols}
	}
	for _, f := range required {
		if !p.has(f) {
			return Spec{}, &FieldError{Field: f, Err: ErrMissing, Allowed: "want the problem size, an integer from 1 to " + strconv.Itoa(MaxN)}
		}
	}
	s := Spec{Kernel: k}
	for _, f := range parseOrder {
		if slices.Contains(allowed, f.name) {
			f.parse(p, &s)
		}
	}
	if p.err != nil {
		return Spec{}, p.err
	}
	if is2D(k) {
		s.N, s.Block = s.Rows*s.Cols, s.Tile*s.BlockRows
	}
	return s, s.Validate()
}

func (p *parser) has(field string) bool {
	_, ok := p.raw[field]
	return ok
}

func (p *parser) int(field string, def int64) int64 {
	raw, ok := p.raw[field]
	if !ok || p.err != nil {
		return def
	}
	var num json.Number
	// json.Number also takes a quoted "1024"; the spec wants a number.
	if len(raw) > 0 && raw[0] != '"' && json.Unmarshal(raw, &num) == nil {
		if v, err := strconv.ParseInt(num.String(), 10, 64); err == nil {
			return v
		}
		// Accept 1e6 and 1024.0, which JSON writers produce for integers.
		if f, err := strconv.ParseFloat(num.String(), 64); err == nil && f == math.Trunc(f) && math.Abs(f) < 1<<53 {
			return int64(f)
		}
	}
	p.err = &FieldError{Field: field, Value: string(raw), Err: ErrValue, Allowed: "want an integer"}
	return def
}

func (p *parser) str(field, def string) string {
	raw, ok := p.raw[field]
	if !ok || p.err != nil {
		return def
	}
	var v string
	if err := json.Unmarshal(raw, &v); err != nil {
		p.err = &FieldError{Field: field, Value: string(raw), Err: ErrValue, Allowed: "want a string"}
		return def
	}
	return v
}

func (p *parser) bool(field string) bool {
	raw, ok := p.raw[field]
	if !ok || p.err != nil {
		return false
	}
	var v bool
	if err := json.Unmarshal(raw, &v); err != nil {
		p.err = &FieldError{Field: field, Value: string(raw), Err: ErrValue, Allowed: "want true or false"}
		return false
	}
	return v
}

func kernelList() string {
	names := make([]string, len(Kernels))
	for i, k := range Kernels {
		names[i] = string(k)
	}
	return strings.Join(names, ", ")
}

// Validate checks every field of s against what its kernel allows: each
// field's own range, then the kernel's own rules. Parse calls it; call it
// yourself on a Spec built in Go.
func (s Spec) Validate() error {
	kd, ok := lookup(s.Kernel)
	if !ok {
		val, _ := json.Marshal(string(s.Kernel))
		return &FieldError{Field: FieldKernel, Value: string(val), Err: ErrUnknownKernel, Allowed: "want one of " + kernelList()}
	}
	// The device first: the other fields' ranges may depend on it.
	for _, f := range parseOrder {
		if f.check != nil && Takes(s.Kernel, f.name) {
			if err := f.check(s); err != nil {
				return err
			}
		}
	}
	if kd.rules != nil {
		return kd.rules(s)
	}
	return nil
}

// valueError is a field whose value is not allowed.
func valueError(field string, v any, allowed string) error {
	val, _ := json.Marshal(v)
	return &FieldError{Field: field, Value: string(val), Err: ErrValue, Allowed: allowed}
}

// MarshalJSON writes the fields of s's kernel, defaults included, in the
// order Fields gives, so a spec reads the same wherever the course prints
// it. A gather writes its index_file, or its index_pattern and seed.
func (s Spec) MarshalJSON() ([]byte, error) {
	names := Fields(s.Kernel)
	if names == nil {
		return nil, fmt.Errorf("spec: %w %q", ErrUnknownKernel, s.Kernel)
	}
	var b bytes.Buffer
	b.WriteByte('{')
	first := true
	for _, name := range names {
		if s.IndexFile != "" && (name == FieldIndexPattern || name == FieldSeed) ||
			s.IndexFile == "" && name == FieldIndexFile {
			continue
		}
		if !first {
			b.WriteByte(',')
		}
		first = false
		v, err := json.Marshal(fieldNamed(name).value(s))
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(&b, "%q:%s", name, v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// UnmarshalJSON parses and validates a spec, so a Spec inside another JSON
// document (an exercise, a recorded measurement) is checked like any other.
func (s *Spec) UnmarshalJSON(data []byte) error {
	v, err := Parse(data)
	if err != nil {
		return err
	}
	*s = v
	return nil
}

// String returns the spec as one JSON line with its defaults filled in.
// It is also the spec's identity: two specs are the same launch when
// their strings are equal.
func (s Spec) String() string {
	b, err := json.Marshal(s)
	if err != nil {
		return fmt.Sprintf("spec: %v", err)
	}
	return string(b)
}

func deviceOf(s Spec) (devices.Profile, error) { return devices.Lookup(s.Device) }
