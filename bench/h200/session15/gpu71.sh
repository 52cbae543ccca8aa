#!/usr/bin/env bash
# Session 15 GPU run 2: A/B of the per-verdict device time at full size, 7 honest rows.
#   old: session 14's final code (9be2d03: .carry/old/{bin/kgym,python})
#   new: the working tree (baseline's own wall loop once per verdict; cached device memory kept
#        while half the device is free)
# Each is judged as in bench/honest_gpu.sh (--jobs 1, strict); plain timing on the new verdicts.
# Device memory sampled every second. Results in $OUT/res.tgz.
set -u
mkdir -p build && gunzip -c .carry/bin/kgym.gz > build/kgym && chmod +x build/kgym && gunzip -c .carry/old/bin/kgym.gz > .carry/old/bin/kgym && chmod +x .carry/old/bin/kgym
R=$OUT/r; mkdir -p $R
pack() { (cd $OUT && tar czf res.tgz r); }
SUITE=.carry/data/kernelbench/level1; CANDS=tests/data/honest_gpu
TASKS='19_ReLU,23_*,36_*,1_Square*,40_*,47_*,88_*'
export KGYM_CACHE_DIR=/tmp/kgym-cache-ab
for v in old new; do
  BIN=build/kgym; [ $v = old ] && BIN=.carry/old/bin/kgym
  (while true; do nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits >> $R/mem_$v.txt; sleep 1; done) & MP=$!
  t=$(date +%s)
  timeout 200 $BIN eval --device cuda --suite $SUITE --candidates $CANDS --profile strict --scale 1 --jobs 1 \
     --tasks "$TASKS" --out $R/$v.jsonl > $R/$v.log 2>&1
  echo "$v exit=$? s=$(( $(date +%s) - t ))" | tee -a $R/times.txt
  kill $MP; sort -n $R/mem_$v.txt | tail -1 | sed "s/^/$v peak MiB /" | tee -a $R/times.txt
  pack
done
python3 tests/integration/expect_outcomes.py $R/new.jsonl $CANDS 2>&1 | tail -3
timeout 90 python3 bench/plain_timing.py --verdicts $R/new.jsonl --suite $SUITE --candidates $CANDS \
  --kgym-cache-dir $KGYM_CACHE_DIR --out $R/plain.json --md $R/plain.md > $R/plain.log 2>&1
echo "plain exit=$?" | tee -a $R/times.txt
grep -E "Geometric|Device-phase" $R/plain.md
pack
