#!/bin/bash
# The second GPU run of round 28, after the fixes the first showed
# (runs/final_gpu.sh; twin without a Go twin, the live notebooks' prose):
# make test-gpu over every notebook (scripts/gpu_unpack.sh, which copies
# its log to OUT), then lab's live test and TryCUDA on the strided-copy
# learner styles, from a lab.test built here:
#   CGO_ENABLED=0 go test -c -o .devbin/gpu/lab.test ./lab; (cd .devbin && tar -cJf gpu.tar.xz gpu)
set -u
OUT=${OUT:-/tmp/out}; export OUT
bash scripts/gpu_unpack.sh > "$OUT/unpack.log" 2>&1
echo "gpu_unpack rc=$?" >> "$OUT/unpack.log"
tar -xJf .devbin/gpu.tar.xz -C .devbin
LOG=$OUT/final_gpu2.log
{ echo "# final_gpu2 $(date -u +%FT%TZ) at $(cat .devbin/head)"
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  nvcc --version | tail -2; ncu --version | tail -1; } > "$LOG" 2>&1
export COALESCE_LIVE_TEST=1 COALESCE_CACHE=/tmp/cc2
run() { # test pattern
  local start=$(date +%s)
  echo "## cd lab && ../.devbin/gpu/lab.test -test.run '$1' -test.v -test.timeout 5m" >> "$LOG"
  (cd lab && ../.devbin/gpu/lab.test -test.run "$1" -test.v -test.timeout 5m) >> "$OUT/lab2.txt" 2>&1
  echo "rc=$? $(( $(date +%s) - start )) s" >> "$LOG"
}
run '^TestGPULive$'
run '^TestGPULearnerStyles$/^10-kernels$/^strided-copy$'
grep -E '^(--- |    --- |ok|FAIL|PASS)' "$OUT/lab2.txt" >> "$LOG"
