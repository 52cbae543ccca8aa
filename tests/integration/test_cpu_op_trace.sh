#!/usr/bin/env bash
# The ATen backstop of the launch gate (docs/timing.md): under strict, a load_inline C++ "kernel"
# that passes the static gate but lets ATen compute (x.clamp_min in C++) is policy_rejected (since
# session 17 by the link check, before the op trace); an honest load_inline C++ ReLU passes strict
# on the CPU and its op trace shows glue only.
set -euo pipefail
KGYM=$1; ROOT=$2
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
CANDS="$ROOT/tests/data/cpu_op_trace"
# Both pass the static gate: the rejection below can only come from the run-time trace.
"$KGYM" check "$CANDS" --profile strict --format text
"$KGYM" eval --suite "$ROOT/examples/suite" --candidates "$CANDS" --tasks L1/19 --profile strict \
  --out "$OUT/strict.jsonl" --cases 2 --min-calls 5 --max-calls 10 --no-other-shape -q
python3 "$ROOT/tests/integration/expect_outcomes.py" "$OUT/strict.jsonl" "$CANDS"
python3 - "$OUT/strict.jsonl" <<'PY'
import json, sys
vs = {v["candidate_id"].split("/")[-1]: v for v in map(json.loads, open(sys.argv[1]))}
hidden, honest = vs["hidden_clamp_cpp.py"], vs["honest_cpp.py"]
# Since session 17 the link check rejects it first, by its import of at::_ops::clamp_min (an ATen
# compute operator), before any case: the op trace stays the backstop for what no name shows.
assert hidden["gate"] == "build", hidden["gate"]
assert hidden["messages"][0].startswith("[link]") and "at::_ops::clamp_min" in hidden["messages"][0], hidden["messages"]
hl = honest["measurements"]["link"]  # the link check read its extension and found nothing
assert hl["checked"] and any(e.endswith("(loaded)") for e in hl["extensions"]) and not hl["findings"], hl
lo = honest["measurements"]["launch"]
assert lo["aten_traced"] and lo["aten_compute_calls"] == 0 and lo["aten_glue_calls"] > 0, lo
# The op watch saw every timed, wall-clock and traced call: the candidate that computes with ATen
# only between the cases and the trace is rejected for it (red team rt33's kind).
assert lo["op_watch"] == "on", lo
between = vs["rt33_aten_between_traces.py"]
assert between["outcome"] == "policy_rejected" and between["gate"] == "launch", (between["outcome"], between["messages"])
assert "timed, wall-clock and traced calls" in between["messages"][0], between["messages"]
assert any(o["name"].startswith("aten::mul") for o in between["measurements"]["launch"]["aten_ops"]), between["measurements"]["launch"]
print("cpu op trace ok")
PY
