#!/bin/bash
# sweep.sh: the second run on the device machine. It records the reference
# (cuda/reference/h200.jsonl) from the sweep, then runs the GPU tests and a
# live `coalesce compare`. Build here first, and carry .devbin:
#
#   CGO_ENABLED=0 go build -o .devbin/coalesce ./cmd/coalesce
#   CGO_ENABLED=0 go test -c -o .devbin/cuda.test ./cuda
#   (device) bash runs/sweep.sh
set -u
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
exec > >(tee "$OUT/log.txt") 2>&1
export COALESCE_CACHE=/tmp/coalesce-cache
say() { echo; echo "=== $* ($(date -u +%H:%M:%S))"; }

say nvidia-smi; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,pstate,temperature.gpu --format=csv
say record the reference
time .devbin/coalesce run -ncu -record cuda/reference/h200.jsonl cuda/reference/sweep.jsonl > "$OUT/sweep_results.jsonl"
echo "rc=$?"
cp cuda/reference/h200.jsonl "$OUT/h200.jsonl"
grep -c '"error"' "$OUT/sweep_results.jsonl"; grep '"error"' "$OUT/sweep_results.jsonl" | head

say GPU tests
(cd cuda && ../.devbin/cuda.test -test.run 'GPU' -test.v > "$OUT/gputest.txt" 2>&1; echo "rc=$?")
grep -E '^(--- |ok|PASS|FAIL)|SKIP|Error' "$OUT/gputest.txt" | head -60

say live compare
time .devbin/coalesce compare cuda/testdata/sanitize.jsonl > "$OUT/compare_live.txt" 2>&1; echo "rc=$?"
head -12 "$OUT/compare_live.txt"
say end
