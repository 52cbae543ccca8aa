#!/usr/bin/env bash
# Session 25 GPU call 1 (issue 33): one floor estimator for every side (runner::gpu_side_calls_ms):
# the same-op control at x0.1 (3 runs) and at full size, then the GPU test's adversarial and GPU-hack
# sets (the red-team check of the change: no hack newly passing, bounded by its twin).
set -u
rm -rf python && cp -r .carry/snap/python python && cp .carry/snap/bench/*.py bench/
mkdir -p build && gunzip -c .carry/bin/kgym.gz > build/kgym && chmod +x build/kgym
R=$OUT/r; mkdir -p $R
export TORCH_CUDA_ARCH_LIST=9.0 KGYM_CACHE_DIR=/tmp/kgym-cache-s25
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/env.txt; nproc >> $R/env.txt
T=1,3,19,22,23,36,41,48
run() {  # name, tasks, scale, extra, timeout
  t0=$(date +%s)
  timeout $5 python3 bench/same_op_control.py --kgym build/kgym --suite .carry/data/kernelbench \
    --device cuda --tasks $2 --scale $3 --work /tmp/sameop_$1 --out $R/$1.jsonl --json $R/$1.json --extra "$4" \
    > $R/$1.txt 2>&1
  echo "$1 exit=$? s=$(( $(date +%s) - t0 ))" | tee -a $R/times.txt; grep -E "^L1|^median" $R/$1.txt | cut -c1-150
}
run x01_a $T 0.1 "--no-compile-baseline --jobs 1" 120
run x01_b $T 0.1 "--no-compile-baseline --jobs 1" 120
run x01_c $T 0.1 "--no-compile-baseline --jobs 1" 120
run full_a $T 1 "--no-compile-baseline --jobs 1" 150
t0=$(date +%s)
KGYM_GPU_TEST_OUT=$R/gpu_test KGYM_GPU_TEST_HONEST=0 timeout ${GPU_TEST_S:-200} bash tests/integration/test_gpu_eval.sh build/kgym . > $R/gpu_test.txt 2>&1
echo "gpu_test exit=$? s=$(( $(date +%s) - t0 ))" | tee -a $R/times.txt; tail -30 $R/gpu_test.txt
