#!/usr/bin/env bash
# Session 9 GPU run 2: QuietDevice + sliced comparisons + cached memory released:
# GPU test (no honest), then the honest set at full size on 7 level-1 tasks incl. 19_ReLU (6.4 GB tensors).
set -u
mkdir -p build && cp .carry/bin/kgym build/kgym && chmod +x build/kgym
R=$OUT/r; mkdir -p $R
stamp() { date +%s.%N; }
since() { python3 -c "import time;print(round(time.time()-$1,1))"; }
(cd tests/python && PYTHONPATH=../../python timeout 60 python3 -m pytest -q test_integrity.py test_wall_check.py > $R/pytest.log 2>&1; echo "pytest exit=$?" >> $R/pytest.log)
tail -2 $R/pytest.log
t=$(stamp)
KGYM_GPU_TEST_HONEST=0 KGYM_GPU_TEST_OUT=$R/gpu_test timeout 230 bash tests/integration/test_gpu_eval.sh build/kgym . > $R/gpu_test.log 2>&1
echo "gpu_test exit=$? s=$(since $t)" | tee -a $R/times.txt
grep -E "passed, |FAIL" $R/gpu_test.log
t=$(stamp)
(while true; do nvidia-smi --query-gpu=memory.used --format=csv,noheader >> $R/mem.txt; sleep 2; done) & MP=$!
OUT=$R/full SCALE=1 JOBS=1 EVAL_S=260 PLAIN_S=60 TASKS='19_ReLU,1_Square*,40_*,88_*,47_*' KGYM_DATA=.carry/data bash bench/honest_gpu.sh > $R/full_run.log 2>&1
echo "full exit=$? s=$(since $t)" | tee -a $R/times.txt
kill $MP
grep -E "passed, |Geometric|Device-phase|exit=|FAIL" $R/full_run.log | cut -c1-300
sort -n $R/mem.txt | tail -1
cd $OUT && tar czf res.tgz r
