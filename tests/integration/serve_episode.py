"""Drives `kgym serve` (real engine, CPU) through kgym_client for one multi-turn episode.
Usage: serve_episode.py KGYM ROOT. Every request has a timeout; the server is always stopped."""
import json
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from kgym_client import KgymClient, KgymError, KgymSession

kgym, root = sys.argv[1], Path(sys.argv[2])
candidates = root / "examples" / "candidates" / "19_ReLU"
proc = subprocess.Popen([kgym, "serve", "--port", "0", "--devices", "cpu", "--workers-per-device", "1",
                         "--suite", str(root / "examples" / "suite"), "--cases", "3", "--policy-profile", "off", "--max-turns", "3"],
                        stdout=subprocess.PIPE, text=True)
try:
    line = proc.stdout.readline()  # the engine starts (imports torch) before the server listens
    assert "listening on" in line, f"kgym serve did not start: {line!r}"
    url = line.split("listening on ", 1)[1].split()[0]
    deadline = time.monotonic() + 60
    while True:
        try:
            with urllib.request.urlopen(url + "/health", timeout=5) as r:
                assert json.loads(r.read())["status"] == "healthy"
                break
        except OSError:
            assert time.monotonic() < deadline, "no /health"
            time.sleep(0.2)

    with KgymSession(url, timeout=300) as s:
        r = s.reset(task_id="L1/19_ReLU", max_turns=3, reward="kevin")
        assert "ModelNew" in r.observation["prompt"] and "relu" in r.observation["prompt"].lower()
        wrong = s.submit_kernel((candidates / "wrong_values.py").read_text())
        print("turn 1:", wrong.feedback["outcome"], wrong.reward)
        assert wrong.feedback["outcome"] == "incorrect", wrong.observation["feedback_text"]
        assert wrong.reward == 0.0 and not wrong.done
        assert wrong.feedback["failing_case"] is not None
        honest = s.submit_kernel("```python\n" + (candidates / "honest.py").read_text() + "```")
        print("turn 2:", honest.feedback["outcome"], honest.reward, honest.feedback["speedup_eager"])
        assert honest.feedback["outcome"] == "passed", honest.observation["feedback_text"]
        assert honest.reward >= 0.3 and honest.feedback["timing"]["runtime_ms"] > 0
        fin = s.finalize()
        ret = fin.observation["returns"]
        assert fin.done and ret["best_turn"] == 2 and ret["final_reward"] == honest.reward
        assert ret["returns"][0] == ret["rewards"][0] + 0.4 * ret["rewards"][1]
        state = s.state()
        assert [t["outcome"] for t in state["turns"]] == ["incorrect", "passed"]

    # Under the strict profile the same plain-PyTorch candidate is rejected, with rule ids.
    c = KgymClient(url, timeout=300)
    r = c.reset(task_id="L1/19_ReLU", single_turn=True, policy_profile="strict")
    strict = c.submit_kernel(r.episode_id, (candidates / "honest.py").read_text())
    print("strict:", strict.feedback["outcome"], [h["rule"] for h in strict.feedback["policy_hits"]])
    assert strict.done and strict.feedback["outcome"] == "policy_rejected"
    assert strict.feedback["policy_hits"] and all(h["rule"] for h in strict.feedback["policy_hits"])
    m = c.metrics()
    assert m["evaluations"]["completed"] == 3 and m["eval_latency_ms"]["count"] == 3, m
    try:
        c.reset(task_id="L1/999_Nothing")
        raise AssertionError("an unknown task must be refused")
    except KgymError as e:
        assert e.code == "UNKNOWN_TASK"
    print("serve episode ok; eval latency ms:", m["eval_latency_ms"])
finally:
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
