#!/usr/bin/env bash
# Session 19 GPU run 4: the op watch's first build on a cold cache, in a process of its own (run 3:
# built inside the zygote, it initialised CUDA there and the first eval's workers could not use
# the GPU). The examples on cuda with a fresh KGYM_CACHE_DIR, then the honest Triton set under
# strict at --scale 0.1 on the now-warm cache.
set -u
mkdir -p build && gunzip -c .carry/bin/kgym.gz > build/kgym && chmod +x build/kgym
R=$OUT/r; mkdir -p $R
pack() { (cd $OUT && tar czf res.tgz r); }
export TORCH_CUDA_ARCH_LIST=9.0 KGYM_CACHE_DIR=/tmp/kgym-cache-s19d KGYM_KEEP_WORK=1 TMPDIR=/tmp/s19d; mkdir -p $TMPDIR
t0=$(date +%s)
timeout 150 build/kgym eval --device cuda --suite examples/suite --candidates examples/candidates --profile off \
  --cases 3 --out $R/examples.jsonl -q > $R/examples.log 2>&1
echo "examples exit=$? s=$(( $(date +%s) - t0 ))" | tee -a $R/times.txt
python3 tests/integration/expect_outcomes.py $R/examples.jsonl examples/candidates 2>&1 | tail -1
grep -h "kgym op watch" $TMPDIR/kgym-*/*.log 2>/dev/null | sort | uniq -c | head -3
ls $KGYM_CACHE_DIR/opwatch/*/ 2>&1 | head -2
pack
t0=$(date +%s)
timeout 150 build/kgym eval --device cuda --suite .carry/data/kernelbench/level1 --candidates tests/data/honest_gpu --profile strict \
  --scale 0.1 --no-compile-baseline --cases 3 --out $R/honest.jsonl -q > $R/honest.log 2>&1
echo "honest exit=$? s=$(( $(date +%s) - t0 ))" | tee -a $R/times.txt
python3 tests/integration/expect_outcomes.py $R/honest.jsonl tests/data/honest_gpu 2>&1 | tail -1
python3 -c "
import json
rows=[json.loads(l) for l in open('$R/honest.jsonl')]
print('op_watch', sorted({(r['measurements'].get('launch') or {}).get('op_watch') for r in rows}),
      'aten compute', sum((r['measurements'].get('launch') or {}).get('aten_compute_calls', 0) for r in rows),
      'spot checked', sum((r['measurements'].get('candidate_timing') or {}).get('spot_checked_calls', 0) for r in rows))
"
rm -rf $TMPDIR/kgym-*
pack
