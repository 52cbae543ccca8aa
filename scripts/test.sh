#!/usr/bin/env bash
# The README's second command (and CI's): install what is missing, build, run every test.
# GPU tests are labelled `gpu` and skip themselves without a CUDA device. The run fails when no
# test is registered (--no-tests=error), when no test passed, or when a whole group was skipped
# for a reason other than a missing GPU, data or kernel feature (tests/ci_summary.py); every
# skip's reason is printed at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
bash scripts/build.sh -DKGYM_BUILD_TESTS=ON
if [ ! -d ../shared/data/kernelbench ] && [ -z "${KGYM_KERNELBENCH_L1:-}" ]; then
  echo "note: ../shared/data/kernelbench is not next to this checkout: the tests that need the KernelBench"
  echo "      and CUDA-L1 data will be reported as skipped (README, 'Two commands on a fresh machine')"
fi
cd build
rm -f ctest-junit.xml
rc=0
# full output of passed tests too (ctest keeps 1 KiB by default): the skip reasons are at its end
ctest --output-on-failure --no-tests=error -j2 --test-output-size-passed 1000000 --test-output-size-failed 1000000 \
  --output-junit ctest-junit.xml "$@" || rc=$?
ctest --show-only=json-v1 "$@" > ctest-tests.json
if [ ! -f ctest-junit.xml ]; then echo "FAIL: ctest wrote no results (no test ran)"; exit 1; fi
python3 ../tests/ci_summary.py ctest-junit.xml ctest-tests.json || rc=1
exit "$rc"
