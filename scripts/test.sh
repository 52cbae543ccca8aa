#!/usr/bin/env bash
# The README's second command (and CI's): install what is missing, build, run every test.
# GPU tests are labelled `gpu` and skip themselves without a CUDA device.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
bash scripts/build.sh
if [ ! -d ../shared/data/kernelbench ] && [ -z "${KGYM_KERNELBENCH_L1:-}" ]; then
  echo "note: ../shared/data/kernelbench is not next to this checkout: the tests that need the KernelBench"
  echo "      and CUDA-L1 data will be reported as skipped (README, 'Two commands on a fresh machine')"
fi
cd build && ctest --output-on-failure -j2 "$@"
