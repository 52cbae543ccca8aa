#!/usr/bin/env bash
# Session 18 GPU run 4: the strict sets of the GPU integration test (GPU-only, link_gpu, the honest
# Triton set at --scale 0.1) on the binary with red team rt30's fixes (array_interop, modules
# reached as attributes): no honest GPU candidate may be rejected by the new static rules. (The
# adversarial, examples and hack sets run under --profile off, where these rules do not run.)
set -u
mkdir -p build && gunzip -c .carry/bin/kgym.gz > build/kgym && chmod +x build/kgym
R=$OUT/r; mkdir -p $R
pack() { (cd $OUT && tar czf res.tgz r); }
export TORCH_CUDA_ARCH_LIST=9.0 KGYM_CACHE_DIR=/tmp/kgym-cache-s18d
S=examples/suite
t0=$(date +%s)
build/kgym eval --device cuda --suite .carry/data/kernelbench/level1 --candidates tests/data/honest_gpu --profile strict \
  --scale 0.1 --no-compile-baseline --cases 3 --out $R/honest.jsonl -q > $R/honest.log 2>&1
echo "honest exit=$? s=$(( $(date +%s) - t0 ))" | tee -a $R/times.txt
python3 tests/integration/expect_outcomes.py $R/honest.jsonl tests/data/honest_gpu 2>&1 | tail -1
pack
build/kgym eval --device cuda --suite $S --candidates tests/data/candidates_gpu --out $R/gpu_only.jsonl --cases 3 --jobs 1 -q > $R/gpu_only.log 2>&1
python3 tests/integration/expect_outcomes.py $R/gpu_only.jsonl tests/data/candidates_gpu 2>&1 | tail -1
pack
build/kgym eval --device cuda --suite $S --candidates tests/data/link_gpu --profile strict --out $R/link_gpu.jsonl --cases 3 --timeout-case 20 -q > $R/link_gpu.log 2>&1
echo "all exit=$? s=$(( $(date +%s) - t0 ))" | tee -a $R/times.txt
python3 tests/integration/expect_outcomes.py $R/link_gpu.jsonl tests/data/link_gpu 2>&1 | tail -1
pack
