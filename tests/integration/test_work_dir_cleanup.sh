#!/usr/bin/env bash
# kgym removes the temporary work folder it made (/tmp/kgym-XXXXXX: worker logs, the CPU wall
# check's input files) when the run ends; KGYM_KEEP_WORK=1 keeps it. Every run used to leave it
# (fresh-user run, session 11: 1571 folders, 24 GB in /tmp).
set -euo pipefail
KGYM=$1; ROOT=$2
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
mkdir -p "$T/tmp" "$T/c/19_ReLU"
cp "$ROOT/examples/candidates/19_ReLU/honest.py" "$T/c/19_ReLU/"
TMPDIR="$T/tmp" "$KGYM" eval --suite "$ROOT/examples/suite" --candidates "$T/c" --tasks L1/19 --profile off \
  --out "$T/v.jsonl" --cases 2 --min-calls 5 --max-calls 10 -q
left=$(find "$T/tmp" -maxdepth 1 -name 'kgym-*' | wc -l)
[ "$left" -eq 0 ] || { echo "work folder left behind: $(ls "$T/tmp")"; exit 1; }
# After each verdict the candidate's work folder keeps only its log (b_ checks a_'s, judged before it).
TMPDIR="$T/tmp" "$KGYM" eval --suite "$ROOT/examples/suite" --candidates "$ROOT/tests/data/work_release" --tasks L1/19 \
  --profile off --out "$T/r.jsonl" --cases 2 --no-timing --jobs 1 -q
python3 "$ROOT/tests/integration/expect_outcomes.py" "$T/r.jsonl" "$ROOT/tests/data/work_release"
left=$(find "$T/tmp" -maxdepth 1 -name 'kgym-*' | wc -l)
[ "$left" -eq 0 ] || { echo "work folder left behind: $(ls "$T/tmp")"; exit 1; }
TMPDIR="$T/tmp" KGYM_KEEP_WORK=1 "$KGYM" eval --suite "$ROOT/examples/suite" --candidates "$T/c" --tasks L1/19 \
  --profile off --out "$T/v2.jsonl" --cases 2 --no-timing -q
kept=$(find "$T/tmp" -maxdepth 1 -name 'kgym-*' | wc -l)
[ "$kept" -eq 1 ] || { echo "KGYM_KEEP_WORK=1 kept $kept folders"; exit 1; }
[ -d "$(find "$T/tmp" -maxdepth 1 -name "kgym-*" | head -1)/reference" ] || { echo "the kept folder has no reference worker folder"; exit 1; }
echo "work folder removed, and kept with KGYM_KEEP_WORK=1"
