"""The batch routes of `kgym serve` (docs/server.md, "Batches"): POST /evaluate_many, POST
/step_many, GET /batch (a handle for a batch still running) and OpenRLHF's POST /reward.

The 64-candidate group runs on the real engine (CPU, examples/suite, profile off) and each answer
is checked against `kgym eval` on the same code; the routes' other behaviours use the scripted
evaluator (deterministic verdicts, `# kgym-script:` lines)."""
import json
import os
import random
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from kgym_client import KgymClient, KgymError

sys.path.insert(0, str(Path(__file__).parent))
from conftest import ROOT, kgym_eval  # noqa: E402

TASK = "L1/19_ReLU"
KINDS = {
    "honest": (ROOT / "examples/candidates/19_ReLU/honest.py").read_text(),
    "wrong_values": (ROOT / "examples/candidates/19_ReLU/wrong_values.py").read_text(),
    "in_place": (ROOT / "examples/candidates/19_ReLU/in_place.py").read_text(),
    "syntax_error": (ROOT / "examples/candidates/40_LayerNorm/syntax_error.py").read_text(),
}


def script(**kv) -> str:
    return "# kgym-script: " + " ".join(f"{k}={v}" for k, v in kv.items()) + "\nclass ModelNew:\n    pass\n"


def post(url, path, body):
    req = urllib.request.Request(url + path, data=json.dumps(body).encode(), method="POST",
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=120) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def get(url, path):
    with urllib.request.urlopen(url + path, timeout=120) as r:
        return r.status, json.loads(r.read())


def test_evaluate_many_64_candidates_match_kgym_eval(engine_server, tmp_path):
    """64 candidates in one request, in a shuffled order of four kinds, each made distinct by a
    trailing comment line. By default `kgym eval` judges the four bodies and each answer must match
    its body's verdict (a comment changes no gate); KGYM_BATCH_EVAL_ALL=1 has `kgym eval` judge
    all 64 files as sent (about 12 minutes on a loaded 2-core machine, so not in CI)."""
    rng = random.Random(7)
    kinds = [name for name in KINDS for _ in range(16)]
    rng.shuffle(kinds)
    codes = [KINDS[k] + f"\n# candidate {i}\n" for i, k in enumerate(kinds)]
    client = KgymClient(engine_server.url, timeout=900)
    results = client.evaluate_many(TASK, codes, policy_profile="off", wait_s=30)
    assert len(results) == 64
    assert not [r for r in results if isinstance(r, Exception)], "an evaluation was lost"
    if os.environ.get("KGYM_BATCH_EVAL_ALL") == "1":
        verdicts = kgym_eval({f"c{i}": c for i, c in enumerate(codes)}, TASK, tmp_path)
        expected = [verdicts[f"c{i}"] for i in range(64)]
    else:
        verdicts = kgym_eval(dict(KINDS), TASK, tmp_path)
        expected = [verdicts[k] for k in kinds]
    for i, (r, v) in enumerate(zip(results, expected)):
        assert r.feedback["outcome"] == v["outcome"], f"candidate {i} ({kinds[i]})"
        assert r.done and r.observation["task_id"] == v["task_id"]
        if v["outcome"] == "passed":  # kevin: 0.3 + the speedup each evaluation measured
            assert r.reward == pytest.approx(0.3 + r.feedback["speedup_eager"])
        else:
            assert r.reward == v["reward"]
    assert {v["outcome"] for v in expected} >= {"passed", "incorrect", "contract_violation"}


def test_batch_still_running_answers_a_handle(scripted_server):
    codes = [script(outcome="passed", speedup=2.0, delay_ms=600), script(outcome="incorrect", cases="1/5")]
    status, body = post(scripted_server.url, "/evaluate_many", {"task_id": "relu", "codes": codes, "wait_s": 0})
    assert status == 202 and body["status"] == "running" and body["total"] == 2
    status, body = get(scripted_server.url, f"/batch?handle={body['handle']}&wait_s=30")
    assert status == 200 and body["status"] == "done"
    assert [r["observation"]["feedback"]["outcome"] for r in body["results"]] == ["passed", "incorrect"]
    # the client polls the handle itself
    results = KgymClient(scripted_server.url, timeout=30).evaluate_many("relu", codes, wait_s=0.1)
    assert [r.feedback["outcome"] for r in results] == ["passed", "incorrect"]
    status, body = post(scripted_server.url, "/evaluate_many", {"task_id": "nope", "codes": codes})
    assert status == 404 and body["data"]["code"] == "UNKNOWN_TASK"
    status, body = post(scripted_server.url, "/evaluate_many", {"task_id": "relu", "codes": "x"})
    assert status == 422 and body["data"]["code"] == "VALIDATION_ERROR"
    with pytest.raises(KgymError) as e:
        KgymClient(scripted_server.url).step_many([])
    assert e.value.code == "VALIDATION_ERROR"
    with pytest.raises(urllib.error.HTTPError):
        get(scripted_server.url, "/batch?handle=batch-999999")


def test_step_many_in_order_with_per_item_errors(scripted_server):
    c = KgymClient(scripted_server.url, timeout=30)
    eps = [c.reset(task_id=t, max_turns=2).episode_id for t in ("relu", "tanh", "sigmoid")]
    steps = [(eps[0], {"type": "submit_kernel", "code": script(outcome="incorrect", cases="2/5", delay_ms=300)}),
             ("ep-unknown", {"type": "finalize"}),
             (eps[1], {"type": "submit_kernel", "code": script(outcome="passed", speedup=1.5)}),
             (eps[2], {"type": "finalize"})]
    out = c.step_many(steps)
    assert out[0].feedback["outcome"] == "incorrect" and out[0].episode_id == eps[0] and not out[0].done
    assert isinstance(out[1], KgymError) and out[1].code == "UNKNOWN_EPISODE" and out[1].status == 404
    assert out[2].feedback["outcome"] == "passed" and out[2].episode_id == eps[1]
    assert out[3].done and out[3].episode_id == eps[2]
    assert c.state(eps[0])["turns_used"] == 1


def test_openrlhf_reward_route_and_retry(scripted_server):
    prompt = "Write ModelNew.\n"
    query = [prompt + "Here:\n```python\n" + script(outcome="passed", speedup=2.0, delay_ms=200) + "```",
             prompt + script(outcome="incorrect", cases="0/5"),
             "no prompt prefix " + script(outcome="passed", speedup=3.0)]
    body = {"query": query, "prompts": [prompt, prompt, prompt],
            "labels": ["relu", json.dumps({"task_id": "tanh", "reward": "kevin"}), "sigmoid"]}
    before = get(scripted_server.url, "/metrics.json")[1]["evaluations"]["submitted"]
    status, out = post(scripted_server.url, "/reward", body)
    assert status == 200
    assert out["rewards"] == out["scores"] == [1.0, 0.0, 1.0]  # stepped (server default) for relu/sigmoid, kevin for tanh
    assert out["extra_logs"]["kgym_passed"] == [1.0, 0.0, 1.0]
    assert out["outcomes"] == ["passed", "incorrect", "passed"]
    after = get(scripted_server.url, "/metrics.json")[1]["evaluations"]["submitted"]
    assert after - before == 3
    status, again = post(scripted_server.url, "/reward", body)  # OpenRLHF's retry of the same body
    assert status == 200 and again == out
    assert get(scripted_server.url, "/metrics.json")[1]["evaluations"]["submitted"] == after, "a retry evaluated again"
    status, bad = post(scripted_server.url, "/reward", {"query": ["x"], "prompts": [], "labels": ["relu"]})
    assert status == 422 and "one entry per sample" in bad["data"]["message"]
