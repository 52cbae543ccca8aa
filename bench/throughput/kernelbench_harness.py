#!/usr/bin/env python3
"""One candidate through KernelBench's own harness (``eval_kernel_against_ref`` of
``../shared/anchors/kernelbench``, unchanged), in this fresh process, as KernelBench's users run
it: 5 correctness trials, 100 timed calls with CUDA events, fp32. Prints one JSON line:
``{"compiled", "correct", "speedup", "runtime_us", "ref_runtime_us", "error", "wall_s"}``
(speedup = KernelBench's ref_runtime / runtime, both means in microseconds; None when not timed).

    python3 bench/throughput/kernelbench_harness.py --kb ../shared/anchors/kernelbench \
        --ref TASK.py --cand CANDIDATE.py
    python3 bench/throughput/kernelbench_harness.py --kb DIR --jsonl ROWS.jsonl --row N   # N 1-based

A JSONL row gives ``ref_code`` and ``custom_code`` (the CUDA-L1 data set's fields). The backend
is ``triton`` when the candidate imports triton, else ``cuda``. Needs a CUDA device (the harness
asserts one) and the harness's own imports (numpy, requests, pydantic)."""
import argparse
import json
import sys
import time
from pathlib import Path


def main() -> int:
    t0 = time.monotonic()
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kb", required=True, help="folder holding KernelBench's kernelbench/ package")
    ap.add_argument("--ref")
    ap.add_argument("--cand")
    ap.add_argument("--jsonl")
    ap.add_argument("--row", type=int)
    ap.add_argument("--correct-trials", type=int, default=5)
    ap.add_argument("--perf-trials", type=int, default=100)
    a = ap.parse_args()
    if a.jsonl:
        rows = Path(a.jsonl).read_text().splitlines()
        r = json.loads(rows[a.row - 1])
        ref, cand = r["ref_code"], r["custom_code"]
    else:
        ref, cand = Path(a.ref).read_text(), Path(a.cand).read_text()
    sys.path.insert(0, a.kb)
    sys.path.append(str(Path(__file__).resolve().parent / "kb_shims"))  # last: installed packages win
    out = {"compiled": False, "correct": False, "speedup": None, "runtime_us": None,
           "ref_runtime_us": None, "error": None}
    try:
        import torch
        from kernelbench.eval import eval_kernel_against_ref
        res = eval_kernel_against_ref(ref, cand, num_correct_trials=a.correct_trials,
                                      num_perf_trials=a.perf_trials, measure_performance=True,
                                      timing_method="cuda_event", device=torch.device("cuda:0"),
                                      backend="triton" if "import triton" in cand else "cuda",
                                      precision=torch.float32)
        if res is None:
            out["error"] = "the harness returned None (a lock or build failure it retries later)"
        else:
            out.update(compiled=bool(res.compiled), correct=bool(res.correctness))
            if res.correctness and res.runtime > 0 and res.ref_runtime > 0:
                out.update(runtime_us=res.runtime, ref_runtime_us=res.ref_runtime,
                           speedup=res.ref_runtime / res.runtime)
            if not res.correctness:
                out["error"] = json.dumps(res.metadata, default=str)[:300]
    except Exception as e:  # the harness's own failure is this row's figure, not this script's
        out["error"] = f"{type(e).__name__}: {e}"[:300]
    out["wall_s"] = time.monotonic() - t0
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
