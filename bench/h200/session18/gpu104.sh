#!/usr/bin/env bash
# Session 18 GPU run 5: the honest Triton set under strict at --scale 0.1 on the binary with red
# team rt32's fix (a round's rechecks drawn among all timed positions): no false rejection, and
# rechecks land past min_calls. Results in $OUT/res.tgz.
set -u
mkdir -p build && gunzip -c .carry/bin/kgym.gz > build/kgym && chmod +x build/kgym
R=$OUT/r; mkdir -p $R
export TORCH_CUDA_ARCH_LIST=9.0 KGYM_CACHE_DIR=/tmp/kgym-cache-s18e
t0=$(date +%s)
build/kgym eval --device cuda --suite .carry/data/kernelbench/level1 --candidates tests/data/honest_gpu --profile strict \
  --scale 0.1 --no-compile-baseline --cases 3 --out $R/honest.jsonl -q > $R/honest.log 2>&1
echo "honest exit=$? s=$(( $(date +%s) - t0 ))" | tee -a $R/times.txt
python3 tests/integration/expect_outcomes.py $R/honest.jsonl tests/data/honest_gpu 2>&1 | tail -1
python3 -c "
import json
late = 0
for l in open('$R/honest.jsonl'):
    v = json.loads(l); t = v['measurements'].get('candidate_timing') or {}
    late += sum(1 for r in t.get('rechecks', []) if r.get('transform') == 'timed' and r.get('index', 0) >= 10)
print('timed rechecks past min_calls:', late)
"
(cd $OUT && tar czf res.tgz r)
