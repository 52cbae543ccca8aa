#!/usr/bin/env bash
# Candidates cannot write outside their private folders (Landlock), and no process of theirs
# outlives their evaluation (the zygote is a child subreaper and sweeps orphans).
set -uo pipefail
KGYM=$1; ROOT=$2
python3 -c "import ctypes,sys; sys.exit(0 if ctypes.CDLL(None).syscall(444, None, 0, 1) >= 1 else 77)" || exit 77
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
"$KGYM" eval --suite "$ROOT/examples/suite" --candidates "$ROOT/tests/data/sandbox" --profile off --cases 2 \
  --no-timing -q --out "$T/v.jsonl" > "$T/log" 2>&1 || { cat "$T/log"; exit 1; }
python3 "$ROOT/tests/integration/expect_outcomes.py" "$T/v.jsonl" "$ROOT/tests/data/sandbox" || exit 1
grep -q "Permission" "$T/v.jsonl" || { echo "FAIL: the planted write was not refused by the sandbox"; exit 1; }
sleep 1
if pgrep -x kgymtestdaemon > /dev/null; then
  echo "FAIL: a candidate's daemon outlived its evaluation"; exit 1
fi
echo "ok: sandboxed writes and no leftover daemon"
