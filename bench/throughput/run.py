#!/usr/bin/env python3
"""bench/throughput (issue 33 item 5), CPU form: the same candidates through kgym and through a
KernelBench-style harness (kb_style.py: a fresh process per candidate, 5 correctness trials, 100
timed calls, the same inputs for every call), in the same run. Prints per judge the verdicts per
hour, p50/p99 latency per verdict, and their agreement (correct vs not; and, where both timed it,
whether the speedup is on the same side of 1.0 or kgym says no measurable change), and writes
the rows as JSON with ``--json``.

    python3 bench/throughput/run.py --kgym build/kgym --suite examples/suite \
        --candidates examples/candidates [--tasks L1/19,...] [--scale F] [--json out/throughput.json]

kgym's latency per verdict is the time between successive verdict lines of one ``kgym eval``
(its --out is flushed as each verdict finishes; the first includes the workers' start); the
KernelBench-style latency is each fresh process's wall clock. Machine load changes both: say it
when quoting the figures."""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from judges import fresh_process, pct, timed_eval  # noqa: E402


def candidates(root: Path) -> list:
    """(task stem, candidate path) for <root>/<task stem>/<name>.py and <root>/<task stem>.py."""
    out = []
    for p in sorted(root.iterdir()):
        if p.is_dir():
            out += [(p.name, f) for f in sorted(p.glob("*.py"))]
        elif p.suffix == ".py":
            out.append((p.stem, p))
    return out




def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kgym", default="build/kgym")
    ap.add_argument("--suite", default="examples/suite")
    ap.add_argument("--candidates", default="examples/candidates")
    ap.add_argument("--scale", default="1.0")
    ap.add_argument("--level", default="level1")
    ap.add_argument("--work", default="out/throughput")
    ap.add_argument("--json", default=None)
    ap.add_argument("--extra", default="", help="more kgym eval options")
    a = ap.parse_args()
    work = Path(a.work)
    work.mkdir(parents=True, exist_ok=True)
    cands = candidates(Path(a.candidates))
    tasks = {p.stem: p for p in (Path(a.suite) / a.level).glob("*.py")}
    cands = [(t, c) for t, c in cands if t in tasks]
    if not cands:
        print("no candidate matches a task of the suite", file=sys.stderr)
        return 2
    # kgym: one eval over all of them; a verdict's latency from the out file's growth.
    out = work / "kgym.jsonl"
    cmd = [a.kgym, "eval", "--suite", a.suite, "--candidates", a.candidates, "--scale", a.scale,
           "--profile", "off", "--device", "cpu", "-q", "--out", str(out)] + a.extra.split()
    run = timed_eval(cmd, out)
    kgym_total, kgym_lat, kv = run["total_s"], run["latency_s"], run["verdicts"]
    # KernelBench-style: a fresh process per candidate.
    kb, kb_lat = {}, []
    t1 = time.monotonic()
    for task, c in cands:
        row = fresh_process([sys.executable, str(HERE / "kb_style.py"), str(tasks[task]), str(c), "--scale", a.scale], 600)
        kb_lat.append(row["wall_s"])
        kb[f"{task}/{c.name}"] = row
    kb_total = time.monotonic() - t1
    rows, agree_c, agree_s, both_timed = [], 0, 0, 0
    for key, k in kb.items():
        v = next((v for cid, v in kv.items() if cid.endswith(key) or cid == key), None)
        kg_ok = bool(v and v["outcome"] == "passed")
        same_c = kg_ok == bool(k["correct"])
        agree_c += same_c
        same_s = None
        if kg_ok and k.get("speedup") and v.get("speedup_eager"):
            both_timed += 1
            ci = v.get("speedup_eager_ci")
            kg_side = 0 if ci and ci[0] <= 1.0 <= ci[1] else (1 if v["speedup_eager"] > 1 else -1)
            kb_side = 1 if k["speedup"] > 1 else -1
            same_s = kg_side == 0 or kg_side == kb_side
            agree_s += same_s
        rows.append({"candidate": key, "kgym_outcome": v["outcome"] if v else None,
                     "kgym_speedup": v.get("speedup_eager") if v else None,
                     "kgym_ci": v.get("speedup_eager_ci") if v else None,
                     "kb_correct": k["correct"], "kb_speedup": k.get("speedup"), "kb_error": k.get("error"),
                     "correct_agrees": same_c, "speed_agrees": same_s})
    summary = {
        "candidates": len(kb), "scale": a.scale, "cpu_count": os.cpu_count(), "load_avg": os.getloadavg(),
        "kgym": {"verdicts": len(kv), "total_s": kgym_total, "verdicts_per_hour": 3600 * len(kv) / kgym_total if kgym_total else None,
                 "p50_s": pct(kgym_lat, 0.5), "p99_s": pct(kgym_lat, 0.99)},
        "kb_style": {"verdicts": len(kb), "total_s": kb_total, "verdicts_per_hour": 3600 * len(kb) / kb_total if kb_total else None,
                     "p50_s": pct(kb_lat, 0.5), "p99_s": pct(kb_lat, 0.99)},
        "correctness_agreement": agree_c / len(kb), "speed_agreement": (agree_s / both_timed) if both_timed else None,
        "rows": rows}
    k, b = summary["kgym"], summary["kb_style"]
    print(f"{'judge':10} {'verdicts/h':>10} {'p50 s':>7} {'p99 s':>7}")
    print(f"{'kgym':10} {k['verdicts_per_hour']:10.0f} {k['p50_s']:7.2f} {k['p99_s']:7.2f}")
    print(f"{'kb-style':10} {b['verdicts_per_hour']:10.0f} {b['p50_s']:7.2f} {b['p99_s']:7.2f}")
    print(f"ratio kgym/kb-style verdicts per hour: {k['verdicts_per_hour'] / b['verdicts_per_hour']:.2f}")
    print(f"agreement: correct {summary['correctness_agreement']:.2f} over {len(kb)}; speed side "
          f"{summary['speed_agreement']} over {both_timed} timed by both; load average {summary['load_avg']}")
    for r in rows:
        print(f"  {r['candidate']:55} kgym {r['kgym_outcome']!s:18} {r['kgym_speedup'] or 0:6.3f}  "
              f"kb {'ok' if r['kb_correct'] else 'no':3} {r['kb_speedup'] or 0:6.3f}")
    if a.json:
        Path(a.json).write_text(json.dumps(summary, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
