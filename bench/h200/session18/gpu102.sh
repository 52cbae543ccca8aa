#!/usr/bin/env bash
# Session 18 GPU run 3: red team rt29's fixes (the forward path's special methods, values and base
# classes; BLAS spellings; AOTInductor's shim; the link check's linked libraries, readelf -d).
#  1) the labelled GPU integration test as ctest runs it, now with tests/data/link_gpu under strict
#     (own_context rejected, honest_cuda passed: no false rejection of an honest CUDA build);
#  2) `kgym check --built` over every object the test built, under strict and hybrid.
set -u
mkdir -p build && gunzip -c .carry/bin/kgym.gz > build/kgym && chmod +x build/kgym
R=$OUT/r; mkdir -p $R
pack() { (cd $OUT && tar czf res.tgz r); }
export TORCH_CUDA_ARCH_LIST=9.0 KGYM_CACHE_DIR=/tmp/kgym-cache-s18c
t0=$(date +%s)
KGYM_KERNELBENCH_L1=$PWD/.carry/data/kernelbench/level1 KGYM_GPU_TEST_OUT=$R/gpu_test \
  timeout ${GPU_TEST_S:-520} bash tests/integration/test_gpu_eval.sh build/kgym . > $R/gpu_test.log 2>&1
echo "gpu_test exit=$? s=$(( $(date +%s) - t0 ))" | tee -a $R/times.txt
grep -E "passed, |FAIL" $R/gpu_test.log | cut -c1-300
pack
build/kgym check --built $KGYM_CACHE_DIR/build --profile strict > $R/built_strict.txt 2>&1; echo "built strict exit=$?" | tee -a $R/times.txt
build/kgym check --built $KGYM_CACHE_DIR/build --profile hybrid > $R/built_hybrid.txt 2>&1
for f in $(find $KGYM_CACHE_DIR/build -name '*.so'); do echo "$f: $(readelf -d --wide $f | grep NEEDED | sed 's/.*\[\(.*\)\]/\1/' | tr '\n' ' ')"; done > $R/needed.txt
cut -c1-200 $R/built_strict.txt | tail -8
pack
