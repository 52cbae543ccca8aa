#!/usr/bin/env bash
# The degenerate-task audit through the real engine on the CPU: every task of the default suite
# rejects the four trivial answers and accepts its honest solution (`kgym tasks audit` exits 0);
# `tasks export --audit` records the audit in the manifest. Skips (77) without python3 + torch.
set -euo pipefail
kgym=$1
python3 -c "import torch" 2>/dev/null || { echo "skip: no python3 with torch"; exit 77; }
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT

"$kgym" tasks audit --json > "$work/audit.jsonl" 2> "$work/audit.txt" || { cat "$work/audit.txt"; exit 1; }
grep -q "audit: 0 of" "$work/audit.txt"
python3 - "$work/audit.jsonl" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
assert len(rows) >= 28, len(rows)
for r in rows:
    assert not r["degenerate"] and r["solution_ok"], r
    outcomes = {c["candidate"]: c["outcome"] for c in r["checks"]}
    assert outcomes["solution"] == "passed", r
    assert all(outcomes[k] != "passed" for k in ("zeros", "constant", "input", "mean")), r
print("audit:", len(rows), "default-suite tasks, none degenerate, every honest solution passed")
PY

"$kgym" tasks export "$work/out" --family scan --family loss --seeds 0:2 --variant small --audit 2>/dev/null
python3 - "$work/out/manifest.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
assert len(m["audit"]) == 4 and len(m["tasks"]) == 4, m.get("audit")
PY
echo "taskgen audit: ok"
