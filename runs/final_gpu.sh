#!/bin/bash
# The GPU tests of the final head (after the merges of round 28), on the
# device machine: cuda's harness tests, cuda/usercuda's learner-program
# tests (the one shared.cuh, plan.json) and lab's live tests (TryCUDA on
# learner-style bodies, the exercises' kernels, every notebook spec).
# Built on the development machine, carried as .devbin/gpu.tar.xz:
#   for p in cuda cuda/usercuda lab; do
#     CGO_ENABLED=0 go test -c -o .devbin/gpu/$(echo $p | tr / _).test ./$p; done
#   (cd .devbin && tar -cJf gpu.tar.xz gpu)
# Run: bash runs/final_gpu.sh (OUT: where the logs go).
set -u
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
LOG=$OUT/final_gpu.log
tar -xJf .devbin/gpu.tar.xz -C .devbin
{
echo "# final_gpu $(date -u +%FT%TZ) at $(cat .devbin/head 2>/dev/null)"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
nvcc --version | tail -2
ncu --version | tail -1
} > "$LOG" 2>&1
export COALESCE_LIVE_TEST=1 COALESCE_CACHE=/tmp/cc
run() { # package dir, binary, test pattern, timeout
  local start=$(date +%s) name=$2
  echo "## cd $1 && ../.devbin/gpu/$2 -test.run '$3' -test.v -test.timeout $4" >> "$LOG"
  (cd "$1" && "$OLDPWD/.devbin/gpu/$2" -test.run "$3" -test.v -test.timeout "$4") > "$OUT/$name.txt" 2>&1
  echo "rc=$? $(( $(date +%s) - start )) s" >> "$LOG"
  grep -E '^(--- |    --- |ok|FAIL|PASS)' "$OUT/$name.txt" >> "$LOG"
}
run cuda cuda.test '^TestGPU' 4m
run cuda/usercuda cuda_usercuda.test '^TestGPU' 3m
run lab lab.test '^TestGPU' 8m
