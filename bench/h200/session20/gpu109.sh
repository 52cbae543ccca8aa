#!/usr/bin/env bash
# Session 20 GPU run 1: red team rt34's fixes on the H200. The op watch's new source (65,536 slots,
# overflow is compute) is rebuilt on a cold cache by the first eval: the examples on cuda, then the
# honest Triton set under strict at --scale 0.1 (op watch on, no ATen compute), the link_gpu set
# under strict (honest CUDA passes, own context rejected), and rt34's attack (task 1, strict).
set -u
mkdir -p build && gunzip -c .carry/bin/kgym.gz > build/kgym && chmod +x build/kgym
R=$OUT/r; mkdir -p $R
pack() { (cd $OUT && tar czf res.tgz r); }
export TORCH_CUDA_ARCH_LIST=9.0 KGYM_CACHE_DIR=/tmp/kgym-cache-s20a KGYM_KEEP_WORK=1 TMPDIR=/tmp/s20a; mkdir -p $TMPDIR
t0=$(date +%s)
timeout 150 build/kgym eval --device cuda --suite examples/suite --candidates examples/candidates --profile off \
  --cases 3 --out $R/examples.jsonl -q > $R/examples.log 2>&1
echo "examples exit=$? s=$(( $(date +%s) - t0 ))" | tee -a $R/times.txt
python3 tests/integration/expect_outcomes.py $R/examples.jsonl examples/candidates 2>&1 | tail -1
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
      'overflow', sum(o['count'] for r in rows for o in (r['measurements'].get('launch') or {}).get('aten_ops', []) if o['name'] == '<overflow>'),
      'spot checked', sum((r['measurements'].get('candidate_timing') or {}).get('spot_checked_calls', 0) for r in rows))
"
pack
t0=$(date +%s)
timeout 120 build/kgym eval --device cuda --suite examples/suite --candidates tests/data/link_gpu --profile strict \
  --cases 3 --timeout-case 20 --out $R/link_gpu.jsonl -q > $R/link_gpu.log 2>&1
echo "link_gpu exit=$? s=$(( $(date +%s) - t0 ))" | tee -a $R/times.txt
python3 tests/integration/expect_outcomes.py $R/link_gpu.jsonl tests/data/link_gpu 2>&1 | tail -1
pack
t0=$(date +%s)
timeout 90 build/kgym eval --device cuda --suite .carry/data/kernelbench/level1 --candidates .carry/rt34/cands4100 \
  --tasks 1_Square_matrix_multiplication_ --profile strict --out $R/rt34.jsonl -q > $R/rt34.log 2>&1
echo "rt34 exit=$? s=$(( $(date +%s) - t0 ))" | tee -a $R/times.txt
python3 -c "
import json
for l in open('$R/rt34.jsonl'):
    v = json.loads(l); print('rt34', v['outcome'], v['gate'], v['messages'][:1])
"
rm -rf $TMPDIR/kgym-*
pack
