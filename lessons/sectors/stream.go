package sectors

import (
	"errors"
	"fmt"
	"math"
	"math/bits"

	"github.com/coalescing-course/coalesce/lessons/devices"
	"github.com/coalescing-course/coalesce/lessons/metrics"
	"github.com/coalescing-course/coalesce/lessons/spec"
)

// Stream is the model for a kernel it has no address function for: one
// whose warp instructions someone else works out (package simt runs a
// learner's Go kernel thread by thread and groups its accesses into them)
// and hands over one at a time, in launch order. Each instruction goes
// through the coalescer, the bank rule and the L2 that Model uses, so
// the same instructions in the same order give Model's counts.
//
// A Stream is not safe for concurrent use; Finish ends it.
type Stream struct {
	m     *sim
	names []string
	bytes []int64
	done  bool
}

// ErrStream is an instruction a Stream cannot take: an unknown buffer, a
// size the hardware has no access of, an address outside its buffer, or a
// Stream already finished.
var ErrStream = errors.New("sectors: bad stream instruction")

// NewStream returns an empty launch on the device d whose L2 fetches
// l2Fetch bytes on a miss (32, 64 or 128; 0 is d's default, as a spec
// without l2_fetch_granularity has).
func NewStream(d devices.Profile, l2Fetch int) (*Stream, error) {
	if err := d.Validate(); err != nil {
		return nil, fmt.Errorf("sectors: %w", err)
	}
	if l2Fetch == 0 {
		l2Fetch = d.DefaultL2Fetch
	}
	if !devices.ValidL2Fetch(l2Fetch) {
		return nil, fmt.Errorf("%w: l2 fetch granularity %d, want %s bytes", ErrStream, l2Fetch, devices.L2FetchChoices())
	}
	m := &sim{s: spec.Spec{L2Fetch: l2Fetch},
		fetchShift: uint(bits.TrailingZeros(uint(l2Fetch / SectorBytes)))}
	m.l2 = newL2(d, l2Fetch, nil, true)
	return &Stream{m: m}, nil
}

// Buffer adds a global allocation of the given bytes, which starts 256-byte
// aligned as cudaMalloc's do, and returns its number for Global. Its name
// is what Issue's Instruction.Buffer calls it, and must be new.
func (s *Stream) Buffer(name string, bytes int64) (int, error) {
	switch {
	case s.done:
		return 0, fmt.Errorf("%w: buffer %s added after Finish", ErrStream, name)
	case bytes <= 0 || bytes >= MaxAddress:
		return 0, fmt.Errorf("%w: buffer %s of %d bytes, want 1 to 2^62", ErrStream, name, bytes)
	case name == SharedBuffer:
		return 0, fmt.Errorf("%w: buffer name %q is shared memory's", ErrStream, name)
	}
	for _, n := range s.names {
		if n == name {
			return 0, fmt.Errorf("%w: two buffers named %s", ErrStream, name)
		}
	}
	s.names = append(s.names, name)
	s.bytes = append(s.bytes, bytes)
	s.m.bufs = append(s.m.bufs, spec.Buffer{Name: name, Bytes: bytes})
	s.m.l2.addBuffer(bytes, true)
	return len(s.names) - 1, nil
}

// Global issues one warp instruction on global buffer buf, w's addresses
// byte offsets from its start, and returns the sectors it touches (0 for
// an instruction with no active lane, which sends nothing).
func (s *Stream) Global(buf int, store bool, w *Warp) (int, error) {
	if err := s.check(w); err != nil {
		return 0, err
	}
	if buf < 0 || buf >= len(s.names) {
		return 0, fmt.Errorf("%w: buffer %d of %d", ErrStream, buf, len(s.names))
	}
	for m := w.Active; m != 0; m &= m - 1 {
		l := bits.TrailingZeros32(m)
		if end := w.Addr[l] + uint64(w.Size); end > uint64(s.bytes[buf]) || end < w.Addr[l] {
			return 0, fmt.Errorf("%w: lane %d accesses bytes %d to %d of %s, which has %d", ErrStream, l, w.Addr[l], w.Addr[l]+uint64(w.Size)-1, s.names[buf], s.bytes[buf])
		}
	}
	s.m.addr = w.Addr
	return s.m.issue(store, buf, w.Size, w.Active, ""), nil
}

// Shared issues one warp instruction on the block's shared memory, w's
// addresses byte offsets into it, and returns its wavefronts by the bank
// rule; only 4-byte accesses are modelled (Wavefronts). predicated says
// the warp executes it with no lane active, as Instruction.Predicated.
func (s *Stream) Shared(store bool, w *Warp, predicated bool) (int, error) {
	if err := s.check(w); err != nil {
		return 0, err
	}
	if w.Size != BankBytes {
		return 0, fmt.Errorf("%w: the bank rule is modelled for 4-byte shared accesses, got %d bytes", ErrStream, w.Size)
	}
	s.m.addr = w.Addr
	return s.m.shared(store, w.Active, "", predicated), nil
}

// Issue issues in, global or shared, as Global or Shared would, finding
// its buffer by name: the instructions WarpInstructions returns, warp
// after warp, give the counts Model gives for their spec.
func (s *Stream) Issue(in *Instruction) (int, error) {
	if in.Shared {
		return s.Shared(in.Store, &in.Warp, in.Predicated)
	}
	for i, n := range s.names {
		if n == in.Buffer {
			return s.Global(i, in.Store, &in.Warp)
		}
	}
	return 0, fmt.Errorf("%w: no buffer %s (have %v)", ErrStream, in.Buffer, s.names)
}

// check holds what every instruction needs: a stream still open, a size
// the hardware has, addresses the model can add to.
func (s *Stream) check(w *Warp) error {
	if s.done {
		return fmt.Errorf("%w: instruction after Finish", ErrStream)
	}
	if err := CheckSize(w.Size); err != nil {
		return fmt.Errorf("%w: %w", ErrStream, err)
	}
	for m := w.Active; m != 0; m &= m - 1 {
		if l := bits.TrailingZeros32(m); w.Addr[l] >= MaxAddress {
			return fmt.Errorf("%w: %w: lane %d accesses %#x, want an address below 2^62", ErrStream, ErrAddress, l, w.Addr[l])
		}
	}
	return nil
}

// Finish ends the launch and returns the model's counts, under the names
// Model gives them, and the traffic its time model reads. The Stream
// sees instructions, not a spec: Spec, Warps and the time are left for
// the caller, who knows the launch. Its DRAM bytes are those of a launch
// at rest: how busy a launch keeps DRAM (devices.DRAM.BusyDirtyL2Bytes)
// comes from the time model, which a Stream has not got; it matters only
// to a copy that streams DRAM at the copy bandwidth across the L2's size.
func (s *Stream) Finish() (Launch, error) {
	if s.done {
		return Launch{}, fmt.Errorf("%w: Finish called twice", ErrStream)
	}
	s.done = true
	p := s.m.counts()
	read, write := s.m.l2.finish(0)
	p.Metrics[metrics.DRAMRead], p.Metrics[metrics.DRAMWrite] = math.Round(read), math.Round(write)
	return p, nil
}
