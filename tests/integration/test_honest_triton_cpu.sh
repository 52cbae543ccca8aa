#!/usr/bin/env bash
# The honest Triton set (tests/data/honest_gpu) judged by the real gate on the CPU: kgym eval with
# Triton's interpreter (TRITON_INTERPRET=1, inherited by the workers) on the KernelBench level-1
# tasks at a size CI affords. Every candidate must pass: the gate's own tolerances, float64
# cross-check and value transforms decide, not a copy of them. Skips (77) without the data.
# Triton 3.6's interpreter needs kgym_worker/triton_interp.py's NumPy >= 2.4 shim, which the
# zygote applies under TRITON_INTERPRET=1 (without it 11 of 15 ended runtime_error).
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
# The same gate fails a wrong Triton kernel under the interpreter: the ReLU's store with a leak
# of 1% of the negative side (a value error a loose check would let through at x0.01).
mkdir -p "$OUT/wrong/19_ReLU"
sed 's/tl.where(x > 0.0, x, 0.0)/tl.where(x > 0.0, x, 0.01 * x)/' "$ROOT/tests/data/honest_gpu/19_ReLU/triton.py" \
  | sed 's/^# expect: .*/# expect: incorrect/' > "$OUT/wrong/19_ReLU/leaky.py"
grep -q "0.01 \* x" "$OUT/wrong/19_ReLU/leaky.py" || { echo "FAIL: the wrong kernel was not made"; exit 1; }
TRITON_INTERPRET=1 "$KGYM" eval --suite "$KB" --candidates "$OUT/wrong" --scale "${KGYM_HONEST_SCALE:-0.002}" \
  --cases 2 --no-timing -q --out "$OUT/wrong.jsonl"
python3 "$ROOT/tests/integration/expect_outcomes.py" "$OUT/wrong.jsonl" "$OUT/wrong"
