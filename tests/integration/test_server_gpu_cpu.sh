#!/usr/bin/env bash
# bench/server_gpu.py (issue 5's GPU latency run) end to end on the CPU: kgym serve with the real
# engine on examples/suite, every example candidate as a submission, a cold pass (all at once)
# and one warm pass; each step's outcome must be the one its candidate's `# expect:` line names,
# and every observation and /state must belong to the step's own episode and task.
set -euo pipefail
KGYM=$1; ROOT=$2
OUT=$(mktemp -d); trap 'rm -rf "$OUT"' EXIT
python3 "$ROOT/bench/server_gpu.py" --kgym "$KGYM" --devices cpu --suite "$ROOT/examples/suite" \
  --candidates "$ROOT/examples/candidates" --tasks '' --cases 3 --warm-repeats 1 --deadline 240 --out-dir "$OUT"
python3 - "$OUT/server_gpu.json" "$ROOT/examples/candidates" <<'PY'
import json, pathlib, sys
r = json.load(open(sys.argv[1]))
want = {}
for f in sorted(pathlib.Path(sys.argv[2]).rglob("*.py")):
    first = f.read_text().splitlines()[0]
    if first.startswith("# expect:"):
        want[f"{f.parent.name}/{f.stem}"] = first.split(":", 1)[1].strip()
assert len(want) >= 10, want
assert r["complete"] and r["server_exit"] == 0, (r["notes"], r["server_exit"])
for p in ("cold", "warm"):
    steps = [s for s in r["steps"] if s["pass"] == p]
    assert sorted(s["label"] for s in steps) == sorted(want), (p, [s["label"] for s in steps])
    for s in steps:
        assert not s.get("error") and not s.get("mismatch"), s
        assert s["outcome"] == want[s["label"]], (p, s["label"], s["outcome"], s["headline"])
        assert s["client_ms"] > 0 and s["task_id"] == "L1/" + s["label"].split("/")[0], s
    assert r[p]["client_step_latency_ms"]["count"] == len(want) and r[p]["mismatched"] == 0, r[p]
m = r["server_metrics_after_cold"]
assert m["eval_latency_ms"]["count"] == len(want) and m["evaluations"]["completed"] == len(want), m
assert r["server_metrics_end"]["evaluations"]["completed"] == 2 * len(want), r["server_metrics_end"]
md = pathlib.Path(sys.argv[1]).with_suffix(".md").read_text()
assert "| cold |" in md and "| warm |" in md and "19_ReLU/honest" in md
print("server_gpu cpu ok:", {p: r[p]["client_step_latency_ms"] for p in ("cold", "warm")})
PY
