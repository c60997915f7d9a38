#!/bin/bash
# gridstride.sh: what the H200 counts for grid_stride_copy launches whose
# last vector falls inside a warp (cuda/testdata/grid_stride_tail.jsonl),
# with the instruction counts beside the L1's, the registers each compiled
# instance of the kernel uses, and the SASS of the unroll-6 float instance.
# It found the two problems of check run 2 (cuda/NOTES.md). Build here,
# carry .devbin:
#
#   CGO_ENABLED=0 go build -o .devbin/coalesce ./cmd/coalesce
#   (device) bash runs/gridstride.sh
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
exec > >(tee "$OUT/gridstride_log.txt") 2>&1
export COALESCE_CACHE=/tmp/coalesce-cache
B=.devbin/coalesce
SPECS=cuda/testdata/grid_stride_tail.jsonl
H=$($B run -harness) || exit 1
echo "harness $H"
echo "=== registers a thread, each instance (cuobjdump -res-usage)"
cuobjdump -res-usage "$H" 2>&1 | grep -A1 "grid_stride" | grep -E "Function|REG" | paste - - | sed -E 's/.*Function ([^:]*):.*REG:([0-9]+).*/\1 \2/' | sort
echo "=== the tail launches under ncu, with instruction counts"
$B run -emit /tmp/gs-idx $SPECS > /tmp/gs_plans.jsonl
M=l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_st.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum,smsp__inst_executed_op_global_ld.sum,smsp__sass_inst_executed_op_global_ld.sum,launch__registers_per_thread
ncu --clock-control none --metrics $M --csv --page raw --print-units base --kernel-name regex:^k_ "$H" --profile --input /tmp/gs_plans.jsonl --output /tmp/gs_ans.jsonl > "$OUT/gridstride_ncu.csv" 2>&1
echo "ncu rc=$?"
echo "=== model beside ncu (coalesce compare, live)"
$B compare $SPECS
echo "=== SASS of k_grid_stride_copy<float,6>"
cuobjdump -sass -fun '_Z18k_grid_stride_copyIfLi6EEvPKT_PS0_x' "$H" > "$OUT/gridstride_sass_u6.txt" 2>&1
grep -cE "LDG|STG" "$OUT/gridstride_sass_u6.txt"
