#!/bin/bash
# probe.sh: the first run on the device machine (an H200 with nvcc, ncu and
# compute-sanitizer, no Go). Run from the repository root there, with the
# coalesce binary built here and carried:
#
#   CGO_ENABLED=0 go build -o .devbin/coalesce ./cmd/coalesce
#   (device) bash runs/probe.sh        # carry: .devbin
#
# It records what the machine is, builds the harness, times the lead's probe
# (cuda/testdata/probe.jsonl) and the copy variants, profiles the probe with
# ncu and runs compute-sanitizer over small versions of every kernel.
# Everything it prints goes to $OUT/log.txt.
set -u
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
exec > >(tee "$OUT/log.txt") 2>&1
export COALESCE_CACHE=/tmp/coalesce-cache
B=.devbin/coalesce
say() { echo; echo "=== $* ($(date -u +%H:%M:%S))"; }

say nvidia-smi; nvidia-smi
say nvidia-smi -q -d CLOCK; nvidia-smi -q -d CLOCK
say nvcc --version; nvcc --version
say ncu --version; ncu --version
say build
H=$($B run -harness) || { echo "harness build failed"; exit 1; }
echo "harness: $H"
say harness --info; "$H" --info | tee "$OUT/info.json"

say timing: probe
time $B run cuda/testdata/probe.jsonl > "$OUT/probe_timing.jsonl"; echo "rc=$?"
say timing: copy variants
time $B run cuda/testdata/copy_variants.jsonl > "$OUT/copy_variants.jsonl"; echo "rc=$?"
grep -h -o '"spec":{[^}]*}\|"time_ms":[0-9.e-]*\|"useful_gbps":[0-9.e+-]*\|"memcpy_gbps":[0-9.e+-]*\|"of_memcpy":[0-9.e+-]*' "$OUT/copy_variants.jsonl" | paste -sd' ' | sed 's/ "spec"/\n"spec"/g'

say ncu: probe
time $B run -ncu -ncu-csv "$OUT/probe_ncu.csv" cuda/testdata/probe.jsonl > "$OUT/probe_run_ncu.jsonl"; rc=$?; echo "rc=$rc"
if [ "$rc" -gt 1 ]; then
  say ncu by hand, since coalesce run -ncu failed
  $B run -emit /tmp/probe-idx cuda/testdata/probe.jsonl > /tmp/probe-in.jsonl
  time ncu --clock-control none --metrics l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_st.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum,dram__bytes_read.sum,dram__bytes_write.sum \
    --csv --page raw --kernel-name regex:^k_ "$H" --profile --input /tmp/probe-in.jsonl --output /tmp/probe-out.jsonl > "$OUT/probe_ncu_byhand.csv"
  echo "rc=$?"; head -c 1500 "$OUT/probe_ncu_byhand.csv"
fi
head -c 2000 "$OUT/probe_ncu.csv"; echo

say compute-sanitizer memcheck, every kernel small, --profile mode
$B run -emit /tmp/san-idx cuda/testdata/sanitize.jsonl > /tmp/san.jsonl
time compute-sanitizer --tool memcheck --error-exitcode 9 "$H" --profile --input /tmp/san.jsonl > "$OUT/sanitize.txt" 2>&1
echo "rc=$?"; grep -c '"verified":true' "$OUT/sanitize.txt"; grep -v '"verified":true' "$OUT/sanitize.txt" | tail -20

# Plans the harness must refuse are TestGPUHarnessRefusesBadPlans (check.sh).
say end
