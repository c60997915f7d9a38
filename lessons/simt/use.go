package simt

import "math/bits"

// Use is what one launch did to one of its Globals, to the 4-byte word:
// which words some thread loaded and which some thread stored. An
// exercise holds a right output to it: every word of the output must have
// been stored by the launch, and every word of input the output depends
// on loaded, or the output was made where the launch's counts do not see
// (computed on the host, written through another path, read from a copy
// of the inputs).
type Use struct {
	// Name is the buffer's, Bytes its size.
	Name  string
	Bytes int64
	// Loaded and Stored count the words some thread loaded, and stored.
	Loaded, Stored int64

	loads, stores []uint64 // a bit a word
}

// newUse returns the Use of a buffer of n bytes, nothing touched yet.
func newUse(name string, n int64) *Use {
	words := (n + 3) / 4
	return &Use{Name: name, Bytes: n, loads: make([]uint64, (words+63)/64), stores: make([]uint64, (words+63)/64)}
}

// mark notes an access of size bytes at byte off, which simt placed in
// the buffer: aligned to its size (1 to 16 bytes), so that its words lie
// in one uint64 of the bitmap.
func (u *Use) mark(off uintptr, size int, store bool) {
	w := off >> 2
	m := (uint64(1)<<max(size>>2, 1) - 1) << (w & 63)
	set, n := u.loads, &u.Loaded
	if store {
		set, n = u.stores, &u.Stored
	}
	if p := &set[w>>6]; *p&m != m {
		*n += int64(bits.OnesCount64(m &^ *p))
		*p |= m
	}
}

// Unloaded returns the first byte of [from, to) whose word no thread of
// the launch loaded, or -1 when the launch loaded every one (and for an
// empty range). Bytes outside the buffer count as not loaded.
func (u *Use) Unloaded(from, to int64) int64 {
	if u == nil {
		return first(nil, 0, from, to)
	}
	return first(u.loads, u.Bytes, from, to)
}

// Unstored is Unloaded for the stores.
func (u *Use) Unstored(from, to int64) int64 {
	if u == nil {
		return first(nil, 0, from, to)
	}
	return first(u.stores, u.Bytes, from, to)
}

// first returns the first byte of [from, to) whose word's bit is not set
// in set, the bitmap of a buffer of n bytes, or -1.
func first(set []uint64, n, from, to int64) int64 {
	for b := from; b < to; {
		if b < 0 || b >= n {
			return b
		}
		w := b >> 2
		if set[w>>6]&(1<<(w&63)) == 0 {
			return b
		}
		b = (w + 1) << 2
	}
	return -1
}

// Buffer returns what the launch did to the Global called name (a view's
// accesses are its buffer's), or nil when no thread touched it.
func (r *Result) Buffer(name string) *Use {
	for _, u := range r.Buffers {
		if u.Name == name {
			return u
		}
	}
	return nil
}
