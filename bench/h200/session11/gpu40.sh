#!/usr/bin/env bash
# Session 11 GPU run 1: everything after b1e1409 (dispatcher fingerprint, rt14/rt15 fixes) for the first time on a GPU.
# pytest (devicecopy, integrity, wall check), GPU test (no honest), honest set x0.1.
set -u
mkdir -p build && cp .carry/bin/kgym build/kgym && chmod +x build/kgym
R=$OUT/r; mkdir -p $R
stamp() { date +%s.%N; }
since() { python3 -c "import time;print(round(time.time()-$1,1))"; }
(cd tests/python && PYTHONPATH=../../python timeout 90 python3 -m pytest -q test_devicecopy.py test_integrity.py test_wall_check.py > $R/pytest.log 2>&1; echo "pytest exit=$?" >> $R/pytest.log)
tail -4 $R/pytest.log
t=$(stamp)
KGYM_GPU_TEST_HONEST=0 KGYM_GPU_TEST_OUT=$R/gpu_test timeout 210 bash tests/integration/test_gpu_eval.sh build/kgym . > $R/gpu_test.log 2>&1
echo "gpu_test exit=$? s=$(since $t)" | tee -a $R/times.txt
grep -E "passed, |FAIL" $R/gpu_test.log | cut -c1-300
OUT=$R/honest SCALE=0.1 JOBS=1 EVAL_S=140 PLAIN_S=45 KGYM_DATA=.carry/data bash bench/honest_gpu.sh > $R/honest_run.log 2>&1
grep -E "passed, |Geometric|Device-phase|FAIL|exit=" $R/honest_run.log | cut -c1-250
cd $OUT && tar czf res.tgz r
