"""The Redis Streams queue end to end (docs/deploy.md): real `redis-server` on a free loopback
port, the real `kgym serve --queue` and `kgym worker` binaries.

- two CPU workers judging the examples with the real engine; one is killed (SIGKILL) while it
  judges: every job gets exactly one stored verdict, equal to `kgym eval`'s for that candidate;
- Redis killed and restarted (AOF, fsync always) with jobs queued: none lost;
- an episode survives a server restart (--store), an idle episode is closed with a reason;
- a worker that cannot reach Redis retries with back-off and says so; a bad URL is a usage error;
- /metrics parses with prometheus_client's text parser.
Skipped (with the reason) only where redis-server is not installed."""
import json
import os
import shutil
import signal
import socket
import subprocess
import threading
import time
import urllib.request
from pathlib import Path

import pytest

from conftest import ROOT, kgym_binary
from kgym_client import KgymClient, KgymError

pytestmark = pytest.mark.skipif(shutil.which("redis-server") is None,
                                reason="redis-server is not installed (scripts/install.sh installs it)")
TIMEOUT = 300.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(predicate, timeout, what):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


class Redis:
    """A redis-server on a free port with AOF on (fsync at every write), data in `folder`."""

    def __init__(self, folder: Path, port: int = 0):
        self.folder, self.port = folder, port or free_port()
        self.start()

    def start(self):
        self.proc = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(self.folder),
             "--appendonly", "yes", "--appendfsync", "always", "--save", "", "--protected-mode", "no"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_for(lambda: self.ping(), 20, "redis-server to answer PING")

    def ping(self) -> bool:
        try:
            return self.cli("PING") == "PONG"
        except (subprocess.CalledProcessError, subprocess.TimeoutExpired):
            return False

    def cli(self, *args) -> str:
        return subprocess.run(["redis-cli", "-p", str(self.port), *args], capture_output=True, text=True,
                              check=True, timeout=10).stdout.strip()

    def kill(self):
        self.proc.kill()
        self.proc.wait(timeout=10)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=10)

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}"

    def stats(self) -> dict:
        out = self.cli("HGETALL", "kgym:stats").split("\n")
        return {out[i]: int(out[i + 1]) for i in range(0, len(out) - 1, 2)}


class Process:
    """A kgym command with its output in a log file."""

    def __init__(self, args, log: Path):
        # (the scripted evaluator, a test double, is only in the tests' build/kgym-test)
        binary = kgym_binary(scripted="scripted" in args)
        if not binary.exists():
            pytest.skip(f"{binary} is not built")
        self.log_path = log
        self.log = open(log, "w")
        self.proc = subprocess.Popen([str(binary), *args], stdout=self.log, stderr=subprocess.STDOUT, text=True,
                                     cwd=ROOT)

    def text(self) -> str:
        return self.log_path.read_text(errors="replace")

    def stop(self, sig=signal.SIGTERM):
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=30)
        self.log.close()
        return self.proc.returncode


class Server(Process):
    def __init__(self, args, log: Path):
        super().__init__(["serve", "--port", "0", *args], log)
        wait_for(lambda: "listening on" in self.text() or self.proc.poll() is not None, 60, "kgym serve to start")
        assert "listening on" in self.text(), self.text()
        self.url = self.text().split("listening on ", 1)[1].split()[0]
        self.client = KgymClient(self.url, timeout=TIMEOUT)


def http_get(url: str, accept: str = "") -> tuple:
    req = urllib.request.Request(url, headers={"Accept": accept} if accept else {})
    with urllib.request.urlopen(req, timeout=30) as r:
        return r.headers.get("Content-Type"), r.read().decode()


def script(**kv) -> str:
    return "# kgym-script: " + " ".join(f"{k}={v}" for k, v in kv.items()) + "\nclass ModelNew:\n    pass\n"


def test_bad_queue_url_is_a_usage_error():
    for args in (["worker", "--queue", "http://127.0.0.1:6379"],
                 ["worker", "--queue", "redis://127.0.0.1:notaport"],
                 ["serve", "--suite", str(ROOT / "examples/suite"), "--queue", "redis://:6379"]):
        r = subprocess.run([str(kgym_binary()), *args], capture_output=True, text=True, timeout=60)
        assert r.returncode == 2, (args, r.stdout, r.stderr)
        assert "redis://HOST:PORT" in r.stderr, r.stderr


def test_worker_backs_off_while_redis_is_unreachable(tmp_path):
    port = free_port()
    worker = Process(["worker", "--queue", f"redis://127.0.0.1:{port}", "--evaluator", "scripted",
                      "--name", "w-backoff"], tmp_path / "worker.log")
    try:
        wait_for(lambda: worker.text().count("cannot reach Redis") >= 3, 30, "three failed attempts in the log")
        delays = [float(line.split("retrying in ")[1].split()[0]) for line in worker.text().splitlines()
                  if "cannot reach Redis" in line and "retrying in" in line]
        assert delays[:3] == sorted(delays[:3]) and delays[2] > delays[0], delays  # growing back-off
        assert worker.proc.poll() is None  # it keeps trying
        redis = Redis(tmp_path, port)
        try:
            wait_for(lambda: "connected to Redis" in worker.text(), 30, "the worker to connect once Redis is up")
            wait_for(lambda: "w-backoff" in redis.cli("HKEYS", "kgym:workers"), 10, "the worker's heartbeat")
            assert worker.stop() == 0
        finally:
            redis.stop()
    finally:
        worker.stop(signal.SIGKILL)


def examples():
    """(task id, candidate file) of every example candidate."""
    out = []
    for f in sorted((ROOT / "examples/candidates").glob("*/*.py")):
        task = next((ROOT / "examples/suite/level1").glob(f.parent.name + ".py"))
        out.append(("L1/" + task.stem, f))
    return out


def test_two_workers_one_killed_mid_job_every_job_one_verdict(tmp_path):
    cands = examples()
    common = ["--cases", "2", "--scale", "0.25"]
    # What `kgym eval` gives each candidate, judged in-process.
    out = tmp_path / "eval.jsonl"
    r = subprocess.run([str(kgym_binary()), "eval", "--suite", str(ROOT / "examples/suite"), "--candidates",
                        str(ROOT / "examples/candidates"), "--profile", "off", "--out", str(out), *common],
                       capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert r.returncode in (0, 1), r.stderr
    want = {}
    for line in out.read_text().splitlines():
        v = json.loads(line)
        cid = v["candidate_id"][:-3] if v["candidate_id"].endswith(".py") else v["candidate_id"]
        want[(v["task_id"], cid)] = v["outcome"]
    assert len(want) == len(cands), want

    redis = Redis(tmp_path)
    server = Server(["--suite", str(ROOT / "examples/suite"), "--queue", redis.url, "--policy-profile", "off",
                     "--max-turns", "1", *common], tmp_path / "server.log")
    workers = [Process(["worker", "--queue", redis.url, "--devices", "cpu", "--workers-per-device", "1",
                        "--name", f"w{i}", "--visibility-timeout", "3", "--heartbeat", "0.5"],
                       tmp_path / f"worker{i}.log") for i in range(2)]
    try:
        jobs = cands + cands[:5]  # 16 evaluations: every example once, five twice
        results = [None] * len(jobs)

        def run(i):
            task_id, path = jobs[i]
            c = KgymClient(server.url, timeout=TIMEOUT)
            ep = c.reset(task_id=task_id, max_turns=1).episode_id
            results[i] = c.submit_kernel(ep, path.read_text())

        threads = [threading.Thread(target=run, args=(i,)) for i in range(len(jobs))]
        for t in threads:
            t.start()

        def judging(w):  # started a job it has not finished
            text = w.text()
            return text.count(" on cpu") >= 2 and text.count(" on cpu") > text.count("(stored)") + text.count("dropped")

        wait_for(lambda: judging(workers[0]), 240, "worker w0 to be judging its second job")
        workers[0].proc.send_signal(signal.SIGKILL)
        workers[0].proc.wait(timeout=10)
        for t in threads:
            t.join(timeout=TIMEOUT)
        assert all(r is not None for r in results), "a step did not return"

        # Each observation carries what `kgym eval` decided for that candidate.
        for (task_id, path), res in zip(jobs, results):
            got = res.observation["feedback"]["outcome"]
            assert got == want[(task_id, path.parent.name + "/" + path.stem)], (task_id, path, got, want)
        # Exactly one stored verdict per job id, the killed worker's job claimed and judged again.
        stats = redis.stats()
        verdict_keys = [k for k in redis.cli("KEYS", "kgym:verdict:*").split("\n") if k]
        assert stats["verdicts"] == len(jobs) == len(verdict_keys), (stats, len(verdict_keys))
        assert stats.get("reclaimed", 0) >= 1, stats
        assert "claimed from a silent worker" in workers[1].text()
        assert redis.cli("XLEN", "kgym:jobs") == "0"
        assert sum(stats[k] for k in stats if k.startswith("outcome:")) == len(jobs)

        # /health lists the workers (the killed one no longer alive), devices and queue depth.
        h = server.client.health()
        assert h["queue"]["depth"] == 0 and h["queue"]["reachable"], h
        alive = {w["name"]: w["alive"] for w in h["queue"]["workers"]}
        wait_for(lambda: not {w["name"]: w["alive"] for w in server.client.health()["queue"]["workers"]}["w0"],
                 30, "w0 to be reported silent")
        assert alive["w1"] and h["queue"]["workers"][0]["devices"][0]["device"] == "cpu", h

        # Prometheus text on /metrics, JSON on /metrics.json and by Accept.
        from prometheus_client.parser import text_string_to_metric_families
        ctype, text = http_get(server.url + "/metrics")
        assert ctype.startswith("text/plain"), ctype
        fams = {f.name: f for f in text_string_to_metric_families(text)}
        for name in ("kgym_queue_depth", "kgym_jobs_in_flight", "kgym_verdict_latency_seconds",
                     "kgym_queue_wait_seconds", "kgym_verdicts", "kgym_device_busy_ratio",
                     "kgym_worker_heartbeat_age_seconds", "kgym_builds"):
            assert name in fams, (name, sorted(fams))
        count = [s.value for s in fams["kgym_verdict_latency_seconds"].samples if s.name.endswith("_count")]
        assert count == [len(jobs)], count
        by_outcome = {s.labels["outcome"]: s.value for s in fams["kgym_verdicts"].samples}
        assert sum(by_outcome.values()) == len(jobs)
        redis_wait = [s.value for s in fams["kgym_queue_wait_seconds"].samples
                      if s.name.endswith("_count") and s.labels.get("queue") == "redis"]
        assert redis_wait == [len(jobs)], redis_wait
        builds = {s.labels["cache"]: s.value for s in fams["kgym_builds"].samples}
        assert builds["cached"] + builds["cold"] == len(jobs), builds
        assert json.loads(http_get(server.url + "/metrics", "application/json")[1])["evaluations"]["completed"] == len(jobs)
        assert server.client.metrics()["queue"]["stats"]["verdicts"] == len(jobs)
    finally:
        for w in workers:
            w.stop()
        server.stop()
        redis.stop()


def test_redis_restart_with_jobs_queued_loses_none(tmp_path):
    redis = Redis(tmp_path)
    server = Server(["--suite", str(ROOT / "examples/suite"), "--queue", redis.url, "--max-turns", "1"],
                    tmp_path / "server.log")
    worker = None
    try:
        n = 6
        results = [None] * n
        outcomes = ["passed", "incorrect", "build_failed", "passed", "timeout", "incorrect"]

        def run(i):
            c = KgymClient(server.url, timeout=TIMEOUT)
            ep = c.reset(task_id="L1/19", max_turns=1).episode_id
            results[i] = c.submit_kernel(ep, script(outcome=outcomes[i]) + f"# job {i}\n")

        threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
        for t in threads:
            t.start()
        wait_for(lambda: redis.cli("XLEN", "kgym:jobs") == str(n), 30, "the jobs on the stream")
        redis.kill()  # SIGKILL: only what the AOF holds comes back
        time.sleep(1.5)  # the server's waiting steps see the outage
        redis.start()
        worker = Process(["worker", "--queue", redis.url, "--evaluator", "scripted", "--workers-per-device", "2"],
                         tmp_path / "worker.log")
        for t in threads:
            t.join(timeout=120)
        assert [r.observation["feedback"]["outcome"] for r in results] == outcomes
        assert redis.stats()["verdicts"] == n
        assert "retrying" in server.text()  # the outage was seen and retried
    finally:
        if worker:
            worker.stop()
        server.stop()
        redis.stop()


def test_episode_survives_server_restart_and_idle_episodes_close(tmp_path):
    store = tmp_path / "episodes.sqlite"
    args = ["--suite", str(ROOT / "examples/suite"), "--evaluator", "scripted", "--store", str(store),
            "--max-turns", "3"]
    server = Server(args, tmp_path / "server1.log")
    c = server.client
    ep = c.reset(task_id="L1/19").episode_id
    first = script(outcome="incorrect", cases="1/5")
    r1 = c.submit_kernel(ep, first)
    assert r1.observation["turn"] == 1 and not r1.done
    server.stop(signal.SIGKILL)  # no clean shutdown: what was written as it happened must do

    server = Server(args + ["--episode-idle-timeout", "5"], tmp_path / "server2.log")
    c = server.client
    try:
        state = c.state(ep)
        assert state["turns_used"] == 1 and state["turns"][0]["outcome"] == "incorrect", state
        r2 = c.submit_kernel(ep, script(outcome="passed", speedup=2.0))
        assert r2.observation["turn"] == 2 and not r2.done
        # The history the next turn sees holds turn 1, judged before the restart.
        assert "incorrect" in r2.observation["history"] and "kgym-script: outcome=incorrect" in r2.observation["history"]
        done = c.finalize(ep)
        assert done.done and len(done.observation["returns"]["rewards"]) == 2
        # An idle episode is closed with a reason.
        idle = c.reset(task_id="L1/19").episode_id
        time.sleep(7.5)
        with pytest.raises(KgymError) as e:
            c.submit_kernel(idle, first)
        assert "idle for more than 5 s" in str(e.value), e.value
    finally:
        server.stop()
    # The journal holds both episodes closed with their reasons.
    import sqlite3
    rows = dict(sqlite3.connect(store).execute("SELECT id, close_reason FROM episodes").fetchall())
    assert rows[ep] == "finalized" and "idle" in rows[idle], rows
