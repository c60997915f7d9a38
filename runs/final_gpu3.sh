#!/bin/bash
# Round 29's last GPU run: lab's GPU tests (TryCUDA on every learner style,
# the live notebook specs, the exercises' kernels) at the final head, after
# lab's funcStart read through fullStart. Built here:
#   CGO_ENABLED=0 go test -c -o .devbin/gpu/lab.test ./lab
#   git rev-parse --short HEAD > .devbin/head; (cd .devbin && tar -cJf gpu.tar.xz gpu head)
# Run: OUT=... bash runs/final_gpu3.sh
set -u
OUT=${OUT:-/tmp/out}
tar -xJf .devbin/gpu.tar.xz -C .devbin
LOG=$OUT/final_gpu3.log
{ echo "# final_gpu3 $(date -u +%FT%TZ) at $(cat .devbin/head)"
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  nvcc --version | tail -2; ncu --version | tail -1; } > "$LOG" 2>&1
export COALESCE_LIVE_TEST=1 COALESCE_CACHE=/tmp/cc3
start=$(date +%s)
echo "## cd lab && ../.devbin/gpu/lab.test -test.run '^TestGPU' -test.v -test.timeout 8m" >> "$LOG"
(cd lab && ../.devbin/gpu/lab.test -test.run '^TestGPU' -test.v -test.timeout 8m) > "$OUT/lab.test.txt" 2>&1
echo "rc=$? $(( $(date +%s) - start )) s" >> "$LOG"
grep -E '^(--- |ok|FAIL|PASS)' "$OUT/lab.test.txt" >> "$LOG"
