#!/usr/bin/env bash
# Session 15 GPU run 4: full size, 7 honest rows + plain timing, after the rechecked calls' input
# check became a copy and a comparison (run 3: two fingerprints per rechecked call). Results in
# $OUT/res.tgz.
set -u
mkdir -p build && gunzip -c .carry/bin/kgym.gz > build/kgym && chmod +x build/kgym
R=$OUT/r; mkdir -p $R
(while true; do nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits >> $R/mem.txt; sleep 1; done) & MP=$!
t0=$(date +%s)
OUT=$R/full SCALE=1 JOBS=1 EVAL_S=150 PLAIN_S=60 TASKS='19_ReLU,23_*,36_*,1_Square*,40_*,47_*,88_*' KGYM_DATA=.carry/data bash bench/honest_gpu.sh > $R/full_run.log 2>&1
echo "full exit=$? s=$(( $(date +%s) - t0 ))" | tee -a $R/times.txt
kill $MP; sort -n $R/mem.txt | tail -1 | sed 's/^/peak MiB /' | tee -a $R/times.txt
grep -E "passed, |Geometric|Device-phase|FAIL" $R/full_run.log | grep -v "no verdict" | cut -c1-300
(cd $OUT && tar czf res.tgz r)
