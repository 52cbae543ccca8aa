#!/usr/bin/env bash
# Per-candidate overhead: N copies of an honest candidate (distinct sources, so no build cache
# sharing matters: they build nothing) judged with one case and no timing; prints the wall time
# per candidate after the zygote started. Usage: bash bench/overhead.sh [cpu|cuda] [N]
set -euo pipefail
DEVICE=${1:-cpu}; N=${2:-20}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
mkdir -p "$T/c/19_ReLU"
for i in $(seq 1 "$N"); do
  sed "s/Honest: ReLU written as a clamp./Honest copy $i./" "$ROOT/examples/candidates/19_ReLU/honest.py" > "$T/c/19_ReLU/copy$i.py"
done
run() {  # jobs
  local t0 t1
  t0=$(date +%s.%N)
  "$ROOT/build/kgym" eval --device "$DEVICE" --suite "$ROOT/examples/suite" --candidates "$T/c" --profile off \
    --cases 1 --no-timing --jobs "$1" -q --out "$T/v.jsonl" > /dev/null 2>&1
  t1=$(date +%s.%N)
  python3 - "$T/v.jsonl" "$t0" "$t1" "$N" "$1" "$DEVICE" <<'PY'
import json, sys
vs = [json.loads(l) for l in open(sys.argv[1])]
t0, t1, n, jobs, dev = float(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4]), sys.argv[5], sys.argv[6]
ok = sum(v["outcome"] == "passed" for v in vs)
loads = sorted(v["measurements"]["load"]["import_ms"] + v["measurements"]["load"]["init_ms"] for v in vs)
print(json.dumps({"device": dev, "jobs": int(jobs), "candidates": n, "passed": ok,
                  "wall_s": round(t1 - t0, 2), "per_candidate_s": round((t1 - t0) / n, 3),
                  "median_load_ms": round(loads[len(loads) // 2], 1)}))
PY
}
run 1
