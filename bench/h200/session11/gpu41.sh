#!/usr/bin/env bash
# Session 11 GPU run 2: the honest set at full size (SCALE=1) on 7 level-1 tasks, the same code as run 1.
set -u
mkdir -p build && cp .carry/bin/kgym build/kgym && chmod +x build/kgym
R=$OUT/r; mkdir -p $R
stamp() { date +%s.%N; }
since() { python3 -c "import time;print(round(time.time()-$1,1))"; }
t=$(stamp)
(while true; do nvidia-smi --query-gpu=memory.used --format=csv,noheader >> $R/mem.txt; sleep 2; done) & MP=$!
OUT=$R/full SCALE=1 JOBS=1 EVAL_S=290 PLAIN_S=55 TASKS='19_ReLU,23_*,36_*,1_Square*,40_*,47_*,88_*' KGYM_DATA=.carry/data bash bench/honest_gpu.sh > $R/full_run.log 2>&1
echo "full exit=$? s=$(since $t)" | tee -a $R/times.txt
kill $MP
grep -E "passed, |Geometric|Device-phase|exit=|FAIL" $R/full_run.log | grep -v "no verdict" | cut -c1-300
sort -n $R/mem.txt | tail -1
cd $OUT && tar czf res.tgz r
