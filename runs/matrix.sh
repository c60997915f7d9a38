#!/bin/bash
# matrix.sh: the device run of the 2D work (lesson 9). It builds the
# harness, prints what ptxas gives the new kernels (registers, stack,
# spills) and the shared and global instructions of transpose_tiled's SASS,
# runs compute-sanitizer (memcheck, racecheck, synccheck) over small
# launches of every new body and memcheck over a misaligned vectorized_copy,
# profiles runs/matrix-specs.jsonl under ncu (the shared counters
# beside the bank rule: coalesce compare), records the whole sweep again
# (a new cuda/reference/h200.jsonl, shared counters and the new kernels
# included) and runs the GPU tests of cuda. Everything lands in one tar,
# $OUT/matrix.tar.gz; the summary is printed.
#
# One command line, from the repository root (the first two commands here,
# the last on the device, carrying .devbin):
#
#   CGO_ENABLED=0 go build -o .devbin/coalesce ./cmd/coalesce && CGO_ENABLED=0 go test -c -o .devbin/cuda.test ./cuda
#   (device, carry .devbin) bash runs/matrix.sh
#
# It takes about 6 to 8 minutes; each step has a time limit. To run only
# some steps (a second command when the first ran out of time), name them:
#
#   bash runs/matrix.sh [sanitize] [ncu] [sweep] [tests] [ptxas]
set -u
STEPS=${*:-sanitize ncu sweep tests ptxas}
want() { case " $STEPS " in *" $1 "*) return 0;; esac; return 1; }
OUT=${OUT:-/tmp/out}
W=$(mktemp -d /tmp/matrix.XXXXXX)
mkdir -p "$OUT"
trap 'tar -czf "$OUT/matrix.tar.gz" -C "$W" . && echo "wrote $OUT/matrix.tar.gz"' EXIT
exec > >(tee "$W/log.txt") 2>&1
export COALESCE_CACHE=/tmp/coalesce-cache
B=.devbin/coalesce
NEW='k_copy_rows|k_copy_columns|k_transpose_coalesced_read|k_transpose_coalesced_write|k_transpose_tiled|k_sum_fields_soa|k_vectorized_copy'
say() { echo; echo "=== $* ($(date -u +%H:%M:%S))"; }

say versions
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,pstate,temperature.gpu --format=csv
nvcc --version | tail -2; ncu --version | tail -1; compute-sanitizer --version | tail -1

say build
H=$(timeout 300 $B run -harness) || { echo "harness build failed"; exit 1; }
echo "harness: $H"; "$H" --info
# ptxas's report, compiled beside the sweep (CPU only), read at the end.
PTXAS=
if want ptxas; then
  ( cd cuda/src && timeout 300 nvcc -O3 -std=c++17 -gencode arch=compute_90,code=sm_90 -Xptxas -v -c harness.cu -o /tmp/matrix-ptxas.o ) > "$W/ptxas.txt" 2>&1 &
  PTXAS=$!
fi

if want sanitize; then
say compute-sanitizer over small launches of every new body
$B run -emit /tmp/mx-san-idx runs/matrix-sanitize.jsonl > "$W/sanitize_plans.jsonl"
for tool in memcheck racecheck synccheck; do
  timeout 120 compute-sanitizer --tool $tool --error-exitcode 9 "$H" --profile --input "$W/sanitize_plans.jsonl" > "$W/sanitize_$tool.txt" 2>&1
  echo "$tool rc=$? verified=$(grep -c '"verified":true' "$W/sanitize_$tool.txt") of $(wc -l < "$W/sanitize_plans.jsonl"); $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$W/sanitize_$tool.txt" | tail -1)"
done

say compute-sanitizer memcheck over the misaligned vectorized_copy: it must fault
echo '{"kernel":"vectorized_copy","n":1024,"width":4,"offset":3}' > /tmp/mx-mis.jsonl
$B run -emit /tmp/mx-mis-idx /tmp/mx-mis.jsonl > "$W/misaligned_plan.jsonl"
timeout 60 compute-sanitizer --tool memcheck "$H" --profile --input "$W/misaligned_plan.jsonl" > "$W/sanitize_misaligned.txt" 2>&1
echo "rc=$?"; grep -m3 -iE 'misaligned|Invalid __global__|ERROR SUMMARY|"error"' "$W/sanitize_misaligned.txt"
timeout 60 "$H" --input "$W/misaligned_plan.jsonl"; echo "harness alone rc=$? (1: an error line)"
fi

if want ncu; then
say the matrix specs under ncu, and the model beside them
timeout 240 $B run -ncu -ncu-csv "$W/matrix_ncu.csv" -record "$W/matrix.jsonl" runs/matrix-specs.jsonl > "$W/matrix_results.jsonl"
echo "rc=$? errors=$(grep -c '"error"' "$W/matrix_results.jsonl")"; grep '"error"' "$W/matrix_results.jsonl" | cut -c1-300
# Global L1 counts (exact), the six shared counters, time; compare exits 1
# for the lines without a comparison (the two faults).
F=l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_st.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum
F=$F,smsp__inst_executed_op_shared_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum
F=$F,smsp__inst_executed_op_shared_st.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,time_seconds
timeout 60 $B compare -json -measured "$W/matrix.jsonl" -figures $F runs/matrix-specs.jsonl > "$W/matrix_compare.jsonl" 2>&1
timeout 60 $B compare -measured "$W/matrix.jsonl" -figures $F runs/matrix-specs.jsonl > "$W/matrix_compare.txt" 2>&1
echo "compare rc=$? (1: the faults have no comparison)"; cut -c1-400 "$W/matrix_compare.txt" | head -45
fi

if want sweep; then
say the sweep, recorded again with the shared counters and the new kernels
timeout 540 $B run -ncu -record "$W/h200.jsonl" cuda/reference/sweep.jsonl > "$W/sweep_results.jsonl"
echo "rc=$? launches=$(wc -l < "$W/sweep_results.jsonl") errors=$(grep -c '"error"' "$W/sweep_results.jsonl")"
grep '"error"' "$W/sweep_results.jsonl" | cut -c1-300
fi

if want tests; then
say GPU tests of cuda
(cd cuda && timeout 330 ../.devbin/cuda.test -test.run 'GPU' -test.v -test.timeout 5m > "$W/gputest_cuda.txt" 2>&1; echo "rc=$?")
grep -E '^(--- |ok|PASS|FAIL)|SKIP|seed|L1 exact' "$W/gputest_cuda.txt" | grep -v '^    ---' | head -40
echo "shared counts off the bank rule: $(grep -c 'shared differs' "$W/gputest_cuda.txt")"; grep 'shared differs' "$W/gputest_cuda.txt" | head -20
fi

if want ptxas; then
say ptxas: the new kernels
wait "$PTXAS"; echo "nvcc rc=$?"
awk -v pat="$NEW" '/Compiling entry function/ {keep = ($0 ~ pat)} keep && /Compiling entry|Used|stack frame/' "$W/ptxas.txt"

say SASS of k_transpose_tiled: shared and global accesses, barriers
cuobjdump -sass "$H" > "$W/harness.sass" 2>&1
awk '/Function : / {keep = ($0 ~ /k_transpose_tiled/)} keep' "$W/harness.sass" | grep -E 'Function|LDS|STS|LDG|STG|BAR' | sed 's/ \+/ /g' | head -30
fi
say end
