package simt

import (
	"fmt"
	"reflect"
	"strings"
	"sync/atomic"
	"unsafe"

	"github.com/coalescing-course/coalesce/lessons/sectors"
)

// Global is a buffer in global memory: a slice of the caller's, which the
// kernel's threads Load and Store element by element, each access one
// lane's part of a warp instruction. The model lays every buffer out as
// cudaMalloc does, starting 256-byte aligned, and an element's address is
// its byte offset from the start.
//
// T is a number, an array of numbers (a [4]float32 is a float4) or a
// struct of them: whatever it is, one Load or Store moves all its bytes
// at once, so it must be 1, 2, 4, 8 or 16 bytes, the accesses a GPU
// thread has. A field of a larger struct is loaded on its own through
// Field.
type Global[T any] struct{ mem }

// mem is what a Global's accesses need, whatever its element type: where
// its elements are and how far apart, and the allocation they are in.
type mem struct {
	name   string
	base   unsafe.Pointer
	n      int
	stride uintptr // bytes from one element to the next
	off    uintptr // bytes from the allocation's start to element 0
	size   int     // bytes one access moves
	root   *alloc
	// err is why this view of the buffer cannot be accessed at all; the
	// first Load or Store reports it, as a GPU reports a fault.
	err error
}

// alloc is one allocation as a launch sees it: its number in the
// launch's Stream.
type alloc struct {
	name  string
	bytes int64
	// born is the number of launches begun when it was made (launches):
	// a launch that began later cannot use it.
	born int64
	// run is the launch that uses it now, nil between launches; id is its
	// number in that launch's Stream, and use what the launch did to it.
	run atomic.Pointer[run]
	id  int16
	use *Use
	// err is why no view of it can be accessed: an element type with
	// pointers in it.
	err error
}

// NewGlobal returns the buffer called name whose elements are data's: the
// kernel's stores land in data. name is how the results and errors call
// it, and must differ from every other buffer's of a launch. A buffer is
// made on the host, before the launch that uses it, as cudaMalloc makes
// one: made inside a kernel, it fails the launch (ErrEscape). Launches
// may use it one after another, one at a time.
//
//go:noinline
func NewGlobal[T any](name string, data []T) *Global[T] {
	outside(callerPC(), "simt.NewGlobal", "a kernel cannot allocate device memory: make the buffer before the launch and pass it in")
	size := unsafe.Sizeof(*new(T))
	b := &Global[T]{mem{name: name, n: len(data), stride: size, size: int(size),
		root: &alloc{name: name, bytes: int64(len(data)) * int64(size), born: launches.Load()}}}
	if len(data) > 0 {
		b.base = unsafe.Pointer(unsafe.SliceData(data))
	}
	typ := reflect.TypeFor[T]()
	if err := plain(typ); err != nil {
		b.root.err = fmt.Errorf("buffer %s of %s: %w", name, typ, err)
		b.err = b.root.err
	} else if sectors.CheckSize(int(size)) != nil {
		b.err = fmt.Errorf("buffer %s: one %s is %d bytes, and a thread loads or stores 1, 2, 4, 8 or 16 bytes at once: "+
			"load its fields one by one with simt.Field", name, typ, size)
	}
	return b
}

// plain reports why t cannot be an element in device memory: it holds a
// pointer, a slice, a map or the like, which mean nothing there.
func plain(t reflect.Type) error {
	switch t.Kind() {
	case reflect.Bool, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Uint8, reflect.Uint16,
		reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64, reflect.Int, reflect.Uint,
		reflect.Complex64, reflect.Complex128:
		return nil
	case reflect.Array:
		return plain(t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			if err := plain(t.Field(i).Type); err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("a %s is no value in device memory: use numbers, arrays and structs of numbers", t.Kind())
}

// Name returns the buffer's name.
func (b *Global[T]) Name() string { return b.name }

// Len returns the number of elements.
func (b *Global[T]) Len() int { return b.n }

// Load is thread t's read of element i.
//
//go:noinline
func (b *Global[T]) Load(t *Thread, i int) T {
	pc := callerPC()
	if b == nil {
		t.mine(pc, "", "Load").stop(fault(ErrAccess, "Load at %s from a nil *Global", where(pc)))
	}
	return *(*T)(b.access(t, i, pc, false))
}

// Store is thread t's write of v to element i.
//
//go:noinline
func (b *Global[T]) Store(t *Thread, i int, v T) {
	pc := callerPC()
	if b == nil {
		t.mine(pc, "", "Store").stop(fault(ErrAccess, "Store at %s to a nil *Global", where(pc)))
	}
	*(*T)(b.access(t, i, pc, true)) = v
}

// access checks thread t's access to element i, records it and returns
// where the element is.
func (m *mem) access(t *Thread, i int, pc uintptr, store bool) unsafe.Pointer {
	r := t.mine(pc, m.name, verb(store))
	if m.err != nil || uint(i) >= uint(m.n) {
		m.refuse(r, i, pc, store)
	}
	if m.root.run.Load() != r {
		r.addGlobal(m.root, pc)
	}
	off := uintptr(i)*m.stride + m.off
	m.root.use.mark(off, m.size, store)
	var flags uint8
	if store {
		flags = isStore
	}
	t.log = append(t.log, access{pc: pc, addr: uint64(off), buf: m.root.id, phase: r.phase, size: uint8(m.size), flags: flags})
	return unsafe.Add(m.base, off)
}

// refuse stops the thread whose access to element i the buffer cannot
// take: a view that cannot be accessed, an index out of range.
//
//go:noinline
func (m *mem) refuse(r *run, i int, pc uintptr, store bool) {
	if m.err != nil {
		r.stop(fault(ErrAccess, "%s.%s at %s: %v", m.name, verb(store), where(pc), m.err))
	}
	r.stop(fault(ErrAccess, "%s.%s(t, %d) at %s: index out of range: %s has %d elements%s",
		m.name, verb(store), i, where(pc), m.name, m.n, span(m.n)))
}

// verb names an access in a message.
func verb(store bool) string {
	if store {
		return "Store"
	}
	return "Load"
}

// span writes the valid indices of n elements: " (0 to 9)", or "" for none.
func span(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(" (0 to %d)", n-1)
}

// addGlobal makes the allocation a this launch's and gives it a number in
// the launch's Stream, the first time a thread touches it: unless it was
// made after the launch began, or another launch that runs has it.
func (r *run) addGlobal(a *alloc, pc uintptr) {
	if a.born >= r.seq {
		r.stop(fault(ErrEscape, "buffer %s at %s was made while the launch ran (inside the kernel, or by a goroutine): "+
			"make a launch's buffers before it, as cudaMalloc does", a.name, where(pc)))
	}
	for _, o := range r.globals {
		if o.name == a.name {
			r.stop(fault(ErrAccess, "%s at %s: two buffers of one launch named %s: give each its own name", a.name, where(pc), a.name))
		}
	}
	if !a.run.CompareAndSwap(nil, r) {
		f := fault(ErrEscape, "buffer %s at %s belongs to another launch, which runs: a buffer is one launch's at a time", a.name, where(pc))
		if other := a.run.Load(); other != nil {
			other.tamper(f)
		}
		r.stop(f)
	}
	if len(r.globals) >= MaxBuffers {
		r.stop(fault(ErrLaunch, "%s at %s: the launch touches a buffer more than its %d", a.name, where(pc), MaxBuffers))
	}
	id, err := r.stream.Buffer(a.name, a.bytes)
	if err != nil {
		r.stop(fault(ErrAccess, "%s at %s: %v", a.name, where(pc), err))
	}
	a.id, a.use = int16(id), newUse(a.name, a.bytes)
	r.globals = append(r.globals, a)
}

// Field returns the buffer whose element i is field name of b's element i:
// in Go, b[i].name; name may go down nested structs ("Pos.X"). A Load of
// it moves the field's bytes alone, from where they lie in the struct, so
// that an array of structs costs what it costs on a GPU. F must be the
// field's type; a field of a size a thread cannot load, or misaligned for
// its size, is an error at its first access.
func Field[F, T any](b *Global[T], name string) *Global[F] {
	f := &Global[F]{b.mem}
	f.name = b.name + "." + name
	typ, want := reflect.TypeFor[T](), reflect.TypeFor[F]()
	off, got, err := fieldOf(typ, name)
	switch {
	case b.root.err != nil:
		f.err = b.root.err
	case err != nil:
		f.err = fmt.Errorf("field %s of buffer %s: %w", name, b.name, err)
	case got != want:
		f.err = fmt.Errorf("field %s of buffer %s is a %s, not a %s", name, b.name, got, want)
	default:
		f.off += off
		f.size = int(want.Size())
		f.err = aligned(f.name, f.size, f.stride, f.off)
	}
	return f
}

// fieldOf returns the offset and type of the field path names in t.
func fieldOf(t reflect.Type, path string) (uintptr, reflect.Type, error) {
	var off uintptr
	for part := range strings.SplitSeq(path, ".") {
		if t.Kind() != reflect.Struct {
			return 0, nil, fmt.Errorf("%s is no struct", t)
		}
		f, ok := t.FieldByName(part)
		if !ok {
			return 0, nil, fmt.Errorf("%s has no field %s", t, part)
		}
		off += f.Offset
		t = f.Type
	}
	return off, t, nil
}

// aligned returns why accesses of size bytes at off, off+stride, ... are
// not what a GPU thread can make: an unknown size, or an address that is
// not a multiple of it, which the GPU refuses (cudaErrorMisalignedAddress).
func aligned(name string, size int, stride, off uintptr) error {
	if err := sectors.CheckSize(size); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if off%uintptr(size) != 0 || stride%uintptr(size) != 0 {
		return fmt.Errorf("%s: its %d-byte elements start at byte %d, %d apart, and a %d-byte access must be at a multiple of %d: "+
			"misaligned, which the GPU refuses (cudaErrorMisalignedAddress)", name, size, off, stride, size, size)
	}
	return nil
}

// As returns b's bytes from element offset on as elements of type F: in
// CUDA, (const F*)(b + offset), such as a float buffer read as float4
// vectors. It has as many elements as fit. A GPU refuses an access whose
// address is not a multiple of its size, and so does As: an offset that
// leaves the elements misaligned makes every access an error.
func As[F, T any](b *Global[T], offset int) *Global[F] {
	v := &Global[F]{b.mem}
	v.name = fmt.Sprintf("%s(as %s from %d)", b.name, reflect.TypeFor[F](), offset)
	size := unsafe.Sizeof(*new(F))
	switch {
	case b.root.err != nil:
		v.err = b.root.err
	case b.stride != uintptr(b.size) || b.off != 0:
		v.err = fmt.Errorf("%s: As reads a whole buffer, not a field", v.name)
	case offset < 0 || offset > b.n:
		v.err = fmt.Errorf("%s: offset %d outside the buffer's %d elements", v.name, offset, b.n)
	default:
		if err := plain(reflect.TypeFor[F]()); err != nil {
			v.err = fmt.Errorf("%s: %w", v.name, err)
			break
		}
		v.off = uintptr(offset) * b.stride
		v.stride, v.size = size, int(size)
		v.n = int((uintptr(b.n)*b.stride - v.off) / size)
		v.err = aligned(v.name, v.size, v.stride, v.off)
	}
	return v
}
