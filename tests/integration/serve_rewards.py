"""Every reward `/metadata` advertises, end to end through `kgym serve` with the real engine on
the CPU, and each policy profile, with `--scale` reaching the engine; the server runs without
--suite, so it serves the built-in default suite.
Usage: serve_rewards.py KGYM ROOT. Every request has a timeout; the server is always stopped.

The honest ReLU below raises on the unscaled input (16 x 4096), so it passes only when the
server's --scale 0.25 reached the engine (4 x 1024). Each reward's value is checked against its
formula (docs/rewards.md) on the numbers the turn's feedback reports."""
import math
import sys
from pathlib import Path

from kgym_client import KgymClient

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))
from conftest import ServerProcess  # noqa: E402 - the tests' one way to start kgym serve

kgym, root = sys.argv[1], Path(sys.argv[2])
HONEST_SCALED = '''import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        if x.shape[-1] >= 4096:  # the unscaled task: --scale did not reach the engine
            raise RuntimeError(f"unscaled input {tuple(x.shape)}")
        return torch.clamp_min(x, 0.0)
'''
FLOOR_MS = 1e-6  # a roofline floor far below any CPU time


def expected(reward, fb):
    """The reward's formula (src/reward/) on the feedback's numbers, for a passed turn."""
    s = fb["speedup_eager"]
    t = fb["timing"]
    if reward == "kevin":
        return 0.3 + s
    if reward == "log_speed":
        ci = fb["speedup_eager_ci"]  # the noise gate, on by default for log_speed (docs/rewards.md)
        if ci is not None and ci[0] <= 1.0 <= ci[1]:
            s = min(1.0, s)
        term = min(1.0, max(0.0, math.log(s / 0.75) / math.log(4 / 0.75)))
        if t["spread"] > 0.2:
            term *= 0.5
        return fb["cases_passed"] / fb["cases_total"] + term
    if reward == "stepped":
        return 1.0 if s > 1.03 else 0.5
    if reward == "roofline":
        ref, ms = t["ref_runtime_ms"], t["runtime_ms"]
        return min(1.0, max(0.0, (ref - ms) / (ref - FLOOR_MS)))
    raise AssertionError(f"/metadata lists a reward this test does not know: {reward}; add its formula here")


# No --suite: the built-in default suite (examples/suite and the generated default suite), as eval.
server = ServerProcess(["--devices", "cpu", "--cases", "2", "--scale", "0.25", "--policy-profile", "off", "--max-turns", "1"],
                       binary=kgym)
try:
    url = server.url
    c = KgymClient(url, timeout=300)
    meta = c.metadata()
    assert "L1/19_ReLU" in meta["tasks"] and any(t.startswith("gen/") for t in meta["tasks"]), meta["tasks"]
    rewards = meta["rewards"]
    assert set(rewards) >= {"kevin", "log_speed", "stepped", "roofline"}, rewards
    for reward in rewards:
        r = c.reset(task_id="L1/19_ReLU", reward=reward, roofline_floor_ms=FLOOR_MS)
        turn = c.submit_kernel(r.episode_id, HONEST_SCALED)
        fb = turn.feedback
        print(f"{reward}: {fb['outcome']} reward {turn.reward} speedup {fb['speedup_eager']}")
        assert fb["outcome"] == "passed", turn.observation["feedback_text"]
        assert turn.done and turn.reward is not None
        assert abs(turn.reward - expected(reward, fb)) < 1e-9, (reward, turn.reward, expected(reward, fb), fb)

    # Each profile reaches the engine's policy gate: the plain-PyTorch candidate is judged under
    # off (above) and rejected with rule ids under the three that ask for custom kernels.
    for profile in ("strict", "hybrid", "kernelbench"):
        r = c.reset(task_id="L1/19_ReLU", policy_profile=profile, reward="stepped")
        turn = c.submit_kernel(r.episode_id, HONEST_SCALED)
        fb = turn.feedback
        print(f"{profile}: {fb['outcome']} {[h['rule'] for h in fb['policy_hits']]}")
        assert fb["outcome"] == "policy_rejected" and fb["policy_hits"], turn.observation["feedback_text"]
        assert f"policy profile {profile}" in fb["messages"][0], fb["messages"]
        assert turn.reward == 0.0
    print("serve rewards ok")
finally:
    server.stop()
