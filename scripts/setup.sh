#!/usr/bin/env bash
# The README's first command: install what is missing, build, and run the main job on the
# built-in default suite (small tasks with honest and broken candidates; runs on a CPU).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
bash scripts/build.sh
mkdir -p out
exec build/kgym eval --device "${KGYM_DEVICE:-cpu}" --out out/default.jsonl
