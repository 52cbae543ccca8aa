#!/usr/bin/env bash
# Session 18 GPU run 4: the GPU integration test (gpu102.sh's step 1) on the binary with red team
# rt30's fixes (array_interop, modules reached as attributes), to see that no honest GPU
# candidate is rejected by the new static rules.
set -u
mkdir -p build && gunzip -c .carry/bin/kgym.gz > build/kgym && chmod +x build/kgym
R=$OUT/r; mkdir -p $R
export TORCH_CUDA_ARCH_LIST=9.0 KGYM_CACHE_DIR=/tmp/kgym-cache-s18d
t0=$(date +%s)
KGYM_KERNELBENCH_L1=$PWD/.carry/data/kernelbench/level1 KGYM_GPU_TEST_OUT=$R/gpu_test \
  timeout ${GPU_TEST_S:-450} bash tests/integration/test_gpu_eval.sh build/kgym . > $R/gpu_test.log 2>&1
echo "gpu_test exit=$? s=$(( $(date +%s) - t0 ))" | tee -a $R/times.txt
grep -E "passed, |FAIL" $R/gpu_test.log | cut -c1-300
(cd $OUT && tar czf res.tgz r)
