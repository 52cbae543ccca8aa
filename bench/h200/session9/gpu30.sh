#!/usr/bin/env bash
# Session 9 GPU run 1: verify current code (GPU test, no honest) + honest set at full size (SCALE=1) on 6 level-1 tasks.
set -u
mkdir -p build && cp .carry/bin/kgym build/kgym && chmod +x build/kgym
R=$OUT/r; mkdir -p $R
stamp() { date +%s.%N; }
since() { python3 -c "import time;print(round(time.time()-$1,1))"; }
t=$(stamp)
KGYM_GPU_TEST_HONEST=0 KGYM_GPU_TEST_OUT=$R/gpu_test timeout 200 bash tests/integration/test_gpu_eval.sh build/kgym . > $R/gpu_test.log 2>&1
echo "gpu_test exit=$? s=$(since $t)" | tee -a $R/times.txt
grep -E "passed, |FAIL" $R/gpu_test.log
t=$(stamp)
OUT=$R/full SCALE=1 JOBS=1 EVAL_S=250 PLAIN_S=90 TASKS='1_Square*,40_*,88_*,67_*,47_*,19_ReLU' KGYM_DATA=.carry/data bash bench/honest_gpu.sh > $R/full_run.log 2>&1
echo "full exit=$? s=$(since $t)" | tee -a $R/times.txt
grep -E "passed, |Geometric|Device-phase|exit=" $R/full_run.log
cd $OUT && tar czf res.tgz r
