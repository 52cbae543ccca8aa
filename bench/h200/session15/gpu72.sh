#!/usr/bin/env bash
# Session 15 GPU run 3: the session's code on the H200. pytest (zygote, fastcompare, devicecopy,
# case inputs: the GPU word sums against the CPU's); GPU hacks and adversarial evals with their
# expectations; full size, 7 honest rows + plain timing; --scale 0.1, 15 honest rows + plain timing.
# PART=1: pytest and the hack evals; PART=2: the honest sets (one call may take at most 600 s).
# Results packed after each step into $OUT/res.tgz (only it comes back).
set -u
mkdir -p build && gunzip -c .carry/bin/kgym.gz > build/kgym && chmod +x build/kgym
R=$OUT/r; mkdir -p $R
pack() { (cd $OUT && tar czf res.tgz r); }
uname -r > $R/kernel.txt
if [ "${PART:-1}" = 1 ]; then
(cd tests/python && PYTHONPATH=../../python timeout 150 python3 -m pytest -q test_zygote.py test_fastcompare.py test_devicecopy.py test_case_inputs.py > $R/pytest.log 2>&1; echo "pytest exit=$?" >> $R/pytest.log)
tail -3 $R/pytest.log; pack
S=examples/suite
t0=$(date +%s)
timeout 150 build/kgym eval --device cuda --suite $S --candidates tests/data/hacks_gpu --profile off \
  --out $R/gpu_hacks.jsonl --cases 3 --timeout-case 10 --jobs 1 -q > $R/hacks.log 2>&1
echo "hacks eval exit=$? s=$(( $(date +%s) - t0 ))" | tee -a $R/times.txt
python3 tests/integration/expect_outcomes.py $R/gpu_hacks.jsonl tests/data/hacks_gpu 2>&1 | tee $R/hacks_expect.txt | grep -E "passed, |FAIL" | cut -c1-300
pack
t0=$(date +%s)
timeout 200 build/kgym eval --device cuda --suite $S --candidates tests/data/candidates --profile off \
  --out $R/adversarial.jsonl --cases 3 --timeout-case 10 -q > $R/adv.log 2>&1
echo "adversarial eval exit=$? s=$(( $(date +%s) - t0 ))" | tee -a $R/times.txt
python3 tests/integration/expect_outcomes.py $R/adversarial.jsonl tests/data/candidates 2>&1 | tee $R/adv_expect.txt | grep -E "passed, |FAIL" | cut -c1-300
pack
fi
if [ "${PART:-1}" = 2 ]; then
(while true; do nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits >> $R/mem.txt; sleep 1; done) & MP=$!
t0=$(date +%s)
OUT=$R/full SCALE=1 JOBS=1 EVAL_S=150 PLAIN_S=60 TASKS='19_ReLU,23_*,36_*,1_Square*,40_*,47_*,88_*' KGYM_DATA=.carry/data bash bench/honest_gpu.sh > $R/full_run.log 2>&1
echo "full exit=$? s=$(( $(date +%s) - t0 ))" | tee -a $R/times.txt
kill $MP; sort -n $R/mem.txt | tail -1 | sed 's/^/peak MiB /' | tee -a $R/times.txt
grep -E "passed, |Geometric|Device-phase|FAIL" $R/full_run.log | grep -v "no verdict" | cut -c1-300
pack
t0=$(date +%s)
OUT=$R/honest SCALE=0.1 JOBS=1 EVAL_S=110 PLAIN_S=40 KGYM_DATA=.carry/data bash bench/honest_gpu.sh > $R/honest_run.log 2>&1
echo "honest exit=$? s=$(( $(date +%s) - t0 ))" | tee -a $R/times.txt
grep -E "passed, |Geometric|Device-phase|FAIL" $R/honest_run.log | cut -c1-250
pack
fi
