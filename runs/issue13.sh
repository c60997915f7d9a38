#!/bin/bash
# issue13.sh: the device run that checks issue 13 on the H200. In order:
# coalesce calibrate from an empty cache (harness build, with and without
# counters) and the calibrated profiles beside the shipped h200 on the
# recording (runs/calibrate.sh); 40 random launches at the L2's edge
# that no fit saw, timed and profiled (dramcheck-specs.jsonl); the time
# model's open questions (time-specs.jsonl); the GPU tests of cuda and
# calibrate.
#
#   CGO_ENABLED=0 go build -o .devbin/coalesce ./cmd/coalesce
#   go test -c -o .devbin/calibrate.test ./calibrate
#   go test -c -o .devbin/cuda.test ./cuda
#   (device, carry .devbin) bash runs/issue13.sh [calibrate] [check] [check2] [rewrite] [tests]
#
# check2 is the second held-out draw (dramcheck2-specs.jsonl, drawn by
# dramcheck.py after the busy write-back fit). Commit $OUT/dramcheck.jsonl
# as cuda/testdata/dramcheck_metrics.jsonl, $OUT/dramcheck2.jsonl as
# cuda/testdata/dramcheck2_metrics.jsonl,
# $OUT/time.jsonl as cuda/reference/time.jsonl and the logs under
# runs/log/.
set -u
STEPS=${*:-calibrate check tests}
want() { case " $STEPS " in *" $1 "*) return 0;; esac; return 1; }
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
say() { echo; echo "=== $* ($(date -u +%H:%M:%S))"; }
if want calibrate; then
  OUT=$OUT bash runs/calibrate.sh
  mv "$OUT/log.txt" "$OUT/calibrate.txt"
fi
exec > >(tee "$OUT/log.txt") 2>&1
export COALESCE_CACHE=/tmp/coalesce-cache
if want check; then
  say 40 random launches at the L2 edge, timed and profiled
  time timeout 200 .devbin/coalesce run -ncu -record "$OUT/dramcheck.jsonl" runs/dramcheck-specs.jsonl > /dev/null
  echo "rc=$?"
  timeout 120 .devbin/coalesce compare -measured "$OUT/dramcheck.jsonl" -figures dram__bytes_read.sum,dram__bytes_write.sum,time_seconds runs/dramcheck-specs.jsonl | cut -c1-220
  say the time model\'s open questions
  time timeout 150 .devbin/coalesce run -ncu -record "$OUT/time.jsonl" runs/time-specs.jsonl > /dev/null
  echo "rc=$?"
fi
if want check2; then
  say 40 more random launches at the L2 edge, drawn after the busy write-back fit
  time timeout 200 .devbin/coalesce run -ncu -record "$OUT/dramcheck2.jsonl" runs/dramcheck2-specs.jsonl > /dev/null
  echo "rc=$?"
  timeout 120 .devbin/coalesce compare -measured "$OUT/dramcheck2.jsonl" -figures dram__bytes_read.sum,dram__bytes_write.sum,time_seconds runs/dramcheck2-specs.jsonl | cut -c1-220
fi
if want rewrite; then
  say update_x_aos held out of the rewrite cost\'s fit
  time timeout 120 .devbin/coalesce run -ncu -record "$OUT/rewrite.jsonl" runs/rewrite-specs.jsonl > /dev/null
  echo "rc=$?"
  timeout 60 .devbin/coalesce compare -measured "$OUT/rewrite.jsonl" -figures dram__bytes_read.sum,dram__bytes_write.sum,time_seconds runs/rewrite-specs.jsonl | cut -c1-220
fi
if want tests; then
  say GPU tests
  (cd cuda && timeout 200 ../.devbin/cuda.test -test.run 'GPU' -test.v > "$OUT/gputest_cuda.txt" 2>&1; echo "cuda rc=$?")
  grep -E '^(--- |ok|PASS|FAIL)' "$OUT/gputest_cuda.txt" | head -30
fi
say end
