#!/usr/bin/env bash
# Issue 6 on the GPU machine: every family's honest solution on full-size generated tasks.
#   bash bench/taskgen_gpu.sh   -> $OUT/taskgen_gpu.jsonl (verdicts), $OUT/taskgen_gpu.md (table)
# SEEDS (default 0:2: two train-split seeds per family, variant full, float32, 1M..32M elements)
# are exported in the flat KernelBench layout with their solutions and judged with
# `kgym eval --device cuda --profile off` (the solutions are PyTorch: the policy gate would reject
# them under strict; here the question is whether they pass at full size and at what speed).
set -uo pipefail
OUT=${OUT:-out/taskgen_gpu}; mkdir -p "$OUT"
KGYM=${KGYM:-build/kgym}
SEEDS=${SEEDS:-0:2}
DIR=$(mktemp -d /tmp/kgym-taskgen-gpu.XXXX)
export KGYM_CACHE_DIR=${KGYM_CACHE_DIR:-/tmp/kgym-cache-taskgen}
"$KGYM" tasks export "$DIR" --seeds "$SEEDS" --variant full --layout flat --solutions > "$OUT/taskgen_export.log" 2>&1 \
  || { echo "export failed"; tail -20 "$OUT/taskgen_export.log"; exit 1; }
t0=$(date +%s.%N)
timeout ${TASKGEN_S:-240} "$KGYM" eval --device cuda --suite "$DIR" --candidates "$DIR/solutions" --profile off \
  --compile-baseline --out "$OUT/taskgen_gpu.jsonl" -q > "$OUT/taskgen_gpu.log" 2>&1
echo "taskgen_gpu exit=$? s=$(echo "$(date +%s.%N) - $t0" | bc)" | tee -a "$OUT/times.txt"
python3 - "$OUT/taskgen_gpu.jsonl" "$DIR/manifest.json" > "$OUT/taskgen_gpu.md" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
try:
    manifest = json.load(open(sys.argv[2]))
except Exception:
    manifest = {}
print("| task | outcome | runtime ms | eager ms | speedup eager | speedup compile | roofline floor ms |")
print("|---|---|---|---|---|---|---|")
fmt = lambda x, f="{:.3f}": "-" if x is None else f.format(x)
for r in sorted(rows, key=lambda r: r["task_id"]):
    roof = (r.get("measurements") or {}).get("roofline") or {}
    print(f"| {r['task_id']} | {r['outcome']} | {fmt(r.get('runtime_ms'))} | {fmt(r.get('ref_runtime_ms'))} | "
          f"{fmt(r.get('speedup_eager'), '{:.2f}')} | {fmt(r.get('speedup_compile'), '{:.2f}')} | {fmt(roof.get('floor_ms'), '{:.4f}')} |")
from collections import Counter
print()
print("outcomes:", dict(Counter(r["outcome"] for r in rows)), f"({len(rows)} verdicts)")
PY
cat "$OUT/taskgen_gpu.md" | tail -3
