#!/usr/bin/env python3
"""The same-op control (issue 33 item 1): each task's own reference, its ``Model`` renamed
``ModelNew``, judged as a candidate. A fair timer reads about 1.0x for every task: the candidate
and eager run the same operator, so any distance from 1.0 is bias or noise, and the verdict's
interval (``speedup_eager_ci``) says which.

    python3 bench/same_op_control.py --kgym build/kgym --suite ../shared/data/kernelbench \
        --tasks 1,3,19,21,23,26,36,40,47,88,95,97 --scale 0.02 [--out out/control.jsonl] [--json F]

The candidates are written into ``<work>/candidates`` (``--work``, default ``out/same_op_control``, git-ignored);
``kgym eval --profile off --device DEVICE`` (default cpu) judges them; a table per task (speedup, interval, runtime
against eager, the verdict's timing messages) and the median speedup are printed. Exit 0 when the
run finished (the figures are a measurement, not a test: tests/integration/test_same_op_control.sh
asserts them at CI's scale)."""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
from pathlib import Path


def make_candidates(suite: Path, tasks: list, work: Path) -> list:
    """Writes ``work/<task stem>.py`` for each level-1 task number: the task's own source with
    its ``class Model`` renamed ``ModelNew`` (every reference to the name, so super() calls still
    resolve). Returns the task ids (``L1/<n>``)."""
    work.mkdir(parents=True, exist_ok=True)
    level1 = suite / "level1"
    ids = []
    for n in tasks:
        hits = sorted(level1.glob(f"{n}_*.py"))
        if not hits:
            raise SystemExit(f"no task {n} in {level1} (expected a file {n}_<name>.py)")
        src = hits[0].read_text()
        renamed = re.sub(r"\bModel\b", "ModelNew", src)
        if "class ModelNew" not in renamed:
            raise SystemExit(f"{hits[0]} has no class Model")
        (work / hits[0].name).write_text(renamed)
        ids.append(f"L1/{n}")
    return ids


def median(x: list) -> float:
    return statistics.median(x) if x else 0.0


def one_sided(v: dict):
    """The speedup the judge gave before the baselines went through the wall check, recomputed
    from this verdict's own measurements (the candidate's wall check is measured as before): the
    candidate's runtime was max(timer median, the check's per-call figure), or the check's
    pessimistic figure when that per-call figure was over 3x the timer, while eager kept its timer
    median. None when not measured."""
    m = v.get("measurements") or {}
    c, e = m.get("candidate_timing") or {}, m.get("eager_timing") or {}
    tc, te = median(c.get("times_ms") or []), median(e.get("times_ms") or [])
    n = c.get("wall_check_calls") or 0
    if not (tc > 0 and te > 0):
        return None
    runtime = tc
    if n > 0 and c.get("wall_check_ms", 0) > 0:
        per_call = c["wall_check_ms"] / n
        runtime = max(runtime, per_call)
        if c.get("wall_check_upper_ms", 0) > 0 and per_call > 3.0 * tc:
            runtime = max(runtime, c["wall_check_upper_ms"] / n)
    return te / runtime


def summarize(verdicts: list) -> dict:
    rows = []
    for v in verdicts:
        rows.append({"task": v.get("task_id"), "outcome": v.get("outcome"), "speedup": v.get("speedup_eager"),
                     "ci": v.get("speedup_eager_ci"), "runtime_ms": v.get("runtime_ms"),
                     "ref_runtime_ms": v.get("ref_runtime_ms"), "one_sided": one_sided(v),
                     "eager_timed_in": ((v.get("measurements") or {}).get("eager_timing") or {}).get("timed_in"),
                     "messages": [m for m in v.get("messages", []) if "runtime" in m or "timer" in m or "interval" in m]})
    sp = [r["speedup"] for r in rows if isinstance(r["speedup"], (int, float))]
    held = [r for r in rows if r["ci"] and r["ci"][0] <= 1.0 <= r["ci"][1]]
    old = [r["one_sided"] for r in rows if r["one_sided"] is not None]
    return {"rows": rows, "median_speedup": statistics.median(sp) if sp else None,
            "median_one_sided": statistics.median(old) if old else None,
            "tasks_timed": len(sp), "intervals_holding_1": len(held)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kgym", default="build/kgym")
    ap.add_argument("--suite", default="../shared/data/kernelbench")
    ap.add_argument("--tasks", default="1,3,19,21,23,26,36,40,47,88,95,97")
    ap.add_argument("--scale", default="0.02")
    ap.add_argument("--work", default="out/same_op_control")
    ap.add_argument("--out", default=None, help="verdicts (JSONL); default <work>/verdicts.jsonl")
    ap.add_argument("--json", default=None, help="write the summary here")
    ap.add_argument("--device", default="cpu", help="kgym eval --device (cpu, cuda)")
    ap.add_argument("--extra", default="", help="more kgym eval options, space-separated")
    ap.add_argument("--summarize", default=None, help="only summarize this verdict file (no run)")
    args = ap.parse_args()
    if args.summarize:
        return report([json.loads(x) for x in Path(args.summarize).read_text().splitlines() if x.strip()], args.json)
    suite, work = Path(args.suite), Path(args.work)
    if not (suite / "level1").is_dir():
        print(f"no KernelBench suite at {suite} (level1/ missing)", file=sys.stderr)
        return 2
    ids = make_candidates(suite, [t.strip() for t in args.tasks.split(",") if t.strip()], work / "candidates")
    out = Path(args.out) if args.out else work / "verdicts.jsonl"
    cmd = [args.kgym, "eval", "--suite", str(suite), "--candidates", str(work / "candidates"), "--tasks", ",".join(ids),
           "--scale", args.scale, "--profile", "off", "--device", args.device, "--out", str(out)] + args.extra.split()
    print(" ".join(cmd), file=sys.stderr)
    rc = subprocess.run(cmd, stdout=subprocess.DEVNULL).returncode
    if rc not in (0, 1):
        print(f"kgym eval exited {rc}", file=sys.stderr)
        return rc
    return report([json.loads(line) for line in out.read_text().splitlines() if line.strip()], args.json)


def report(verdicts: list, json_path) -> int:
    s = summarize(verdicts)
    for r in s["rows"]:
        ci = r["ci"]
        old = "-" if r["one_sided"] is None else f"{r['one_sided']:.3f}"
        print(f"{r['task']:8} {r['outcome']:16} {r['speedup'] if r['speedup'] is None else round(r['speedup'], 3)!s:>7} "
              f"{'[%.3f, %.3f]' % tuple(ci) if ci else '-':>16}  one-sided rule {old:>6}  "
              f"cand {r['runtime_ms']:.4g} ms  eager {r['ref_runtime_ms']:.4g} ms")
        for m in r["messages"]:
            print(f"           {m}")
    print(f"median speedup {s['median_speedup']} (the one-sided rule on the same measurements: "
          f"{s['median_one_sided']}) over {s['tasks_timed']} tasks; "
          f"intervals holding 1.0: {s['intervals_holding_1']}/{len(s['rows'])}")
    if json_path:
        Path(json_path).write_text(json.dumps(s, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
