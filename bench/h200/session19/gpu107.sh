#!/usr/bin/env bash
# Session 19 GPU run 3: the spot check of every timed output and the op watch (red team rt33's
# fixes) on the H200. 1) the labelled GPU integration test (examples, adversarial, GPU-only, GPU
# hacks, link_gpu, honest Triton under strict at --scale 0.1); 2) the honest set at full size (7
# rows) under strict; then a summary of every verdict: op watch status, spot-checked calls, spot
# failures and ATen compute seen.
set -u
mkdir -p build && gunzip -c .carry/bin/kgym.gz > build/kgym && chmod +x build/kgym
R=$OUT/r; mkdir -p $R
pack() { (cd $OUT && tar czf res.tgz r); }
export TORCH_CUDA_ARCH_LIST=9.0 KGYM_CACHE_DIR=/tmp/kgym-cache-s19c
t0=$(date +%s)
KGYM_KERNELBENCH_L1=$PWD/.carry/data/kernelbench/level1 KGYM_GPU_TEST_OUT=$R/gpu_test \
  timeout ${GPU_TEST_S:-420} bash tests/integration/test_gpu_eval.sh build/kgym . > $R/gpu_test.log 2>&1
echo "gpu_test exit=$? s=$(( $(date +%s) - t0 ))" | tee -a $R/times.txt
grep -E "passed, |FAIL|ok$" $R/gpu_test.log | cut -c1-300
pack
t0=$(date +%s)
timeout 130 build/kgym eval --device cuda --suite .carry/data/kernelbench/level1 --candidates tests/data/honest_gpu --profile strict \
  --tasks '19_ReLU,23_*,36_*,1_Square*,40_*,47_*,88_*' --no-compile-baseline --jobs 1 --out $R/full.jsonl -q > $R/full.log 2>&1
echo "full exit=$? s=$(( $(date +%s) - t0 ))" | tee -a $R/times.txt
python3 tests/integration/expect_outcomes.py $R/full.jsonl tests/data/honest_gpu 2>&1 | grep -v "no verdict" | tail -3
pack
python3 - $R <<'PY' | tee $R/summary.txt
import glob, json, sys, collections
rows = []
for f in sorted(glob.glob(sys.argv[1] + "/**/*.jsonl", recursive=True)):
    for l in open(f):
        try:
            v = json.loads(l)
        except Exception:
            continue
        rows.append((f.split("/r/")[-1], v))
watch = collections.Counter((v["measurements"].get("launch") or {}).get("op_watch", "-") for _, v in rows)
print("verdicts", len(rows), "op_watch", dict(watch))
for f, v in rows:
    t = v["measurements"].get("candidate_timing") or {}
    L = v["measurements"].get("launch") or {}
    if t.get("spot_failed_calls") or t.get("spot_unreadable") or L.get("aten_compute_calls"):
        print(f, v["candidate_id"], v["outcome"], "spot_failed", t.get("spot_failed_calls"), t.get("spot_detail", "")[:120],
              "aten", L.get("aten_compute_calls"), [o["name"] for o in L.get("aten_ops", []) if o["category"] == "compute"][:5])
passed = [(f, v) for f, v in rows if v["outcome"] == "passed"]
print("passed", len(passed), "with spot checks on every timed call:",
      sum(1 for _, v in passed if (v["measurements"]["candidate_timing"] or {}).get("spot_checked_calls") == len(v["measurements"]["candidate_timing"]["times_ms"])))
PY
pack
