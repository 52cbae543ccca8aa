"""Load test of `kgym serve` on loopback: N concurrent WebSocket sessions, each running a
multi-turn episode on a small task, submitting the example candidates (honest and broken).
Reports client-side step latency percentiles and the server's metrics, and checks that every
session saw only its own results (episode id, task, turn numbers, outcome expected for its code).

    python3 bench/server_load.py --kgym build/kgym --sessions 64 --turns 2 --evaluator engine
Writes bench/server_load.json (or --out). Bounded: --deadline seconds for the whole run.
"""
import argparse
import asyncio
import json
import platform
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))
from kgym_client import AsyncKgymSession, KgymClient  # noqa: E402

EXPECT = {"honest": "passed", "wrong_values": "incorrect", "nan_output": "incorrect"}


def percentile(xs, q):
    xs = sorted(xs)
    return xs[max(0, min(len(xs) - 1, int(-(-q * len(xs) // 1)) - 1))] if xs else 0.0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kgym", default=None,
                    help="kgym binary (default build/kgym; build/kgym-test for --evaluator scripted, a test double)")
    ap.add_argument("--sessions", type=int, default=64)
    ap.add_argument("--turns", type=int, default=2)
    ap.add_argument("--workers-per-device", type=int, default=2)
    ap.add_argument("--devices", default="cpu")
    ap.add_argument("--evaluator", default="engine", choices=["engine", "scripted"])
    ap.add_argument("--deadline", type=float, default=600)
    ap.add_argument("--out", default=str(ROOT / "bench" / "server_load.json"))
    a = ap.parse_args()
    if a.kgym is None:
        a.kgym = str(ROOT / "build" / ("kgym-test" if a.evaluator == "scripted" else "kgym"))

    suite = ROOT / "examples" / "suite"
    cands = ROOT / "examples" / "candidates"
    plan = []  # (task_id, [(name, code)]) per session
    tasks = ["19_ReLU", "23_Softmax"]
    for i in range(a.sessions):
        stem = tasks[i % len(tasks)]
        names = ["wrong_values" if stem == "19_ReLU" else "nan_output", "honest"]
        turns = [(n, (cands / stem / f"{n}.py").read_text()) for n in (names * a.turns)[: a.turns]]
        plan.append((f"L1/{stem}", turns))

    proc = subprocess.Popen([a.kgym, "serve", "--port", "0", "--devices", a.devices, "--workers-per-device",
                             str(a.workers_per_device), "--suite", str(suite), "--policy-profile", "off",
                             "--evaluator", a.evaluator, "--cases", "3", "--max-turns", str(a.turns),
                             "--max-episodes", str(4 * a.sessions)], stdout=subprocess.PIPE, text=True)
    try:
        url = proc.stdout.readline().split("listening on ", 1)[1].split()[0]
        latencies, problems = [], []

        async def session(i):
            task_id, turns = plan[i]
            async with AsyncKgymSession(url, timeout=a.deadline) as s:
                r = await s.reset(task_id=task_id, max_turns=a.turns)
                eid = r.episode_id
                for k, (name, code) in enumerate(turns, start=1):
                    t0 = time.monotonic()
                    r = await s.submit_kernel(code)
                    latencies.append(1e3 * (time.monotonic() - t0))
                    o = r.observation
                    want = EXPECT[name] if a.evaluator == "engine" else None
                    if o["episode_id"] != eid or o["task_id"] != task_id or o["feedback_turn"] != k or \
                            (want and r.feedback["outcome"] != want):
                        problems.append((i, k, o["episode_id"], o["task_id"], r.feedback["outcome"]))

        async def run():
            await asyncio.wait_for(asyncio.gather(*(session(i) for i in range(a.sessions))), a.deadline)

        t0 = time.monotonic()
        asyncio.run(run())
        wall = time.monotonic() - t0
        metrics = KgymClient(url, timeout=30).metrics()
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()

    result = {
        "sessions": a.sessions, "turns": a.turns, "steps": len(latencies), "devices": a.devices,
        "workers_per_device": a.workers_per_device, "evaluator": a.evaluator, "wall_s": round(wall, 2),
        "step_latency_ms": {q: round(percentile(latencies, p), 1) for q, p in
                            (("p50", 0.5), ("p90", 0.9), ("p99", 0.99), ("max", 1.0))},
        "server_eval_latency_ms": metrics["eval_latency_ms"], "server_queue_wait_ms": metrics["queue_wait_ms"],
        "evaluations": metrics["evaluations"], "cross_session_problems": problems,
        "host": f"{platform.node()} ({platform.machine()}, {__import__('os').cpu_count()} cores)",
    }
    Path(a.out).write_text(json.dumps(result, indent=2) + "\n")
    print(f"{a.sessions} sessions x {a.turns} turns ({a.evaluator}, {a.devices}, {a.workers_per_device} workers): "
          f"{len(latencies)} steps in {wall:.1f} s")
    print("step latency ms (client):", result["step_latency_ms"])
    print("eval latency ms (server):", metrics["eval_latency_ms"])
    print("sessions that saw another's results:", len(problems))
    return 1 if problems or len(latencies) != a.sessions * a.turns else 0


if __name__ == "__main__":
    sys.exit(main())
