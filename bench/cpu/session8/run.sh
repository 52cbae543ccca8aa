#!/usr/bin/env bash
cd /work/s8/cpu
for i in 1 2 3 4 5 6; do
  load=""
  if [ $((i % 2)) = 0 ]; then python3 -c "
import time
t=time.time()
while time.time()-t<200: pass" & load=$!; fi
  /work/main/build/kgym eval --suite /work/main/examples/suite --candidates c --profile off --out v$i.jsonl --cases 3 --min-calls 5 --max-calls 10 --timeout-case 8 -q > log$i 2>&1
  [ -n "$load" ] && kill $load
  python3 - v$i.jsonl $i <<'PY'
import json, sys
for l in open(sys.argv[1]):
    v = json.loads(l); ct = v["measurements"].get("candidate_timing") or {}
    t = sorted(ct.get("times_ms") or [0]); n = ct.get("wall_check_calls") or 1
    print(sys.argv[2], v["candidate_id"][-40:], "UP" if any("not believed" in m for m in v["messages"]) else "  ", v["outcome"], round(v.get("speedup_eager") or 0, 3), "timer", round(t[len(t)//2], 4), "floor", round((ct.get("wall_check_ms") or 0) / n, 4), "res", round((ct.get("wall_check_spread_ms") or 0) / n, 4), "eager", round(v.get("ref_runtime_ms") or 0, 4))
PY
done
