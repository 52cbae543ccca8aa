#!/usr/bin/env bash
# Session 20 GPU run 2: the spot check held to the rechecked calls' agreement (f39dc3d) on the
# H200. 1) the labelled GPU integration test (examples, adversarial incl. the bfloat16 downgrade
# at every third timed call, GPU-only, GPU hacks, link_gpu, honest Triton under strict at
# --scale 0.1); 2) the whole honest set at full size under strict (the conv rows' eager reference
# is TF32); then every verdict's spot-checked and spot-failed calls.
set -u
mkdir -p build && gunzip -c .carry/bin/kgym.gz > build/kgym && chmod +x build/kgym
R=$OUT/r; mkdir -p $R
pack() { (cd $OUT && tar czf res.tgz r); }
export TORCH_CUDA_ARCH_LIST=9.0 KGYM_CACHE_DIR=/tmp/kgym-cache-s20b
t0=$(date +%s)
KGYM_KERNELBENCH_L1=$PWD/.carry/data/kernelbench/level1 KGYM_GPU_TEST_OUT=$R/gpu_test \
  timeout ${GPU_TEST_S:-380} bash tests/integration/test_gpu_eval.sh build/kgym . > $R/gpu_test.log 2>&1
echo "gpu_test exit=$? s=$(( $(date +%s) - t0 ))" | tee -a $R/times.txt
grep -E "passed, |FAIL|ok$" $R/gpu_test.log | cut -c1-300
pack
t0=$(date +%s)
timeout 170 build/kgym eval --device cuda --suite .carry/data/kernelbench/level1 --candidates tests/data/honest_gpu --profile strict \
  --no-compile-baseline --jobs 1 --out $R/full.jsonl -q > $R/full.log 2>&1
echo "full exit=$? s=$(( $(date +%s) - t0 ))" | tee -a $R/times.txt
python3 tests/integration/expect_outcomes.py $R/full.jsonl tests/data/honest_gpu 2>&1 | grep -v "no verdict" | tail -3
pack
python3 - $R <<'PY' | tee $R/summary.txt
import glob, json, sys
for f in sorted(glob.glob(sys.argv[1] + "/**/*.jsonl", recursive=True)):
    n = checked = 0
    bad = []
    for l in open(f):
        try:
            v = json.loads(l)
        except ValueError:
            continue
        n += 1
        t = v.get("measurements", {}).get("candidate_timing") or {}
        checked += t.get("spot_checked_calls", 0)
        if t.get("spot_failed_calls"):
            bad.append((v["candidate_id"], v["outcome"], t["spot_failed_calls"][:6], (t.get("spot_detail") or "")[:160]))
    print(f.split("/r/")[-1], "verdicts", n, "spot-checked calls", checked, "with spot failures", len(bad))
    for b in bad:
        print("   ", b)
PY
pack
