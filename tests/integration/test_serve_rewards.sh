#!/usr/bin/env bash
# `kgym serve --devices cpu` with the real engine: a turn under every reward /metadata lists (the
# one reward registry), under each policy profile, with --scale reaching the engine, on the
# built-in default suite (no --suite).
set -euo pipefail
KGYM=$1; ROOT=$2
python3 -c "import torch" 2>/dev/null || { echo "torch is not installed: skip"; exit 77; }
PYTHONPATH="$ROOT/python" exec python3 "$ROOT/tests/integration/serve_rewards.py" "$KGYM" "$ROOT"
