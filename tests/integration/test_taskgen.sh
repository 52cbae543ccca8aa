#!/usr/bin/env bash
# Generated tasks end to end on the CPU: `kgym tasks` list/show/export, then every exported
# reference checked against its metadata (taskgen_check.py), and a sample of every family and dtype
# judged by the real gate (kgym eval): honest solutions pass, trivial answers do not. Skips (77)
# without python3 + torch.
set -euo pipefail
kgym=$1; root=$2
python3 -c "import torch" 2>/dev/null || { echo "skip: no python3 with torch"; exit 77; }
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT

# list --families names every family; the default suite lists tasks.
n=$("$kgym" tasks list --families --json | wc -l)
[ "$n" -ge 14 ] || { echo "expected >= 14 families, got $n"; exit 1; }
"$kgym" tasks list | grep -q "gen/softmax/9000" || { echo "default suite lacks softmax"; exit 1; }
# show round-trips an id; a bad id is an input error (exit 2).
"$kgym" tasks show gen/conv2d/7-small --part source | grep -q "class Model(nn.Module)"
"$kgym" tasks show gen/softmax/5-scaffold --part scaffold | grep -q "tl.program_id"
set +e; "$kgym" tasks show gen/nofamily/1 >/dev/null 2>&1; rc=$?; set -e
[ "$rc" -eq 2 ] || { echo "bad id: expected exit 2, got $rc"; exit 1; }

# The default suite and 20 training seeds of every family (small variant), float16 where a family
# has it: each reference runs, matches its metadata and gives finite outputs (taskgen_check.py).
"$kgym" tasks export "$work/default" --solutions --trivial
python3 "$root/tests/integration/taskgen_check.py" "$work/default"
"$kgym" tasks export "$work/train" --seeds 0:20 --variant small --solutions --trivial
python3 "$root/tests/integration/taskgen_check.py" "$work/train"
# The real gate on a sample of every family and dtype: one seed of each family (float32) and of
# each family that has float16, its honest solution and its trivial answers judged by kgym eval
# on the CPU (the gate's tolerances and float64 cross-check): the solution passes, no trivial
# answer does.
"$kgym" tasks export "$work/sample32" --seeds 0:1 --variant small --solutions --trivial
"$kgym" tasks export "$work/sample16" --family activation --family softmax --family matmul --family attention \
  --seeds 100:101 --variant small --dtype float16 --solutions --trivial
for d in sample32 sample16; do
  python3 "$root/tests/integration/taskgen_check.py" "$work/$d" --candidates "$work/c_$d"
  "$kgym" eval --suite "$work/$d" --candidates "$work/c_$d" --profile off --cases 2 --no-timing -q --out "$work/$d.jsonl"
  python3 "$root/tests/integration/expect_outcomes.py" "$work/$d.jsonl" "$work/c_$d"
  python3 - "$work/$d.jsonl" "$work/$d/manifest.json" <<'PY'
import collections, json, sys
vs = [json.loads(l) for l in open(sys.argv[1])]
tasks = json.load(open(sys.argv[2]))["tasks"]
passed_trivial = [(v["candidate_id"], v["outcome"]) for v in vs if "/trivial-" in v["candidate_id"] and v["outcome"] == "passed"]
assert not passed_trivial, f"degenerate tasks: a trivial answer passes the gate: {passed_trivial}"
solutions = [v for v in vs if v["candidate_id"].endswith("/solution.py")]
assert len(solutions) == len(tasks), (len(solutions), len(tasks))
fams = collections.Counter(t["id"].split("/")[1] for t in tasks)
print(f"gate on {len(tasks)} tasks ({len(fams)} families): {len(solutions)} solutions passed, "
      f"{sum('/trivial-' in v['candidate_id'] for v in vs)} trivial answers refused:",
      dict(collections.Counter(v["outcome"] for v in vs if "/trivial-" in v["candidate_id"])))
PY
done

# Flat layout with decontamination: the report is printed and dropped tasks are not written.
if [ -d "$root/../shared/data/kernelbench" ]; then
  "$kgym" tasks export "$work/flat" --layout flat --seeds 0:10 --split train \
    --decontaminate "$root/../shared/data/kernelbench" 2> "$work/decon.txt"
  grep -q "train tasks dropped" "$work/decon.txt"
  python3 - "$work/flat/manifest.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
d = m["decontamination"]
assert d["dropped"] == len(d["reasons"]), d
assert all(r["jaccard"] > 0.6 for r in d["reasons"]), d
kept = {t["id"] for t in m["tasks"]}
assert not kept & {r["id"] for r in d["reasons"]}, "a dropped task was exported"
assert all(t["decontamination"]["jaccard"] <= 0.6 for t in m["tasks"])
print("decontamination:", d["dropped"], "of", d["train"], "dropped;", len(kept), "exported")
PY
fi
echo "taskgen integration: ok"
