#!/usr/bin/env bash
# Session 18 GPU run 2: the labelled GPU integration test as ctest runs it (examples, adversarial,
# GPU-only, GPU hacks, the honest Triton set at --scale 0.1), with the time it needs (it ran past
# 170 s in session 17's run 2). Verdict files kept in $OUT/r/gpu_test.
set -u
mkdir -p build && gunzip -c .carry/bin/kgym.gz > build/kgym && chmod +x build/kgym
R=$OUT/r; mkdir -p $R
t0=$(date +%s)
KGYM_KERNELBENCH_L1=$PWD/.carry/data/kernelbench/level1 KGYM_GPU_TEST_OUT=$R/gpu_test \
  timeout ${GPU_TEST_S:-540} bash tests/integration/test_gpu_eval.sh build/kgym . > $R/gpu_test.log 2>&1
echo "gpu_test exit=$? s=$(( $(date +%s) - t0 ))" | tee -a $R/times.txt
grep -E "passed, |FAIL" $R/gpu_test.log | cut -c1-300
(cd $OUT && tar czf res.tgz r)
