package spec

import (
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"strings"

	"github.com/coalescing-course/coalesce/lessons/devices"
)

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
	FieldRows         = "rows"
	FieldCols         = "cols"
	FieldTile         = "tile"
	FieldBlockRows    = "block_rows"
	FieldPad          = "pad"
	FieldIndexPattern = "index_pattern"
	FieldSeed         = "seed"
	FieldIndexFile    = "index_file"
	FieldL2Fetch      = "l2_fetch_granularity"
	FieldDevice       = "device"
)

// Defaults of the optional fields. l2_fetch_granularity has none of its
// own: it defaults to the device's (devices.Profile.DefaultL2Fetch), what
// cudaLimitMaxL2FetchGranularity is before a program sets it. Nor has
// device: it defaults to devices.Current() when the spec is parsed, the
// course's H200 unless this machine's GPU was chosen.
const (
	DefaultBlock        = 256
	DefaultElemBytes    = 4
	DefaultStride       = 1
	DefaultWidth        = 4
	DefaultUnroll       = 4
	DefaultStructBytes  = 16
	DefaultIndexPattern = "identity"
	DefaultSeed         = 1
	DefaultTile         = 32
	DefaultBlockRows    = 8
)

// Tiles lists the tile sizes a 2D kernel may take: a block covers a tile x
// tile square of the matrix.
var Tiles = []int{8, 16, 32}

// Limits of the spec, chosen so that every index fits the int32 the kernels
// and index files use, and every buffer the 64-bit byte offsets they compute.
const (
	MaxN           = math.MaxInt32
	MaxBlock       = 1024
	MaxUnroll      = 16
	MaxStructBytes = 1024
	MaxLineBytes   = 1 << 20
)

// field is one entry of the field table: how a field is read, written,
// checked and described, whichever kernel takes it.
type field struct {
	name string
	// parse reads the field (or its default) from the object into s.
	parse func(p *parser, s *Spec)
	// value is the field's value in s, as JSON writes it.
	value func(s Spec) any
	// check is the field's own range, the same for every kernel that
	// takes it; nil when any value parse accepts will do.
	check func(s Spec) error
	// brief describes the value in a few words for a table or a title,
	// "" when it is the default: "stride 32", "16 B structs".
	brief func(s Spec) string
}

// fields lists every field, in the order a spec prints those its kernel
// takes.
var fields = []field{
	{
		name:  FieldKernel,
		value: func(s Spec) any { return s.Kernel },
	},
	{
		name:  FieldN,
		parse: func(p *parser, s *Spec) { s.N = p.int(FieldN, 0) },
		value: func(s Spec) any { return s.N },
		check: func(s Spec) error {
			return inRange(FieldN, s.N, 1, MaxN, fmt.Sprintf("want an integer from 1 to %d", MaxN))
		},
		brief: func(s Spec) string { return "n " + powerOfTwo(s.N) },
	},
	{
		name:  FieldBlock,
		parse: func(p *parser, s *Spec) { s.Block = int(p.int(FieldBlock, DefaultBlock)) },
		value: func(s Spec) any { return s.Block },
		check: func(s Spec) error {
			return inRange(FieldBlock, int64(s.Block), 1, MaxBlock, fmt.Sprintf("want threads per block from 1 to %d", MaxBlock))
		},
		brief: func(s Spec) string { return unless(s.Block != DefaultBlock, "block %d", s.Block) },
	},
	{
		name:  FieldElemBytes,
		parse: func(p *parser, s *Spec) { s.ElemBytes = int(p.int(FieldElemBytes, DefaultElemBytes)) },
		value: func(s Spec) any { return s.ElemBytes },
		check: func(s Spec) error {
			if !slices.Contains([]int{1, 2, 4, 8, 16}, s.ElemBytes) {
				return valueError(FieldElemBytes, s.ElemBytes, "want 1, 2, 4, 8 or 16")
			}
			return nil
		},
		brief: func(s Spec) string { return unless(s.ElemBytes != DefaultElemBytes, "elem %d B", s.ElemBytes) },
	},
	{
		name:  FieldStride,
		parse: func(p *parser, s *Spec) { s.Stride = p.int(FieldStride, DefaultStride) },
		value: func(s Spec) any { return s.Stride },
		check: func(s Spec) error {
			return inRange(FieldStride, s.Stride, 1, MaxN, fmt.Sprintf("want an integer from 1 to %d elements", MaxN))
		},
		brief: func(s Spec) string { return fmt.Sprintf("stride %d", s.Stride) },
	},
	{
		name:  FieldOffset,
		parse: func(p *parser, s *Spec) { s.Offset = p.int(FieldOffset, 0) },
		value: func(s Spec) any { return s.Offset },
		check: func(s Spec) error {
			return inRange(FieldOffset, s.Offset, 0, MaxN-1, "want 0 <= offset < n elements")
		},
		// vectorized_copy reads from offset 0 unless told otherwise, and
		// says nothing of it then; offset_copy is about its offset.
		brief: func(s Spec) string {
			return unless(s.Kernel != VectorizedCopy || s.Offset != 0, "offset %d", s.Offset)
		},
	},
	{
		name:  FieldWidth,
		parse: func(p *parser, s *Spec) { s.Width = int(p.int(FieldWidth, DefaultWidth)) },
		value: func(s Spec) any { return s.Width },
		brief: func(s Spec) string { return fmt.Sprintf("width %d", s.Width) },
	},
	{
		name:  FieldUnroll,
		parse: func(p *parser, s *Spec) { s.Unroll = int(p.int(FieldUnroll, DefaultUnroll)) },
		value: func(s Spec) any { return s.Unroll },
		check: func(s Spec) error {
			return inRange(FieldUnroll, int64(s.Unroll), 1, MaxUnroll, fmt.Sprintf("want 1 to %d loads in flight per thread", MaxUnroll))
		},
		brief: func(s Spec) string { return fmt.Sprintf("unroll %d", s.Unroll) },
	},
	{
		name:  FieldGrid,
		parse: func(p *parser, s *Spec) { s.Grid = p.int(FieldGrid, 0) },
		value: func(s Spec) any { return s.Grid },
		check: func(s Spec) error {
			return inRange(FieldGrid, s.Grid, 0, MaxN, fmt.Sprintf("want 0 (one full wave of the device) or 1 to %d blocks", MaxN))
		},
		brief: func(s Spec) string { return unless(s.Grid > 0, "grid %d", s.Grid) },
	},
	{
		name:  FieldStructBytes,
		parse: func(p *parser, s *Spec) { s.StructBytes = int(p.int(FieldStructBytes, DefaultStructBytes)) },
		value: func(s Spec) any { return s.StructBytes },
		check: func(s Spec) error {
			if s.StructBytes < 4 || s.StructBytes > MaxStructBytes || s.StructBytes%4 != 0 {
				return valueError(FieldStructBytes, s.StructBytes, fmt.Sprintf("want a multiple of 4 from 4 to %d bytes", MaxStructBytes))
			}
			if int64(s.StructBytes)*s.N > 1<<40 {
				return valueError(FieldN, s.N, "want n*struct_bytes at most 1 TiB")
			}
			return nil
		},
		brief: func(s Spec) string { return fmt.Sprintf("struct %d B", s.StructBytes) },
	},
	{
		name:  FieldFieldOffset,
		parse: func(p *parser, s *Spec) { s.FieldOffset = int(p.int(FieldFieldOffset, 0)) },
		value: func(s Spec) any { return s.FieldOffset },
		check: func(s Spec) error {
			if s.FieldOffset < 0 || s.FieldOffset%4 != 0 {
				return valueError(FieldFieldOffset, s.FieldOffset, "want a multiple of 4 from 0 to struct_bytes-4")
			}
			return nil
		},
		brief: func(s Spec) string { return unless(s.FieldOffset != 0, "x at %d", s.FieldOffset) },
	},
	{
		name:  FieldVector,
		parse: func(p *parser, s *Spec) { s.Vector = p.bool(FieldVector) },
		value: func(s Spec) any { return s.Vector },
		brief: func(s Spec) string { return unless(s.Vector, "float4 loads") },
	},
	{
		name:  FieldRows,
		parse: func(p *parser, s *Spec) { s.Rows = p.int(FieldRows, 0) },
		value: func(s Spec) any { return s.Rows },
		check: func(s Spec) error {
			return inRange(FieldRows, s.Rows, 1, MaxN, fmt.Sprintf("want an integer from 1 to %d, with rows*cols at most %d", MaxN, MaxN))
		},
		// rows and cols are one size, written as the matrix's shape.
		brief: func(s Spec) string { return fmt.Sprintf("%dx%d", s.Rows, s.Cols) },
	},
	{
		name:  FieldCols,
		parse: func(p *parser, s *Spec) { s.Cols = p.int(FieldCols, 0) },
		value: func(s Spec) any { return s.Cols },
		check: func(s Spec) error {
			if err := inRange(FieldCols, s.Cols, 1, MaxN, fmt.Sprintf("want an integer from 1 to %d, with rows*cols at most %d", MaxN, MaxN)); err != nil {
				return err
			}
			if s.Rows >= 1 && s.Rows*s.Cols > MaxN {
				return valueError(FieldCols, s.Cols, fmt.Sprintf("want rows*cols at most %d, got %d x %d", MaxN, s.Rows, s.Cols))
			}
			return nil
		},
		brief: func(Spec) string { return "" },
	},
	{
		name:  FieldTile,
		parse: func(p *parser, s *Spec) { s.Tile = int(p.int(FieldTile, DefaultTile)) },
		value: func(s Spec) any { return s.Tile },
		check: func(s Spec) error {
			if !slices.Contains(Tiles, s.Tile) {
				return valueError(FieldTile, s.Tile, "want 8, 16 or 32 (a block covers a tile x tile square)")
			}
			return nil
		},
		brief: func(s Spec) string { return unless(s.Tile != DefaultTile, "tile %d", s.Tile) },
	},
	{
		name:  FieldBlockRows,
		parse: func(p *parser, s *Spec) { s.BlockRows = int(p.int(FieldBlockRows, DefaultBlockRows)) },
		value: func(s Spec) any { return s.BlockRows },
		check: func(s Spec) error {
			if s.BlockRows < 1 || s.BlockRows > s.Tile || s.Tile%s.BlockRows != 0 {
				return valueError(FieldBlockRows, s.BlockRows, fmt.Sprintf("want a divisor of tile = %d: each thread walks the tile's rows block_rows apart", s.Tile))
			}
			return nil
		},
		brief: func(s Spec) string { return unless(s.BlockRows != DefaultBlockRows, "block_rows %d", s.BlockRows) },
	},
	{
		name:  FieldPad,
		parse: func(p *parser, s *Spec) { s.Pad = int(p.int(FieldPad, 0)) },
		value: func(s Spec) any { return s.Pad },
		check: func(s Spec) error {
			if s.Pad < 0 || s.Pad > s.Tile {
				return valueError(FieldPad, s.Pad, fmt.Sprintf("want 0 to tile = %d unused floats at the end of each shared row", s.Tile))
			}
			return nil
		},
		brief: func(s Spec) string { return unless(s.Pad != 0, "pad %d", s.Pad) },
	},
	{
		name: FieldIndexPattern,
		parse: func(p *parser, s *Spec) {
			// A gather reads its indices from a file or a pattern; the
			// pattern's default applies only without a file.
			if p.has(FieldIndexPattern) || !p.has(FieldIndexFile) {
				s.IndexPattern = p.str(FieldIndexPattern, DefaultIndexPattern)
			}
		},
		value: func(s Spec) any { return s.IndexPattern },
		brief: func(s Spec) string { return s.IndexPattern },
	},
	{
		name: FieldSeed,
		parse: func(p *parser, s *Spec) {
			if p.has(FieldSeed) || !p.has(FieldIndexFile) {
				seed := p.int(FieldSeed, DefaultSeed)
				if seed < 0 && p.err == nil {
					p.err = valueError(FieldSeed, seed, "want an integer, 0 or more")
				}
				s.Seed = uint64(seed)
			}
		},
		value: func(s Spec) any { return s.Seed },
		brief: func(s Spec) string { return unless(s.IndexFile == "" && s.Seed != DefaultSeed, "seed %d", s.Seed) },
	},
	{
		name:  FieldIndexFile,
		parse: func(p *parser, s *Spec) { s.IndexFile = p.str(FieldIndexFile, "") },
		value: func(s Spec) any { return s.IndexFile },
		brief: func(s Spec) string { return unless(s.IndexFile != "", "indices %s", s.IndexFile) },
	},
	{
		name: FieldL2Fetch,
		parse: func(p *parser, s *Spec) {
			def := 0 // an unknown device is reported by the device field
			if d, err := devices.Lookup(s.Device); err == nil {
				def = d.DefaultL2Fetch
			}
			s.L2Fetch = int(p.int(FieldL2Fetch, int64(def)))
		},
		value: func(s Spec) any { return s.L2Fetch },
		check: func(s Spec) error {
			if !devices.ValidL2Fetch(s.L2Fetch) {
				return valueError(FieldL2Fetch, s.L2Fetch, "want "+devices.L2FetchChoices()+" bytes")
			}
			return nil
		},
		brief: func(s Spec) string {
			d, err := devices.Lookup(s.Device)
			return unless(err != nil || s.L2Fetch != d.DefaultL2Fetch, "L2 fetch %d B", s.L2Fetch)
		},
	},
	{
		name:  FieldDevice,
		parse: func(p *parser, s *Spec) { s.Device = p.str(FieldDevice, currentDevice()) },
		value: func(s Spec) any { return s.Device },
		check: func(s Spec) error {
			if _, err := devices.Lookup(s.Device); err != nil {
				return valueError(FieldDevice, s.Device, "want one of "+strings.Join(devices.Names(), ", "))
			}
			return nil
		},
		brief: func(s Spec) string { return unless(s.Device != currentDevice(), "device %s", s.Device) },
	},
}

// currentDevice is the device a spec without one gets.
func currentDevice() string {
	d, _ := devices.Current()
	return d.Name
}

// parseOrder is the order fields are read in: the device first, since
// the default of l2_fetch_granularity is the device's.
var parseOrder = func() []*field {
	var order []*field
	for i := range fields {
		if fields[i].name == FieldDevice {
			order = append([]*field{&fields[i]}, order...)
		} else if fields[i].parse != nil {
			order = append(order, &fields[i])
		}
	}
	return order
}()

func fieldNamed(name string) *field {
	for i := range fields {
		if fields[i].name == name {
			return &fields[i]
		}
	}
	return nil
}

func inRange(name string, v, lo, hi int64, allowed string) error {
	if v < lo || v > hi {
		return valueError(name, v, allowed)
	}
	return nil
}

// unless formats when cond holds, else returns "": a field at its default
// says nothing.
func unless(cond bool, format string, args ...any) string {
	if !cond {
		return ""
	}
	return fmt.Sprintf(format, args...)
}

// powerOfTwo writes n as 2^k when it is a power of two above 1.
func powerOfTwo(n int64) string {
	if n > 1 && bits.OnesCount64(uint64(n)) == 1 {
		return "2^" + strconv.Itoa(bits.TrailingZeros64(uint64(n)))
	}
	return strconv.FormatInt(n, 10)
}
