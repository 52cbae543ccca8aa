#!/usr/bin/env bash
# How case inputs reach the candidate (docs/correctness.md): regenerated from the case seed and
# checked against the reference's fingerprint for a reproducible task (no bytes sent), sent as
# bytes when get_inputs is not reproducible from torch's seed; both judge alike. --no-timing: the
# timed rechecks regenerate inputs from seeds, which a non-reproducible task cannot pass.
set -euo pipefail
KGYM=$1; ROOT=$2
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
mkdir -p "$OUT/cands/19_ReLU"
cp "$ROOT/examples/candidates/19_ReLU/honest.py" "$ROOT/examples/candidates/19_ReLU/wrong_values.py" \
  "$ROOT/examples/candidates/19_ReLU/in_place.py" "$OUT/cands/19_ReLU/"
for suite in examples/suite tests/data/nonrepro_suite; do
  "$KGYM" eval --suite "$ROOT/$suite" --candidates "$OUT/cands" --tasks L1/19 --profile off \
    --out "$OUT/$(basename $suite).jsonl" --cases 3 --no-timing -q
  python3 "$ROOT/tests/integration/expect_outcomes.py" "$OUT/$(basename $suite).jsonl" "$OUT/cands"
done
python3 - "$OUT/suite.jsonl" "$OUT/nonrepro_suite.jsonl" <<'PY'
import json, sys
for path, want in ((sys.argv[1], True), (sys.argv[2], False)):
    vs = {v["candidate_id"].split("/")[-1]: v for v in map(json.loads, open(path))}
    for name, v in vs.items():
        cases = v["measurements"]["cases"]
        assert cases, (path, name)
        assert all(c["inputs_regenerated"] is want for c in cases), (path, name, [c["inputs_regenerated"] for c in cases])
    assert vs["honest.py"]["outcome"] == "passed", vs["honest.py"]["messages"]
print("case inputs ok: regenerated for the reproducible task, sent as bytes for the other")
PY
