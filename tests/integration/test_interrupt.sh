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
# The processes of this run: command line matching $1 and environment holding $T (TMPDIR). The
# wait counts the zygote and the workers it forked ("kgym_worker zygote": they are forked after the
# zygote's start-up, op-watch build included); the survivors are counted with the broader
# "kgym_worker" (every worker process, op-watch builders too), so nothing waited on escapes it.
workers() {
  local n=0 p
  for p in $(pgrep -f "$1"); do grep -qF "$T" /proc/$p/environ 2>/dev/null && n=$((n+1)); done
  echo "$n"
}
n=0
for _ in $(seq 1 120); do  # wait until zygote, reference worker and candidate all run
  n=$(workers "kgym_worker zygote")
  [ "$n" -ge 3 ] && break
  kill -0 "$pid" 2>/dev/null || break
  sleep 1
done
if [ "$n" -lt 3 ]; then
  echo "FAIL: only $n worker process(es) of this run appeared (want zygote, reference worker and candidate)"
  cat "$T/log"; kill -9 "$pid" 2>/dev/null; exit 1
fi
# the candidate hangs: kgym must still be running when it is killed, or nothing is tested
kill -0 "$pid" 2>/dev/null || { echo "FAIL: kgym exited before it was killed"; cat "$T/log"; exit 1; }
sleep 3
kill -9 "$pid"
sleep 3
left=$(workers "kgym_worker")
if [ "$left" != 0 ]; then echo "FAIL: $left worker process(es) outlived kgym"; ps aux | grep kgym_worker; exit 1; fi
echo "ok: $n workers ran; none outlived a killed kgym"
