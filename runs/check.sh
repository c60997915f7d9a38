#!/bin/bash
# check.sh: the run on the device machine that checks the harness and the
# measurement layer after a change to either. It builds the harness,
# runs the GPU tests of cuda (random launches too), cuda/usercuda, lab and
# grader, runs
# compute-sanitizer over
# small launches of every kernel (whose answers become
# cuda/testdata/sanitize.txt, which TestParseHarnessOutputRecorded reads),
# and measures the recorded sweep again, for the recording to be compared
# with. Build here first, and carry .devbin:
#
#   CGO_ENABLED=0 go build -o .devbin/coalesce ./cmd/coalesce
#   for p in cuda cuda/usercuda lab grader; do CGO_ENABLED=0 go test -c -o .devbin/${p//\//_}.test ./$p; done
#   (device) bash runs/check.sh
set -u
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
exec > >(tee "$OUT/log.txt") 2>&1
export COALESCE_CACHE=/tmp/coalesce-cache
B=.devbin/coalesce
say() { echo; echo "=== $* ($(date -u +%H:%M:%S))"; }

say versions
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,pstate,temperature.gpu --format=csv
nvcc --version | tail -2; ncu --version | tail -1
say build
H=$($B run -harness) || { echo "harness build failed"; exit 1; }
echo "harness: $H"; "$H" --info

say compute-sanitizer memcheck, every kernel small, --profile mode
$B run -emit /tmp/san-idx cuda/testdata/sanitize.jsonl > /tmp/san.jsonl
compute-sanitizer --tool memcheck --error-exitcode 9 "$H" --profile --input /tmp/san.jsonl > "$OUT/sanitize.txt" 2>&1
echo "rc=$?"; grep -c '"verified":true' "$OUT/sanitize.txt"; grep -v '"verified":true' "$OUT/sanitize.txt" | tail -5

say GPU tests
export COALESCE_LIVE_TEST=1
for p in cuda cuda/usercuda lab grader; do
  n=${p//\//_}
  if [ -x .devbin/$n.test ]; then
    (cd $p && "$OLDPWD/.devbin/$n.test" -test.run 'GPU|Live' -test.v -test.timeout 20m > "$OUT/gputest_$n.txt" 2>&1; echo "$p rc=$?")
    grep -E '^(--- |ok|PASS|FAIL)|SKIP' "$OUT/gputest_$n.txt" | grep -v '^    ---' | head -40
  fi
done

say random launches, five more seeds: model L1 against ncu
(cd cuda && ../.devbin/cuda.test -test.run RandomLaunches -test.count 5 -test.v > "$OUT/gputest_random.txt" 2>&1; echo "rc=$?")
grep -E 'seed|L1 exact|^(--- |ok|PASS|FAIL)' "$OUT/gputest_random.txt" | grep -v '^    ---' | head -20

say the recorded sweep, measured again
time $B run -ncu cuda/reference/sweep.jsonl > "$OUT/sweep_again.jsonl"; echo "rc=$?"
grep -c '"error"' "$OUT/sweep_again.jsonl"
say end
