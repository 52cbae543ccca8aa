#!/usr/bin/env bash
# Session 16 GPU runs 1 and 2. MICRO=1: the wall check's harness cost per call (bench/harness_percall.py).
# PART=1: session 15's review commit (run 1) and the floor fixes (run 2) on the H200 (pytest: zygote, fastcompare,
# devicecopy, case inputs; GPU hacks and adversarial evals with their expectations), then the
# floor diagnostic: eager's very matmul alone, with a forked busy child, with a forked idle child,
# and rt2_sigstop_reference, three copies each, one job, with the wall check's raw requests
# (wall_check_*_ms) in each verdict. Results packed after each step into $OUT/res.tgz.
set -u
mkdir -p build && gunzip -c .carry/bin/kgym.gz > build/kgym && chmod +x build/kgym
R=$OUT/r; mkdir -p $R
pack() { (cd $OUT && tar czf res.tgz r); }
uname -r > $R/kernel.txt; git log --oneline -1 > $R/commit.txt 2>/dev/null
S=examples/suite
if [ "${MICRO:-0}" = 1 ]; then
timeout 120 python3 bench/harness_percall.py --task examples/suite/level1/1_Square_matrix_multiplication_.py --n 500 --reps 7 \
  --out $R/percall_matmul.json > $R/percall_matmul.txt 2>&1; cat $R/percall_matmul.txt
timeout 60 python3 bench/harness_percall.py --task examples/suite/level1/19_ReLU.py --n 500 --reps 7 \
  --out $R/percall_relu.json > $R/percall_relu.txt 2>&1; cat $R/percall_relu.txt
pack
fi
if [ "${PART:-1}" = 1 ]; then
[ "${SKIP_PYTEST:-0}" = 1 ] || (cd tests/python && PYTHONPATH=../../python timeout 150 python3 -m pytest -q test_zygote.py test_fastcompare.py test_devicecopy.py test_case_inputs.py > $R/pytest.log 2>&1; echo "pytest exit=$?" >> $R/pytest.log)
tail -3 $R/pytest.log; pack
t0=$(date +%s)
timeout 100 build/kgym eval --device cuda --suite $S --candidates $(bash bench/h200/session16/floor_diag/make_copies.sh /tmp/kgym_floor_diag) --profile off \
  --out $R/floor_diag.jsonl --cases 3 --timeout-case 10 --jobs 1 -q > $R/floor.log 2>&1
echo "floor diag exit=$? s=$(( $(date +%s) - t0 ))" | tee -a $R/times.txt
pack
t0=$(date +%s)
timeout 100 build/kgym eval --device cuda --suite $S --candidates tests/data/hacks_gpu --profile off \
  --out $R/gpu_hacks.jsonl --cases 3 --timeout-case 10 --jobs 1 -q > $R/hacks.log 2>&1
echo "hacks eval exit=$? s=$(( $(date +%s) - t0 ))" | tee -a $R/times.txt
python3 tests/integration/expect_outcomes.py $R/gpu_hacks.jsonl tests/data/hacks_gpu 2>&1 | tee $R/hacks_expect.txt | grep -E "passed, |FAIL" | cut -c1-300
pack
t0=$(date +%s)
timeout 180 build/kgym eval --device cuda --suite $S --candidates tests/data/candidates --profile off \
  --out $R/adversarial.jsonl --cases 3 --timeout-case 10 -q > $R/adv.log 2>&1
echo "adversarial eval exit=$? s=$(( $(date +%s) - t0 ))" | tee -a $R/times.txt
python3 tests/integration/expect_outcomes.py $R/adversarial.jsonl tests/data/candidates 2>&1 | tee $R/adv_expect.txt | grep -E "passed, |FAIL" | cut -c1-300
pack
fi
