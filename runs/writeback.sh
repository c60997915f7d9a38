#!/bin/bash
# writeback.sh: the device run of writeback-specs.jsonl (issue 13): does the
# H200 leave more of a copy's writes in the L2 when the copy runs faster?
#
#   CGO_ENABLED=0 go build -o .devbin/coalesce ./cmd/coalesce
#   (device, carry .devbin) bash runs/writeback.sh
#
# Commit $OUT/writeback.jsonl as cuda/reference/writeback.jsonl and
# $OUT/log.txt as runs/log/writeback.txt.
set -u
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
exec > >(tee "$OUT/log.txt") 2>&1
export COALESCE_CACHE=/tmp/coalesce-cache
say() { echo; echo "=== $* ($(date -u +%H:%M:%S))"; }

say versions
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,pstate,temperature.gpu --format=csv
nvcc --version | tail -2; ncu --version | tail -1
say write-backs against speed, timed and profiled
time timeout 400 .devbin/coalesce run -ncu -record "$OUT/writeback.jsonl" runs/writeback-specs.jsonl > "$OUT/writeback_results.jsonl"
echo "rc=$? errors=$(grep -c '"error"' "$OUT/writeback_results.jsonl")"
grep '"error"' "$OUT/writeback_results.jsonl" | cut -c1-300 | head
timeout 120 .devbin/coalesce compare -measured "$OUT/writeback.jsonl" -figures dram__bytes_read.sum,dram__bytes_write.sum,time_seconds runs/writeback-specs.jsonl | cut -c1-220
say end
