#!/usr/bin/env bash
# Generated tasks end to end on the CPU: `kgym tasks` list/show/export, then every exported
# reference, honest solution and trivial answer run with PyTorch (taskgen_check.py): the default
# suite and 20 seeds of every family's small variant. Skips (77) without python3 + torch.
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

# The default suite: honest solutions pass, trivial answers fail.
"$kgym" tasks export "$work/default" --solutions --trivial
python3 "$root/tests/integration/taskgen_check.py" "$work/default"
# 20 training seeds of every family (small variant), and float16 for the families that have it.
"$kgym" tasks export "$work/train" --seeds 0:20 --variant small --solutions --trivial
python3 "$root/tests/integration/taskgen_check.py" "$work/train"
"$kgym" tasks export "$work/half" --family activation --family softmax --family matmul --family attention \
  --seeds 100:110 --variant small --dtype float16 --solutions --trivial
python3 "$root/tests/integration/taskgen_check.py" "$work/half"

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
