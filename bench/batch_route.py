"""CPU latency of the batch route: 64 candidates for one task in one POST /evaluate_many, next to the
same 64 as single steps (one reset + submit_kernel per candidate, one after another, as TRL's
environment_factory runs its tools; and the same 64 single steps from 64 threads at once).

    python3 bench/batch_route.py --out bench/batch_route   # starts build/kgym serve itself

Writes batch_route.json and batch_route.md. The candidates are examples/candidates for L1/19_ReLU
(honest, wrong values, in place, syntax error; 16 of each, each made distinct by a comment), policy
profile off, the real engine on the CPU with --workers-per-device as given. Wall-clock figures on
a shared machine: read them with its load (recorded in the JSON).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(ROOT / "tests" / "python"))
from kgym_client import KgymClient  # noqa: E402

TASK = "L1/19_ReLU"
FILES = ["19_ReLU/honest.py", "19_ReLU/wrong_values.py", "19_ReLU/in_place.py", "40_LayerNorm/syntax_error.py"]


def start_server(workers: int):
    from conftest import ServerProcess
    return ServerProcess(["--devices", "cpu", "--workers-per-device", str(workers), "--suite",
                          str(ROOT / "examples" / "suite"), "--policy-profile", "off"], timeout=120)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=str(ROOT / "bench" / "batch_route"))
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--n", type=int, default=64)
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--no-concurrent", action="store_true", help="skip the 64 single steps from 64 threads")
    args = ap.parse_args()
    bases = [(ROOT / "examples" / "candidates" / f).read_text() for f in FILES]
    codes = [bases[i % len(bases)] + f"\n# candidate {i}\n" for i in range(args.n)]
    server = start_server(args.workers)
    try:
        c = KgymClient(server.url, timeout=1800)
        c.evaluate_many(TASK, codes[:4], policy_profile="off")  # warm: zygotes, build cache
        rows = {"batch": [], "single_sequential": [], "single_concurrent": []}
        outcomes = {}
        for _ in range(args.repeats):
            t = time.perf_counter()
            res = c.evaluate_many(TASK, codes, policy_profile="off", wait_s=120)
            rows["batch"].append(time.perf_counter() - t)
            outcomes["batch"] = [r.feedback["outcome"] for r in res]

            t = time.perf_counter()
            seq = []
            for code in codes:
                e = c.reset(task_id=TASK, single_turn=True, policy_profile="off").episode_id
                seq.append(c.submit_kernel(e, code).feedback["outcome"])
                c.close(e)
            rows["single_sequential"].append(time.perf_counter() - t)
            outcomes["single_sequential"] = seq

            conc = [None] * len(codes)

            def one(i):
                cc = KgymClient(server.url, timeout=1800)
                e = cc.reset(task_id=TASK, single_turn=True, policy_profile="off").episode_id
                conc[i] = cc.submit_kernel(e, codes[i]).feedback["outcome"]
                cc.close(e)

            if args.no_concurrent:
                continue
            t = time.perf_counter()
            threads = [threading.Thread(target=one, args=(i,)) for i in range(len(codes))]
            for th in threads:
                th.start()
            for th in threads:
                th.join()
            rows["single_concurrent"].append(time.perf_counter() - t)
            outcomes["single_concurrent"] = conc
        metrics = c.metrics()
    finally:
        server.stop()
    rows = {k: v for k, v in rows.items() if v}
    same = all(o == outcomes["batch"] for o in outcomes.values())
    record = {"task": TASK, "candidates": args.n, "workers_per_device": args.workers, "device": "cpu",
              "cpu_count": os.cpu_count(), "loadavg_at_end": os.getloadavg(),
              "seconds": rows, "median_s": {k: statistics.median(v) for k, v in rows.items()},
              "outcomes_agree": same, "outcome_counts": {o: outcomes["batch"].count(o) for o in set(outcomes["batch"])},
              "eval_latency_ms": metrics["eval_latency_ms"], "git": subprocess.run(
                  ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()}
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(json.dumps(record, indent=2) + "\n")
    m = record["median_s"]
    md = [f"# Batch route: {args.n} candidates on the CPU ({TASK}, {args.workers} workers)", "",
          "| way | wall s (median of %d) | per candidate ms |" % args.repeats, "|---|---|---|"]
    for k in rows:
        md.append(f"| {k} | {m[k]:.1f} | {1000 * m[k] / args.n:.0f} |")
    md += ["", f"Outcomes identical across the ways: {same}; counts {record['outcome_counts']}.",
           f"Machine: {os.cpu_count()} CPUs, load average at the end {record['loadavg_at_end']} "
           "(shared with other jobs: the figures are wall clock under that load).", ""]
    out.with_suffix(".md").write_text("\n".join(md))
    print("\n".join(md))


if __name__ == "__main__":
    main()
