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
// every buffer a separate allocation starting 256-byte aligned:
//
//	coalesced_copy   n threads; t < n: out[t] = in[t]
//	strided_copy     ceil(n/stride) threads; i = t*stride; i < n: out[i] = in[i]
//	strided_read     as strided_copy, the load only (the value is kept alive)
//	strided_write    as strided_copy, the store only
//	offset_copy      n threads; t+offset < n: out[t] = in[t+offset]
//	vectorized_copy  n floats, n/width threads, one width*4-byte load and store each
//	grid_stride_copy n floats in vectors of width floats; grid*block threads walk
//	                 them with a grid-stride loop, unroll independent loads in
//	                 flight before the stores
//	gather_copy      n threads; out[t] = in[idx[t]], idx int32, elements 4 bytes
//	update_x_aos     n structs of struct_bytes; p[t].x += 1 (x at field_offset)
//	update_x_soa     n floats; x[t] += 1
//	sum_fields_aos   n structs of struct_bytes; out[t] = sum of the 4-byte fields,
//	                 one 4-byte load per field, or one 16-byte load per 16 bytes
//	                 when vector is true
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

// Kernel names one of the course's kernels.
type Kernel string

// The kernels of the course, as they are spelled in a spec.
const (
	CoalescedCopy  Kernel = "coalesced_copy"
	StridedCopy    Kernel = "strided_copy"
	StridedRead    Kernel = "strided_read"
	StridedWrite   Kernel = "strided_write"
	OffsetCopy     Kernel = "offset_copy"
	VectorizedCopy Kernel = "vectorized_copy"
	GridStrideCopy Kernel = "grid_stride_copy"
	GatherCopy     Kernel = "gather_copy"
	UpdateXAoS     Kernel = "update_x_aos"
	UpdateXSoA     Kernel = "update_x_soa"
	SumFieldsAoS   Kernel = "sum_fields_aos"
)

// Kernels lists every kernel a spec may name, in the order the course meets them.
var Kernels = []Kernel{
	CoalescedCopy, StridedCopy, StridedRead, StridedWrite, OffsetCopy,
	VectorizedCopy, GridStrideCopy, GatherCopy, UpdateXAoS, UpdateXSoA, SumFieldsAoS,
}

// Field names as they appear in the JSON object.
const (
	FieldKernel       = "kernel"
	FieldN            = "n"
	FieldBlock        = "block"
	FieldElemBytes    = "elem_bytes"
	FieldStride       = "stride"
	FieldOffset       = "offset"
	FieldWidth        = "width"
	FieldUnroll       = "unroll"
	FieldGrid         = "grid"
	FieldStructBytes  = "struct_bytes"
	FieldFieldOffset  = "field_offset"
	FieldVector       = "vector"
	FieldIndexPattern = "index_pattern"
	FieldSeed         = "seed"
	FieldIndexFile    = "index_file"
	FieldL2Fetch      = "l2_fetch_granularity"
	FieldDevice       = "device"
)

// Defaults of the optional fields.
const (
	DefaultBlock        = 256
	DefaultElemBytes    = 4
	DefaultStride       = 1
	DefaultWidth        = 4
	DefaultUnroll       = 4
	DefaultStructBytes  = 16
	DefaultIndexPattern = "identity"
	DefaultSeed         = 1
	DefaultL2Fetch      = 64
	DefaultDevice       = "h200"
)

// Limits of the spec, chosen so that every index fits the int32 the kernels
// and index files use, and every buffer the 64-bit byte offsets they compute.
const (
	MaxN           = math.MaxInt32
	MaxBlock       = 1024
	MaxUnroll      = 16
	MaxStructBytes = 1024
	MaxLineBytes   = 1 << 20
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

// Spec describes one kernel launch. Build one with Parse or New; the zero
// value is not a valid spec. Fields that do not apply to Kernel hold their
// zero value.
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
	IndexPattern string `json:"index_pattern"`
	Seed         uint64 `json:"seed"`
	IndexFile    string `json:"index_file"`
	L2Fetch      int    `json:"l2_fetch_granularity"`
	Device       string `json:"device"`
}

// fieldsOf lists the optional fields each kernel takes besides the ones every
// kernel takes (n, block, l2_fetch_granularity, device).
var fieldsOf = map[Kernel][]string{
	CoalescedCopy:  {FieldElemBytes},
	StridedCopy:    {FieldElemBytes, FieldStride},
	StridedRead:    {FieldElemBytes, FieldStride},
	StridedWrite:   {FieldElemBytes, FieldStride},
	OffsetCopy:     {FieldElemBytes, FieldOffset},
	VectorizedCopy: {FieldWidth},
	GridStrideCopy: {FieldWidth, FieldUnroll, FieldGrid},
	GatherCopy:     {FieldIndexPattern, FieldSeed, FieldIndexFile},
	UpdateXAoS:     {FieldStructBytes, FieldFieldOffset},
	UpdateXSoA:     {},
	SumFieldsAoS:   {FieldStructBytes, FieldVector},
}

var commonFields = []string{FieldKernel, FieldN, FieldBlock, FieldL2Fetch, FieldDevice}

// Fields returns the names of the fields a spec for k may set, or nil for an
// unknown kernel.
func Fields(k Kernel) []string {
	own, ok := fieldsOf[k]
	if !ok {
		return nil
	}
	fields := append([]string{FieldKernel, FieldN, FieldBlock}, own...)
	return append(fields, FieldL2Fetch, FieldDevice)
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

func (e *FieldError) Error() string {
	switch {
	case errors.Is(e.Err, ErrMissing):
		return fmt.Sprintf("spec: %s %q: %s", e.Err, e.Field, e.Allowed)
	case errors.Is(e.Err, ErrUnknownField), errors.Is(e.Err, ErrNotApplicable):
		return fmt.Sprintf("spec: %s %q: %s", e.Err, e.Field, e.Allowed)
	default:
		return fmt.Sprintf("spec: field %q: %s %s: %s", e.Field, e.Err, e.Value, e.Allowed)
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
	keys := make([]string, 0, len(p.raw))
	for key := range p.raw {
		keys = append(keys, key)
	}
	slices.Sort(keys)
	for _, key := range keys {
		if slices.Contains(allowed, key) {
			continue
		}
		if isField(key) {
			return Spec{}, &FieldError{Field: key, Err: ErrNotApplicable, Allowed: fmt.Sprintf("%s takes %s", k, strings.Join(allowed, ", "))}
		}
		return Spec{}, &FieldError{Field: key, Err: ErrUnknownField, Allowed: fmt.Sprintf("%s takes %s", k, strings.Join(allowed, ", "))}
	}
	if _, ok := p.raw[FieldN]; !ok {
		return Spec{}, &FieldError{Field: FieldN, Err: ErrMissing, Allowed: "want the problem size, an integer from 1 to " + strconv.Itoa(MaxN)}
	}
	s := Spec{Kernel: k}
	s.N = p.int(FieldN, 0)
	s.Block = int(p.int(FieldBlock, DefaultBlock))
	s.L2Fetch = int(p.int(FieldL2Fetch, DefaultL2Fetch))
	s.Device = p.str(FieldDevice, DefaultDevice)
	has := func(f string) bool { return slices.Contains(fieldsOf[k], f) }
	if has(FieldElemBytes) {
		s.ElemBytes = int(p.int(FieldElemBytes, DefaultElemBytes))
	}
	if has(FieldStride) {
		s.Stride = p.int(FieldStride, DefaultStride)
	}
	if has(FieldOffset) {
		s.Offset = p.int(FieldOffset, 0)
	}
	if has(FieldWidth) {
		s.Width = int(p.int(FieldWidth, DefaultWidth))
	}
	if has(FieldUnroll) {
		s.Unroll = int(p.int(FieldUnroll, DefaultUnroll))
	}
	if has(FieldGrid) {
		s.Grid = p.int(FieldGrid, 0)
	}
	if has(FieldStructBytes) {
		s.StructBytes = int(p.int(FieldStructBytes, DefaultStructBytes))
	}
	if has(FieldFieldOffset) {
		s.FieldOffset = int(p.int(FieldFieldOffset, 0))
	}
	if has(FieldVector) {
		s.Vector = p.bool(FieldVector)
	}
	if has(FieldIndexFile) {
		s.IndexFile = p.str(FieldIndexFile, "")
		if _, set := p.raw[FieldIndexPattern]; set || s.IndexFile == "" {
			s.IndexPattern = p.str(FieldIndexPattern, DefaultIndexPattern)
		}
		if _, set := p.raw[FieldSeed]; set || s.IndexFile == "" {
			seed := p.int(FieldSeed, DefaultSeed)
			if seed < 0 && p.err == nil {
				p.err = &FieldError{Field: FieldSeed, Value: strconv.FormatInt(seed, 10), Err: ErrValue, Allowed: "want an integer, 0 or more"}
			}
			s.Seed = uint64(seed)
		}
	}
	if p.err != nil {
		return Spec{}, p.err
	}
	return s, s.Validate()
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

func isField(name string) bool {
	if slices.Contains(commonFields, name) {
		return true
	}
	for _, fs := range fieldsOf {
		if slices.Contains(fs, name) {
			return true
		}
	}
	return false
}

func kernelList() string {
	names := make([]string, len(Kernels))
	for i, k := range Kernels {
		names[i] = string(k)
	}
	return strings.Join(names, ", ")
}

// Validate checks every field of s against what its kernel allows. Parse
// calls it; call it yourself on a Spec built in Go.
func (s Spec) Validate() error {
	bad := func(field string, v any, allowed string) error {
		val, _ := json.Marshal(v)
		return &FieldError{Field: field, Value: string(val), Err: ErrValue, Allowed: allowed}
	}
	own, ok := fieldsOf[s.Kernel]
	if !ok {
		val, _ := json.Marshal(string(s.Kernel))
		return &FieldError{Field: FieldKernel, Value: string(val), Err: ErrUnknownKernel, Allowed: "want one of " + kernelList()}
	}
	has := func(f string) bool { return slices.Contains(own, f) }
	if s.N < 1 || s.N > MaxN {
		return bad(FieldN, s.N, fmt.Sprintf("want an integer from 1 to %d", MaxN))
	}
	if s.Block < 1 || s.Block > MaxBlock {
		return bad(FieldBlock, s.Block, fmt.Sprintf("want threads per block from 1 to %d", MaxBlock))
	}
	if s.L2Fetch != 32 && s.L2Fetch != 64 && s.L2Fetch != 128 {
		return bad(FieldL2Fetch, s.L2Fetch, "want 32, 64 or 128 bytes")
	}
	if _, err := devices.Lookup(s.Device); err != nil {
		return bad(FieldDevice, s.Device, "want one of "+strings.Join(devices.Names(), ", "))
	}
	if has(FieldElemBytes) {
		switch s.ElemBytes {
		case 1, 2, 4, 8, 16:
		default:
			return bad(FieldElemBytes, s.ElemBytes, "want 1, 2, 4, 8 or 16")
		}
	}
	if has(FieldStride) && (s.Stride < 1 || s.Stride > MaxN) {
		return bad(FieldStride, s.Stride, fmt.Sprintf("want an integer from 1 to %d elements", MaxN))
	}
	if has(FieldOffset) && (s.Offset < 0 || s.Offset >= s.N) {
		return bad(FieldOffset, s.Offset, fmt.Sprintf("want 0 <= offset < n = %d elements", s.N))
	}
	switch s.Kernel {
	case VectorizedCopy:
		if s.Width != 2 && s.Width != 4 {
			return bad(FieldWidth, s.Width, "want 2 or 4 floats per thread (8- or 16-byte loads)")
		}
	case GridStrideCopy:
		if s.Width != 1 && s.Width != 2 && s.Width != 4 {
			return bad(FieldWidth, s.Width, "want 1, 2 or 4 floats per load (4-, 8- or 16-byte loads)")
		}
		if s.Unroll < 1 || s.Unroll > MaxUnroll {
			return bad(FieldUnroll, s.Unroll, fmt.Sprintf("want 1 to %d loads in flight per thread", MaxUnroll))
		}
		if s.Grid < 0 || s.Grid > MaxN {
			return bad(FieldGrid, s.Grid, fmt.Sprintf("want 0 (one full wave of the device) or 1 to %d blocks", MaxN))
		}
	}
	if has(FieldWidth) && s.N%int64(s.Width) != 0 {
		return bad(FieldN, s.N, fmt.Sprintf("want a multiple of width = %d", s.Width))
	}
	if has(FieldStructBytes) {
		if s.StructBytes < 4 || s.StructBytes > MaxStructBytes || s.StructBytes%4 != 0 {
			return bad(FieldStructBytes, s.StructBytes, fmt.Sprintf("want a multiple of 4 from 4 to %d bytes", MaxStructBytes))
		}
		if int64(s.StructBytes)*s.N > 1<<40 {
			return bad(FieldN, s.N, "want n*struct_bytes at most 1 TiB")
		}
	}
	if has(FieldFieldOffset) && (s.FieldOffset < 0 || s.FieldOffset%4 != 0 || s.FieldOffset+4 > s.StructBytes) {
		return bad(FieldFieldOffset, s.FieldOffset, fmt.Sprintf("want a multiple of 4 from 0 to struct_bytes-4 = %d", s.StructBytes-4))
	}
	if s.Kernel == SumFieldsAoS && s.Vector && s.StructBytes%16 != 0 {
		return bad(FieldStructBytes, s.StructBytes, "want a multiple of 16 when vector is true: each 16-byte load must be 16-byte aligned")
	}
	if s.Kernel == GatherCopy {
		if s.IndexFile != "" && s.IndexPattern != "" {
			return bad(FieldIndexPattern, s.IndexPattern, "want index_pattern or index_file, not both")
		}
		if s.IndexFile == "" && !slices.Contains(IndexPatterns, s.IndexPattern) {
			return bad(FieldIndexPattern, s.IndexPattern, "want one of "+strings.Join(IndexPatterns, ", ")+", or an index_file")
		}
	}
	return nil
}

// Threads returns the number of threads the launch runs.
func (s Spec) Threads() int64 {
	switch s.Kernel {
	case StridedCopy, StridedRead, StridedWrite:
		return ceilDiv(s.N, s.Stride)
	case VectorizedCopy:
		return s.N / int64(s.Width)
	case GridStrideCopy:
		return s.GridBlocks() * int64(s.Block)
	default:
		return s.N
	}
}

// GridBlocks returns the number of blocks the launch runs: ceil(threads/block),
// except for grid_stride_copy, whose grid is set (or, at 0, one full wave of
// the device: as many blocks as its SMs hold at once).
func (s Spec) GridBlocks() int64 {
	if s.Kernel == GridStrideCopy {
		if s.Grid > 0 {
			return s.Grid
		}
		d, err := devices.Lookup(s.Device)
		if err != nil {
			return 1
		}
		return int64(d.SMs) * int64(max(1, d.MaxThreadsPerSM/s.Block))
	}
	return ceilDiv(s.Threads(), int64(s.Block))
}

// UsefulBytes returns the bytes the kernel must read and write to do its
// work: every element it reads or writes counted once, the index array of
// gather_copy included. It is the numerator of the course's bandwidth figures.
func (s Spec) UsefulBytes() int64 {
	switch s.Kernel {
	case CoalescedCopy:
		return 2 * s.N * int64(s.ElemBytes)
	case StridedCopy:
		return 2 * ceilDiv(s.N, s.Stride) * int64(s.ElemBytes)
	case StridedRead, StridedWrite:
		return ceilDiv(s.N, s.Stride) * int64(s.ElemBytes)
	case OffsetCopy:
		return 2 * (s.N - s.Offset) * int64(s.ElemBytes)
	case VectorizedCopy, GridStrideCopy, UpdateXSoA:
		return 2 * s.N * 4
	case GatherCopy:
		return 3 * s.N * 4
	case UpdateXAoS:
		return 2 * s.N * 4
	case SumFieldsAoS:
		return s.N*int64(s.StructBytes) + s.N*4
	}
	return 0
}

// MarshalJSON writes the fields of s's kernel, defaults included, in the
// order Fields gives, so a spec reads the same wherever the course prints it.
func (s Spec) MarshalJSON() ([]byte, error) {
	fields := Fields(s.Kernel)
	if fields == nil {
		return nil, fmt.Errorf("spec: %w %q", ErrUnknownKernel, s.Kernel)
	}
	var b bytes.Buffer
	b.WriteByte('{')
	first := true
	for _, f := range fields {
		if s.Kernel == GatherCopy && s.IndexFile == "" && f == FieldIndexFile ||
			s.Kernel == GatherCopy && s.IndexFile != "" && (f == FieldIndexPattern || f == FieldSeed) {
			continue
		}
		if !first {
			b.WriteByte(',')
		}
		first = false
		v, err := json.Marshal(s.value(f))
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(&b, "%q:%s", f, v)
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

func (s Spec) value(field string) any {
	switch field {
	case FieldKernel:
		return s.Kernel
	case FieldN:
		return s.N
	case FieldBlock:
		return s.Block
	case FieldElemBytes:
		return s.ElemBytes
	case FieldStride:
		return s.Stride
	case FieldOffset:
		return s.Offset
	case FieldWidth:
		return s.Width
	case FieldUnroll:
		return s.Unroll
	case FieldGrid:
		return s.Grid
	case FieldStructBytes:
		return s.StructBytes
	case FieldFieldOffset:
		return s.FieldOffset
	case FieldVector:
		return s.Vector
	case FieldIndexPattern:
		return s.IndexPattern
	case FieldSeed:
		return s.Seed
	case FieldIndexFile:
		return s.IndexFile
	case FieldL2Fetch:
		return s.L2Fetch
	case FieldDevice:
		return s.Device
	}
	return nil
}

// String returns the spec as one JSON line with its defaults filled in.
func (s Spec) String() string {
	b, err := json.Marshal(s)
	if err != nil {
		return fmt.Sprintf("spec: %v", err)
	}
	return string(b)
}

func ceilDiv(a, b int64) int64 { return (a + b - 1) / b }
