#!/usr/bin/env bash
# A zygote killed from outside (the OOM killer, a stray signal) during an evaluation costs the
# verdict in flight, not the rest: that verdict is task_error (the candidate is not blamed), a
# new zygote is started, and the later candidates are judged as usual (before: `kgym eval`
# stopped with "the worker zygote died while reaping a worker" and no further verdicts). A daemon
# the candidate left (double fork, setsid) does not outlive kgym: it comes back to kgym, a child
# subreaper, which kills it (before, it was re-parented to init and lived on).
set -uo pipefail
KGYM=$1; ROOT=$2
T=$(mktemp -d); trap 'kill -9 $pid 2>/dev/null; rm -rf "$T"' EXIT
mkdir -p "$T/c/19_ReLU"
MARK="kgym-restart-daemon-$$"
{ cat <<PY
import os, sys, time
if os.fork() == 0:  # a daemon that escapes the worker's tree and group
    os.setsid()
    if os.fork() == 0:
        os.execvp(sys.executable, [sys.executable, "-c", "import time; time.sleep(300)", "$MARK"])
    os._exit(0)
time.sleep(6)  # slow import: the zygote is killed meanwhile
PY
  cat "$ROOT/examples/candidates/19_ReLU/honest.py"; } > "$T/c/19_ReLU/a_slow.py"
cp "$ROOT/examples/candidates/19_ReLU/honest.py" "$T/c/19_ReLU/b_honest.py"
cp "$ROOT/examples/candidates/19_ReLU/honest.py" "$T/c/19_ReLU/c_honest.py"
TMPDIR="$T" "$KGYM" eval --device cpu --suite "$ROOT/examples/suite" --candidates "$T/c" --profile off --jobs 1 \
  --cases 2 -q --out "$T/v.jsonl" > "$T/log" 2>&1 &
pid=$!
zygote=""
for _ in $(seq 1 120); do  # until the first candidate's worker runs (in its work folder .../candidate-1)
  for p in $(pgrep -f "kgym_worker"); do
    case "$(readlink /proc/$p/cwd 2>/dev/null)" in
      "$T"/*/candidate-1) zygote=$(awk '{print $4}' /proc/$p/stat); break 2 ;;
    esac
  done
  sleep 0.5
done
[ -n "$zygote" ] || { echo "FAIL: the first candidate's worker never appeared"; cat "$T/log"; exit 1; }
kill -9 "$zygote"
wait "$pid"; rc=$?
sleep 0.5
left=$(pgrep -f "$MARK" | wc -l)
if [ "$left" != 0 ]; then pkill -9 -f "$MARK"; echo "FAIL: the candidate's daemon outlived kgym ($left process(es))"; exit 1; fi
[ "$rc" = 0 ] || { echo "FAIL: kgym eval exited $rc after the zygote was killed"; tail -20 "$T/log"; exit 1; }
python3 - "$T/v.jsonl" <<'PY'
import json, sys
vs = {v["candidate_id"].split("/")[-1]: v for v in map(json.loads, open(sys.argv[1]))}
assert set(vs) == {"a_slow.py", "b_honest.py", "c_honest.py"}, f"verdicts: {sorted(vs)}"
slow = vs["a_slow.py"]
assert slow["outcome"] == "task_error" and "zygote died" in slow["messages"][0], (slow["outcome"], slow["messages"][:1])
for k in ("b_honest.py", "c_honest.py"):
    assert vs[k]["outcome"] == "passed", (k, vs[k]["outcome"], vs[k]["messages"][:1])
print("ok: the killed zygote cost one verdict (task_error); a new one judged the other two")
PY
