#!/usr/bin/env python3
"""bench/throughput on the device machine (issue 31 run 3): the same candidates through kgym
(every defence, the compile baseline) and through KernelBench's own harness
(``kernelbench_harness.py``: ``eval_kernel_against_ref`` unchanged, a fresh process per
candidate, one at a time on the one GPU, as its users run it), in one call.

    python3 bench/throughput/gpu.py --kgym build/kgym --data .carry/data --kb .carry/kb \
        --out $OUT/throughput [--kb-budget-s 150] [--sets cudal1,honest,hacks] [--profiles strict,off]

Sets: ``cudal1`` (the 100 CUDA-L1 level-1 rows, each against its own ``ref_code``), ``honest``
(tests/data/honest_gpu: Triton, full size), ``hacks`` (tests/data/hacks_gpu). kgym judges every
set under each profile of ``--profiles`` (``strict``: the gym's verdict, policy first, so a
rejected row costs no device time; ``off``: every candidate runs). KernelBench's harness then
judges the rows in a fixed interleaved order (CUDA-L1 rows and directory candidates alternating)
until ``--kb-budget-s`` is spent; its verdicts per GPU-hour come from the rows it finished.
Writes ``summary.json`` (rates, p50/p99 latency, row-by-row agreement with the reason for each
disagreement) and the raw verdicts under ``--out``."""
import argparse
import json
import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))
from judges import fresh_process, median, pct, rate, timed_eval  # noqa: E402


def dir_candidates(root: Path) -> list:
    """(task stem, candidate file) for <root>/<task stem>/<name>.py."""
    return [(d.name, f) for d in sorted(root.iterdir()) if d.is_dir() for f in sorted(d.glob("*.py"))]


def agreement(v: dict, k: dict) -> tuple:
    """(agrees, reason) for one row: kgym's verdict v against KernelBench's row k. Correctness
    agrees when kgym passed exactly when KernelBench said correct; a kgym policy rejection of a
    row KernelBench passed is a disagreement by design (reason: the policy finding)."""
    kg_ok = v is not None and v.get("outcome") == "passed"
    kb_ok = bool(k.get("correct"))
    if v is None:
        return False, "no kgym verdict"
    if kg_ok == kb_ok:
        return True, ""
    if kb_ok:
        why = (v.get("messages") or [""])[0]
        return False, f"kgym {v['outcome']} ({v.get('gate')}): {why[:160]}"
    return False, f"KernelBench: {str(k.get('error'))[:160]}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kgym", default="build/kgym")
    ap.add_argument("--data", default=".carry/data")
    ap.add_argument("--kb", default=".carry/kb")
    ap.add_argument("--out", required=True)
    ap.add_argument("--sets", default="cudal1,honest,hacks")
    ap.add_argument("--profiles", default="strict,off")
    ap.add_argument("--kb-budget-s", type=float, default=150.0)
    ap.add_argument("--jobs", default="14")
    ap.add_argument("--device", default="cuda", help="kgym's device (cpu only to try this script)")
    ap.add_argument("--extra", default="")
    a = ap.parse_args()
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    data = Path(a.data)
    suite = data / "kernelbench"
    sets = {"cudal1": data / "cuda-l1" / "h100_level1.jsonl", "honest": ROOT / "tests/data/honest_gpu",
            "hacks": ROOT / "tests/data/hacks_gpu"}
    sets = {k: sets[k] for k in a.sets.split(",")}
    summary = {"kgym": {}, "host": os.uname().nodename, "cpu_count": os.cpu_count()}
    verdicts = {}
    for prof in a.profiles.split(","):
        n, total, lat = 0, 0.0, []
        for name, cands in sets.items():
            f = out / f"kgym_{prof}_{name}.jsonl"
            cmd = [a.kgym, "eval", "--device", a.device, "--suite", str(suite / "level1") if name != "cudal1" else str(suite),
                   "--candidates", str(cands), "--profile", prof, "--jobs", a.jobs, "-q", "--out", str(f)] + a.extra.split()
            r = timed_eval(cmd, f, out / f"kgym_{prof}_{name}.log")
            outcomes = {}
            for v in r["verdicts"].values():
                outcomes[v["outcome"]] = outcomes.get(v["outcome"], 0) + 1
            print(f"kgym {prof:6} {name:7} {len(r['verdicts'])} verdicts in {r['total_s']:.1f} s (rc {r['rc']}): {outcomes}",
                  flush=True)
            summary["kgym"][f"{prof}/{name}"] = {"verdicts": len(r["verdicts"]), "total_s": r["total_s"], "outcomes": outcomes,
                                                 "p50_s": pct(r["latency_s"], 0.5), "p99_s": pct(r["latency_s"], 0.99)}
            n, total, lat = n + len(r["verdicts"]), total + r["total_s"], lat + r["latency_s"]
            for cid, v in r["verdicts"].items():
                verdicts[(prof, name, cid)] = v
        summary["kgym"][prof] = {"verdicts": n, "total_s": total, "verdicts_per_gpu_hour": rate(n, total),
                                 "p50_s": pct(lat, 0.5), "p99_s": pct(lat, 0.99)}
    # KernelBench's harness: rows interleaved, until the budget is spent.
    queue = []
    if "cudal1" in sets:
        queue.append([("cudal1", f"h100_level1.jsonl:{i}", ["--jsonl", str(sets["cudal1"]), "--row", str(i)])
                      for i in range(1, 101)])
    for name in ("honest", "hacks"):
        if name in sets:
            queue.append([(name, f"{t}/{c.name}", ["--ref", str(suite / "level1" / f"{t}.py"), "--cand", str(c)])
                          for t, c in dir_candidates(sets[name])])
    order = []
    while any(queue):
        for q in queue:
            if q:
                order.append(q.pop(0))
    (out / "summary.json").write_text(json.dumps(summary, indent=1, default=str) + "\n")  # kgym's part, first
    kb_rows, t0 = [], time.monotonic()
    for name, cid, args in order:
        if time.monotonic() - t0 > a.kb_budget_s:
            break
        row = fresh_process([sys.executable, str(HERE / "kernelbench_harness.py"), "--kb", a.kb] + args, 300)
        row.update(set=name, candidate_id=cid)
        kb_rows.append(row)
        print(f"kernelbench {name:7} {cid:45} correct={row.get('correct')} speedup={row.get('speedup')} "
              f"{row['wall_s']:.1f} s {str(row.get('error') or '')[:80]}", flush=True)
        with open(out / "kernelbench_rows.jsonl", "a") as f:
            f.write(json.dumps(row, default=str) + "\n")
    kb_total = time.monotonic() - t0
    summary["kernelbench"] = {"verdicts": len(kb_rows), "total_s": kb_total,
                              "verdicts_per_gpu_hour": rate(len(kb_rows), kb_total),
                              "p50_s": pct([r["wall_s"] for r in kb_rows], 0.5),
                              "p99_s": pct([r["wall_s"] for r in kb_rows], 0.99)}
    rows, agree = [], 0
    for k in kb_rows:
        for prof in a.profiles.split(","):
            v = next((v for (p, n, cid), v in verdicts.items() if p == prof and n == k["set"]
                      and (cid == k["candidate_id"] or cid.endswith(k["candidate_id"]))), None)
            ok, why = agreement(v, k)
            rows.append({"profile": prof, "set": k["set"], "candidate": k["candidate_id"],
                         "kgym_outcome": v and v["outcome"], "kgym_speedup": v and v.get("speedup_eager"),
                         "kgym_ci": v and v.get("speedup_eager_ci"), "kb_correct": k.get("correct"),
                         "kb_speedup": k.get("speedup"), "agrees": ok, "reason": why})
    for prof in a.profiles.split(","):
        pr = [r for r in rows if r["profile"] == prof]
        summary["kgym"][prof]["agreement_with_kernelbench"] = (sum(r["agrees"] for r in pr) / len(pr)) if pr else None
        kg = summary["kgym"][prof]["verdicts_per_gpu_hour"]
        kbr = summary["kernelbench"]["verdicts_per_gpu_hour"]
        summary["kgym"][prof]["ratio_to_kernelbench"] = kg / kbr if kg and kbr else None
    summary["rows"] = rows
    summary["kb_speedup_median"] = median([r["speedup"] for r in kb_rows if r.get("speedup")])
    (out / "summary.json").write_text(json.dumps(summary, indent=1, default=str) + "\n")
    for prof in a.profiles.split(","):
        s = summary["kgym"][prof]
        print(f"kgym {prof}: {s['verdicts']} verdicts, {s['verdicts_per_gpu_hour'] or 0:.0f}/GPU-hour, p50 {s['p50_s']} s, "
              f"p99 {s['p99_s']} s; agreement {s.get('agreement_with_kernelbench')}; x{s.get('ratio_to_kernelbench')} KernelBench")
    s = summary["kernelbench"]
    print(f"KernelBench harness: {s['verdicts']} verdicts in {s['total_s']:.0f} s, {s['verdicts_per_gpu_hour'] or 0:.0f}/GPU-hour, "
          f"p50 {s['p50_s']} s, p99 {s['p99_s']} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
