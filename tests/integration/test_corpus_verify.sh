#!/usr/bin/env bash
# `kgym corpus verify` on a small corpus made by tests/data/corpus/make_corpus.py: each row is kept
# or dropped for the reason its `expect` field names (honest, wrong, contaminated = a renamed
# KernelBench problem, duplicate module, family cap, over the token budget, malformed lines with
# their line numbers); the kept rows carry the scale that reached --target-elements; --resume
# decides nothing twice and completes a cut-off run. Needs no ../shared/data (decontaminates
# against examples/suite, whose problems are KernelBench's).
set -euo pipefail
KGYM=$1; ROOT=$2
OUT=$(mktemp -d); trap 'rm -rf "$OUT"' EXIT
python3 "$ROOT/tests/data/corpus/make_corpus.py" "$ROOT/examples/suite" "$OUT/corpus.jsonl"
ARGS=(--out "$OUT/kept.jsonl" --profile off --target-elements 8192 --decontaminate "$ROOT/examples/suite"
      --max-per-family 2 --max-tokens 3000 --cases 2 --no-timing)
"$KGYM" corpus verify "$OUT/corpus.jsonl" "${ARGS[@]}" 2> "$OUT/stderr.txt" || { cat "$OUT/stderr.txt"; exit 1; }
cat "$OUT/stderr.txt"
check() {
python3 - "$OUT" <<'PY'
import json, sys
out = sys.argv[1]
rows = [l for l in open(f"{out}/corpus.jsonl")]
want = {}
for i, l in enumerate(rows, 1):
    try:
        want[i] = json.loads(l)["expect"]
    except json.JSONDecodeError:
        want[i] = "malformed"
log = [json.loads(l) for l in open(f"{out}/kept.jsonl.log.jsonl")]
got = {d["line"]: d["status"] for d in log}
assert len(log) == len(got) == len(rows), (len(log), len(got), len(rows))  # one decision per line, none twice
wrong = {i: (got.get(i), w, next((d["detail"] for d in log if d["line"] == i), "")[:200]) for i, w in want.items() if got.get(i) != w}
assert not wrong, wrong
detail = {d["line"]: d["detail"] for d in log}
assert "19_ReLU" in detail[5] and "Jaccard" in detail[5], detail[5]      # the matching problem named
assert detail[7].startswith("line 7: not JSON"), detail[7]               # malformed, with its line
assert detail[8].startswith("line 8: no `solution` field"), detail[8]
kept = [json.loads(l) for l in open(f"{out}/kept.jsonl")]
assert sorted(k["line"] for k in kept) == [1, 2, 9, 10], [k["line"] for k in kept]
for k in kept:
    v = k["verdict"]
    assert v["outcome"] == "passed" and v["scale"] < 1, v                 # scaled down to the target
    assert 4096 <= v["input_elements"] <= 16384, v                        # about 8192 elements
    assert k["module_id"] and k["reference"] and k["solution"]            # the row as it came, plus its verdict
rep = json.load(open(f"{out}/kept.jsonl.report.json"))
assert rep["rows"] == 11 and rep["kept"] == 4, rep
assert rep["by_reason"] == {"kept": 4, "max_per_module": 1, "incorrect": 1, "contaminated": 1, "over_budget": 1,
                            "malformed": 2, "max_per_family": 1}, rep["by_reason"]
assert rep["by_family"]["activation"] == {"contaminated": 1, "over_budget": 1, "kept": 2, "max_per_family": 1}, rep["by_family"]
assert [m["line"] for m in rep["malformed"]] == [7, 8], rep["malformed"]
print("corpus verify ok")
PY
}
check
# Resume: a second run decides nothing again; a run cut off after line 4 is completed.
cp "$OUT/kept.jsonl" "$OUT/kept.first"
"$KGYM" corpus verify "$OUT/corpus.jsonl" "${ARGS[@]}" --resume --quiet 2>/dev/null
cmp "$OUT/kept.jsonl" "$OUT/kept.first"
check
head -n 4 "$OUT/kept.jsonl.log.jsonl" > "$OUT/log.cut" && mv "$OUT/log.cut" "$OUT/kept.jsonl.log.jsonl"
"$KGYM" corpus verify "$OUT/corpus.jsonl" "${ARGS[@]}" --resume --quiet 2>/dev/null
check
