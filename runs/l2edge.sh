#!/bin/bash
# l2edge.sh: the device run of the L2's edge (issue 13). It times and
# profiles runs/l2edge-specs.jsonl (twelve kernels, n from 2^20 to
# 2^26) with the DRAM and L2 counters, so that the model's DRAM level and
# time can be fitted where a launch's footprint is about the L2's size.
#
#   CGO_ENABLED=0 go build -o .devbin/coalesce ./cmd/coalesce
#   (device, carry .devbin) bash runs/l2edge.sh
#
# Commit $OUT/l2edge.jsonl as cuda/reference/l2edge.jsonl and $OUT/log.txt
# as runs/log/l2edge.txt.
set -u
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
exec > >(tee "$OUT/log.txt") 2>&1
export COALESCE_CACHE=/tmp/coalesce-cache
say() { echo; echo "=== $* ($(date -u +%H:%M:%S))"; }

say versions
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,pstate,temperature.gpu --format=csv
nvcc --version | tail -2; ncu --version | tail -1
say the L2 edge, timed and profiled
time timeout 540 .devbin/coalesce run -ncu -record "$OUT/l2edge.jsonl" runs/l2edge-specs.jsonl > "$OUT/l2edge_results.jsonl"
echo "rc=$? errors=$(grep -c '"error"' "$OUT/l2edge_results.jsonl")"
grep '"error"' "$OUT/l2edge_results.jsonl" | cut -c1-300 | head
say end
