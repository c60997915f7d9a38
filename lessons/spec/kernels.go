package spec

import (
	"fmt"
	"slices"
	"strings"
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

// kernel is one entry of the kernel table: everything the course's Go code
// knows about a kernel, so that the model, the harness's launch plan and
// the documentation read it from one place.
type kernel struct {
	name Kernel
	// doc states what thread t does, for the package documentation and
	// `coalesce kernels`.
	doc string
	// fields are the optional fields the kernel takes besides the common
	// ones (n, block, l2_fetch_granularity, device), in the order a spec
	// prints them.
	fields []string
	// rules checks what the kernel needs beyond each field's own range;
	// nil when nothing more.
	rules func(s Spec) error
	// threads is the number of threads of a launch; nil for a kernel whose
	// grid is set (by the grid field) rather than derived from its work.
	threads func(s Spec) int64
	// buffers are the allocations a launch makes, in the order the kernel
	// takes them.
	buffers func(s Spec) []Buffer
	// useful is the bytes the kernel must move to do its work, and
	// usefulDoc says which they are.
	useful    func(s Spec) int64
	usefulDoc string
	// memcpy names the buffer whose device-to-device cudaMemcpy is the
	// launch's ceiling, and the buffer it is copied into; "" for a scratch
	// buffer of the same size that the kernel does not use.
	memcpy [2]string
}

// The kernel table. Adding a kernel is one entry here, one CUDA kernel
// body in cuda/src (with its entry in the harness's table) and one
// address function in lessons/sectors; the tests of those packages fail
// until all three are there.
var table = []kernel{
	{
		name:      CoalescedCopy,
		doc:       "n threads; t < n: out[t] = in[t]",
		fields:    []string{FieldElemBytes},
		threads:   func(s Spec) int64 { return s.N },
		buffers:   inOut,
		useful:    func(s Spec) int64 { return 2 * s.N * int64(s.ElemBytes) },
		usefulDoc: "every element read and written once",
		memcpy:    [2]string{"in", "out"},
	},
	{
		name:      StridedCopy,
		doc:       "ceil(n/stride) threads; i = t*stride; i < n: out[i] = in[i]",
		fields:    []string{FieldElemBytes, FieldStride},
		threads:   strided,
		buffers:   inOut,
		useful:    func(s Spec) int64 { return 2 * strided(s) * int64(s.ElemBytes) },
		usefulDoc: "each touched element read and written once",
		memcpy:    [2]string{"in", "out"},
	},
	{
		name:      StridedRead,
		doc:       "as strided_copy, the load only (the value is kept alive)",
		fields:    []string{FieldElemBytes, FieldStride},
		threads:   strided,
		buffers:   inOut,
		useful:    func(s Spec) int64 { return strided(s) * int64(s.ElemBytes) },
		usefulDoc: "each touched element read once",
		memcpy:    [2]string{"in", "out"},
	},
	{
		name:      StridedWrite,
		doc:       "as strided_copy, the store only",
		fields:    []string{FieldElemBytes, FieldStride},
		threads:   strided,
		buffers:   func(s Spec) []Buffer { return []Buffer{{"out", s.N * int64(s.ElemBytes)}} },
		useful:    func(s Spec) int64 { return strided(s) * int64(s.ElemBytes) },
		usefulDoc: "each touched element written once",
		memcpy:    [2]string{"out", ""},
	},
	{
		name:      OffsetCopy,
		doc:       "n threads; t+offset < n: out[t] = in[t+offset]",
		fields:    []string{FieldElemBytes, FieldOffset},
		rules:     offsetBelowN,
		threads:   func(s Spec) int64 { return s.N },
		buffers:   inOut,
		useful:    func(s Spec) int64 { return 2 * (s.N - s.Offset) * int64(s.ElemBytes) },
		usefulDoc: "each copied element read and written once",
		memcpy:    [2]string{"in", "out"},
	},
	{
		name:      VectorizedCopy,
		doc:       "n floats, n/width threads, one width*4-byte load and store each",
		fields:    []string{FieldWidth},
		rules:     widthIn(2, 4),
		threads:   func(s Spec) int64 { return s.N / int64(s.Width) },
		buffers:   floatsInOut,
		useful:    func(s Spec) int64 { return 2 * s.N * 4 },
		usefulDoc: "every float read and written once",
		memcpy:    [2]string{"in", "out"},
	},
	{
		name: GridStrideCopy,
		doc: "n floats in vectors of width floats; grid*block threads walk them with a grid-stride loop, " +
			"unroll independent loads in flight before the stores",
		fields:    []string{FieldWidth, FieldUnroll, FieldGrid},
		rules:     widthIn(1, 2, 4),
		buffers:   floatsInOut,
		useful:    func(s Spec) int64 { return 2 * s.N * 4 },
		usefulDoc: "every float read and written once",
		memcpy:    [2]string{"in", "out"},
	},
	{
		name:      GatherCopy,
		doc:       "n threads; out[t] = in[idx[t]], idx int32, elements 4 bytes",
		fields:    []string{FieldIndexPattern, FieldSeed, FieldIndexFile},
		rules:     patternOrFile,
		threads:   func(s Spec) int64 { return s.N },
		buffers:   func(s Spec) []Buffer { return []Buffer{{"in", 4 * s.N}, {"out", 4 * s.N}, {"idx", 4 * s.N}} },
		useful:    func(s Spec) int64 { return 3 * s.N * 4 },
		usefulDoc: "idx, in and out, 4 bytes each per thread",
		memcpy:    [2]string{"in", "out"},
	},
	{
		name:      UpdateXAoS,
		doc:       "n structs of struct_bytes; p[t].x += 1 (x at field_offset)",
		fields:    []string{FieldStructBytes, FieldFieldOffset},
		rules:     fieldInsideStruct,
		threads:   func(s Spec) int64 { return s.N },
		buffers:   func(s Spec) []Buffer { return []Buffer{{"p", s.N * int64(s.StructBytes)}} },
		useful:    func(s Spec) int64 { return 2 * s.N * 4 },
		usefulDoc: "each x read and written once",
		memcpy:    [2]string{"p", ""},
	},
	{
		name:      UpdateXSoA,
		doc:       "n floats; x[t] += 1",
		threads:   func(s Spec) int64 { return s.N },
		buffers:   func(s Spec) []Buffer { return []Buffer{{"x", 4 * s.N}} },
		useful:    func(s Spec) int64 { return 2 * s.N * 4 },
		usefulDoc: "each x read and written once",
		memcpy:    [2]string{"x", ""},
	},
	{
		name: SumFieldsAoS,
		doc: "n structs of struct_bytes; out[t] = sum of the 4-byte fields, one 4-byte load per field, " +
			"or one 16-byte load per 16 bytes when vector is true",
		fields:    []string{FieldStructBytes, FieldVector},
		rules:     vectorAligned,
		threads:   func(s Spec) int64 { return s.N },
		buffers:   func(s Spec) []Buffer { return []Buffer{{"p", s.N * int64(s.StructBytes)}, {"out", 4 * s.N}} },
		useful:    func(s Spec) int64 { return s.N*int64(s.StructBytes) + s.N*4 },
		usefulDoc: "every struct read whole and one float written per thread",
		memcpy:    [2]string{"p", ""},
	},
}

// Kernels lists every kernel a spec may name, in the order the course meets them.
var Kernels = func() []Kernel {
	ks := make([]Kernel, len(table))
	for i, k := range table {
		ks[i] = k.name
	}
	return ks
}()

func lookup(k Kernel) (*kernel, bool) {
	for i := range table {
		if table[i].name == k {
			return &table[i], true
		}
	}
	return nil, false
}

// Doc returns what thread t of kernel k does, in one line, or "" for a
// kernel the course does not have.
func Doc(k Kernel) string {
	if kd, ok := lookup(k); ok {
		return kd.doc
	}
	return ""
}

// Buffer is one allocation of a launch. Every buffer is an allocation of
// its own that starts 256-byte aligned, as cudaMalloc returns it, so that
// sectors and lines are the same counted from its start or from address 0.
type Buffer struct {
	// Name is the kernel's name for it: "in", "out", "idx", "p" (an array
	// of structs) or "x".
	Name  string `json:"name"`
	Bytes int64  `json:"bytes"`
}

func inOut(s Spec) []Buffer {
	b := s.N * int64(s.ElemBytes)
	return []Buffer{{"in", b}, {"out", b}}
}

func floatsInOut(s Spec) []Buffer { return []Buffer{{"in", 4 * s.N}, {"out", 4 * s.N}} }

func strided(s Spec) int64 { return ceilDiv(s.N, s.Stride) }

func offsetBelowN(s Spec) error {
	if s.Offset >= s.N {
		return valueError(FieldOffset, s.Offset, fmt.Sprintf("want 0 <= offset < n = %d elements", s.N))
	}
	return nil
}

func widthIn(allowed ...int) func(Spec) error {
	return func(s Spec) error {
		if !slices.Contains(allowed, s.Width) {
			words := make([]string, len(allowed))
			for i, w := range allowed {
				words[i] = fmt.Sprint(w)
			}
			list := strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
			return valueError(FieldWidth, s.Width, fmt.Sprintf("want %s floats per %s (%s-byte accesses)", list, s.Kernel.widthUnit(), byteList(allowed)))
		}
		if s.N%int64(s.Width) != 0 {
			return valueError(FieldN, s.N, fmt.Sprintf("want a multiple of width = %d", s.Width))
		}
		return nil
	}
}

func (k Kernel) widthUnit() string {
	if k == VectorizedCopy {
		return "thread"
	}
	return "load"
}

func byteList(widths []int) string {
	words := make([]string, len(widths))
	for i, w := range widths {
		words[i] = fmt.Sprint(4 * w)
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}

func patternOrFile(s Spec) error {
	if s.IndexFile != "" && s.IndexPattern != "" {
		return valueError(FieldIndexPattern, s.IndexPattern, "want index_pattern or index_file, not both")
	}
	if s.IndexFile == "" && !slices.Contains(IndexPatterns, s.IndexPattern) {
		return valueError(FieldIndexPattern, s.IndexPattern, "want one of "+strings.Join(IndexPatterns, ", ")+", or an index_file")
	}
	return nil
}

func fieldInsideStruct(s Spec) error {
	if s.FieldOffset+4 > s.StructBytes {
		return valueError(FieldFieldOffset, s.FieldOffset, fmt.Sprintf("want a multiple of 4 from 0 to struct_bytes-4 = %d", s.StructBytes-4))
	}
	return nil
}

func vectorAligned(s Spec) error {
	if s.Vector && s.StructBytes%16 != 0 {
		return valueError(FieldStructBytes, s.StructBytes, "want a multiple of 16 when vector is true: each 16-byte load must be 16-byte aligned")
	}
	return nil
}

// Fields returns the names of the fields a spec for k may set, in the
// order a spec prints them, or nil for an unknown kernel.
func Fields(k Kernel) []string {
	kd, ok := lookup(k)
	if !ok {
		return nil
	}
	fields := append([]string{FieldKernel, FieldN, FieldBlock}, kd.fields...)
	return append(fields, FieldL2Fetch, FieldDevice)
}

// Takes reports whether a spec for k may set field.
func Takes(k Kernel, field string) bool { return slices.Contains(Fields(k), field) }

// Shape is how a launch is laid out: its threads and its blocks.
type Shape struct {
	Threads int64 `json:"threads"`
	Blocks  int64 `json:"blocks"`
}

// Threads returns the number of threads the launch runs (on the spec's
// device, for a grid_stride_copy of one full wave).
func (s Spec) Threads() int64 { return s.Shape().Threads }

// GridBlocks returns the number of blocks the launch runs: ceil(threads/block),
// except for grid_stride_copy, whose grid is set (or, at 0, one full wave
// of the device: as many blocks as its SMs hold at once).
func (s Spec) GridBlocks() int64 { return s.Shape().Blocks }

// Shape returns the launch's threads and blocks on the spec's device.
func (s Spec) Shape() Shape {
	sms, perSM := 1, s.Block
	if d, err := deviceOf(s); err == nil {
		sms, perSM = d.SMs, d.MaxThreadsPerSM
	}
	return s.ShapeOn(sms, perSM)
}

// ShapeOn returns the launch's threads and blocks on a device with sms
// SMs of maxThreadsPerSM threads each, which only a grid of "one full
// wave" (grid_stride_copy's grid 0) depends on. The harness is given this
// shape for the GPU it runs on, which need not be the spec's device.
func (s Spec) ShapeOn(sms, maxThreadsPerSM int) Shape {
	kd, ok := lookup(s.Kernel)
	if !ok || s.Block < 1 {
		return Shape{}
	}
	if kd.threads != nil {
		t := kd.threads(s)
		return Shape{Threads: t, Blocks: ceilDiv(t, int64(s.Block))}
	}
	blocks := s.Grid
	if blocks == 0 {
		blocks = int64(max(1, sms)) * int64(max(1, maxThreadsPerSM/s.Block))
	}
	return Shape{Threads: blocks * int64(s.Block), Blocks: blocks}
}

// Buffers returns the allocations the launch makes, in the order the
// kernel takes them.
func (s Spec) Buffers() []Buffer {
	kd, ok := lookup(s.Kernel)
	if !ok {
		return nil
	}
	return kd.buffers(s)
}

// Memcpy names the buffer whose device-to-device cudaMemcpy is the
// launch's ceiling, and the buffer the copy goes into: "" is a scratch
// buffer of the same size that the kernel does not touch.
func (s Spec) Memcpy() (from, to string) {
	kd, ok := lookup(s.Kernel)
	if !ok {
		return "", ""
	}
	return kd.memcpy[0], kd.memcpy[1]
}

// UsefulDoc says which bytes UsefulBytes counts for kernel k: "each
// touched element read and written once".
func UsefulDoc(k Kernel) string {
	if kd, ok := lookup(k); ok {
		return kd.usefulDoc
	}
	return ""
}

// UsefulBytes returns the bytes the kernel must read and write to do its
// work: every element it reads or writes counted once, the index array of
// gather_copy included. It is the numerator of the course's bandwidth figures.
func (s Spec) UsefulBytes() int64 {
	kd, ok := lookup(s.Kernel)
	if !ok {
		return 0
	}
	return kd.useful(s)
}

func ceilDiv(a, b int64) int64 { return (a + b - 1) / b }
