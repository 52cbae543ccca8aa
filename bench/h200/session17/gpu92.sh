#!/usr/bin/env bash
# Session 17 GPU run 3: gpu91.sh's link check runs again after the H200 run 2 false rejections
# (C-library names left to the sandbox) and red team rt27, without the GPU integration test (run 1
# ran its adversarial and hack sets on this engine).
SKIP_GPU_TEST=1 exec bash "$(dirname "$0")/gpu91.sh" "$@"
