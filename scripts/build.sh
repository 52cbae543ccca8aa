#!/usr/bin/env bash
# Configures and builds kgym into build/ (the CLI is build/kgym).
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
cmake --build build -j"$(nproc)"
