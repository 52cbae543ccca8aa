#!/usr/bin/env bash
# Candidates cannot write outside their private folders (Landlock), and no process of theirs
# outlives their evaluation (the zygote is a child subreaper and sweeps orphans).
set -uo pipefail
KGYM=$1; ROOT=$2
# Landlock present? Exit 77 (skip) only when the kernel answers that it lacks it; any other error of
# the probe (a Python exception) fails the test instead of hiding it as a skip.
python3 - <<'PY'
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
abi = libc.syscall(444, None, 0, 1)  # landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION)
if abi < 1:
    print(f"skip: the kernel lacks Landlock ({os.strerror(ctypes.get_errno())})")
    sys.exit(77)
PY
rc=$?
[ "$rc" = 77 ] && exit 77
[ "$rc" = 0 ] || { echo "FAIL: the Landlock probe itself failed (exit $rc)"; exit 1; }
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
