#!/usr/bin/env bash
# The honest Triton set (tests/data/honest_gpu) judged by the real gate on the CPU: kgym eval with
# Triton's interpreter (TRITON_INTERPRET=1, inherited by the workers) on the KernelBench level-1
# tasks at a size CI affords. Every candidate must pass: the gate's own tolerances, float64
# cross-check and value transforms decide, not a copy of them. Skips (77) without the data.
# NOT REGISTERED (no test_ prefix): 11 of the 15 fail in the worker with Triton's interpreter
# ("InterpreterError: TypeError(only 0-dimensional arrays can be converted to Python scalars)",
# 2026-12-05, bench/tests_can_fail.md) while tests/python/honest_interp.py runs them; rename it to
# test_honest_triton_cpu.sh once they pass.
set -euo pipefail
KGYM=$1; ROOT=$2
KB="$ROOT/../shared/data/kernelbench"
[ -f "$KB/level1/19_ReLU.py" ] || { echo "skip: no KernelBench data at $KB"; exit 77; }
OUT=$(mktemp -d); trap 'rm -rf "$OUT"' EXIT
TRITON_INTERPRET=1 "$KGYM" eval --suite "$KB" --candidates "$ROOT/tests/data/honest_gpu" --scale "${KGYM_HONEST_SCALE:-0.002}" \
  --cases 2 --no-timing -q --out "$OUT/v.jsonl"
python3 - "$OUT/v.jsonl" <<'PY'
import json, sys
for v in map(json.loads, open(sys.argv[1])):
    c = v["measurements"]["cases"]
    print(f"{v['candidate_id']}: {v['outcome']} ({len(c)} cases, sizes {v['provenance'].get('scaled_constants')})")
PY
python3 "$ROOT/tests/integration/expect_outcomes.py" "$OUT/v.jsonl" "$ROOT/tests/data/honest_gpu"
