#!/usr/bin/env bash
# Session 19 GPU run 2: bench/overhead_floor.py with --busy (GPU busy time from CUPTI activity
# records, the second reading of issue 4's "GPU time"), honest Triton set at --scale 0.1 (15 rows)
# and at full size (7 rows). Results in $OUT/res.tgz.
set -u
R=$OUT/r; mkdir -p $R
pack() { (cd $OUT && tar czf res.tgz r); }
L1=.carry/data/kernelbench/level1
C=tests/data/honest_gpu
FULL='19_ReLU,23_*,36_*,1_Square*,40_*,47_*,88_*'
export TRITON_CACHE_DIR=/tmp/triton-s19
t0=$(date +%s)
timeout 150 python3 bench/overhead_floor.py --suite $L1 --candidates $C --scale 0.1 --calls 10 --busy \
  --out $R/floor_x01.json --md $R/floor_x01.md > $R/floor_x01.log 2>&1
echo "floor x0.1 busy exit=$? s=$(( $(date +%s) - t0 ))" | tee -a $R/times.txt; tail -4 $R/floor_x01.md | head -2
pack
t0=$(date +%s)
timeout 250 python3 bench/overhead_floor.py --suite $L1 --candidates $C --tasks "$FULL" --scale 1 --calls 10 --busy \
  --out $R/floor_full.json --md $R/floor_full.md > $R/floor_full.log 2>&1
echo "floor full busy exit=$? s=$(( $(date +%s) - t0 ))" | tee -a $R/times.txt; tail -4 $R/floor_full.md | head -2
pack
