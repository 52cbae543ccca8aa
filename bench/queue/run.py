"""bench/queue: the Redis Streams queue's own cost (docs/deploy.md), with `kgym worker
--evaluator stand-in` (a fixed amount of busy CPU work per job, nothing judged) behind a real
`kgym serve --queue` and a real redis-server on loopback.

  1. overhead: jobs one at a time through one worker; per job the server's round trip minus the
     worker's judging time (/metrics.json queue.overhead_ms: XADD, the worker's XREADGROUP
     wake-up, SET NX + RPUSH + XACK + XDEL, the server's BLPOP wake-up and GET), p50/p99;
  2. throughput: --jobs episodes at once (reset + submit_kernel over HTTP), with 1, 2, 4, 8 worker
     threads in one `kgym worker` process: jobs per second of wall time.

    python3 bench/queue/run.py --kgym build/kgym --stand-in-ms 20
Writes bench/queue/results.json and prints a markdown table (bench/queue/README.md holds a run).
"""
import argparse
import json
import os
import platform
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))
from kgym_client import KgymClient  # noqa: E402


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(pred, timeout):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return
        time.sleep(0.05)
    raise RuntimeError("timed out")


class Proc:
    def __init__(self, args, log):
        self.log = log
        self.f = open(log, "w")
        self.p = subprocess.Popen(args, stdout=self.f, stderr=subprocess.STDOUT, text=True)

    def stop(self):
        self.p.terminate()
        try:
            self.p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.p.kill()
        self.f.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kgym", default=str(ROOT / "build" / "kgym"))
    ap.add_argument("--stand-in-ms", type=float, default=20)
    ap.add_argument("--overhead-jobs", type=int, default=200)
    ap.add_argument("--jobs", type=int, default=160, help="episodes submitted at once per throughput run")
    ap.add_argument("--workers", default="1,2,4,8")
    ap.add_argument("--out", default=str(ROOT / "bench" / "queue" / "results.json"))
    a = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="kgym-bench-queue-"))
    port = free_port()
    redis = subprocess.Popen(["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--dir", str(tmp),
                              "--appendonly", "yes", "--appendfsync", "everysec", "--save", ""],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"redis://127.0.0.1:{port}"
    wait_for(lambda: subprocess.run(["redis-cli", "-p", str(port), "PING"], capture_output=True, text=True).stdout.strip() == "PONG", 20)
    suite = str(ROOT / "examples" / "suite")
    code = "class ModelNew:\n    pass\n"
    record = {"stand_in_ms": a.stand_in_ms, "machine": {"cpus": os.cpu_count(), "platform": platform.platform(),
              "load_avg_start": os.getloadavg()}, "redis": "appendonly yes, appendfsync everysec", "runs": []}

    def serve(tag):
        s = Proc([a.kgym, "serve", "--port", "0", "--suite", suite, "--queue", url, "--max-turns", "1",
                  "--policy-profile", "off", "--queue-in-flight", "256", "--queue-prefix", tag], tmp / f"serve-{tag}.log")
        wait_for(lambda: "listening on" in Path(s.log).read_text(), 30)
        s.url = Path(s.log).read_text().split("listening on ", 1)[1].split()[0]
        return s

    def worker(tag, k):
        return Proc([a.kgym, "worker", "--queue", url, "--queue-prefix", tag, "--evaluator", "stand-in",
                     "--stand-in-ms", str(a.stand_in_ms), "--workers-per-device", str(k)], tmp / f"worker-{tag}.log")

    def one(c):
        ep = c.reset(task_id="L1/19", max_turns=1).episode_id
        r = c.submit_kernel(ep, code)
        assert r.observation["feedback"]["outcome"] == "passed", r.observation

    # 1. overhead, one job at a time
    s, w = serve("overhead"), worker("overhead", 1)
    c = KgymClient(s.url, timeout=600)
    for _ in range(10):  # warm-up
        one(c)
    with urllib.request.urlopen(s.url + "/metrics.json") as r:
        before = json.loads(r.read())["queue"]["overhead_ms"]["count"]
    t0 = time.monotonic()
    for _ in range(a.overhead_jobs):
        one(c)
    wall = time.monotonic() - t0
    with urllib.request.urlopen(s.url + "/metrics.json") as r:
        q = json.loads(r.read())["queue"]
    w.stop(), s.stop()
    record["overhead"] = {"jobs": a.overhead_jobs, "note": "percentiles over the last 4096 jobs incl. 10 warm-up",
                          "overhead_ms": q["overhead_ms"], "queue_wait_ms": q["queue_wait_ms"],
                          "client_ms_per_job": wall / a.overhead_jobs * 1e3, "count_before": before}

    # 2. throughput with 1, 2, 4, 8 worker threads
    for k in [int(x) for x in a.workers.split(",")]:
        tag = f"tp{k}"
        s, w = serve(tag), worker(tag, k)
        c = KgymClient(s.url, timeout=600)
        wait_for(lambda: len(c.health()["queue"].get("workers", [])) == 1, 30)
        one(c)
        errors = []

        def run():
            try:
                one(KgymClient(s.url, timeout=600))
            except Exception as e:  # noqa: BLE001
                errors.append(repr(e))

        threads = [threading.Thread(target=run) for _ in range(a.jobs)]
        t0 = time.monotonic()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        wall = time.monotonic() - t0
        with urllib.request.urlopen(s.url + "/metrics.json") as r:
            q = json.loads(r.read())["queue"]
        w.stop(), s.stop()
        run_rec = {"workers": k, "jobs": a.jobs, "wall_s": wall, "jobs_per_s": a.jobs / wall, "errors": errors,
                   "ideal_jobs_per_s": min(k, os.cpu_count()) * 1000 / a.stand_in_ms,
                   "queue_wait_ms": q["queue_wait_ms"], "overhead_ms": q["overhead_ms"]}
        record["runs"].append(run_rec)
        print(json.dumps({k: run_rec[k] for k in ("workers", "jobs_per_s", "wall_s")}), flush=True)
    record["machine"]["load_avg_end"] = os.getloadavg()
    redis.terminate()
    redis.wait(timeout=30)
    Path(a.out).write_text(json.dumps(record, indent=1) + "\n")
    o = record["overhead"]["overhead_ms"]
    print(f"\nqueue overhead per job (one at a time, {a.overhead_jobs} jobs): p50 {o['p50']:.2f} ms, p99 {o['p99']:.2f} ms\n")
    print("| worker threads | jobs | wall (s) | jobs/s | ideal jobs/s (cores x 1000 / stand-in ms) | queue wait p50 (ms) |")
    print("|---|---|---|---|---|---|")
    for r in record["runs"]:
        print(f"| {r['workers']} | {r['jobs']} | {r['wall_s']:.2f} | {r['jobs_per_s']:.1f} | {r['ideal_jobs_per_s']:.0f} | "
              f"{r['queue_wait_ms']['p50']:.1f} |")


if __name__ == "__main__":
    main()
