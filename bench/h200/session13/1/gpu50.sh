#!/usr/bin/env bash
# Session 13 GPU run 1: sessions 11 (late) and 12's changes on the H200 for the first time:
# the process-call restriction (capabilities + seccomp), fastcompare's warm-up and unspecialised
# integer arguments, PausedTree's stop wait, the disk guard (rt18, rt19 fixes), TCP and abstract
# sockets denied. pytest (sandbox, fastcompare, devicecopy); GPU test; disk candidates on CUDA;
# honest set at full size (overhead). Results packed after each step.
set -u
mkdir -p build && cp .carry/bin/kgym build/kgym && chmod +x build/kgym
R=$OUT/r; mkdir -p $R
stamp() { date +%s.%N; }
since() { python3 -c "import time;print(round(time.time()-$1,1))"; }
pack() { (cd $OUT && tar czf res.tgz r); }
uname -r > $R/kernel.txt
(cd tests/python && PYTHONPATH=../../python timeout 150 python3 -m pytest -q test_zygote.py test_fastcompare.py test_devicecopy.py > $R/pytest.log 2>&1; echo "pytest exit=$?" >> $R/pytest.log)
tail -4 $R/pytest.log
pack
t=$(stamp)
KGYM_GPU_TEST_HONEST=0 KGYM_GPU_TEST_OUT=$R/gpu_test timeout 220 bash tests/integration/test_gpu_eval.sh build/kgym . > $R/gpu_test.log 2>&1
echo "gpu_test exit=$? s=$(since $t)" | tee -a $R/times.txt
grep -E "passed, |FAIL" $R/gpu_test.log | cut -c1-300
pack
t=$(stamp)
mkdir -p $R/disk/tmp
(export KGYM_CACHE_DIR=$R/disk/cache TMPDIR=$R/disk/tmp KGYM_DISK_QUOTA_MB=64 KGYM_BUILD_KEEP_MB=16
 timeout 100 build/kgym eval --device cuda --suite examples/suite --candidates tests/data/disk --profile off --cases 2 \
   --no-timing -q --out $R/disk/v.jsonl > $R/disk/log 2>&1; echo "disk eval exit=$?" >> $R/disk/log
 python3 tests/integration/expect_outcomes.py $R/disk/v.jsonl tests/data/disk >> $R/disk/log 2>&1; echo "disk expect exit=$?" >> $R/disk/log
 du -sm $R/disk/tmp $R/disk/cache >> $R/disk/log 2>&1; rm -rf $R/disk/tmp $R/disk/cache)
echo "disk s=$(since $t)" | tee -a $R/times.txt
tail -5 $R/disk/log
pack
t=$(stamp)
(while true; do nvidia-smi --query-gpu=memory.used --format=csv,noheader >> $R/mem.txt; sleep 2; done) & MP=$!
OUT=$R/full SCALE=1 JOBS=1 EVAL_S=170 PLAIN_S=50 TASKS='19_ReLU,23_*,36_*,1_Square*,40_*,47_*,88_*' KGYM_DATA=.carry/data bash bench/honest_gpu.sh > $R/full_run.log 2>&1
echo "full exit=$? s=$(since $t)" | tee -a $R/times.txt
kill $MP
grep -E "passed, |Geometric|Device-phase|exit=|FAIL" $R/full_run.log | grep -v "no verdict" | cut -c1-300
sort -n $R/mem.txt | tail -1
pack
