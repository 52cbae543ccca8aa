#!/usr/bin/env bash
# The README's second command (and CI's): install what is missing, build, run every test.
# GPU tests are labelled `gpu` and skip themselves without a CUDA device.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
bash scripts/build.sh
cd build && ctest --output-on-failure -j2 "$@"
