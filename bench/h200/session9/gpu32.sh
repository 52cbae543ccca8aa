#!/usr/bin/env bash
# Session 9 GPU run 3: symmetric baseline floors + QuietDevice: pytest, GPU test (no honest), honest set x0.1, CUDA-L1 jobs 14.
set -u
mkdir -p build && cp .carry/bin/kgym build/kgym && chmod +x build/kgym
R=$OUT/r; mkdir -p $R
stamp() { date +%s.%N; }
since() { python3 -c "import time;print(round(time.time()-$1,1))"; }
(cd tests/python && PYTHONPATH=../../python timeout 60 python3 -m pytest -q test_integrity.py test_wall_check.py > $R/pytest.log 2>&1; echo "pytest exit=$?" >> $R/pytest.log)
tail -2 $R/pytest.log
t=$(stamp)
KGYM_GPU_TEST_HONEST=0 KGYM_GPU_TEST_OUT=$R/gpu_test timeout 200 bash tests/integration/test_gpu_eval.sh build/kgym . > $R/gpu_test.log 2>&1
echo "gpu_test exit=$? s=$(since $t)" | tee -a $R/times.txt
grep -E "passed, |FAIL" $R/gpu_test.log
OUT=$R/honest SCALE=0.1 JOBS=1 EVAL_S=140 PLAIN_S=45 KGYM_DATA=.carry/data bash bench/honest_gpu.sh > $R/honest_run.log 2>&1
grep -E "passed, |Geometric|Device-phase|FAIL" $R/honest_run.log | cut -c1-250
t=$(stamp)
export TORCH_CUDA_ARCH_LIST=9.0
timeout 120 build/kgym eval --device cuda --suite .carry/data/kernelbench --candidates .carry/data/cuda-l1/h100_level1.jsonl \
  --tasks L1/1,L1/3,L1/9,L1/12,L1/19,L1/21,L1/23,L1/26,L1/33,L1/36,L1/40,L1/88,L1/95,L1/97 --profile off --jobs 14 \
  --out $R/cudal1_off.jsonl > $R/cudal1_off.log 2>&1
echo "cudal1_off exit=$? s=$(since $t)" | tee -a $R/times.txt
grep -E "^\[" $R/cudal1_off.log | cut -c1-140
cd $OUT && tar czf res.tgz r
