#!/usr/bin/env bash
# Configures and builds kgym into build/ (the CLI is build/kgym), with the tests: KGYM_BUILD_TESTS
# is set ON each time (a build/ once configured with it OFF keeps it in the cache otherwise); pass
# -DKGYM_BUILD_TESTS=OFF to leave them out.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKGYM_BUILD_TESTS=ON "$@" >/dev/null
cmake --build build -j"$(nproc)"
