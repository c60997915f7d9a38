#!/bin/bash
# Issue 25, device run 1 (2026-12-01): ncu's source page (SourceCounters)
# of learner kernels, and the raw hardware counters of the same launch.
# The programs were usercuda's generated ones (Kernel.Source: the body
# after #line 1 "kernel.cu", kernelsrc/host.cu around it), for the default
# variant of each exercise and six small kernels, built on the development
# machine with the device's compiler, nvcc 13.0.88 from PyPI
# (nvidia-cuda-nvcc==13.0.88): nvcc -O3 -lineinfo -std=c++17 -arch=sm_90,
# one directory p/NAME a program (prog, kernel.cu, launch.txt, inputs).
# Carried in .devbin-cuda; run there as: bash .devbin-cuda/run1.sh
# What it printed: runs/log/issue25_run1.log; the pages it captured are
# cuda/toolkit/testdata/ncusource (ParseNcuSource's tests and corpus).
set -u
cd "$(dirname "$0")"
R=/tmp/r1; rm -rf $R; mkdir -p $R
LOG=$OUT/run1.log
M=l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_st.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum,smsp__inst_executed_op_shared_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,smsp__inst_executed_op_shared_st.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum
{
echo "# run1 $(date -u +%FT%TZ)"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
nvcc --version | tail -2
ncu --version | tail -1
which ncu nvcc cuobjdump nvdisasm compute-sanitizer
cuobjdump --version | tail -1; nvdisasm --version | tail -1
} > $LOG 2>&1
ncu --query-metrics-collection source > $R/query-source-metrics.txt 2>&1
ncu --list-metrics --section SourceCounters > $R/list-sourcecounters.txt 2>&1
for d in p/*/; do
  d=${d%/}; b=$(basename $d); name=$(cat $d/name)
  cmd="ncu --clock-control none --section SourceCounters --metrics $M -k regex:^${name}\$ -c 1 -o $R/$b -f $d/prog $d"
  echo "## $b: $cmd" >> $LOG
  start=$(date +%s%N)
  $cmd > $R/$b.profile.log 2>&1; echo "rc=$? $(( ($(date +%s%N) - start) / 1000000 )) ms; $(cat $d/result.json)" >> $LOG
  cp $d/result.json $R/$b.result.json 2>/dev/null
  ( cd $d
    ncu -i $R/$b.ncu-rep --page source --csv --print-source sass > $R/$b.src-sass.csv 2>&1
    ncu -i $R/$b.ncu-rep --page source --csv --print-source cuda,sass > $R/$b.src-cudasass.csv 2>&1
    ncu -i $R/$b.ncu-rep --page source --csv --print-source cuda > $R/$b.src-cuda.csv 2>&1
    ncu -i $R/$b.ncu-rep --page source --csv --print-source sass --print-metric-name name > $R/$b.src-sass-names.csv 2>&1
    ncu -i $R/$b.ncu-rep --page raw --csv > $R/$b.raw.csv 2>&1
    ncu -i $R/$b.ncu-rep --page details --csv --print-details all > $R/$b.details.csv 2>&1 )
  ( cd /tmp && ncu -i $R/$b.ncu-rep --page source --csv --print-source cuda,sass > $R/$b.src-cudasass-nofile.csv 2>&1 )
  cuobjdump -sass $d/prog > $R/$b.device-sass.txt 2>&1
done
# The same source page straight from a profiling run (no report file), as TryCUDA would run it.
d=p/sc_hoisted; name=$(cat $d/name)
ncu --clock-control none --section SourceCounters -k regex:^${name}\$ -c 1 --page source --csv --print-source sass $d/prog $d > $R/direct-sass.csv 2>&1; echo "direct rc=$?" >> $LOG
ncu --clock-control none --section SourceCounters --metrics $M -k regex:^${name}\$ -c 1 --page raw --csv $d/prog $d > $R/direct-raw.csv 2>&1; echo "direct raw rc=$?" >> $LOG
rm -f $R/*.ncu-rep.keep
ls -la $R >> $LOG
tar -C /tmp -czf $OUT/run1.tgz r1 --exclude='*.ncu-rep'
tar -C /tmp -czf $OUT/run1-reps.tgz r1/sc_hoisted.ncu-rep r1/bl_reduce.ncu-rep r1/tr_solution.ncu-rep 2>/dev/null
echo done >> $LOG
