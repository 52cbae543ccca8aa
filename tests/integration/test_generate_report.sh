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

# 4b) a model whose answers cover every outcome (tests/python/fake_openai_server.py --mixed): turn 0
# wrong, crashing, not parsing; turn 1 (after that feedback) hacking, slow, fast. Three samples of
# two turns on the ReLU task, each turn judged on the CPU by the real engine.
python3 "$ROOT/tests/python/fake_openai_server.py" "$T/mport" "$T/mixed.log" --mixed &
MIXED_PID=$!
trap 'kill $MIXED_PID 2>/dev/null; cleanup' EXIT
for _ in $(seq 100); do [ -f "$T/mport" ] && break; sleep 0.1; done
"$KGYM" generate --model-endpoint "http://127.0.0.1:$(cat "$T/mport")/v1" --model fake --suite "$ROOT/examples/suite" \
  --tasks L1/19_ReLU --profile off --cases 2 --samples 3 --turns 2 --concurrency 1 --out "$T/mixed"
kill $MIXED_PID 2>/dev/null || true
python3 - "$T/mixed" "$T/mixed.log" <<'PY'
import collections, json, sys
run, log = sys.argv[1], sys.argv[2]
gens = [json.loads(l) for l in open(run + "/generations.jsonl")]
kind = lambda g: g["code"].split("\n", 1)[0].removeprefix("# kind: ") if g["code"].startswith("# kind: ") else "not_parsing"
got = {(g["turn"], kind(g)): g for g in gens}
print({k: (g["outcome"], g["verdict"]["messages"][:1]) for k, g in sorted(got.items())})
want = {(0, "wrong"): "incorrect", (0, "crashing"): "runtime_error", (0, "not_parsing"): "build_failed",
        (1, "hacking"): "contract_violation", (1, "slow"): "passed", (1, "fast"): "passed"}
assert len(gens) == 6 and {k: g["outcome"] for k, g in got.items()} == want, sorted((k, g["outcome"]) for k, g in got.items())
assert "IndexError" in json.dumps(got[(0, "crashing")]["verdict"]["messages"])
assert "[tamper]" in json.dumps(got[(1, "hacking")]["verdict"]["messages"]), got[(1, "hacking")]["verdict"]["messages"]
# slow and fast measured in the same run: thirty ReLUs per call are slower than one
slow, fast = got[(1, "slow")]["verdict"], got[(1, "fast")]["verdict"]
assert slow["speedup_eager"] < fast["speedup_eager"], (slow["speedup_eager"], fast["speedup_eager"])
# every feedback names its verdict's outcome; each second turn's request carried a first turn's feedback
assert all(g["feedback"].startswith("Outcome: " + g["outcome"]) for g in gens), [g["feedback"][:40] for g in gens]
reqs = [json.loads(l) for l in open(log)]
seen = collections.Counter(r["feedback"].split(" ")[1].rstrip(".") for r in reqs if r["feedback"])
assert seen == collections.Counter(["incorrect", "runtime_error", "build_failed"]), seen
print("mixed generate ok:", {k[1]: v for k, v in want.items()})
PY

# 5) report: table, JSON, markdown; --baseline the mixed run (one task in common: 19_ReLU, where
# 2 of its 3 attempts ended correct against all of this run's)
"$KGYM" report "$T/run" --json "$T/r.json" --markdown "$T/r.md" --baseline "$T/mixed" --resamples 200 | tee "$T/report.txt"
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
assert c["common_tasks"] == 1 and not c["fixed"] and not c["broken"], c
d = {x["metric"]: x for x in c["differences"]}
assert d["correct"]["run"] == 1.0 and abs(d["correct"]["baseline"] - 2 / 3) < 1e-12, d["correct"]
assert abs(d["correct"]["difference"] - 1 / 3) < 1e-12, d["correct"]
print("report ok")
PY
# the other way round, a run with no correct attempt on a task is what "broken" names: the mixed
# run's first turns only (every one failed) against this run
mkdir -p "$T/mixed0"
python3 - "$T/mixed" "$T/mixed0" <<'PY'
import json, shutil, sys
src, dst = sys.argv[1:]
shutil.copy(src + "/manifest.json", dst)
with open(dst + "/verdicts.jsonl", "w") as out:
    for g in map(json.loads, open(src + "/generations.jsonl")):
        if g["turn"] == 0:
            out.write(json.dumps(g["verdict"]) + "\n")
PY
"$KGYM" report "$T/mixed0" --json "$T/r0.json" --baseline "$T/run" --resamples 200 -q
python3 - "$T/r0.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))["comparison"]
assert c["broken"] == ["L1/19_ReLU"] and not c["fixed"], c
assert {x["metric"]: x["difference"] for x in c["differences"]}["correct"] == -1.0, c["differences"]
print("report broken ok")
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

# 5c) kgym eval's --db (one shared SQLite database that two runs append to), --rounds and
# --compile-baseline on the CPU (torch.compile timed beside eager, in the rounds asked for)
for i in 1 2; do
  "$KGYM" eval --suite "$ROOT/examples/suite" --candidates "$ROOT/examples/candidates/19_ReLU/honest.py" \
    --profile off --cases 2 --min-calls 6 --max-calls 6 --rounds 3 $([ $i = 1 ] && echo --compile-baseline) \
    --db "$T/shared.sqlite" --out "$T/db$i.jsonl" -q > /dev/null
done
python3 - "$T/shared.sqlite" "$T/db1.jsonl" "$T/db2.jsonl" <<'PY'
import json, sqlite3, sys
db, one, two = sys.argv[1], json.loads(open(sys.argv[2]).readline()), json.loads(open(sys.argv[3]).readline())
rows = sqlite3.connect(db).execute("select candidate_id, outcome from verdicts").fetchall()
assert sorted(rows) == [("19_ReLU/honest.py", "passed")] * 2, rows
for v in (one, two):
    m = v["measurements"]
    assert v["outcome"] == "passed" and m["candidate_timing"]["rounds"] == 3, (v["outcome"], m["candidate_timing"].get("rounds"))
    assert m["reference_timing"]["rounds"] == 3 if "reference_timing" in m else True
assert one["compile_runtime_ms"] > 0 and one["speedup_compile"] > 0, (one.get("compile_runtime_ms"), one.get("speedup_compile"))
assert one["measurements"]["compile_timing"]["rounds"] == 3, one["measurements"]["compile_timing"]
assert not two.get("compile_runtime_ms") and "compile_timing" not in two["measurements"], two.get("compile_runtime_ms")
print("eval --db --rounds --compile-baseline ok")
PY

# 6) errors: an https endpoint and a missing run are usage/input errors (exit 2)
set +e
"$KGYM" generate --model-endpoint https://api.example.com/v1 --model m --suite "$ROOT/examples/suite" --out "$T/x" 2>"$T/err.txt"
test $? -eq 2 && grep -q "only http://" "$T/err.txt" || { cat "$T/err.txt"; exit 1; }
"$KGYM" report "$T/nothing-here" 2>"$T/err2.txt"
test $? -eq 2 || { cat "$T/err2.txt"; exit 1; }
echo "all ok"
