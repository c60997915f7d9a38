// Package sectors is the course's model of what a warp's global-memory
// accesses cost: exact where the hardware is exact, and honest about where
// it is an estimate.
//
// # Sectors, lines and requests
//
// A warp's 32 lanes issue one memory instruction together. The L1 turns the
// 32 addresses into one request and looks up the 32-byte sectors they fall
// in; four sectors make a 128-byte line. Only the sectors some lane touches
// are fetched, so the cost of an instruction is the number of distinct
// sectors, and its efficiency is the bytes the lanes use over 32 bytes per
// sector:
//
//	32 consecutive floats      128 bytes, 4 sectors    100 %
//	floats 32 apart            32 lines, 32 sectors    12.5 %
//	x of 16-byte structs       512 bytes, 16 sectors   25 %
//
// Coalesce does this for one warp; Predict does it for every warp of a
// launch described by an experiment spec, and reports the counts under
// the names Nsight Compute gives them (package metrics), so that a learner
// can hold the model against ncu. The L1 counts are exact: they depend on
// the addresses alone.
//
// # The DRAM level
//
// What crosses the memory bus is decided by the L2, which the seed's
// arithmetic leaves out. The model's L2 is described in dram.go and its
// parameters are per device (package devices). It is an estimate: its
// figures are within 15 % of ncu's dram__bytes_read.sum and
// dram__bytes_write.sum on the launches the course measures, not exact.
package sectors
