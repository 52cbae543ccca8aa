#!/usr/bin/env bash
# Session 20 GPU run 5: the review's changes (ff5f9cb: the spot check's trusted rows through the
# judge's recheck_holds, torch's exports shared by pointer): the honest Triton set under strict at
# --scale 0.1, then link_gpu under strict.
set -u
mkdir -p build && gunzip -c .carry/bin/kgym.gz > build/kgym && chmod +x build/kgym
R=$OUT/r; mkdir -p $R
export TORCH_CUDA_ARCH_LIST=9.0 KGYM_CACHE_DIR=/tmp/kgym-cache-s20e
t0=$(date +%s)
timeout 150 build/kgym eval --device cuda --suite .carry/data/kernelbench/level1 --candidates tests/data/honest_gpu --profile strict \
  --scale 0.1 --no-compile-baseline --cases 3 --out $R/honest.jsonl -q > $R/honest.log 2>&1
echo "honest exit=$? s=$(( $(date +%s) - t0 ))" | tee -a $R/times.txt
python3 tests/integration/expect_outcomes.py $R/honest.jsonl tests/data/honest_gpu 2>&1 | tail -1
python3 -c "
import json
rows=[json.loads(l) for l in open('$R/honest.jsonl')]
print('spot checked', sum((r['measurements'].get('candidate_timing') or {}).get('spot_checked_calls', 0) for r in rows),
      'spot failed', sum(len((r['measurements'].get('candidate_timing') or {}).get('spot_failed_calls', [])) for r in rows))"
t0=$(date +%s)
timeout 110 build/kgym eval --device cuda --suite examples/suite --candidates tests/data/link_gpu --profile strict \
  --cases 3 --timeout-case 20 --out $R/link_gpu.jsonl -q > $R/link_gpu.log 2>&1
echo "link_gpu exit=$? s=$(( $(date +%s) - t0 ))" | tee -a $R/times.txt
python3 tests/integration/expect_outcomes.py $R/link_gpu.jsonl tests/data/link_gpu 2>&1 | tail -1
