#!/usr/bin/env bash
# The float64 rule (an output within atol of the float64 reference is correct; docs/correctness.md)
# excuses only what it checked (tests/data/fp64_rule_suite): a reference with NaN in it (log of
# normal inputs; red team rt16: numbers or the wrong infinity where the reference is NaN passed,
# the cross-check skips non-finite positions) and two outputs of different magnitudes (red team
# rt17: a softmax off by 6e-6 passed under the first output's atol). Honest candidates pass.
set -euo pipefail
KGYM=$1; ROOT=$2
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
"$KGYM" eval --suite "$ROOT/tests/data/fp64_rule_suite" --candidates "$ROOT/tests/data/candidates_fp64_rule" \
  --profile off --out "$OUT/fp64_rule.jsonl" --cases 3 --min-calls 5 --max-calls 10 -q
python3 "$ROOT/tests/integration/expect_outcomes.py" "$OUT/fp64_rule.jsonl" "$ROOT/tests/data/candidates_fp64_rule"
python3 - "$OUT/fp64_rule.jsonl" <<'PY'
import json, sys
for v in map(json.loads, open(sys.argv[1])):
    if not v["task_id"].endswith("99_Log") and "99_Log" not in v["candidate_id"]:
        continue
    cases = v["measurements"]["cases"]
    if v["candidate_id"].endswith("honest.py"):
        assert all(c["mismatches_outside_fp64"] == 0 for c in cases), [c["mismatches_outside_fp64"] for c in cases]
    else:
        assert cases[0]["mismatches_outside_fp64"] > 1000, cases[0]
print("float64 rule ok")
PY
