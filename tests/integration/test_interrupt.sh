#!/usr/bin/env bash
# An interrupted kgym leaves no worker behind: a hung candidate (own process group, busy loop)
# dies with the zygote, which dies with kgym (PR_SET_PDEATHSIG). Workers are found by the
# TMPDIR=$T they inherit in /proc/PID/environ.
set -uo pipefail
KGYM=$1; ROOT=$2
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
mkdir -p "$T/c/19_ReLU"
cp "$ROOT/tests/data/candidates/19_ReLU/hang.py" "$T/c/19_ReLU/hang.py"
sed -i 's/while True:/while True:  # kgym-interrupt-test/' "$T/c/19_ReLU/hang.py"
TMPDIR="$T" "$KGYM" eval --suite "$ROOT/examples/suite" --candidates "$T/c" --profile off --timeout-case 300 -q \
  --out "$T/v.jsonl" > "$T/log" 2>&1 &
pid=$!
for _ in $(seq 1 60); do  # wait until zygote, reference worker and candidate all run
  n=0; for p in $(pgrep -f "kgym_worker"); do grep -q "$T" /proc/$p/environ 2>/dev/null && n=$((n+1)); done
  [ "$n" -ge 3 ] && break
  sleep 1
done
sleep 3
kill -9 "$pid"
sleep 3
left=$(pgrep -f "python3 -m kgym_worker" | while read p; do [ -d "/proc/$p" ] && grep -l "$T" /proc/$p/environ 2>/dev/null; done | wc -l)
if [ "$left" != 0 ]; then echo "FAIL: $left worker process(es) outlived kgym"; ps aux | grep kgym_worker; exit 1; fi
echo "ok: no worker outlived a killed kgym"
