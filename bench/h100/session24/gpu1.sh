#!/usr/bin/env bash
# Session 24 GPU call 1 (issue 33, the GPU same-op control's lean at x0.1): the machine's
# CPU, NUMA, huge-page and speculation-control settings; the same-op control at x0.1 on this
# commit; and the wall check's own work timed in many fresh processes set up one difference at a
# time (bench/gpu_process_diag.py), to see whether a worker's own speed varies by process.
set -u
rm -rf python && cp -r .carry/snap/python python && cp .carry/snap/bench/*.py bench/  # the committed files, not edits in flight
mkdir -p build && gunzip -c .carry/bin/kgym.gz > build/kgym && chmod +x build/kgym
R=$OUT/r; mkdir -p $R
export TORCH_CUDA_ARCH_LIST=9.0 KGYM_CACHE_DIR=/tmp/kgym-cache-s24
{ uname -a; grep . /sys/devices/system/cpu/vulnerabilities/* ; cat /proc/cmdline; nproc; lscpu;
  ls /sys/devices/system/node/; cat /sys/devices/system/node/node*/cpulist;
  grep . /sys/kernel/mm/transparent_hugepage/enabled /sys/kernel/mm/transparent_hugepage/defrag;
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv; nvidia-smi topo -m; } > $R/env.txt 2>&1
t0=$(date +%s)
timeout 200 python3 bench/gpu_process_diag.py --suite .carry/data/kernelbench/level1 \
  --tasks 3_Batched_matrix_multiplication,48_Mean_reduction_over_a_dimension --scale 0.1 --n 500 --reps 5 \
  --rounds 1 --variants plain,candidate,pinned,nothp --repeat 5 --cpu 3 --out $R/process_diag.json > $R/process_diag.txt 2>&1
echo "diag exit=$? s=$(( $(date +%s) - t0 ))" | tee -a $R/times.txt; cut -c1-200 $R/process_diag.txt
t0=$(date +%s)
timeout 200 python3 bench/same_op_control.py --kgym build/kgym --suite .carry/data/kernelbench --device cuda \
  --tasks 1,3,19,22,23,36,41,48 --scale 0.1 --work /tmp/sameop --out $R/same_op.jsonl \
  --json $R/same_op.json --extra "--no-compile-baseline --jobs 1" > $R/same_op.txt 2>&1
echo "same_op exit=$? s=$(( $(date +%s) - t0 ))" | tee -a $R/times.txt; tail -12 $R/same_op.txt
