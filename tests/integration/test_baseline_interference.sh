#!/usr/bin/env bash
# Candidates that slow the reference worker while it times the baselines (red team, 2026-12-01):
# a forked child that SIGSTOPs the reference (2.51x before the Landlock signal scope) and forked
# children that spin only while the candidate is idle (2.68x and 1.80x before the candidate's
# process tree was paused during baseline timing), against an honest candidate in the same run,
# at the size where the red team measured them (L1/1 at --scale 4: a 1024^2 matmul on the CPU).
# What they target is the eager baseline: each one's eager time may be at most 1.5x the honest
# candidate's in the same run, and its speedup not above its twin's ceiling (honest_twin.py, the
# same torch.matmul; expect_outcomes.twin_ceiling). A verdict other
# than passed is accepted only where the candidate's file says why (rt3_hog_baseline:
# timing_invalid [cpu], its hogs' CPU time inside the timed requests); unfixed, the red team
# measured 24 -> 94 ms and 27.6 -> 100.7 ms.
set -euo pipefail
KGYM=$1; ROOT=$2
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
C="$OUT/c/1_Square_matrix_multiplication_"
mkdir -p "$C"
cp "$ROOT/examples/candidates/1_Square_matrix_multiplication_/honest.py" "$C/honest.py"
cp "$ROOT/tests/data/candidates/1_Square_matrix_multiplication_/rt2_sigstop_reference.py" "$C/"
# (the hacks compute torch.matmul, as their twin does; honest.py is a slower row-block product)
cp "$ROOT/tests/data/candidates/1_Square_matrix_multiplication_/honest_twin.py" "$C/"
cp "$ROOT/tests/data/candidates/1_Square_matrix_multiplication_/rt3_hog_baseline.py" "$C/"
# A forked helper computing half of each matmul (two cores against the baselines' one): the
# candidate's CPU time over the timed wall-clock requests exceeds its wall clock ([cpu]).
cp "$ROOT/tests/data/candidates/1_Square_matrix_multiplication_/rt8_fork_parallel.py" "$C/"
"$KGYM" eval --suite "$ROOT/examples/suite" --tasks L1/1 --scale 4 --candidates "$OUT/c" --profile off \
  --cases 2 --min-calls 5 --max-calls 10 -q --out "$OUT/v.jsonl"
python3 - "$OUT/v.jsonl" "$ROOT/tests/integration" <<'PY'
import json, sys
vs = {json.loads(l)["candidate_id"].split("/")[-1]: json.loads(l) for l in open(sys.argv[1])}
honest = vs["honest.py"]
assert honest["outcome"] == "passed", honest["messages"]
sys.path.insert(0, sys.argv[2])
from expect_outcomes import quartile_ratio, twin_ceiling
# Speedups are bounded by the twin's (the same torch.matmul as the hacks; expect_outcomes.twin_ceiling:
# its speedup times its calls' spread, or its own interval's top).
twin = vs["honest_twin.py"]
assert twin["outcome"] == "passed", twin["messages"]
ceiling = twin_ceiling(twin)
par = vs["rt8_fork_parallel.py"]
print(f"rt8_fork_parallel.py: {par['outcome']}: {par['messages'][0][:120]}")
if par["outcome"] == "passed":
    # Only when it got no second core (tests running in parallel): then it gains nothing.
    assert par["speedup_eager"] <= ceiling, \
        f"rt8_fork_parallel.py: {par['speedup_eager']:.3g}x vs twin {twin['speedup_eager']:.3g}x (ceiling {ceiling:.3g}x)"
else:
    assert par["outcome"] == "timing_invalid" and "[cpu]" in par["messages"][0], (par["outcome"], par["messages"][:1])
# Eager's time in another verdict of the same run: at most 1.5x the honest verdict's (the attacks'
# unfixed effect was 3.6x to 3.9x; the honest eager's own quartile spread was exceeded by 4% by
# drift between two verdicts on a loaded machine).
eager_max = honest["ref_runtime_ms"] * max(1.5, quartile_ratio(honest["measurements"]["eager_timing"]["times_ms"]))
for name, other_ok in (("rt2_sigstop_reference.py", ()), ("rt3_hog_baseline.py", ("timing_invalid",))):
    v = vs[name]
    if v["outcome"] != "passed":
        assert v["outcome"] in other_ok and "[cpu]" in v["messages"][0], (name, v["outcome"], v["messages"][:1])
        print(f"{name}: {v['outcome']}: {v['messages'][0][:120]}")
        continue
    print(f"{name}: eager {v['ref_runtime_ms']:.3g} ms (honest {honest['ref_runtime_ms']:.3g} ms, bound {eager_max:.3g} ms); "
          f"speedup {v['speedup_eager']:.3g}x (twin {twin['speedup_eager']:.3g}x, ceiling {ceiling:.3g}x)")
    assert v["ref_runtime_ms"] <= eager_max, f"{name} slowed the eager baseline: {v['ref_runtime_ms']:.3g} > {eager_max:.3g} ms"
    assert v["speedup_eager"] <= ceiling, f"{name}: {v['speedup_eager']:.3g}x above the twin's ceiling {ceiling:.3g}x"
PY
