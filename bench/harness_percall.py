"""What the wall check's harness costs per call on this machine's host (GPU machine): each piece
of wallcheck.wall_calls timed alone over n iterations, repeated, and the whole loop with and without
the calls, so that the floor's noise (the spread of the whole loop) can be set against the call
it has to resolve.

  python3 bench/harness_percall.py --task examples/suite/level1/1_Square_matrix_multiplication_.py \
      --n 500 --reps 7 --out percall.json
"""
import argparse
import importlib.util
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))

import torch  # noqa: E402

from kgym_worker import contract, harness_guard, loading, timing, wallcheck  # noqa: E402


def load(path):
    spec = importlib.util.spec_from_file_location("task_under_bench", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def per_call_us(fn, n, reps, device):
    """The per-call time (us) of ``fn(i)`` over n iterations, one sync at the end, per repetition."""
    out = []
    for _ in range(reps):
        timing.synchronize(device)
        t0 = time.perf_counter()
        for i in range(n):
            fn(i)
        timing.synchronize(device)
        out.append((time.perf_counter() - t0) / n * 1e6)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--task", required=True)
    ap.add_argument("--n", type=int, default=500)
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--out", default="")
    a = ap.parse_args()
    device = "cuda:0" if torch.cuda.is_available() else "cpu"
    task = load(a.task)
    model = task.Model(*task.get_init_inputs()).to(device)
    make = lambda s: loading.make_inputs(task, s, "nominal", device, on_device=True)  # noqa: E731
    args = make(1)
    spans = contract.input_spans(args)
    with torch.no_grad():
        out = model(*args)
    guard = harness_guard.HarnessGuard()
    rows = {}
    with torch.no_grad():
        rows["make_inputs"] = per_call_us(lambda i: make(1000 + i), a.n, a.reps, device)
        rows["seed_all"] = per_call_us(lambda i: loading.seed_all(i), a.n, a.reps, device)
        rows["unseed"] = per_call_us(lambda i: loading.unseed(), a.n, a.reps, device)
        rows["guard_check"] = per_call_us(lambda i: guard.check(None, None), a.n, a.reps, device)
        rows["input_spans"] = per_call_us(lambda i: contract.input_spans(args), a.n, a.reps, device)
        rows["overlap_moved"] = per_call_us(lambda i: contract.overlaps_inputs(out, spans) or contract.inputs_moved(spans),
                                            a.n, a.reps, device)
        rows["call_only"] = per_call_us(lambda i: model(*args), a.n, a.reps, device)

        def commit_all(i):
            c = wallcheck.Commitments()
            c.add(out)
        rows["commit_add"] = per_call_us(commit_all, a.n, a.reps, device)
        for label, call, g in (("loop_no_call", False, None), ("loop_call", True, None),
                               ("loop_no_call_guarded", False, True), ("loop_call_guarded", True, True)):
            xs = []
            for r in range(a.reps):
                keep = [] if call else None
                c = wallcheck.Commitments()
                timing.synchronize(device)
                t0 = time.perf_counter()
                wallcheck.wall_calls(model if call else None, make, 5000 + r * a.n, a.n, call, device, sync_each=False,
                                     keep=keep, commit=c, stand_in=None if call else out,
                                     guard=harness_guard.HarnessGuard() if g else None)
                c.done()
                xs.append((time.perf_counter() - t0) / a.n * 1e6)
            rows[label] = xs
    table = {k: {"median_us": statistics.median(v), "min_us": min(v), "max_us": max(v)} for k, v in rows.items()}
    for k, v in table.items():
        print(f"{k:24s} median {v['median_us']:8.2f} us  min {v['min_us']:8.2f}  max {v['max_us']:8.2f}")
    if a.out:
        Path(a.out).write_text(json.dumps({"device": device, "task": a.task, "n": a.n, "reps": a.reps,
                                           "per_call_us": table, "raw_us": rows}, indent=1))


if __name__ == "__main__":
    main()
