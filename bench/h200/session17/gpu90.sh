#!/usr/bin/env bash
# Session 17 GPU run 1: session 16's last judge change (a baseline loses its own window overhead where larger)
# run on the H200 as a whole. Adversarial and GPU hacks with their expectations, the floor diagnostic (12 copies of
# eager's very matmul), the honest sets at --scale 0.1 (15 rows) and full size (7 rows) with plain
# timing beside them. Results packed after each step into $OUT/res.tgz.
set -u
mkdir -p build && gunzip -c .carry/bin/kgym.gz > build/kgym && chmod +x build/kgym
R=$OUT/r; mkdir -p $R
pack() { (cd $OUT && tar czf res.tgz r); }
S=examples/suite
t0=$(date +%s)
timeout 180 build/kgym eval --device cuda --suite $S --candidates tests/data/candidates --profile off \
  --out $R/adversarial.jsonl --cases 3 --timeout-case 10 -q > $R/adv.log 2>&1
echo "adversarial eval exit=$? s=$(( $(date +%s) - t0 ))" | tee -a $R/times.txt
python3 tests/integration/expect_outcomes.py $R/adversarial.jsonl tests/data/candidates 2>&1 | tee $R/adv_expect.txt | grep -E "passed, |FAIL" | cut -c1-300
pack
t0=$(date +%s)
timeout 80 build/kgym eval --device cuda --suite $S --candidates $(bash bench/h200/session16/floor_diag/make_copies.sh /tmp/kgym_floor_diag) --profile off \
  --out $R/floor_diag.jsonl --cases 3 --timeout-case 10 --jobs 1 -q > $R/floor.log 2>&1
echo "floor diag exit=$? s=$(( $(date +%s) - t0 ))" | tee -a $R/times.txt
python3 tests/integration/expect_outcomes.py $R/floor_diag.jsonl /tmp/kgym_floor_diag 2>&1 | tee $R/floor_expect.txt | grep -E "passed, |FAIL" | cut -c1-300
pack
t0=$(date +%s)
OUT=$R/honest SCALE=0.1 JOBS=1 EVAL_S=100 PLAIN_S=35 KGYM_DATA=.carry/data timeout 150 bash bench/honest_gpu.sh > $R/honest_run.log 2>&1
echo "honest exit=$? s=$(( $(date +%s) - t0 ))" | tee -a $R/times.txt
grep -E "passed, |Geometric|Device-phase|FAIL" $R/honest_run.log | cut -c1-250
pack
t0=$(date +%s)
OUT=$R/full SCALE=1 JOBS=1 EVAL_S=90 PLAIN_S=40 TASKS='19_ReLU,23_*,36_*,1_Square*,40_*,47_*,88_*' KGYM_DATA=.carry/data timeout 140 bash bench/honest_gpu.sh > $R/full_run.log 2>&1
echo "full exit=$? s=$(( $(date +%s) - t0 ))" | tee -a $R/times.txt
grep -E "passed, |Geometric|Device-phase|FAIL" $R/full_run.log | grep -v "no verdict" | cut -c1-300
pack
t0=$(date +%s)
timeout 60 build/kgym eval --device cuda --suite $S --candidates tests/data/hacks_gpu --profile off \
  --out $R/gpu_hacks.jsonl --cases 3 --timeout-case 10 --jobs 1 -q > $R/hacks.log 2>&1
echo "hacks eval exit=$? s=$(( $(date +%s) - t0 ))" | tee -a $R/times.txt
python3 tests/integration/expect_outcomes.py $R/gpu_hacks.jsonl tests/data/hacks_gpu 2>&1 | tee $R/hacks_expect.txt | grep -E "passed, |FAIL" | cut -c1-300
pack
