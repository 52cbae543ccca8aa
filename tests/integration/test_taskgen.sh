#!/usr/bin/env bash
# Generated tasks end to end on the CPU: `kgym tasks` list/show/export, then every exported
# reference checked against its metadata (taskgen_check.py), and a sample of every family and dtype
# judged by the real gate (kgym tasks audit) in float16 and bfloat16: honest solutions pass, trivial
# answers do not. Skips (77) without python3 + torch.
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

# The default suite and 20 training seeds of every family (small variant): each reference runs,
# matches its metadata and gives finite outputs (taskgen_check.py).
"$kgym" tasks export "$work/default"
python3 "$root/tests/integration/taskgen_check.py" "$work/default"
"$kgym" tasks export "$work/train" --seeds 0:20 --variant small
python3 "$root/tests/integration/taskgen_check.py" "$work/train"
# The real gate on a sample of every family and dtype (`kgym tasks audit`: the engine judges each
# task's honest solution and its four trivial answers on the CPU, with the gate's tolerances and
# float64 cross-check). float32, the default suite's dtype, is audited for every family by
# test_taskgen_audit.sh; here one seed of every family that has float16 and bfloat16, in each.
# The solution passes, no trivial answer does.
half=$("$kgym" tasks list --families --json | python3 -c '
import json, sys
print(" ".join("--family " + f["family"] for f in map(json.loads, sys.stdin) if "float16" in f["dtypes"]))')
[ -n "$half" ] || { echo "no family lists float16"; exit 1; }
# shellcheck disable=SC2086
"$kgym" tasks audit $half --seeds 100:101 --variant small --dtype float16 --json > "$work/a16.jsonl" 2> "$work/a16.txt" || { cat "$work/a16.txt"; exit 1; }
# shellcheck disable=SC2086
"$kgym" tasks audit $half --seeds 200:201 --variant small --dtype bfloat16 --json > "$work/abf16.jsonl" 2> "$work/abf16.txt" || { cat "$work/abf16.txt"; exit 1; }
python3 - "$half" "$work/a16.jsonl" "$work/abf16.jsonl" <<'PY'
import json, sys
want = set(sys.argv[1].split()[1::2])
for path in sys.argv[2:]:
    rows = [json.loads(l) for l in open(path)]
    for r in rows:
        outcomes = {c["candidate"]: c["outcome"] for c in r["checks"]}
        assert outcomes.pop("solution") == "passed" and r["solution_ok"], r
        assert len(outcomes) == 4 and all(o != "passed" for o in outcomes.values()) and not r["degenerate"], r
    fams = {r["task_id"].split("/")[1] for r in rows}
    assert fams == want, (path, fams, want)
    print(f"gate sample {path.rsplit('/', 1)[1]}: {len(rows)} tasks of {len(fams)} families; every solution passed, no trivial answer")
PY

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
