#!/bin/bash
# calibrate.sh: coalesce calibrate on the H200, from scratch (issue 13),
# and the calibrated profile beside the shipped h200 on the course's
# recording, one row per kernel.
#
# Here, on a machine with Go (the device needs neither Go nor the repo's
# build cache):
#   CGO_ENABLED=0 go build -o .devbin/coalesce ./cmd/coalesce
#   go test -c -o .devbin/calibrate.test ./calibrate
# On the device (run, carry .devbin):
#   bash runs/calibrate.sh
#
# Commit $OUT/log.txt as runs/log/calibrate.txt, and put the table
# in the note. $OUT/h200-calibrated.json is the profile.
set -u
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
exec > >(tee "$OUT/log.txt") 2>&1
# An empty cache: the harness is built and the GPU measured from scratch.
export COALESCE_CACHE=$(mktemp -d /tmp/coalesce-cal-XXXX)
say() { echo; echo "=== $* ($(date -u +%H:%M:%S))"; }

say versions
nvidia-smi --query-gpu=name,driver_version,compute_cap,clocks.sm,clocks.mem,pstate,temperature.gpu --format=csv
nvcc --version | tail -2; ncu --version | tail -1

say the harness build, timed apart from the calibration
time .devbin/coalesce run -harness

say coalesce calibrate, from scratch
time timeout 300 .devbin/coalesce calibrate -out "$OUT/h200-calibrated.json" > /dev/null
echo "rc=$?"
cat "$OUT/h200-calibrated.json"

say the same without counters, as on a workstation that refuses them
time timeout 300 .devbin/coalesce calibrate -force -no-ncu -out "$OUT/h200-calibrated-no-ncu.json" > /dev/null
echo "rc=$?"

say shipped h200 against the calibrated profile, on the recording
(cd calibrate && COALESCE_CALIBRATED="$OUT/h200-calibrated.json" ../.devbin/calibrate.test -test.run TestCalibratedOnRecording -test.v)
say the same, the profile calibrated without counters
(cd calibrate && COALESCE_CALIBRATED="$OUT/h200-calibrated-no-ncu.json" ../.devbin/calibrate.test -test.run TestCalibratedOnRecording -test.v)
say end
