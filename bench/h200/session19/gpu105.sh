#!/usr/bin/env bash
# Session 19 GPU run 1: is issue 4's 30% overhead cap reachable at all? bench/overhead_floor.py
# (the cheapest form of the defences issue 4 lists, one process, no kgym harness) against plain
# timing on the honest Triton set at --scale 0.1 (15 rows; 10 and 100 timed calls) and at full
# size (7 rows), then kgym itself on the same rows with bench/plain_timing.py beside it (the
# figure sessions 14 to 18 reported). Results packed after each step into $OUT/res.tgz.
set -u
mkdir -p build && gunzip -c .carry/bin/kgym.gz > build/kgym && chmod +x build/kgym
R=$OUT/r; mkdir -p $R
pack() { (cd $OUT && tar czf res.tgz r); }
L1=.carry/data/kernelbench/level1
C=tests/data/honest_gpu
FULL='19_ReLU,23_*,36_*,1_Square*,40_*,47_*,88_*'
export KGYM_CACHE_DIR=/tmp/kgym-cache-s19
t0=$(date +%s)
TRITON_CACHE_DIR=/tmp/triton-s19 timeout 120 python3 bench/overhead_floor.py --suite $L1 --candidates $C --scale 0.1 --calls 10 \
  --out $R/floor_x01.json --md $R/floor_x01.md > $R/floor_x01.log 2>&1
echo "floor x0.1 calls=10 exit=$? s=$(( $(date +%s) - t0 ))" | tee -a $R/times.txt; tail -4 $R/floor_x01.md | head -2
pack
t0=$(date +%s)
TRITON_CACHE_DIR=/tmp/triton-s19 timeout 120 python3 bench/overhead_floor.py --suite $L1 --candidates $C --scale 0.1 --calls 100 --no-trace \
  --out $R/floor_x01_n100.json --md $R/floor_x01_n100.md > $R/floor_x01_n100.log 2>&1
echo "floor x0.1 calls=100 exit=$? s=$(( $(date +%s) - t0 ))" | tee -a $R/times.txt; tail -4 $R/floor_x01_n100.md | head -2
pack
t0=$(date +%s)
TRITON_CACHE_DIR=/tmp/triton-s19 timeout 200 python3 bench/overhead_floor.py --suite $L1 --candidates $C --tasks "$FULL" --scale 1 --calls 10 \
  --out $R/floor_full.json --md $R/floor_full.md > $R/floor_full.log 2>&1
echo "floor full calls=10 exit=$? s=$(( $(date +%s) - t0 ))" | tee -a $R/times.txt; tail -4 $R/floor_full.md | head -2
pack
t0=$(date +%s)
OUT=$R/full SCALE=1 JOBS=1 EVAL_S=100 PLAIN_S=45 TASKS="$FULL" KGYM_DATA=.carry/data timeout 150 bash bench/honest_gpu.sh > $R/full_run.log 2>&1
echo "kgym full exit=$? s=$(( $(date +%s) - t0 ))" | tee -a $R/times.txt
grep -E "passed, |Geometric|Device-phase|FAIL" $R/full_run.log | grep -v "no verdict" | cut -c1-300
pack
t0=$(date +%s)
OUT=$R/honest SCALE=0.1 JOBS=1 EVAL_S=100 PLAIN_S=35 KGYM_DATA=.carry/data timeout 150 bash bench/honest_gpu.sh > $R/honest_run.log 2>&1
echo "kgym x0.1 exit=$? s=$(( $(date +%s) - t0 ))" | tee -a $R/times.txt
grep -E "passed, |Geometric|Device-phase|FAIL" $R/honest_run.log | cut -c1-250
pack
