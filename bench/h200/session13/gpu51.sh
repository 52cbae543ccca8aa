#!/usr/bin/env bash
# Session 13 GPU run 2: rt20 and rt21's fixes (own session per worker, io_uring, splice and sendfile refused,
# held-file rules) and up to 1000 back-to-back wall-check calls on the GPU. GPU test (GPU_TEST_RUNS="1 2" for two: the spread of the
# eager-identical candidates' speedups), then the honest set at x0.1. Results packed after each.
set -u
mkdir -p build && cp .carry/bin/kgym build/kgym && chmod +x build/kgym
R=$OUT/r; mkdir -p $R
stamp() { date +%s.%N; }
since() { python3 -c "import time;print(round(time.time()-$1,1))"; }
pack() { (cd $OUT && tar czf res.tgz r); }
for k in ${GPU_TEST_RUNS:-1}; do
  t=$(stamp)
  KGYM_GPU_TEST_HONEST=0 KGYM_GPU_TEST_OUT=$R/gpu_test$k timeout 200 bash tests/integration/test_gpu_eval.sh build/kgym . > $R/gpu_test$k.log 2>&1
  echo "gpu_test$k exit=$? s=$(since $t)" | tee -a $R/times.txt
  grep -E "passed, |FAIL" $R/gpu_test$k.log | cut -c1-300
  pack
done
t=$(stamp)
OUT=$R/honest SCALE=0.1 JOBS=1 EVAL_S=120 PLAIN_S=45 KGYM_DATA=.carry/data bash bench/honest_gpu.sh > $R/honest_run.log 2>&1
echo "honest exit=$? s=$(since $t)" | tee -a $R/times.txt
grep -E "passed, |Geometric|Device-phase|FAIL|exit=" $R/honest_run.log | cut -c1-250
pack
