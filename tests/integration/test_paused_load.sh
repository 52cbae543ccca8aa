#!/usr/bin/env bash
# A candidate's load stopped while another evaluation times (the other workers are stopped then:
# QuietDevice) keeps its time limit: the deadline moves by the time kgym kept it stopped (red
# team rt13: a candidate stalling in its untimed warm-up made an honest loading candidate
# `timeout`). CPU, --jobs 2: a_staller sleeps 30 s in its first timing call, b_slow_load needs
# 8 s of CPU to construct, with --timeout-load 25.
set -uo pipefail
KGYM=$1; ROOT=$2
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
"$KGYM" eval --suite "$ROOT/examples/suite" --candidates "$ROOT/tests/data/paused_load" --tasks L1/19 \
  --profile off --device cpu --jobs 2 --cases 2 --timeout-load 25 -q --out "$T/v.jsonl" || exit 1
python3 "$ROOT/tests/integration/expect_outcomes.py" "$T/v.jsonl" "$ROOT/tests/data/paused_load"
