"""Why one worker process runs the wall check's own work slower than another (GPU machine).

The GPU wall check subtracts the reference worker's calibration (the committed request without
the calls) from the candidate's timed request; a candidate process that does the same harness
work slower pays the difference as its calls' time. This times that work, and the same work with
eager's calls, in fresh processes set up as kgym's workers are, one difference at a time:

  plain        a fresh interpreter
  opwatch      + the op watch's global RecordFunction callback (every worker has it)
  seccomp      + the candidate's seccomp filter and dropped capabilities (sandbox.restrict_process_calls)
  landlock     + the candidate's write sandbox and signal scope (sandbox.restrict_writes, scope_signals)
  candidate    opwatch + landlock + seccomp, as a candidate worker on a CUDA device
  pinned       a plain process on one CPU (--cpu) for its whole life
  nothp        a plain process without transparent huge pages (prctl PR_SET_THP_DISABLE)
With --repeat, each variant runs in that many fresh processes: the spread between processes of
one variant is what a worker's own speed varies by.
Each prints the speculation-control state of its process (/proc/self/status), a known cost of a
seccomp filter installed without SECCOMP_FILTER_FLAG_SPEC_ALLOW on kernels whose
spec_store_bypass_disable / spectre_v2_user default to "seccomp".

  python3 bench/gpu_process_diag.py --suite .carry/data/kernelbench/level1 \
      --tasks 3_Batched_matrix_multiplication,22_Tanh --scale 0.1 --n 1000 --reps 7 --out diag.json
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VARIANTS = ("plain", "opwatch", "seccomp", "landlock", "candidate", "pinned", "nothp")


def child(variant: str, suite: str, tasks: list, scale: float, n: int, reps: int, cpu: int) -> dict:
    sys.path.insert(0, str(ROOT / "python"))
    if variant == "pinned":
        os.sched_setaffinity(0, {cpu})
    if variant == "nothp":
        import ctypes
        ctypes.CDLL(None).prctl(41, 1, 0, 0, 0)  # PR_SET_THP_DISABLE
    import torch
    from kgym_worker import harness_guard, loading, opwatch, sandbox, timing, wallcheck
    out = {"variant": variant, "applied": {}}
    if variant in ("opwatch", "candidate"):
        out["applied"]["opwatch"] = opwatch.install()
    work = tempfile.mkdtemp(prefix="kgym-diag-")
    if variant in ("landlock", "candidate"):
        out["applied"]["landlock"] = sandbox.restrict_writes([work, tempfile.gettempdir()])
        out["applied"]["signals"] = sandbox.scope_signals(False)
    if variant in ("seccomp", "candidate"):
        out["applied"]["seccomp"] = sandbox.restrict_process_calls(False)
    with open("/proc/self/status") as f:
        out["speculation"] = [ln.strip() for ln in f if ln.startswith(("Speculation", "Seccomp"))]
    dev = "cuda:0" if torch.cuda.is_available() else "cpu"
    rows = {}
    for stem in tasks:
        src = (Path(suite) / f"{stem}.py").read_text()
        module, _ = loading.load_task(src, f"diag_{stem}", scale)
        torch.manual_seed(1)
        model = module.Model(*module.get_init_inputs()).to(dev).eval()
        make_args = lambda s: loading.make_inputs(module, int(s), "nominal", dev, on_device=True)  # noqa: E731
        with torch.no_grad():
            like = model(*make_args(7))
        timing.synchronize(dev)
        got = {}
        for call in (False, True):
            per = []
            for rep in range(reps):
                commits, keep = wallcheck.Commitments(), ([] if call else None)
                timing.synchronize(dev)
                t0 = time.perf_counter()
                wallcheck.wall_calls(model if call else None, make_args, 1000 * rep, n, call, dev, sync_each=False,
                                     keep=keep, commit=commits, stand_in=None if call else like,
                                     guard=harness_guard.HarnessGuard())
                commits.done()
                per.append((time.perf_counter() - t0) * 1e6 / n)
                del keep
            got["with_calls" if call else "calibration"] = {"min_us": min(per), "median_us": sorted(per)[len(per) // 2],
                                                              "all_us": per}
        got["calls_us"] = got["with_calls"]["min_us"] - got["calibration"]["min_us"]
        rows[stem] = got
    out["tasks"] = rows
    with open("/proc/self/stat") as f:
        out["last_cpu"] = int(f.read().rsplit(")", 1)[1].split()[36])
    try:
        with open("/proc/self/smaps_rollup") as f:
            out["anon_huge_kb"] = next((int(ln.split()[1]) for ln in f if ln.startswith("AnonHugePages")), None)
    except OSError:
        pass
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--suite", required=True)
    ap.add_argument("--tasks", required=True)
    ap.add_argument("--scale", type=float, default=0.1)
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--rounds", type=int, default=2, help="each variant this many times, alternating")
    ap.add_argument("--variants", default=",".join(VARIANTS))
    ap.add_argument("--repeat", type=int, default=1, help="fresh processes per variant per round")
    ap.add_argument("--cpu", type=int, default=2, help="the CPU of the pinned variant")
    ap.add_argument("--out", default="")
    ap.add_argument("--child", default="")
    a = ap.parse_args()
    tasks = a.tasks.split(",")
    if a.child:
        print(json.dumps(child(a.child, a.suite, tasks, a.scale, a.n, a.reps, a.cpu)))
        return 0
    results = []
    for r in range(a.rounds):
        for v in [v for v in a.variants.split(",") for _ in range(a.repeat)]:
            p = subprocess.run([sys.executable, __file__, "--child", v, "--suite", a.suite, "--tasks", a.tasks,
                                "--scale", str(a.scale), "--n", str(a.n), "--reps", str(a.reps), "--cpu", str(a.cpu)],
                               capture_output=True, text=True, timeout=600)
            line = (p.stdout.strip().splitlines() or [""])[-1]
            try:
                rec = json.loads(line)
            except json.JSONDecodeError:
                rec = {"variant": v, "error": (p.stderr or p.stdout)[-800:]}
            rec["round"] = r
            results.append(rec)
            cells = " ".join(f"{t}: cal {x['calibration']['min_us']:.1f} calls {x['calls_us']:.1f}"
                             for t, x in rec.get("tasks", {}).items())
            print(f"{v:10s} cpu {rec.get('last_cpu')} huge {rec.get('anon_huge_kb')} {cells} "
                  f"{rec.get('speculation', rec.get('error', ''))}", flush=True)
    if a.out:
        Path(a.out).write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
