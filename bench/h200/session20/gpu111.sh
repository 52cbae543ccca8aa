#!/usr/bin/env bash
# Session 20 GPU run 3: red team rt35's fixes (633da97) on the H200. The link check now reads the
# C symbols torch's own libraries export (libtorch_cuda too, on this machine's torch) and rejects
# an import of any but torch's plumbing. 1) the labelled GPU integration test (examples,
# adversarial, GPU-only, GPU hacks, link_gpu and honest Triton under strict at --scale 0.1);
# 2) `kgym check --built` over every extension that test built (honest CUDA ones must pass);
# 3) every verdict's link findings, spot-checked and spot-failed calls.
set -u
mkdir -p build && gunzip -c .carry/bin/kgym.gz > build/kgym && chmod +x build/kgym
R=$OUT/r; mkdir -p $R
pack() { (cd $OUT && tar czf res.tgz r); }
export TORCH_CUDA_ARCH_LIST=9.0 KGYM_CACHE_DIR=/tmp/kgym-cache-s20c
t0=$(date +%s)
KGYM_KERNELBENCH_L1=$PWD/.carry/data/kernelbench/level1 KGYM_GPU_TEST_OUT=$R/gpu_test \
  timeout ${GPU_TEST_S:-400} bash tests/integration/test_gpu_eval.sh build/kgym . > $R/gpu_test.log 2>&1
echo "gpu_test exit=$? s=$(( $(date +%s) - t0 ))" | tee -a $R/times.txt
grep -E "passed, |FAIL|ok$" $R/gpu_test.log | cut -c1-300
pack
timeout 120 build/kgym check --built $KGYM_CACHE_DIR/build > $R/built.txt 2>&1
echo "check --built exit=$?"; grep -E "REJECTED|checked" $R/built.txt | cut -c1-260 | head -30
pack
python3 - $R <<'PY' | tee $R/summary.txt
import glob, json, sys
for f in sorted(glob.glob(sys.argv[1] + "/**/*.jsonl", recursive=True)):
    n = checked = 0
    bad, link = [], []
    for l in open(f):
        try:
            v = json.loads(l)
        except ValueError:
            continue
        n += 1
        t = v.get("measurements", {}).get("candidate_timing") or {}
        checked += t.get("spot_checked_calls", 0)
        if t.get("spot_failed_calls"):
            bad.append((v["candidate_id"], v["outcome"], t["spot_failed_calls"][:4]))
        lk = v.get("measurements", {}).get("link") or {}
        if lk.get("findings"):
            link.append((v["candidate_id"], v["outcome"], [x.get("message", "")[:140] for x in lk["findings"]][:2]))
        if lk.get("note"):
            link.append((v["candidate_id"], "note", lk["note"][:160]))
    print(f.split("/r/")[-1], "verdicts", n, "spot-checked calls", checked, "spot failures", len(bad), "link findings/notes", len(link))
    for b in bad + link:
        print("   ", b)
PY
pack
