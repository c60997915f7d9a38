package simt

import (
	"fmt"
	"sync/atomic"

	"github.com/coalescing-course/coalesce/lessons/sectors"
)

// Word is the element of a shared array: a 4-byte number, the width of a
// shared-memory bank, which is what the bank rule prices (sectors.Wavefronts).
type Word interface {
	~int32 | ~uint32 | ~float32
}

// Shared is an array in a block's shared memory: __shared__ T name[n].
// Declared once, outside the kernel, it is every block's: each block gets
// its own copy, zeroed before the block's first access, which its threads
// share and no other block sees. Word i of an array is at byte 4i from the
// array's start; a block's arrays lie one after another in the order its
// threads first touch them, each at a multiple of 128 bytes, so that each
// starts at bank 0 (where a compiler places several arrays is its own
// choice).
type Shared[T Word] struct {
	sharedMem
	data []T
}

// sharedMem is a Shared's state apart from its elements: where it lies in
// this launch's shared memory, and who last touched each word, for the
// race check.
type sharedMem struct {
	name string
	n    int
	// born and run are a Global's (alloc): the launches begun when it
	// was made, and the launch that uses it now.
	born  int64
	run   atomic.Pointer[run]
	id    int16
	base  uint64 // byte offset in the block's shared memory
	block int64  // the block its data was last zeroed for (run.blocks)

	// For each word: the thread that last wrote it and the barrier
	// interval it did so in (epoch), and the one thread that read it in
	// the interval, or -1 for several.
	writer, reader        []int32
	writeEpoch, readEpoch []uint32
}

// NewShared returns the shared array called name of n words (n at least
// 0; a negative n is an error at its first access). It is declared on
// the host, before the launch, as a kernel's __shared__ arrays are in its
// source: made inside a kernel, it fails the launch (ErrEscape).
//
//go:noinline
func NewShared[T Word](name string, n int) *Shared[T] {
	outside(callerPC(), "simt.NewShared", "declare the shared array before the launch and pass it in, as __shared__ declares it in the kernel's source")
	return &Shared[T]{sharedMem: sharedMem{name: name, n: n, born: launches.Load()}}
}

// Name returns the array's name.
func (s *Shared[T]) Name() string { return s.name }

// Len returns the number of words.
func (s *Shared[T]) Len() int { return s.n }

// Load is thread t's read of word i of its block's copy.
//
//go:noinline
func (s *Shared[T]) Load(t *Thread, i int) T {
	pc := callerPC()
	if s == nil {
		t.mine(pc, "", "Load").stop(fault(ErrAccess, "Load at %s from a nil *Shared", where(pc)))
	}
	return *s.at(t, i, pc, false)
}

// Store is thread t's write of v to word i of its block's copy.
//
//go:noinline
func (s *Shared[T]) Store(t *Thread, i int, v T) {
	pc := callerPC()
	if s == nil {
		t.mine(pc, "", "Store").stop(fault(ErrAccess, "Store at %s to a nil *Shared", where(pc)))
	}
	*s.at(t, i, pc, true) = v
}

// at checks, race-checks and records thread t's access to word i, and
// returns the word.
func (s *Shared[T]) at(t *Thread, i int, pc uintptr, store bool) *T {
	r := t.mine(pc, s.name, verb(store))
	if uint(i) >= uint(s.n) || s.n < 0 {
		s.refuse(r, i, pc, store)
	}
	if s.run.Load() != r {
		r.addShared(&s.sharedMem, pc)
		s.data = make([]T, s.n)
	}
	if s.block != r.blocks {
		clear(s.data)
		s.block = r.blocks
	}
	s.check(r, t, i, store, pc)
	flags := isShared
	if store {
		flags |= isStore
	}
	t.log = append(t.log, access{pc: pc, addr: s.base + 4*uint64(i), buf: s.id, phase: r.phase, size: sectors.BankBytes, flags: flags})
	return &s.data[i]
}

// refuse stops the thread whose access to word i the array cannot take.
//
//go:noinline
func (s *sharedMem) refuse(r *run, i int, pc uintptr, store bool) {
	if s.n < 0 {
		r.stop(fault(ErrLaunch, "shared %s at %s has %d words: a shared array has 0 or more", s.name, where(pc), s.n))
	}
	r.stop(fault(ErrAccess, "%s.%s(t, %d) at %s: index out of range: shared %s has %d words%s",
		s.name, verb(store), i, where(pc), s.name, s.n, span(s.n)))
}

// addShared places the array s in this launch's shared memory, the first
// time a thread touches it.
func (r *run) addShared(s *sharedMem, pc uintptr) {
	if s.born >= r.seq {
		r.stop(fault(ErrEscape, "shared %s at %s was made while the launch ran (inside the kernel, or by a goroutine): "+
			"declare it before the launch", s.name, where(pc)))
	}
	base := (r.sharedBytes + 127) &^ 127
	if end := int64(base) + 4*int64(s.n); end > MaxSharedBytes {
		r.stop(fault(ErrLaunch, "shared %s at %s: the block's shared arrays need %d bytes; a block may declare at most %d (48 KiB)",
			s.name, where(pc), end, MaxSharedBytes))
	}
	for _, o := range r.shareds {
		if o.name == s.name {
			r.stop(fault(ErrAccess, "shared %s at %s: two shared arrays of one launch named %s", s.name, where(pc), s.name))
		}
	}
	if !s.run.CompareAndSwap(nil, r) {
		f := fault(ErrEscape, "shared %s at %s belongs to another launch, which runs: a shared array is one launch's at a time", s.name, where(pc))
		if other := s.run.Load(); other != nil {
			other.tamper(f)
		}
		r.stop(f)
	}
	r.sharedBytes = base + 4*s.n
	s.id, s.base, s.block = int16(len(r.shareds)), uint64(base), 0
	s.writer, s.reader = make([]int32, s.n), make([]int32, s.n)
	s.writeEpoch, s.readEpoch = make([]uint32, s.n), make([]uint32, s.n)
	r.shareds = append(r.shareds, s)
}

// MaxRaces is how many races a Result lists; it counts them all.
const MaxRaces = 10

// Race is two threads of a block touching the same shared word between two
// barriers, at least one of them writing: which one the word holds, or
// which value the reader sees, depends on the order the warps run in,
// which the GPU does not promise (compute-sanitizer --tool racecheck
// reports the same hazards).
type Race struct {
	// Shared names the array and Index the word.
	Shared string
	Index  int
	// Block is the block; First and Second the threads, Second the one
	// that found First's access (simt runs a block's threads in order).
	Block, First, Second Dim
	// Kind is "write after write", "read after write" or "write after read".
	Kind string
	// File and Line are where Second's access is, and Where names it
	// for a reader as Site.Where does.
	File  string
	Line  int
	Where string
}

func (r Race) String() string {
	return fmt.Sprintf("%s: %s race on %s[%d] in block %s: threads %s and %s, with no Sync between",
		r.Where, r.Kind, r.Shared, r.Index, r.Block, r.First, r.Second)
}

// check looks for a race between thread t's access to word i and what other
// threads of its block did to it since the last barrier, and then records
// t's access.
func (s *sharedMem) check(r *run, t *Thread, i int, store bool, pc uintptr) {
	me := int32(t.tid)
	wrote := s.writeEpoch[i] == r.epoch && s.writer[i] != me
	read := s.readEpoch[i] == r.epoch && s.reader[i] != me
	switch {
	case wrote && store:
		r.race(s, i, int(s.writer[i]), t, "write after write", pc)
	case wrote:
		r.race(s, i, int(s.writer[i]), t, "read after write", pc)
	case read && store:
		r.race(s, i, int(s.reader[i]), t, "write after read", pc)
	}
	if store {
		s.writer[i], s.writeEpoch[i] = me, r.epoch
		return
	}
	switch {
	case s.readEpoch[i] != r.epoch:
		s.reader[i], s.readEpoch[i] = me, r.epoch
	case s.reader[i] != me:
		s.reader[i] = -1
	}
}

// race records one race; other is the first thread's number in the block,
// or -1 when several threads read the word.
func (r *run) race(s *sharedMem, i, other int, t *Thread, kind string, pc uintptr) {
	r.raceCount++
	if len(r.races) >= MaxRaces {
		return
	}
	file, line := position(pc)
	first := Dim{-1, -1}
	if other >= 0 {
		first = r.threads[other].ThreadIdx
	}
	r.races = append(r.races, Race{Shared: s.name, Index: i, Block: t.BlockIdx, First: first, Second: t.ThreadIdx, Kind: kind, File: file, Line: line, Where: where(pc)})
}
