#!/usr/bin/env bash
# Gate 2's link check (docs/policy_rules.md): a load_inline extension whose source passes the
# static gate but imports a loader call (dlvsym, to reach ATen's CPU kernel past the dispatcher)
# is policy_rejected by its built object's imports before any case runs; under --profile off it
# runs and is correct, so the link check is what rejects it. (An honest extension passing strict
# with a clean link record: test_cpu_op_trace.sh.)
set -euo pipefail
KGYM=$1; ROOT=$2
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
CANDS="$ROOT/tests/data/link_check"
# All pass the static gate: the rejections below can only come from the link check.
"$KGYM" check "$CANDS" --profile strict --format text
"$KGYM" eval --suite "$ROOT/examples/suite" --candidates "$CANDS" --tasks L1/19 --profile strict \
  --out "$OUT/strict.jsonl" --cases 2 --min-calls 5 --max-calls 10 --no-other-shape -q
python3 "$ROOT/tests/integration/expect_outcomes.py" "$OUT/strict.jsonl" "$CANDS"
"$KGYM" eval --suite "$ROOT/examples/suite" --candidates "$CANDS/19_ReLU/dlvsym_aten_kernel.py" --tasks L1/19 \
  --profile off --out "$OUT/off.jsonl" --cases 2 --min-calls 5 --max-calls 10 --no-other-shape -q
python3 - "$OUT/strict.jsonl" "$OUT/off.jsonl" <<'PY'
import json, sys
vs = {v["candidate_id"].split("/")[-1]: v for v in map(json.loads, open(sys.argv[1]))}
hack = vs["dlvsym_aten_kernel.py"]
assert hack["gate"] == "build", hack["gate"]
msg = hack["messages"][0]
assert msg.startswith("[link]") and "dlvsym" in msg and "kgym_link_dlvsym_relu" in msg, msg
link = hack["measurements"]["link"]
assert link["checked"] and any(e.endswith("(loaded)") for e in link["extensions"]), link
assert not hack["measurements"]["cases"], "rejected before any case ran"
assert any(f.get("gate") == "link" and f["rule_id"] == "dynamic_code" for f in hack["policy_findings"]), hack["policy_findings"]
off = [json.loads(l) for l in open(sys.argv[2])]
assert len(off) == 1 and off[0]["outcome"] == "passed", [(v["outcome"], v["messages"][:1]) for v in off]
assert not off[0]["measurements"]["link"]["findings"], off[0]["measurements"]["link"]
print("link check ok")
PY
