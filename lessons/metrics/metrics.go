// Package metrics names the counters the course speaks in. They are Nsight
// Compute's own metric names, so a figure the model predicts, the harness
// measures or the grader asks about can be checked by a learner with
//
//	ncu --metrics l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum ./program
//
// A request is one warp-wide memory instruction as the L1 sees it; a sector
// is one 32-byte piece of a 128-byte cache line that the request touches.
// The DRAM byte counts are what crossed the memory bus, after the L2.
package metrics

import (
	"fmt"
	"slices"
	"sort"
)

// The metrics of the model, spelled as ncu spells them.
const (
	LdRequests = "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"
	LdSectors  = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"
	StRequests = "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"
	StSectors  = "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"
	DRAMRead   = "dram__bytes_read.sum"
	DRAMWrite  = "dram__bytes_write.sum"
)

// The shared-memory metrics. A shared request is one warp-wide shared
// instruction; a wavefront is one pass of the 32 banks, which serve one
// distinct 4-byte word each; bank conflicts are the wavefronts past the
// first of each request.
const (
	ShLdRequests      = "smsp__inst_executed_op_shared_ld.sum"
	ShStRequests      = "smsp__inst_executed_op_shared_st.sum"
	ShLdWavefronts    = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"
	ShStWavefronts    = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"
	ShLdBankConflicts = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"
	ShStBankConflicts = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"
)

// Shared lists the shared-memory metrics in the order the course prints
// them. The model gives them by the bank rule (32 banks of 4 bytes; an
// access takes as many wavefronts as its most-used bank has distinct
// words); none is in L1: how closely ncu's counters follow the rule on the
// H200 is measured, not assumed.
var Shared = []string{ShLdRequests, ShLdWavefronts, ShLdBankConflicts, ShStRequests, ShStWavefronts, ShStBankConflicts}

// All lists the global-memory metrics in the order the course prints
// them: every kernel has them, and every recorded launch.
var All = []string{LdRequests, LdSectors, StRequests, StSectors, DRAMRead, DRAMWrite}

// The L2's traffic with the L1: the sectors it read for the L1's loads
// (those the L1 did not find in its own cache) and the sectors the L1
// wrote to it (every store's: the L1 keeps no written data). The model
// has no L1 cache, so it predicts neither; lesson 9 measures them to show
// why a strided store costs more than a strided load of the same sectors.
const (
	L2ReadSectors  = "lts__t_sectors_srcunit_tex_op_read.sum"
	L2WriteSectors = "lts__t_sectors_srcunit_tex_op_write.sum"
)

// L2FromL1 lists the L2's traffic with the L1: measured, never modelled.
var L2FromL1 = []string{L2ReadSectors, L2WriteSectors}

// Profiled is every metric the harness asks ncu for: All, then Shared,
// then L2FromL1.
var Profiled = slices.Concat(All, Shared, L2FromL1)

// L1 lists the metrics the model has exactly: the L1's requests and
// sectors, fixed by the addresses alone, where DRAM bytes depend on what
// the L2 holds and the model estimates them.
var L1 = []string{LdRequests, LdSectors, StRequests, StSectors}

// Exact reports whether the model's value of metric m is exact (one of L1)
// rather than an estimate.
func Exact(m string) bool { return slices.Contains(L1, m) }

// IsShared reports whether m is one of the shared-memory metrics.
func IsShared(m string) bool { return slices.Contains(Shared, m) }

// Stores lists the metrics that count what stores cost: the global and
// shared stores' instructions and their sectors, wavefronts and conflicts,
// and the bytes and sectors written below the L1. The rest of Profiled
// count loads.
var Stores = []string{StRequests, StSectors, DRAMWrite, ShStRequests, ShStWavefronts, ShStBankConflicts, L2WriteSectors}

// IsStore reports whether m counts stores (one of Stores): a target on m
// is missed by a kernel's store instructions, not its loads.
func IsStore(m string) bool { return slices.Contains(Stores, m) }

// Known reports whether m is one of the course's metrics.
func Known(m string) bool { return slices.Contains(Profiled, m) }

// Set maps metric names to values, as a prediction or a measurement.
type Set map[string]float64

// Names returns the metric names in s, the course's own first in their
// order, then any others sorted.
func (s Set) Names() []string {
	var names, extra []string
	for _, m := range Profiled {
		if _, ok := s[m]; ok {
			names = append(names, m)
		}
	}
	for m := range s {
		if !Known(m) {
			extra = append(extra, m)
		}
	}
	sort.Strings(extra)
	return append(names, extra...)
}

// Get returns s[m], or an error naming the metrics s has when m is missing.
func (s Set) Get(m string) (float64, error) {
	v, ok := s[m]
	if !ok {
		return 0, fmt.Errorf("metrics: %q not in this set: have %v", m, s.Names())
	}
	return v, nil
}
