#!/usr/bin/env bash
# `kgym serve --devices cpu` with the real engine: one multi-turn episode on the example ReLU
# task through the Python client (a wrong kernel, then an honest one, then finalize).
set -euo pipefail
KGYM=$1; ROOT=$2
python3 -c "import torch" 2>/dev/null || { echo "torch is not installed: skip"; exit 77; }
PYTHONPATH="$ROOT/python" exec python3 "$ROOT/tests/integration/serve_episode.py" "$KGYM" "$ROOT"
