#!/usr/bin/env bash
# Session 9 GPU run 5: baseline wall memory released; the 3 full-size tasks that failed run 4.
set -u
mkdir -p build && cp .carry/bin/kgym build/kgym && chmod +x build/kgym
R=$OUT/r; mkdir -p $R
stamp() { date +%s.%N; }
since() { python3 -c "import time;print(round(time.time()-$1,1))"; }
t=$(stamp)
(while true; do nvidia-smi --query-gpu=memory.used --format=csv,noheader >> $R/mem.txt; sleep 2; done) & MP=$!
OUT=$R/full SCALE=1 JOBS=1 EVAL_S=200 PLAIN_S=35 TASKS='19_ReLU,23_*,36_*' KGYM_DATA=.carry/data bash bench/honest_gpu.sh > $R/full_run.log 2>&1
echo "full exit=$? s=$(since $t)" | tee -a $R/times.txt
kill $MP
grep -E "passed, |Geometric|Device-phase|exit=|FAIL" $R/full_run.log | grep -v "no verdict" | cut -c1-300
sort -n $R/mem.txt | tail -1
cd $OUT && tar czf res.tgz r
