#!/usr/bin/env bash
# Session 18 GPU run 1: session 17's last binary (rt28's link-check changes, never run on a GPU).
#  1) tests/data/link_gpu under strict (expect policy_rejected by the link check);
#  2) the 14 CUDA-L1 level-1 tasks under strict and off, then `kgym check --built` over their
#     builds (session 17 gpu91.sh steps 1 and 2 without link_gpu under off, which run 3 ran).
# Results packed after each step into $OUT/res.tgz.
set -u
mkdir -p build && gunzip -c .carry/bin/kgym.gz > build/kgym && chmod +x build/kgym
R=$OUT/r; mkdir -p $R
pack() { (cd $OUT && tar czf res.tgz r); }
export TORCH_CUDA_ARCH_LIST=9.0 KGYM_CACHE_DIR=/tmp/kgym-cache-s18
build/kgym --version > $R/version.txt 2>&1
t0=$(date +%s)
timeout 150 build/kgym eval --device cuda --suite examples/suite --candidates tests/data/link_gpu --profile strict \
  --out $R/link_gpu_strict.jsonl --cases 3 --timeout-case 20 -q > $R/link_gpu_strict.log 2>&1
echo "link_gpu strict exit=$? s=$(( $(date +%s) - t0 ))" | tee -a $R/times.txt
python3 tests/integration/expect_outcomes.py $R/link_gpu_strict.jsonl tests/data/link_gpu 2>&1 | tee $R/link_gpu_expect.txt | tail -2
pack
DATA=.carry/data
TASKS=L1/1,L1/3,L1/9,L1/12,L1/19,L1/21,L1/23,L1/26,L1/33,L1/36,L1/40,L1/88,L1/95,L1/97
for p in strict off; do
  t0=$(date +%s)
  timeout 170 build/kgym eval --device cuda --suite $DATA/kernelbench --candidates $DATA/cuda-l1/h100_level1.jsonl \
    --tasks $TASKS --profile $p --jobs 14 --out $R/cudal1_$p.jsonl -q > $R/cudal1_$p.log 2>&1
  echo "cudal1 $p exit=$? s=$(( $(date +%s) - t0 ))" | tee -a $R/times.txt
  pack
done
build/kgym check --built $KGYM_CACHE_DIR/build --profile strict > $R/built_strict.txt 2>&1; echo "built strict exit=$?" | tee -a $R/times.txt
build/kgym check --built $KGYM_CACHE_DIR/build --profile hybrid --format jsonl > $R/built_hybrid.jsonl 2>&1
tail -1 $R/built_strict.txt; grep -c REJECTED $R/built_strict.txt
python3 - $R <<'PY'
import json, sys, collections
r = sys.argv[1]
for p in ("strict", "off"):
    try:
        vs = [json.loads(l) for l in open(f"{r}/cudal1_{p}.jsonl")]
    except OSError:
        continue
    c = collections.Counter(v["outcome"] for v in vs)
    link = [(v["task_id"], v["candidate_id"], v["messages"][0][:200]) for v in vs if v["messages"] and v["messages"][0].startswith("[link]")]
    print(p, len(vs), dict(c), "link rejections:", len(link))
    for x in sorted((v["task_id"], v["outcome"]) for v in vs): print("  ", *x)
PY
pack
