#!/usr/bin/env bash
# CPU accounting without a control group (KGYM_CPU_CGROUP=0, as where kgym may not make one):
# red team rt11's candidate, whose helpers the kernel reaps (the worker ignores SIGCHLD), is a
# contract_violation [reap] there; the honest matmul still passes.
set -euo pipefail
KGYM=$1; ROOT=$2
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
T=1_Square_matrix_multiplication_
mkdir -p "$OUT/c/$T"
cp "$ROOT/tests/data/candidates/$T/rt11_autoreap_idle.py" "$ROOT/examples/candidates/$T/honest.py" "$OUT/c/$T/"
KGYM_CPU_CGROUP=0 "$KGYM" eval --suite "$ROOT/examples/suite" --candidates "$OUT/c" --profile off \
  --out "$OUT/v.jsonl" --cases 3 --min-calls 5 --max-calls 10 --timeout-case 8 -q
python3 - "$OUT/v.jsonl" <<'PY'
import json, sys
vs = {v["candidate_id"].split("/")[-1]: v for v in map(json.loads, open(sys.argv[1]))}
hack, honest = vs["rt11_autoreap_idle.py"], vs["honest.py"]
assert hack["outcome"] == "contract_violation" and "[reap]" in hack["messages"][0], (hack["outcome"], hack["messages"])
assert honest["outcome"] == "passed", (honest["outcome"], honest["messages"])
assert honest["measurements"]["candidate_timing"]["wall_check_cpu_source"] == "proc"
print("reap fallback ok:", hack["messages"][0][:120])
PY
