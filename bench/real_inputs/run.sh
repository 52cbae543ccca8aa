#!/usr/bin/env bash
# The 250 KernelBench problems at the CPU test scale: the reference probe's audit (which run, why
# the others do not) and the reference-as-candidate control on the tasks that run.
# usage: bench/real_inputs/run.sh [SCALE] [LEVELS]   (default 0.05, "L1,L2,L3"); writes bench/real_inputs/
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
SCALE=${1:-0.05}; LEVELS=${2:-L1,L2,L3}
KB="$ROOT/../shared/data/kernelbench"; OUT="$ROOT/bench/real_inputs"; TMP=$(mktemp -d); trap 'rm -rf "$TMP"' EXIT
"$ROOT/build/kgym" tasks audit --suite "$KB" --scale "$SCALE" --tasks "$LEVELS" --json > "$OUT/audit_$SCALE.jsonl" 2> "$OUT/audit_$SCALE.log"
python3 "$ROOT/tests/integration/make_controls.py" "$KB" "$TMP/controls"
RUNS=$(python3 -c "import json,sys; print(','.join(r['task_id'] for r in map(json.loads, open(sys.argv[1])) if r['runs']))" "$OUT/audit_$SCALE.jsonl")
"$ROOT/build/kgym" eval --suite "$KB" --candidates "$TMP/controls" --tasks "$RUNS" --scale "$SCALE" --profile off \
  --cases 2 --no-timing -q --out "$OUT/control_$SCALE.jsonl" --timeout-case 120 || true
python3 "$OUT/summarize.py" "$OUT/audit_$SCALE.jsonl" "$OUT/control_$SCALE.jsonl" > "$OUT/summary_$SCALE.md"
