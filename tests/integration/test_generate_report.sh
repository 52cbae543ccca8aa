#!/usr/bin/env bash
# kgym generate against a local OpenAI-compatible server (tests/python/fake_openai_server.py),
# multi-turn with feedback judged on CPU, resumption without re-asking, the token budget,
# kgym eval of the run directory (SQLite + manifest), and kgym report (table, JSON, markdown,
# HTML when matplotlib is there, --baseline).
set -euo pipefail
KGYM=$1; ROOT=$2
T=$(mktemp -d)
SERVER_PID=""
cleanup() { [ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null; rm -rf "$T"; }
trap cleanup EXIT
python3 "$ROOT/tests/python/fake_openai_server.py" "$T/port" "$T/requests.log" --fail-first 1 &
SERVER_PID=$!
for _ in $(seq 100); do [ -f "$T/port" ] && break; sleep 0.1; done
URL="http://127.0.0.1:$(cat "$T/port")/v1"
TASKS="L1/19_ReLU,L1/23_Softmax"
GEN=(--model-endpoint "$URL" --model fake --suite "$ROOT/examples/suite" --tasks "$TASKS"
     --temperature 0.7 --backoff 0.01 --profile off --cases 2)

# 1) two samples x two turns, judged on CPU; the first request gets a 503 and is retried
"$KGYM" generate "${GEN[@]}" --samples 2 --turns 2 --concurrency 2 --out "$T/run"
test "$(wc -l < "$T/requests.log")" -eq 9      # 8 completions + 1 refused
test "$(wc -l < "$T/run/generations.jsonl")" -eq 8
test "$(wc -l < "$T/run/candidates.jsonl")" -eq 8
test "$(wc -l < "$T/run/verdicts.jsonl")" -eq 8
python3 - "$T/run" <<'PY'
import json, sys
run = sys.argv[1]
gens = [json.loads(l) for l in open(run + "/generations.jsonl")]
assert all("class ModelNew" in g["code"] for g in gens), gens[0]
assert all(g["turn"] in (0, 1) and g["sample"] in (0, 1) for g in gens)
turn1 = [g for g in gens if g["turn"] == 1]
assert all("attempt 2" in g["code"] for g in turn1), "turn 1 must see the first turn in its context"
assert all("attempt 1" in g["code"] for g in gens if g["turn"] == 0)
assert all(g["feedback"].startswith("Outcome: passed") for g in gens), gens[0]["feedback"]
assert all(g["verdict"]["candidate_id"] == g["candidate_id"] for g in gens)
m = json.load(open(run + "/manifest.json"))
assert m["generate"]["samples"] == 2 and m["generate"]["turns"] == 2 and m["generate"]["tokens_used"] == 8 * 150, m
assert m["generate"]["last_phase"]["retries"] == 1, m["generate"]["last_phase"]
print("generate ok")
PY
# the second turn's request carried the task prompt, the first submission and its verdict
grep -q '"messages": 3' "$T/requests.log"

# 2) resumption: the same command asks nothing again
"$KGYM" generate "${GEN[@]}" --samples 2 --turns 2 --concurrency 2 --out "$T/run" | tee "$T/resume.txt"
test "$(wc -l < "$T/requests.log")" -eq 9
grep -q "reused 8" "$T/resume.txt"

# 3) token budget: a third sample stops after the budget (8*150 used already, budget 1300 -> one more request)
"$KGYM" generate "${GEN[@]}" --samples 3 --turns 1 --token-budget 1300 --concurrency 1 --out "$T/run" | tee "$T/budget.txt"
grep -q "token budget reached" "$T/budget.txt"
test "$(wc -l < "$T/requests.log")" -eq 10

# 4) eval of the run directory: verdicts, SQLite and manifest in the run
rm "$T/run/verdicts.jsonl"
"$KGYM" eval --candidates "$T/run" --suite "$ROOT/examples/suite" --profile off --cases 2 --min-calls 5 --max-calls 10 -q
test "$(wc -l < "$T/run/verdicts.jsonl")" -eq 9
python3 - "$T/run" <<'PY'
import json, sqlite3, sys
run = sys.argv[1]
db = sqlite3.connect(run + "/results.sqlite")
n, = db.execute("select count(*) from verdicts").fetchone()
assert n == 9, n
turns = sorted(r[0] for r in db.execute("select distinct turn from verdicts"))
assert turns == [0, 1], turns
keys = {r[0] for r in db.execute("select key from manifest")}
assert {"generate", "eval", "provenance", "tasks"} <= keys, keys
m = json.load(open(run + "/manifest.json"))
assert m["eval"]["candidates_total"] == 9 and m["eval"]["seconds"] > 0, m["eval"]
assert m["provenance"]["environment"], m["provenance"]
assert len(m["provenance"]["tasks_sha256"]) == 64
print("eval run dir ok")
PY

# 5) report: table, JSON, markdown; --baseline against itself: no difference, nothing fixed
"$KGYM" report "$T/run" --json "$T/r.json" --markdown "$T/r.md" --baseline "$T/run" --resamples 200 | tee "$T/report.txt"
grep -q "pass@1=" "$T/report.txt"
python3 - "$T/r.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
a = r["groups"][0]
assert a["tasks"] == 2 and a["attempts"] == 5 and a["max_turns"] == 2, a
assert a["correct_rate"] == 1.0 and a["build_rate"] == 1.0, a
assert set(a["pass_at_k"]) == {"1", "2"}, a["pass_at_k"]
assert {g["value"] for g in r["groups"] if g["key"] == "family"} == {"activation"}, r["groups"]
c = r["comparison"]
assert c["common_tasks"] == 2 and not c["fixed"] and not c["broken"]
assert all(d["difference"] == 0 and d["ci95"] == [0, 0] for d in c["differences"]), c
print("report ok")
PY
grep -q "| \*\*all\*\* | 2 | 5 |" "$T/r.md"
if python3 -c "import matplotlib" 2>/dev/null; then
  "$KGYM" report "$T/run" --html "$T/r.html" -q
  grep -q "data:image/png;base64" "$T/r.html"
  grep -q "pass@k" "$T/r.html"
  echo "html ok"
fi

# 5b) any candidates judged into a run directory leave their rows there, so the run can be
# re-judged (`--candidates RUN`) with the same candidate ids
"$KGYM" eval --suite "$ROOT/examples/suite" --candidates "$ROOT/examples/candidates/19_ReLU/honest.py" \
  --profile off --cases 2 --run-dir "$T/files" -q > /dev/null
test -s "$T/files/candidates.jsonl"
"$KGYM" eval --suite "$ROOT/examples/suite" --candidates "$T/files" --profile off --cases 2 \
  --out "$T/rejudged.jsonl" -q > /dev/null
python3 - "$T/files/verdicts.jsonl" "$T/rejudged.jsonl" <<'PY'
import json, sys
a, b = ([json.loads(l)["candidate_id"] for l in open(p)] for p in sys.argv[1:])
assert a == b == ["19_ReLU/honest.py"], (a, b)
PY
# ... and never replace a run's own rows (kgym generate's): judging other candidates into that
# run leaves them as they were
cp "$T/run/candidates.jsonl" "$T/rows_before.jsonl"
"$KGYM" eval --suite "$ROOT/examples/suite" --candidates "$ROOT/examples/candidates/19_ReLU/honest.py" \
  --profile off --cases 2 --run-dir "$T/run" --out "$T/other.jsonl" 2> "$T/other.err" > /dev/null
cmp -s "$T/run/candidates.jsonl" "$T/rows_before.jsonl" || { echo "a run's own candidates.jsonl was replaced"; exit 1; }
grep -q "already holds other candidates' rows" "$T/other.err" || { cat "$T/other.err"; exit 1; }
echo "run-dir rows ok"

# 6) errors: an https endpoint and a missing run are usage/input errors (exit 2)
set +e
"$KGYM" generate --model-endpoint https://api.example.com/v1 --model m --suite "$ROOT/examples/suite" --out "$T/x" 2>"$T/err.txt"
test $? -eq 2 && grep -q "only http://" "$T/err.txt" || { cat "$T/err.txt"; exit 1; }
"$KGYM" report "$T/nothing-here" 2>"$T/err2.txt"
test $? -eq 2 || { cat "$T/err2.txt"; exit 1; }
echo "all ok"
