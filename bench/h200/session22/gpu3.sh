#!/usr/bin/env bash
# Session 22 GPU call 3: issue 31 run 1 (the labelled GPU integration test on the latest code,
# cold cache), the wall-check requests of two same-op controls timed in one process
# (the same-op control at x0.1 on this commit: rounds alternate which side goes first, the
# calibrations exchange the candidate's messages), and KernelBench's own
# harness for as long as the call allows (run 3's other side; its LLM-client imports shimmed).
set -u
mkdir -p build && gunzip -c .carry/bin/kgym.gz > build/kgym && chmod +x build/kgym
R=/tmp/s22r/r; mkdir -p $R
pack() { (cd /tmp/s22r && tar czf $OUT/res.tgz r); }
export TORCH_CUDA_ARCH_LIST=9.0 KGYM_CACHE_DIR=/tmp/kgym-cache-s22c PYTHONPATH=$PWD/.carry/py_tail
mkdir -p .carry/py_tail && cp -rn .carry/py/pydantic* .carry/py/annotated_types* .carry/py/typing_inspection* .carry/py_tail/ 2>/dev/null
t0=$(date +%s)
KGYM_KERNELBENCH_L1=$PWD/.carry/data/kernelbench/level1 KGYM_GPU_TEST_OUT=$R/gpu_test \
  timeout 290 bash tests/integration/test_gpu_eval.sh build/kgym . > $R/gpu_test.log 2>&1
echo "gpu_test exit=$? s=$(( $(date +%s) - t0 ))" | tee -a $R/times.txt
grep -E "passed, |FAIL|ok$|^ok|error" $R/gpu_test.log | cut -c1-300 | head -20; pack
t0=$(date +%s)
timeout 70 python3 bench/same_op_control.py --kgym build/kgym --suite .carry/data/kernelbench --device cuda \
  --tasks 2,3,22,36,41,48,53,88 --scale 0.1 --work /tmp/sameop_c3 --out $R/same_op_0.1.jsonl --json $R/same_op_0.1.json \
  --extra "--no-compile-baseline --jobs 8" > $R/same_op_0.1.txt 2>&1
echo "same_op exit=$? s=$(( $(date +%s) - t0 ))" | tee -a $R/times.txt; tail -1 $R/same_op_0.1.txt; pack
t0=$(date +%s)
timeout 95 python3 bench/throughput/gpu.py --kgym build/kgym --data .carry/data --kb .carry/kb --out $R/throughput \
  --sets cudal1,hacks --profiles strict --kb-budget-s 55 > $R/throughput.txt 2>&1
echo "throughput exit=$? s=$(( $(date +%s) - t0 ))" | tee -a $R/times.txt; grep -E "^kgym|^KernelBench|^kernelbench" $R/throughput.txt | cut -c1-200; pack
