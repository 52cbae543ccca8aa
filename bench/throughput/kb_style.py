#!/usr/bin/env python3
"""A KernelBench-style judge of one candidate, run as its users run it: a fresh Python process per
candidate (this file), the reference and the candidate loaded from source, 5 correctness trials
on fresh ``get_inputs()`` (torch.allclose, atol = rtol = 1e-2), then 100 timed calls of the
candidate and 100 of eager ``Model`` on one input set (perf_counter around each call, CPU), the
speedup the ratio of mean times. Prints one JSON line: {"correct", "speedup", "cand_ms",
"eager_ms", "error"}. Written for bench/throughput/run.py (issue 33 item 5), not copied from
KernelBench: its harness refuses the CPU, so this one follows its README's procedure.

    python3 kb_style.py TASK.py CANDIDATE.py [--scale F]
"""
import argparse
import importlib.util
import json
import re
import sys
import time


def load(path: str, name: str, scale: float = 1.0):
    src = open(path).read()
    if scale != 1.0:  # the module-level int constants >= 16, as kgym's --scale does
        def shrink(m):
            v = int(m.group(2))
            return f"{m.group(1)}{max(1, int(round(v * scale))) if v >= 16 else v}"
        src = re.sub(r"(?m)^([A-Za-z_][A-Za-z0-9_]*\s*=\s*)(\d+)\s*$", shrink, src)
    spec = importlib.util.spec_from_loader(name, loader=None)
    mod = importlib.util.module_from_spec(spec)
    exec(compile(src, path, "exec"), mod.__dict__)
    return mod


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("task")
    ap.add_argument("candidate")
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--trials", type=int, default=5)
    ap.add_argument("--calls", type=int, default=100)
    a = ap.parse_args()
    import torch
    torch.set_num_threads(1)
    out = {"correct": False, "speedup": None, "cand_ms": None, "eager_ms": None, "error": None}
    try:
        task = load(a.task, "task", a.scale)
        cand_src = load(a.candidate, "cand")
        # the candidate's module sees the task's sizes (as KernelBench's single-file candidates do)
        init = task.get_init_inputs()
        torch.manual_seed(0)
        ref = task.Model(*init)
        torch.manual_seed(0)
        cand = cand_src.ModelNew(*init)
        with torch.no_grad():
            for t in range(a.trials):
                torch.manual_seed(1000 + t)
                inputs = task.get_inputs()
                want = ref(*inputs)
                got = cand(*[x.clone() if isinstance(x, torch.Tensor) else x for x in inputs])
                if not isinstance(got, torch.Tensor) or got.shape != want.shape or \
                        not torch.allclose(got, want, atol=1e-2, rtol=1e-2):
                    out["error"] = f"trial {t}: output mismatch"
                    print(json.dumps(out))
                    return 0
            out["correct"] = True
            inputs = task.get_inputs()

            def timed(fn):
                for _ in range(3):
                    fn(*inputs)
                ts = []
                for _ in range(a.calls):
                    t0 = time.perf_counter()
                    fn(*inputs)
                    ts.append((time.perf_counter() - t0) * 1e3)
                return sum(ts) / len(ts)
            out["cand_ms"] = timed(cand)
            out["eager_ms"] = timed(ref)
            out["speedup"] = out["eager_ms"] / out["cand_ms"] if out["cand_ms"] > 0 else None
    except Exception as exc:  # noqa: BLE001 - a candidate that fails is a verdict, not a crash
        out["error"] = f"{type(exc).__name__}: {exc}"
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
