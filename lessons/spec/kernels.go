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
	SumFieldsSoA   Kernel = "sum_fields_soa"

	// The 2D kernels: a rows x cols row-major matrix of floats, blocks of
	// tile x block_rows threads each covering a tile x tile square.
	CopyRows                Kernel = "copy_rows"
	CopyColumns             Kernel = "copy_columns"
	TransposeCoalescedRead  Kernel = "transpose_coalesced_read"
	TransposeCoalescedWrite Kernel = "transpose_coalesced_write"
	TransposeTiled          Kernel = "transpose_tiled"
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
	// grid is set (by the grid field) rather than derived from its work,
	// and for a 2D kernel.
	threads func(s Spec) int64
	// grid2D is a 2D kernel's grid, in blocks along x and y; nil for a 1D
	// kernel. A 2D kernel's n and block are derived, not fields.
	grid2D func(s Spec) (x, y int64)
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
		doc:       "(n-offset)/width threads; thread t copies floats offset+t*width.. of in to t*width.. of out, one width*4-byte load and store",
		fields:    []string{FieldWidth, FieldOffset},
		rules:     vectorOffset,
		threads:   vectors,
		buffers:   floatsInOut,
		useful:    func(s Spec) int64 { return 2 * vectors(s) * int64(s.Width) * 4 },
		usefulDoc: "every float copied read and written once",
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
	{
		name:      SumFieldsSoA,
		doc:       "struct_bytes/4 float fields of n elements, field-major: out[t] = sum over f of p[f*n+t]",
		fields:    []string{FieldStructBytes},
		threads:   func(s Spec) int64 { return s.N },
		buffers:   func(s Spec) []Buffer { return []Buffer{{"p", s.N * int64(s.StructBytes)}, {"out", 4 * s.N}} },
		useful:    func(s Spec) int64 { return s.N*int64(s.StructBytes) + s.N*4 },
		usefulDoc: "every field read once and one float written per thread",
		memcpy:    [2]string{"p", ""},
	},
	matrixKernel(CopyRows, "c = bx*tile+tx, r = by*tile+ty+j: out[r*cols+c] = in[r*cols+c] (threadIdx.x walks a row)", false),
	matrixKernel(CopyColumns, "r = bx*tile+tx, c = by*tile+ty+j: out[r*cols+c] = in[r*cols+c] (threadIdx.x walks a column)", true),
	matrixKernel(TransposeCoalescedRead, "c = bx*tile+tx, r = by*tile+ty+j: out[c*rows+r] = in[r*cols+c] (rows read, columns written)", false),
	matrixKernel(TransposeCoalescedWrite, "r = bx*tile+tx, c = by*tile+ty+j: out[c*rows+r] = in[r*cols+c] (columns read, rows written)", true),
	matrixKernel(TransposeTiled, "a tile x tile square through shared s[tile][tile+pad]: rows of in into rows of s, "+
		"__syncthreads, columns of s out as rows of out (both global sides coalesced)", false, FieldPad),
}

// matrixFields are the fields of every 2D kernel.
var matrixFields = []string{FieldRows, FieldCols, FieldTile, FieldBlockRows}

func matrixInOut(s Spec) []Buffer {
	b := 4 * s.Rows * s.Cols
	return []Buffer{{"in", b}, {"out", b}}
}

func matrixUseful(s Spec) int64 { return 8 * s.Rows * s.Cols }

// matrixKernel is the table entry of a 2D kernel: rows x cols floats in
// and out, the grid in tiles, n and block derived. walksColumns says its
// threadIdx.x walks down a column, so that its grid's x runs down the rows
// and its y across the columns; extra are its fields beyond matrixFields.
func matrixKernel(name Kernel, doc string, walksColumns bool, extra ...string) kernel {
	ySide := FieldRows
	grid := func(s Spec) (int64, int64) {
		t := int64(s.Tile)
		return ceilDiv(s.Cols, t), ceilDiv(s.Rows, t)
	}
	if walksColumns {
		ySide = FieldCols
		grid = func(s Spec) (int64, int64) {
			t := int64(s.Tile)
			return ceilDiv(s.Rows, t), ceilDiv(s.Cols, t)
		}
	}
	return kernel{
		name:      name,
		doc:       doc,
		fields:    append(slices.Clip(matrixFields), extra...),
		rules:     func(s Spec) error { return derived(s, ySide, grid) },
		grid2D:    grid,
		buffers:   matrixInOut,
		useful:    matrixUseful,
		usefulDoc: "every element read and written once",
		memcpy:    [2]string{"in", "out"},
	}
}

// derived checks what a 2D kernel derives (Parse sets n and block so, a
// literal must), and that its grid, whose y runs along ySide, fits.
func derived(s Spec, ySide string, grid func(Spec) (int64, int64)) error {
	if s.N != s.Rows*s.Cols {
		return valueError(FieldN, s.N, derivedDoc(s.Kernel))
	}
	if s.Block != s.Tile*s.BlockRows {
		return valueError(FieldBlock, s.Block, derivedDoc(s.Kernel))
	}
	// CUDA caps a grid's y dimension at 65535 blocks on every GPU the
	// course covers (x may reach 2^31-1), so the side the grid's y covers
	// may span at most 65535 tiles.
	if _, gy := grid(s); gy > MaxGridY {
		side := s.Rows
		if ySide == FieldCols {
			side = s.Cols
		}
		return valueError(ySide, side, fmt.Sprintf("want at most %d tiles of %d, %d, along the side a grid's y covers (CUDA's most blocks in y): use a larger tile",
			MaxGridY, s.Tile, int64(MaxGridY)*int64(s.Tile)))
	}
	return nil
}

// MaxGridY is the most blocks a CUDA grid has in y.
const MaxGridY = 65535

// derivedDoc says how a 2D kernel's n and block come about.
func derivedDoc(k Kernel) string {
	return fmt.Sprintf("%s derives n = rows*cols and block = tile*block_rows: set rows, cols, tile and block_rows instead", k)
}

// is2D reports whether k is one of the 2D kernels.
func is2D(k Kernel) bool {
	kd, ok := lookup(k)
	return ok && kd.grid2D != nil
}

// Is2D reports whether k launches a 2D grid of 2D blocks over a matrix
// (rows, cols, tile, block_rows) rather than n threads in a line.
func Is2D(k Kernel) bool { return is2D(k) }

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

// vectors is vectorized_copy's thread count: the whole vectors from offset on.
func vectors(s Spec) int64 { return (s.N - s.Offset) / int64(s.Width) }

// vectorOffset is vectorized_copy's rule: its width, and at least one
// whole vector from offset on. An offset that is not a multiple of width
// is allowed: the model refuses the misaligned loads as the GPU does.
func vectorOffset(s Spec) error {
	if err := widthIn(2, 4)(s); err != nil {
		return err
	}
	if s.N-s.Offset < int64(s.Width) {
		return valueError(FieldOffset, s.Offset, fmt.Sprintf("want 0 <= offset <= n-width = %d: at least one vector to copy", s.N-int64(s.Width)))
	}
	return nil
}

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
	fields := []string{FieldKernel, FieldN, FieldBlock}
	if kd.grid2D != nil {
		fields = fields[:1]
	}
	fields = append(fields, kd.fields...)
	return append(fields, FieldL2Fetch, FieldDevice)
}

// Takes reports whether a spec for k may set field.
func Takes(k Kernel, field string) bool { return slices.Contains(Fields(k), field) }

// Shape is how a launch is laid out: its threads and its blocks, and the
// blocks' and the grid's extent along x and y. A 1D launch has BlockX =
// block, GridX = Blocks and BlockY = GridY = 1; a 2D one has blocks of
// tile x block_rows threads, Blocks = GridX*GridY and Threads =
// Blocks*BlockX*BlockY, bounds checks masking the threads past the matrix.
type Shape struct {
	Threads int64 `json:"threads"`
	Blocks  int64 `json:"blocks"`
	BlockX  int64 `json:"block_x"`
	BlockY  int64 `json:"block_y"`
	GridX   int64 `json:"grid_x"`
	GridY   int64 `json:"grid_y"`
}

// line is the shape of a 1D launch of blocks blocks of block threads.
func line(blocks, block int64) Shape {
	return Shape{Threads: blocks * block, Blocks: blocks, BlockX: block, BlockY: 1, GridX: blocks, GridY: 1}
}

// Threads returns the number of threads the launch runs (on the spec's
// device, for a grid_stride_copy of one full wave).
func (s Spec) Threads() int64 { return s.Shape().Threads }

// GridBlocks returns the number of blocks the launch runs: ceil(threads/block),
// except for grid_stride_copy, whose grid is set (or, at 0, one full wave
// of the device: as many blocks as its SMs hold at once), and the 2D
// kernels, whose grid covers the matrix in tiles (GridX*GridY).
func (s Spec) GridBlocks() int64 { return s.Shape().Blocks }

// Shape returns the launch's threads and blocks on the spec's device.
// Only a grid of one full wave looks the device up: the time fit asks
// for the shape of each launch hundreds of thousands of times, and a
// lookup copies the whole profile.
func (s Spec) Shape() Shape {
	sms, perSM := 1, s.Block
	if s.fullWave() {
		if d, err := deviceOf(s); err == nil {
			sms, perSM = d.SMs, d.MaxThreadsPerSM
		}
	}
	return s.ShapeOn(sms, perSM)
}

// fullWave reports whether the launch's shape depends on the device: a 1D
// kernel whose grid is not set (grid_stride_copy's grid 0), which ShapeOn
// sizes to one full wave.
func (s Spec) fullWave() bool {
	kd, ok := lookup(s.Kernel)
	return ok && s.Block >= 1 && kd.grid2D == nil && kd.threads == nil && s.Grid == 0
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
	if kd.grid2D != nil {
		gx, gy := kd.grid2D(s)
		bx, by := int64(s.Tile), int64(s.BlockRows)
		return Shape{Threads: gx * gy * bx * by, Blocks: gx * gy, BlockX: bx, BlockY: by, GridX: gx, GridY: gy}
	}
	if kd.threads != nil {
		t := kd.threads(s)
		sh := line(ceilDiv(t, int64(s.Block)), int64(s.Block))
		sh.Threads = t
		return sh
	}
	blocks := s.Grid
	if blocks == 0 {
		blocks = int64(max(1, sms)) * int64(max(1, maxThreadsPerSM/s.Block))
	}
	return line(blocks, int64(s.Block))
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
