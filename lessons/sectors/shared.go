package sectors

import "fmt"

// Shared memory as every GPU the course covers lays it out: 32 banks, each
// 4 bytes wide, word i of the block's shared memory in bank i % 32.
const (
	Banks     = 32
	BankBytes = 4
)

// Wavefronts returns what one warp's 4-byte shared-memory access costs by
// the bank rule: the banks serve one distinct word each per wavefront, so
// the access takes as many wavefronts as the most-used bank has distinct
// words among the active lanes. Lanes that read the same word share it (a
// broadcast), at no cost. An access with no active lane costs 0. Addr
// holds byte offsets into the block's shared memory; only Size 4 is
// modelled, the size of every shared access of the course.
func Wavefronts(w Warp) (int, error) {
	if w.Size != BankBytes {
		return 0, fmt.Errorf("sectors: the bank rule is modelled for 4-byte shared accesses, got %d bytes", w.Size)
	}
	var b banks
	return b.wavefronts(&w.Addr, w.Active), nil
}

// banks is the bank rule's scratch: each bank's distinct words so far.
type banks struct {
	count [Banks]uint8
	words [Banks][WarpSize]uint64
}

// wavefronts applies the bank rule to the active lanes of addr.
func (b *banks) wavefronts(addr *[WarpSize]uint64, active uint32) int {
	b.count = [Banks]uint8{}
	most := 0
	for l := range WarpSize {
		if active&(1<<l) == 0 {
			continue
		}
		word := addr[l] / BankBytes
		bank := word % Banks
		n := int(b.count[bank])
		seen := false
		for _, w := range b.words[bank][:n] {
			if w == word {
				seen = true
				break
			}
		}
		if seen {
			continue
		}
		b.words[bank][n] = word
		b.count[bank]++
		most = max(most, n+1)
	}
	return most
}

// shared issues one warp-wide 4-byte shared-memory access, with addresses
// in m.addr as byte offsets into the block's shared array. It counts
// requests and wavefronts only: shared memory is no part of the L1's
// global counts nor of the L2.
//
// predicated says the compiler guards the access with a predicate rather
// than a branch (ptxas does for transpose_tiled's first phase: @!P STS, in
// the SASS that runs/matrix.sh prints), so the warp executes the
// instruction even when no lane is active: ncu's
// smsp__inst_executed_op_shared_st.sum counts it, with no wavefront and
// no bank conflict (measured on the H200, cuda/NOTES.md).
//
// It returns the access's wavefronts.
func (m *sim) shared(store bool, active uint32, access string, predicated bool) int {
	if m.record != nil {
		in := Instruction{Store: store, Shared: true, Predicated: predicated, Buffer: SharedBuffer, Access: access, Warp: Warp{Size: BankBytes, Active: active, Addr: m.addr}}
		*m.record = append(*m.record, in)
		return 0
	}
	if store && m.loadsOnly {
		return 0
	}
	if active == 0 && !predicated {
		return 0
	}
	if store {
		m.shStExec++
	} else {
		m.shLdExec++
	}
	if active == 0 {
		return 0
	}
	n := m.banks.wavefronts(&m.addr, active)
	if store {
		m.shStReq++
		m.shStWave += int64(n)
		return n
	}
	m.shLdReq++
	m.shLdWave += int64(n)
	return n
}

// SharedBuffer is the Buffer of a shared-memory Instruction: the kernel's
// name for its shared array.
const SharedBuffer = "s"
