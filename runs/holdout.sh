#!/bin/bash
# holdout.sh: the held-out run on the device machine. It measures launches
# that neither the probe nor the sweep holds (cuda/testdata/holdout.jsonl),
# so that the DRAM and time models, fitted to those two, are tested on data
# they never saw; then it runs the GPU tests. Build here first, and carry
# .devbin:
#
#   CGO_ENABLED=0 go build -o .devbin/coalesce ./cmd/coalesce
#   CGO_ENABLED=0 go test -c -o .devbin/cuda.test ./cuda
#   (device) bash runs/holdout.sh
#
# Commit $OUT/holdout_metrics.jsonl as cuda/testdata/holdout_metrics.jsonl
# and $OUT/gputest.txt as runs/log/gputest_holdout.txt; the README's
# held-out figures are pinned to that file by TestPublishedAccuracy.
set -u
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
exec > >(tee "$OUT/log.txt") 2>&1
export COALESCE_CACHE=/tmp/coalesce-cache
say() { echo; echo "=== $* ($(date -u +%H:%M:%S))"; }

say nvidia-smi; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,pstate,temperature.gpu --format=csv
say held-out launches, timed and profiled
time .devbin/coalesce run -ncu cuda/testdata/holdout.jsonl > "$OUT/holdout_metrics.jsonl"
echo "rc=$?"
grep -c '"error"' "$OUT/holdout_metrics.jsonl"; grep '"error"' "$OUT/holdout_metrics.jsonl" | head

say GPU tests
(cd cuda && ../.devbin/cuda.test -test.run 'GPU' -test.v > "$OUT/gputest.txt" 2>&1; echo "rc=$?")
grep -E '^(--- |ok|PASS|FAIL)|SKIP|Error' "$OUT/gputest.txt" | head -60
say end
