#!/usr/bin/env bash
# Session 22 GPU call 2: the same-op control at x0.1 with one job (is the x0.1 bias of call 1,
# --jobs 8, from concurrent evaluations?); issue 31 run 3 (bench/throughput/gpu.py: kgym strict
# with the compile baseline against KernelBench's own harness, CUDA-L1 rows and the GPU hack set);
# issue 31 run 4 (bench/server_load.py on cuda). Results in $OUT/res.tgz only.
set -u
mkdir -p build && gunzip -c .carry/bin/kgym.gz > build/kgym && chmod +x build/kgym
R=/tmp/s22r/r; mkdir -p $R
pack() { (cd /tmp/s22r && tar czf $OUT/res.tgz r); }
export TORCH_CUDA_ARCH_LIST=9.0 KGYM_CACHE_DIR=/tmp/kgym-cache-s22 PYTHONPATH=$PWD/.carry/py_tail
mkdir -p .carry/py_tail && cp -rn .carry/py/pydantic* .carry/py/annotated_types* .carry/py/typing_inspection* .carry/py_tail/ 2>/dev/null
t0=$(date +%s)
timeout 100 python3 bench/same_op_control.py --kgym build/kgym --suite .carry/data/kernelbench --device cuda \
  --tasks 2,3,22,36,41,48,53,88 --scale 0.1 --work /tmp/sameop_j1 --out $R/same_op_0.1_j1.jsonl --json $R/same_op_0.1_j1.json \
  --extra "--no-compile-baseline --jobs 1" > $R/same_op_0.1_j1.txt 2>&1
echo "same_op_j1 exit=$? s=$(( $(date +%s) - t0 ))" | tee -a $R/times.txt; tail -1 $R/same_op_0.1_j1.txt; pack
t0=$(date +%s)
timeout 330 python3 bench/throughput/gpu.py --kgym build/kgym --data .carry/data --kb .carry/kb --out $R/throughput \
  --sets cudal1,hacks --profiles strict --kb-budget-s 150 > $R/throughput.txt 2>&1
echo "throughput exit=$? s=$(( $(date +%s) - t0 ))" | tee -a $R/times.txt; grep -E "^kgym|^KernelBench" $R/throughput.txt; pack
t0=$(date +%s)
timeout 140 python3 bench/server_load.py --kgym build/kgym --devices cuda --sessions 64 --turns 2 --workers-per-device 2 \
  --deadline 130 --out $R/server_load.json > $R/server_load.txt 2>&1
echo "server_load exit=$? s=$(( $(date +%s) - t0 ))" | tee -a $R/times.txt; tail -8 $R/server_load.txt; pack
