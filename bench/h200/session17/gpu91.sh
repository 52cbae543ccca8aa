#!/usr/bin/env bash
# Session 17 GPU run 2: gate 2's link check on the H200.
#  1) tests/data/link_gpu (own CUDA driver context, -lcuda) under strict (expect policy_rejected by
#     the link check) and off (it runs; an honest ReLU otherwise);
#  2) the 14 CUDA-L1 level-1 tasks of bench/gpu_cuda_l1.sh under strict (the issue's re-run), then
#     under off with the same build cache, and `kgym check --built` over every object built: the
#     link check's findings on real candidates' builds (false rejections would show here);
#  3) the GPU integration test (examples, adversarial, GPU hacks; strict where it says so), unless
#     SKIP_GPU_TEST=1 (run 3, gpu92.sh).
# Results packed after each step into $OUT/res.tgz.
set -u
mkdir -p build && gunzip -c .carry/bin/kgym.gz > build/kgym && chmod +x build/kgym
R=$OUT/r; mkdir -p $R
pack() { (cd $OUT && tar czf res.tgz r); }
export TORCH_CUDA_ARCH_LIST=9.0 KGYM_CACHE_DIR=/tmp/kgym-cache-s17
which nm > $R/nm.txt 2>&1; nm --version | head -1 >> $R/nm.txt
S=examples/suite
t0=$(date +%s)
for p in strict off; do
  timeout 150 build/kgym eval --device cuda --suite $S --candidates tests/data/link_gpu --profile $p \
    --out $R/link_gpu_$p.jsonl --cases 3 --timeout-case 20 -q > $R/link_gpu_$p.log 2>&1
  echo "link_gpu $p exit=$? s=$(( $(date +%s) - t0 ))" | tee -a $R/times.txt
done
python3 tests/integration/expect_outcomes.py $R/link_gpu_strict.jsonl tests/data/link_gpu 2>&1 | tee $R/link_gpu_expect.txt | tail -2
python3 -c "
import json,sys
for p in ('strict','off'):
    for l in open('$R/link_gpu_'+p+'.jsonl'):
        v=json.loads(l); print(p, v['outcome'], v['gate'], (v['messages'] or [''])[0][:300], json.dumps(v['measurements'].get('link'))[:400])
" 2>&1 | tee $R/link_gpu_summary.txt
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
    for x in link: print("  ", x)
PY
pack
[ "${SKIP_GPU_TEST:-0}" = 1 ] && exit 0
t0=$(date +%s)
KGYM_GPU_TEST_HONEST=0 KGYM_GPU_TEST_OUT=$R/gpu_test timeout 170 bash tests/integration/test_gpu_eval.sh build/kgym . > $R/gpu_test.log 2>&1
echo "gpu_test exit=$? s=$(( $(date +%s) - t0 ))" | tee -a $R/times.txt
tail -4 $R/gpu_test.log
pack
