"""Where a correctness case's time goes, measured in one process (GPU machine; CPU works too).

kgym's "cases" phase (measurements.phase_ms, split by the supervisor into cases/make, cases/run,
cases/run_first and cases/compare) includes two process hops per case. This script runs the same
worker code without the processes: the reference worker's make_case and compare, the candidate
executor's run_case, and the output's trip through a socket pair in kgym's frame format, timing
each step per case and profiling the whole loop (cProfile, top functions by own time). The
difference between the supervisor's split and these steps is the inter-process cost.

  python3 bench/case_diag.py --suite .carry/data/kernelbench/level1 --candidates tests/data/honest_gpu \
      --tasks 19_ReLU,47_Sum_reduction_over_a_dimension --scale 0.1 --cases 6 --out $OUT/case_diag.json
"""
import argparse
import cProfile
import io
import json
import os
import pstats
import socket
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))

import torch  # noqa: E402

from kgym_worker import candidate, protocol, reference  # noqa: E402

TRANSFORMS = ["nominal", "negate", "scale3", "scale001", "abs"]
TOLERANCES = {"float32": [1e-4, 1e-4], "float16": [1e-2, 1e-2], "bfloat16": [1e-2, 1e-2], "float64": [1e-4, 1e-4]}


def transfer(reply_blobs, header):
    """Sends one frame through a socket pair and receives it (ms): the hop candidate -> engine."""
    a, b = socket.socketpair()
    t0 = time.perf_counter()
    th = threading.Thread(target=protocol.send, args=(a, header, reply_blobs))
    th.start()
    protocol.recv(b)
    th.join()
    ms = (time.perf_counter() - t0) * 1e3
    a.close()
    b.close()
    return ms


def diag_task(task_file: Path, cand_file: Path, device: str, scale: float, n_cases: int, workdir: str) -> dict:
    ref = reference.ReferenceWorker(device, workdir)
    ex = candidate.CandidateExecutor(device, workdir, os.path.join(workdir, "cand.log"))
    src, csrc = task_file.read_text(), cand_file.read_text()
    t0 = time.perf_counter()
    ref.load_task({"key": "k", "source": src, "scale": scale, "init_seed": 7}, [])
    load_ref = (time.perf_counter() - t0) * 1e3
    t0 = time.perf_counter()
    loaded = ex.load({"candidate_source": csrc, "task_source": src, "scale": scale, "init_seed": 7}, [])
    load_cand = (time.perf_counter() - t0) * 1e3
    if not loaded.get("ok"):
        return {"task": task_file.stem, "error": json.dumps(loaded.get("failure"))[:500]}
    rows = []
    prof = cProfile.Profile()
    for i in range(n_cases):
        row = {"index": i}
        prof.enable()
        t = time.perf_counter()
        made = ref.make_case({"key": "k", "index": i, "transform": TRANSFORMS[i % len(TRANSFORMS)]}, [])
        row["make_ms"] = (time.perf_counter() - t) * 1e3
        t = time.perf_counter()
        got = ex.run_case({"index": i, "regenerate": made["regenerate"], "tolerances": TOLERANCES}, [])
        row["run_ms"] = (time.perf_counter() - t) * 1e3
        rec, blobs = got if isinstance(got, tuple) else (got, [])
        row["call_ms"] = rec.get("call_ms")
        row["regenerated"] = not rec.get("need_inputs", False)
        prof.disable()
        row["transfer_ms"] = transfer(blobs, rec)
        row["output_bytes"] = sum(x.nbytes if hasattr(x, "fd") else memoryview(x).nbytes for x in blobs)
        prof.enable()
        t = time.perf_counter()
        cmp = ref.compare({"key": "k", "index": i, "output": rec.get("output"), "tolerances": TOLERANCES,
                           "audit": True}, [bytearray(x) for x in blobs])
        row["compare_ms"] = (time.perf_counter() - t) * 1e3
        prof.disable()
        row["mismatches"] = cmp.get("mismatches")
        rows.append(row)
    s = io.StringIO()
    pstats.Stats(prof, stream=s).sort_stats("tottime").print_stats(25)
    # One timing round as the supervisor asks for it (per round: min 5, max 50 calls, 2 kept),
    # candidate then eager, each profiled on its own.
    opts = {"warmup": 3, "min_calls": 5, "max_calls": 50, "budget_ms": 1000, "target_spread": 0.05,
            "l2_flush": True}
    seeds = [1000 + k for k in range(53)]
    timing = {}
    for what, fn in (("candidate", lambda: ex.time({"options": opts, "seeds": seeds, "keep": [1, 3]}, [])),
                     ("eager", lambda: ref.time({"key": "k", "kind": "eager", "options": opts, "seeds": seeds,
                                                 "wall_target_ms": 20.0}, []))):
        tp = cProfile.Profile()
        t = time.perf_counter()
        tp.enable()
        got = fn()
        tp.disable()
        ms = (time.perf_counter() - t) * 1e3
        rec, blobs = got if isinstance(got, tuple) else (got, [])
        ts = io.StringIO()
        pstats.Stats(tp, stream=ts).sort_stats("tottime").print_stats(15)
        timing[what] = {"request_ms": ms, "calls": len(rec["timing"].get("times_ms", [])),
                        "kept_bytes": sum(x.nbytes if hasattr(x, "fd") else memoryview(x).nbytes for x in blobs),
                        "transfer_ms": transfer(blobs, rec) if blobs else 0.0, "profile_top": ts.getvalue()}
    return {"task": task_file.stem, "load_reference_ms": load_ref, "load_candidate_ms": load_cand,
            "cases": rows, "profile_top": s.getvalue(), "timing": timing}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--suite", required=True, help="folder of task files (<stem>.py)")
    ap.add_argument("--candidates", required=True, help="folder of <stem>/<name>.py candidates")
    ap.add_argument("--tasks", required=True, help="comma-separated task stems")
    ap.add_argument("--name", default="triton.py", help="candidate file name inside <stem>/")
    ap.add_argument("--device", default="cuda:0" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--scale", type=float, default=0.1)
    ap.add_argument("--cases", type=int, default=6)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    out = []
    with tempfile.TemporaryDirectory() as wd:
        for stem in a.tasks.split(","):
            r = diag_task(Path(a.suite) / f"{stem}.py", Path(a.candidates) / stem / a.name, a.device, a.scale,
                          a.cases, wd)
            out.append(r)
            print(f"== {stem}: load ref {r.get('load_reference_ms', 0):.0f} ms, cand {r.get('load_candidate_ms', 0):.0f} ms"
                  + (f"  ERROR {r['error']}" if "error" in r else ""))
            for c in r.get("cases", []):
                print("  case {index}: make {make_ms:.1f}  run {run_ms:.1f} (call {call_ms})  transfer {transfer_ms:.1f}"
                      " ({output_bytes} B)  compare {compare_ms:.1f}  regenerated={regenerated}".format(**c))
            if "profile_top" in r:
                print("\n".join(r["profile_top"].splitlines()[:40]))
            for what, tr in r.get("timing", {}).items():
                print(f"  timing {what}: {tr['request_ms']:.0f} ms for {tr['calls']} calls, kept {tr['kept_bytes']} B"
                      f" (transfer {tr['transfer_ms']:.1f} ms)")
                print("\n".join(tr["profile_top"].splitlines()[:28]))
    Path(a.out).write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
