#!/usr/bin/env bash
# Session 10 GPU run 5 (last device minutes): the reference drops each compared case's data; full-size RMSNorm and ReLU only.
set -u
mkdir -p build && cp .carry/bin/kgym build/kgym && chmod +x build/kgym
R=$OUT/r; mkdir -p $R
(while true; do nvidia-smi --query-gpu=memory.used --format=csv,noheader >> $R/mem.txt; sleep 2; done) & MP=$!
export KGYM_CACHE_DIR=/tmp/kgym-cache-honest
timeout 120 build/kgym eval --device cuda --suite .carry/data/kernelbench/level1 --candidates tests/data/honest_gpu --profile strict \
  --scale 1 --jobs 1 --tasks '36_*,19_ReLU' --out $R/full2.jsonl > $R/full2.log 2>&1
echo "eval exit=$?" | tee -a $R/times.txt
kill $MP
grep -E "^\[|passed|correct" $R/full2.log | cut -c1-250
sort -n $R/mem.txt | tail -1
cd $OUT && tar czf res.tgz r
