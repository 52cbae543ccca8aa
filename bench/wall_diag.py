"""The wall-clock check's requests timed in one process (GPU machine): the candidate executor's
committed `wall` request against the reference worker's `wall_calibration`, with and without the
commitment, to see what the floor's difference holds besides the calls.

  python3 bench/wall_diag.py --suite .carry/data/kernelbench/level1 --candidates tests/data/honest_gpu \
      --tasks 21_Sigmoid,47_Sum_reduction_over_a_dimension --scale 0.1 --n 33
"""
import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))

import torch  # noqa: E402

from kgym_worker import candidate, reference, timing, wallcheck  # noqa: E402

TOL = {"float32": [1e-4, 1e-4], "float16": [1e-2, 1e-2], "bfloat16": [1e-2, 1e-2], "float64": [1e-4, 1e-4]}


def timed(fn):
    timing.synchronize("cuda:0" if torch.cuda.is_available() else "cpu")
    t0 = time.perf_counter()
    fn()
    return (time.perf_counter() - t0) * 1e3


def calls_only(ex, n):
    """n back-to-back calls on one input set made beforehand, one sync at the end: the calls'
    throughput without input generation or commitments (what the floor should come to)."""
    args = ex._make_args(123)
    timing.synchronize("cuda:0" if torch.cuda.is_available() else "cpu")
    with torch.no_grad():
        for _ in range(n):
            ex.model(*args)


def commit_only(ex, n):
    """n commitments of one output (wallcheck.Commitments, one read-back at the end)."""
    with torch.no_grad():
        out = ex.model(*ex._make_args(124))
    timing.synchronize("cuda:0" if torch.cuda.is_available() else "cpu")
    c = wallcheck.Commitments()
    for _ in range(n):
        c.add(out)
    c.done()


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--suite", required=True)
    ap.add_argument("--candidates", required=True)
    ap.add_argument("--tasks", required=True)
    ap.add_argument("--scale", type=float, default=0.1)
    ap.add_argument("--n", type=int, default=33)
    ap.add_argument("--name", default="triton.py", help="candidate file name inside <stem>/")
    a = ap.parse_args()
    dev = "cuda:0" if torch.cuda.is_available() else "cpu"
    sync_each = dev == "cpu"
    with tempfile.TemporaryDirectory() as wd:
        for stem in a.tasks.split(","):
            src = (Path(a.suite) / f"{stem}.py").read_text()
            csrc = (Path(a.candidates) / stem / a.name).read_text()
            ref = reference.ReferenceWorker(dev, wd)
            ex = candidate.CandidateExecutor(dev, wd, os.path.join(wd, "c.log"))
            ref.load_task({"key": "k", "source": src, "scale": a.scale, "init_seed": 1}, [])
            ex.load({"candidate_source": csrc, "task_source": src, "scale": a.scale, "init_seed": 1}, [])
            made = ref.make_case({"key": "k", "index": 0, "transform": "nominal"}, [])
            got = ex.run_case({"index": 0, "regenerate": made["regenerate"], "tolerances": TOL}, [])
            if not isinstance(got, tuple):
                print(stem, "the candidate did not run:", str(got.get("failure"))[:300])
                continue
            rec, blobs = got
            ref.compare({"key": "k", "index": 0, "output": rec["output"], "tolerances": TOL}, blobs)
            rows = {}
            for rep in range(3):
                for name, fn in (
                    ("cal_commit", lambda: ref.wall_calibration({"key": "k", "n": a.n, "seed": 5, "sync_each": sync_each, "commit": True}, [])),
                    ("cal_plain", lambda: ref.wall_calibration({"key": "k", "n": a.n, "seed": 5, "sync_each": sync_each, "commit": False}, [])),
                    ("cand_nocall", lambda: ex.wall({"n": a.n, "seed": 9, "call": False, "sync_each": sync_each}, [])),
                    ("cand_call", lambda: ex.wall({"n": a.n, "seed": 9, "call": True, "sync_each": sync_each}, [])),
                    ("cand_commit", lambda: ex.wall({"n": a.n, "seed": 9, "call": True, "sync_each": sync_each, "commit": True}, [])),
                    ("fetch", lambda: ex.wall_output({"indices": [0, 1]}, [])),
                    ("calls_only", lambda: calls_only(ex, a.n)),
                    ("commit_only", lambda: commit_only(ex, a.n)),
                ):
                    rows.setdefault(name, []).append(timed(fn))
            print(stem, {k: [round(x, 2) for x in v] for k, v in rows.items()})
            base = min(rows["cal_commit"])
            print(f"  floor per call: commit-vs-refcal {(min(rows['cand_commit']) - base) / a.n:.4f} ms;"
                  f" call-vs-candcal {(min(rows['cand_call']) - min(rows['cand_nocall'])) / a.n:.4f} ms;"
                  f" commit cost/call {(min(rows['cand_commit']) - min(rows['cand_call'])) / a.n:.4f},"
                  f" refcal commit cost/call {(base - min(rows['cal_plain'])) / a.n:.4f};"
                  f" calls only {min(rows['calls_only']) / a.n:.4f} ms/call;"
                  f" commitments only {min(rows['commit_only']) / a.n:.4f} ms/call")
    return 0


if __name__ == "__main__":
    sys.exit(main())
