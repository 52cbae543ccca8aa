#!/usr/bin/env bash
# Session 20 GPU run 4: the last code (rt35's fixes, the int64 wall-file size) on the H200, the
# sets run 3 did not finish within its 400 s (the GPU test was cut in its GPU-hack set): link_gpu
# and the honest Triton set under strict (the torch-exports rule on this machine's torch), the
# GPU-only hacks, and `kgym check --built` over what they built.
set -u
mkdir -p build && gunzip -c .carry/bin/kgym.gz > build/kgym && chmod +x build/kgym
R=$OUT/r; mkdir -p $R
pack() { (cd $OUT && tar czf res.tgz r); }
export TORCH_CUDA_ARCH_LIST=9.0 KGYM_CACHE_DIR=/tmp/kgym-cache-s20d
L1=$PWD/.carry/data/kernelbench/level1
run() { local name=$1; shift; local t0=$(date +%s); timeout 170 build/kgym eval --device cuda "$@" --out $R/$name.jsonl -q > $R/$name.log 2>&1
  echo "$name exit=$? s=$(( $(date +%s) - t0 ))" | tee -a $R/times.txt; pack; }
run link_gpu --suite examples/suite --candidates tests/data/link_gpu --profile strict --cases 3 --timeout-case 20
python3 tests/integration/expect_outcomes.py $R/link_gpu.jsonl tests/data/link_gpu 2>&1 | tail -1
run honest --suite $L1 --candidates tests/data/honest_gpu --profile strict --scale 0.1 --no-compile-baseline --cases 3
python3 tests/integration/expect_outcomes.py $R/honest.jsonl tests/data/honest_gpu 2>&1 | tail -1
run gpu_hacks --suite examples/suite --candidates tests/data/hacks_gpu --profile off --cases 3 --timeout-case 10 --jobs 1
python3 tests/integration/expect_outcomes.py $R/gpu_hacks.jsonl tests/data/hacks_gpu 2>&1 | tail -1
timeout 60 build/kgym check --built $KGYM_CACHE_DIR/build > $R/built.txt 2>&1
echo "check --built exit=$?"; grep -E "REJECTED|checked" $R/built.txt | cut -c1-200 | head
python3 - $R <<'PY' | tee $R/summary.txt
import glob, json, sys
for f in sorted(glob.glob(sys.argv[1] + "/*.jsonl")):
    rows = [json.loads(l) for l in open(f) if l.strip()]
    link = [(v["candidate_id"], v["outcome"]) for v in rows if (v["measurements"].get("link") or {}).get("findings")]
    notes = {(v["measurements"].get("link") or {}).get("note") for v in rows} - {None, ""}
    spot = sum((v["measurements"].get("candidate_timing") or {}).get("spot_checked_calls", 0) for v in rows)
    print(f.split("/")[-1], len(rows), "verdicts; link rejections", link, "notes", notes, "spot-checked", spot)
PY
pack
