#!/usr/bin/env bash
# Session 14 GPU run 2: workers keep their orphans (child subreaper, seccomp), GPU holders among the
# zygote orphans only while one candidate runs; baseline floor requests only where they can bind;
# one basis for a speedup whose candidate is taken by its floor.
# pytest (sandbox, fastcompare, devicecopy); GPU test; honest set at x0.1; honest at full size
# (overhead per phase). Results packed after each step into $OUT/res.tgz.
set -u
mkdir -p build && cp .carry/bin/kgym build/kgym && chmod +x build/kgym
R=$OUT/r; mkdir -p $R
stamp() { date +%s.%N; }
since() { python3 -c "import time;print(round(time.time()-$1,1))"; }
pack() { (cd $OUT && tar czf res.tgz r); }
uname -r > $R/kernel.txt
git log --oneline -1 > $R/commit.txt 2>/dev/null
(cd tests/python && PYTHONPATH=../../python timeout 120 python3 -m pytest -q test_zygote.py > $R/pytest.log 2>&1; echo "pytest exit=$?" >> $R/pytest.log)
tail -3 $R/pytest.log
pack
if [ "${SKIP_GPU_TEST:-0}" != 1 ]; then
t=$(stamp)
KGYM_GPU_TEST_HONEST=0 KGYM_GPU_TEST_OUT=$R/gpu_test timeout 200 bash tests/integration/test_gpu_eval.sh build/kgym . > $R/gpu_test.log 2>&1
echo "gpu_test exit=$? s=$(since $t)" | tee -a $R/times.txt
grep -E "passed, |FAIL" $R/gpu_test.log | cut -c1-300
pack
fi
t=$(stamp)
(while true; do nvidia-smi --query-gpu=memory.used --format=csv,noheader >> $R/mem.txt; sleep 2; done) & MP=$!
OUT=$R/full SCALE=1 JOBS=1 EVAL_S=150 PLAIN_S=45 TASKS='19_ReLU,23_*,36_*,1_Square*,40_*,47_*,88_*' KGYM_DATA=.carry/data bash bench/honest_gpu.sh > $R/full_run.log 2>&1
echo "full exit=$? s=$(since $t)" | tee -a $R/times.txt
kill $MP
grep -E "passed, |Geometric|Device-phase|exit=|FAIL" $R/full_run.log | grep -v "no verdict" | cut -c1-300
sort -n $R/mem.txt | tail -1
pack
t=$(stamp)
OUT=$R/honest SCALE=0.1 JOBS=1 EVAL_S=110 PLAIN_S=40 KGYM_DATA=.carry/data bash bench/honest_gpu.sh > $R/honest_run.log 2>&1
echo "honest exit=$? s=$(since $t)" | tee -a $R/times.txt
grep -E "passed, |Geometric|Device-phase|FAIL|exit=" $R/honest_run.log | cut -c1-250
pack
