#!/usr/bin/env bash
# Session 25 GPU call 2 (issue 33): as call 1, with the baselines measured alike where the
# candidate's check is inconclusive (WallCheck::time_gpu_baselines_alike): the same-op control at
# x0.1 over the 12 level-1 tasks, the floor-bound adversarial set (matmul) and the GPU hacks
# with their expectations, then the same-op control at full size. Results in one tarball.
set -u
mkdir -p build && gunzip -c .carry/bin/kgym.gz > build/kgym && chmod +x build/kgym
R=/tmp/r2; mkdir -p $R
export TORCH_CUDA_ARCH_LIST=9.0 KGYM_CACHE_DIR=/tmp/kgym-cache-s25
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/env.txt; nproc >> $R/env.txt
pack() { tar -C /tmp -czf $OUT/r2.tgz r2; }
run() {  # name, tasks, scale, extra, timeout
  t0=$(date +%s)
  timeout $5 python3 bench/same_op_control.py --kgym build/kgym --suite .carry/data/kernelbench \
    --device cuda --tasks $2 --scale $3 --work /tmp/sameop_$1 --out $R/$1.jsonl --json $R/$1.json --extra "$4" \
    > $R/$1.txt 2>&1
  echo "$1 exit=$? s=$(( $(date +%s) - t0 ))" | tee -a $R/times.txt; grep -E "^L1|^median" $R/$1.txt | cut -c1-150; pack
}
run x01_12 1,3,19,21,23,26,36,40,47,88,95,97 0.1 "--no-compile-baseline --jobs 1" 130
mkdir -p /tmp/adv && cp -r tests/data/candidates/1_Square_matrix_multiplication_ /tmp/adv/
t0=$(date +%s)
timeout 170 build/kgym eval --device cuda --suite examples/suite --candidates /tmp/adv --profile off \
  --out $R/adv_matmul.jsonl --cases 3 --timeout-case 10 -q > $R/adv_matmul.txt 2>&1
echo "adv_matmul exit=$? s=$(( $(date +%s) - t0 ))" | tee -a $R/times.txt
python3 tests/integration/expect_outcomes.py $R/adv_matmul.jsonl /tmp/adv > $R/adv_matmul_expect.txt 2>&1; echo "expect rc=$?" | tee -a $R/times.txt; tail -15 $R/adv_matmul_expect.txt; pack
t0=$(date +%s)
timeout 100 build/kgym eval --device cuda --suite examples/suite --candidates tests/data/hacks_gpu --profile off \
  --out $R/gpu_hacks.jsonl --cases 3 --timeout-case 10 --jobs 1 -q > $R/gpu_hacks.txt 2>&1
echo "gpu_hacks exit=$? s=$(( $(date +%s) - t0 ))" | tee -a $R/times.txt
python3 tests/integration/expect_outcomes.py $R/gpu_hacks.jsonl tests/data/hacks_gpu > $R/gpu_hacks_expect.txt 2>&1; echo "expect rc=$?" | tee -a $R/times.txt; tail -15 $R/gpu_hacks_expect.txt; pack
run full_6 1,19,23,36,41,48 1 "--no-compile-baseline --jobs 1" ${FULL_S:-150}
