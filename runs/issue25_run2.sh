#!/bin/bash
# Issue 25, device run 2: TryCUDA on learner-style CUDA bodies (lab's
# TestGPULearnerStyles) and the exercises' own bodies (TestGPUExerciseKernels),
# with the line-by-line source counters. Built on the development machine:
#   CGO_ENABLED=0 go test -c -o .devbin-cuda/lab.test ./lab
set -u
LOG=$OUT/run2.log
{
echo "# run2 $(date -u +%FT%TZ)"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
nvcc --version | tail -2
ncu --version | tail -1
} > $LOG 2>&1
export COALESCE_LIVE_TEST=1 COALESCE_CACHE=/tmp/cc
cd lab
start=$(date +%s)
echo "## cd lab && ../.devbin-cuda/lab.test -test.run 'TestGPULearnerStyles|TestGPUExerciseKernels' -test.v -test.timeout 9m" >> $LOG
../.devbin-cuda/lab.test -test.run 'TestGPULearnerStyles|TestGPUExerciseKernels' -test.v -test.timeout 9m > $OUT/run2_lab.txt 2>&1
echo "rc=$? $(( $(date +%s) - start )) s" >> $LOG
grep -E '^(=== RUN|--- |    --- |ok|FAIL|PASS)' $OUT/run2_lab.txt | grep -v '=== RUN' >> $LOG
