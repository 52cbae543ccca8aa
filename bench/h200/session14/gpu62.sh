#!/usr/bin/env bash
# Session 14 GPU run 3 (little device time left): the GPU test's hacks_gpu and adversarial evals
# on their own, verdicts written straight to $OUT (run 2's GPU test ran past its 200 s limit in
# hacks_gpu and lost its verdict files), each checked against its expectations.
set -u
mkdir -p build && cp .carry/bin/kgym build/kgym && chmod +x build/kgym
R=$OUT/r; mkdir -p $R
git log --oneline -1 > $R/commit.txt 2>/dev/null
S=examples/suite
t0=$(date +%s)
build/kgym eval --device cuda --suite $S --candidates tests/data/hacks_gpu --profile off \
  --out $R/gpu_hacks.jsonl --cases 3 --timeout-case 10 --jobs 1 -q > $R/hacks.log 2>&1
echo "hacks eval exit=$? s=$(( $(date +%s) - t0 ))" | tee -a $R/times.txt
python3 tests/integration/expect_outcomes.py $R/gpu_hacks.jsonl tests/data/hacks_gpu 2>&1 | tee $R/hacks_expect.txt | grep -E "passed, |FAIL" | cut -c1-300
(cd $OUT && tar czf res.tgz r)
t0=$(date +%s)
build/kgym eval --device cuda --suite $S --candidates tests/data/candidates --profile off \
  --out $R/adversarial.jsonl --cases 3 --timeout-case 10 -q > $R/adv.log 2>&1
echo "adversarial eval exit=$? s=$(( $(date +%s) - t0 ))" | tee -a $R/times.txt
python3 tests/integration/expect_outcomes.py $R/adversarial.jsonl tests/data/candidates 2>&1 | tee $R/adv_expect.txt | grep -E "passed, |FAIL" | cut -c1-300
(cd $OUT && tar czf res.tgz r)
