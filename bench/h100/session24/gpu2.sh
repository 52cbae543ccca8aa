#!/usr/bin/env bash
# Session 24 GPU call 2 (issue 33): the same-op control at x0.1 with both workers pinned to one
# CPU while an evaluation times (KGYM_TIMING_CPU=auto, the default) against unpinned (off), on
# one machine, alternating.
set -u
rm -rf python && cp -r .carry/snap/python python && cp .carry/snap/bench/*.py bench/  # the committed files, not edits in flight
mkdir -p build && gunzip -c .carry/bin/kgym.gz > build/kgym && chmod +x build/kgym
R=$OUT/r; mkdir -p $R
export TORCH_CUDA_ARCH_LIST=9.0 KGYM_CACHE_DIR=/tmp/kgym-cache-s24
T=1,3,19,22,23,36,41,48
run() {  # name, KGYM_TIMING_CPU, tasks, scale, extra
  t0=$(date +%s)
  KGYM_TIMING_CPU=$2 timeout 150 python3 bench/same_op_control.py --kgym build/kgym --suite .carry/data/kernelbench \
    --device cuda --tasks $3 --scale $4 --work /tmp/sameop_$1 --out $R/$1.jsonl --json $R/$1.json --extra "$5" \
    > $R/$1.txt 2>&1
  echo "$1 exit=$? s=$(( $(date +%s) - t0 ))" | tee -a $R/times.txt; grep -E "^L1|^median" $R/$1.txt | cut -c1-150
}
run off_1 off $T 0.1 "--no-compile-baseline --jobs 1"
run auto_1 auto $T 0.1 "--no-compile-baseline --jobs 1"
run off_2 off $T 0.1 "--no-compile-baseline --jobs 1"
run auto_2 auto $T 0.1 "--no-compile-baseline --jobs 1"
