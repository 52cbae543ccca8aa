#!/usr/bin/env bash
# A reference with NaN in it (log of normal inputs, tests/data/nonfinite_suite): the honest log
# passes; outputs that put numbers or the wrong infinity where the reference is NaN are incorrect
# (red team rt16: they passed through the float64 rule, whose cross-check skips non-finite
# positions; docs/correctness.md).
set -euo pipefail
KGYM=$1; ROOT=$2
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
"$KGYM" eval --suite "$ROOT/tests/data/nonfinite_suite" --candidates "$ROOT/tests/data/candidates_nonfinite" \
  --profile off --out "$OUT/nonfinite.jsonl" --cases 3 --min-calls 5 --max-calls 10 -q
python3 "$ROOT/tests/integration/expect_outcomes.py" "$OUT/nonfinite.jsonl" "$ROOT/tests/data/candidates_nonfinite"
python3 - "$OUT/nonfinite.jsonl" <<'PY'
import json, sys
for v in map(json.loads, open(sys.argv[1])):
    cases = v["measurements"]["cases"]
    if v["candidate_id"].endswith("honest.py"):
        assert all(c["mismatches_outside_fp64"] == 0 for c in cases), [c["mismatches_outside_fp64"] for c in cases]
    else:
        assert cases[0]["mismatches_outside_fp64"] > 1000, cases[0]
print("non-finite reference ok")
PY
