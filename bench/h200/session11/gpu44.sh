#!/usr/bin/env bash
# Session 11 GPU run 5: run 4 + the signal layer allows moves between folders (Triton's cache).
# Full-size set first, then the GPU test, then the honest set x0.1; results packed after each.
set -u
mkdir -p build && cp .carry/bin/kgym build/kgym && chmod +x build/kgym
R=$OUT/r; mkdir -p $R
stamp() { date +%s.%N; }
since() { python3 -c "import time;print(round(time.time()-$1,1))"; }
pack() { (cd $OUT && tar czf res.tgz r); }
t=$(stamp)
(while true; do nvidia-smi --query-gpu=memory.used --format=csv,noheader >> $R/mem.txt; sleep 2; done) & MP=$!
OUT=$R/full SCALE=1 JOBS=1 EVAL_S=170 PLAIN_S=50 TASKS='19_ReLU,23_*,36_*,1_Square*,40_*,47_*,88_*' KGYM_DATA=.carry/data bash bench/honest_gpu.sh > $R/full_run.log 2>&1
echo "full exit=$? s=$(since $t)" | tee -a $R/times.txt
kill $MP
grep -E "passed, |Geometric|Device-phase|exit=|FAIL" $R/full_run.log | grep -v "no verdict" | cut -c1-300
sort -n $R/mem.txt | tail -1
pack
t=$(stamp)
KGYM_GPU_TEST_HONEST=0 KGYM_GPU_TEST_OUT=$R/gpu_test timeout 200 bash tests/integration/test_gpu_eval.sh build/kgym . > $R/gpu_test.log 2>&1
echo "gpu_test exit=$? s=$(since $t)" | tee -a $R/times.txt
grep -E "passed, |FAIL" $R/gpu_test.log | cut -c1-300
pack
t=$(stamp)
OUT=$R/honest SCALE=0.1 JOBS=1 EVAL_S=110 PLAIN_S=40 KGYM_DATA=.carry/data bash bench/honest_gpu.sh > $R/honest_run.log 2>&1
echo "honest exit=$? s=$(since $t)" | tee -a $R/times.txt
grep -E "passed, |Geometric|Device-phase|FAIL|exit=" $R/honest_run.log | cut -c1-250
pack
