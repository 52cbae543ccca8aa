"""The real `kgym serve` binary driven by kgym_client (sync and async, HTTP and WebSocket).

The server runs the scripted evaluator: each code carries a `# kgym-script:` directive that fixes
its verdict, so results are deterministic and need no torch."""
import asyncio
import json
import socket
import subprocess
import threading
import time

import pytest

from conftest import ServerProcess, kgym_binary
from kgym_client import AsyncKgymClient, AsyncKgymSession, KgymClient, KgymError, KgymSession

TIMEOUT = 30.0


def script(**kv) -> str:
    directive = " ".join(f"{k}={v}" for k, v in kv.items())
    return f"# kgym-script: {directive}\nclass ModelNew:\n    pass\n"


def test_health_metadata_schema(scripted_server):
    c = KgymClient(scripted_server.url, timeout=TIMEOUT)
    h = c.health()
    assert h["status"] == "healthy" and h["workers"] == 2 and "queue_length" in h
    meta = c.metadata()
    assert sorted(meta["tasks"]) == ["relu", "sigmoid", "tanh"]
    readme = meta["readme_content"]
    assert isinstance(readme, str) and readme.strip() and "submit_kernel" in readme, readme
    assert "stepped" in meta["rewards"]
    schema = c.schema()
    assert {"action", "observation", "state"} <= set(schema)
    assert {o["properties"]["type"]["const"] for o in schema["action"]["oneOf"]} == {
        "submit_kernel", "inspect_evaluation", "finalize"}


def test_tasks_list_is_what_serve_serves_by_default():
    """Without --suite, `kgym serve` serves the built-in default suite; `kgym tasks list` lists
    the same tasks in the same order."""
    binary = kgym_binary(scripted=True)
    if not binary.exists():
        pytest.skip(f"{binary} is not built")
    listed = subprocess.run([str(binary), "tasks", "list", "--json"], capture_output=True, text=True, timeout=120)
    assert listed.returncode == 0, listed.stderr[-2000:]
    ids = [json.loads(line)["id"] for line in listed.stdout.splitlines() if line.strip()]
    server = ServerProcess(["--devices", "cpu", "--evaluator", "scripted"])
    try:
        served = KgymClient(server.url, timeout=TIMEOUT).metadata()["tasks"]
    finally:
        server.stop()
    assert ids == served, (len(ids), len(served), sorted(set(ids) ^ set(served))[:10])
    # both parts of the default: the examples' tasks and the generated default suite
    assert "L1/19_ReLU" in ids and any(i.startswith("gen/") for i in ids), ids


def test_http_multi_turn_episode(scripted_server):
    c = KgymClient(scripted_server.url, timeout=TIMEOUT)
    r = c.reset(task_id="relu", max_turns=3, gamma=0.4)
    assert "torch.relu" in r.observation["prompt"] and not r.done and r.reward is None
    eid = r.episode_id
    r1 = c.submit_kernel(eid, script(outcome="incorrect", cases="2/5"))
    assert r1.reward == 0.25 and r1.feedback["outcome"] == "incorrect"
    assert r1.feedback["failing_case"]["first_mismatch_index"] == [0, 3]
    assert "Failing case" in r1.observation["prompt"] and "Turn 1" in r1.observation["history"]
    r2 = c.submit_kernel(eid, "Here it is:\n```python\n" + script(outcome="passed", speedup=2.5) + "```\n")
    assert r2.reward == 1.0 and r2.feedback["speedup_eager"] == 2.5
    back = c.inspect_evaluation(eid, 1)
    assert back.observation["feedback_turn"] == 1 and back.reward is None
    fin = c.finalize(eid)
    assert fin.done
    ret = fin.observation["returns"]
    assert ret["best_turn"] == 2 and ret["final_reward"] == 1.0
    assert ret["returns"][0] == pytest.approx(0.25 + 0.4 * 1.0)
    st = c.state(eid)
    assert st["episode_id"] == eid and st["step_count"] == 4 and st["done"]
    assert [t["outcome"] for t in st["turns"]] == ["incorrect", "passed"]
    with pytest.raises(KgymError) as e:
        c.submit_kernel(eid, script())
    assert e.value.code == "EPISODE_DONE" and e.value.status == 409


def test_single_turn_and_max_return(scripted_server):
    c = KgymClient(scripted_server.url, timeout=TIMEOUT)
    r = c.reset(split="all", seed=2, single_turn=True, reward="stepped")
    r1 = c.submit_kernel(r.episode_id, script(outcome="build_failed", error="nvcc-exploded"))
    assert r1.done and r1.reward == 0.0
    assert "nvcc-exploded" in r1.observation["feedback_text"]
    r = c.reset(task_id="tanh", max_turns=2, **{"return": "max", "gamma": 0.8})
    c.submit_kernel(r.episode_id, script(outcome="runtime_error"))
    last = c.submit_kernel(r.episode_id, script(outcome="passed", speedup=3))
    assert last.observation["returns"]["returns"] == pytest.approx([0.8, 1.0])
    # The wire format's options object works as a dict too (fresh-user run, session 18: it was
    # refused as an unknown option `options`); a keyword wins over the dict.
    r = c.reset(task_id="tanh", options={"single_turn": True, "reward": "stepped"}, reward="kevin")
    r1 = c.submit_kernel(r.episode_id, script(outcome="passed", speedup=3))
    assert r1.done
    with pytest.raises(TypeError):
        c.reset(task_id="tanh", options=["single_turn"])


def test_bad_requests_get_clear_errors(scripted_server):
    c = KgymClient(scripted_server.url, timeout=TIMEOUT)
    cases = [
        (lambda: c.reset(task_id="L9/nothing"), "UNKNOWN_TASK", 404),
        (lambda: c.reset(max_turns=0), "VALIDATION_ERROR", 422),
        (lambda: c.reset(reward="roofline"), "VALIDATION_ERROR", 422),
        (lambda: c.step("ep-nope", {"type": "finalize"}), "UNKNOWN_EPISODE", 404),
    ]
    eid = c.reset(task_id="sigmoid").episode_id
    cases += [
        (lambda: c.step(eid, {"type": "submit_kernel"}), "VALIDATION_ERROR", 422),
        (lambda: c.step(eid, {"type": "warp"}), "VALIDATION_ERROR", 422),
        (lambda: c.submit_kernel(eid, "x" * 5000), "PAYLOAD_TOO_LARGE", 413),
        (lambda: c.inspect_evaluation(eid, 1), "VALIDATION_ERROR", 422),
    ]
    for call, code, status in cases:
        with pytest.raises(KgymError) as e:
            call()
        assert (e.value.code, e.value.status) == (code, status), e.value.message
        assert e.value.message
    ok = c.submit_kernel(eid, script(outcome="passed", speedup=1.2))
    assert ok.observation["turn"] == 1  # the errors did not disturb the episode


def test_websocket_session(scripted_server):
    with KgymSession(scripted_server.url, timeout=TIMEOUT) as s:
        with pytest.raises(KgymError) as e:
            s.finalize()
        assert e.value.code == "UNKNOWN_EPISODE"
        r = s.reset(task_id="tanh", max_turns=2)
        assert r.observation["task_id"] == "tanh"
        r1 = s.submit_kernel(script(outcome="policy_rejected", rule="no-torch-fallback"))
        assert r1.feedback["policy_hits"][0]["rule"] == "no-torch-fallback" and r1.reward == 0.0
        assert s.state()["turns_used"] == 1
        r2 = s.submit_kernel(script(outcome="passed", speedup=2))
        assert r2.done and r2.observation["returns"]["best_turn"] == 2


def test_async_sessions_see_only_their_own_results(scripted_server):
    async def one(i: int):
        async with AsyncKgymSession(scripted_server.url, timeout=TIMEOUT) as s:
            r = await s.reset(seed=i, max_turns=2)
            speedups = [1 + i / 100 + t / 1000 for t in (1, 2)]
            results = [await s.submit_kernel(script(outcome="passed", speedup=x)) for x in speedups]
            assert [res.feedback["speedup_eager"] for res in results] == pytest.approx(speedups)
            assert all(r.episode_id in res.feedback["messages"][0] for res in results)
            return results[-1].done

    async def main():
        c = AsyncKgymClient(scripted_server.url, timeout=TIMEOUT)
        assert (await c.health())["status"] == "healthy"
        r = await c.reset(task_id="relu", max_turns=1)
        rr = await c.submit_kernel(r.episode_id, script(outcome="passed", speedup=4))
        assert rr.done and rr.reward == 1.0
        assert (await c.state(r.episode_id))["turns_used"] == 1
        return await asyncio.gather(*(one(i) for i in range(24)))

    assert all(asyncio.run(asyncio.wait_for(main(), 120)))


def test_advantages_api(scripted_server):
    c = KgymClient(scripted_server.url, timeout=TIMEOUT)
    assert c.advantages([1.0, 2.0, 3.0], "dr_grpo") == pytest.approx([-1.0, 0.0, 1.0])
    a = c.advantages([1.0, 2.0, 3.0], "grpo")
    assert a[0] == pytest.approx(-1.0, rel=1e-3) and a[1] == pytest.approx(0.0)
    with pytest.raises(KgymError) as e:
        c.advantages([], "grpo")
    assert e.value.code == "VALIDATION_ERROR"


def test_disconnect_cancels_queued_work(scripted_server):
    c = KgymClient(scripted_server.url, timeout=TIMEOUT)
    before = c.metrics()["evaluations"]["cancelled"]
    busy = [c.reset(task_id="relu").episode_id for _ in range(2)]
    threads = [threading.Thread(target=c.submit_kernel, args=(eid, script(delay_ms=4000))) for eid in busy]
    for t in threads:
        t.start()
    deadline = time.monotonic() + TIMEOUT
    while c.health()["busy_workers"] < 2:  # both workers are held by the slow evaluations
        assert time.monotonic() < deadline
        time.sleep(0.05)
    s = KgymSession(scripted_server.url, timeout=TIMEOUT)
    s.reset(task_id="tanh")
    from kgym_client._protocol import OP_TEXT, dumps, encode_frame
    s._sock.sendall(encode_frame(OP_TEXT, dumps({"type": "step", "data": {"type": "submit_kernel", "code": script()}})))
    while c.health()["queue_length"] < 1:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    s._sock.shutdown(socket.SHUT_RDWR)  # hang up without waiting for the answer
    s._sock.close()
    while c.metrics()["evaluations"]["cancelled"] == before:
        assert time.monotonic() < deadline, "the queued evaluation was not cancelled"
        time.sleep(0.05)
    for t in threads:
        t.join(TIMEOUT)
    m = c.metrics()
    assert m["evaluations"]["cancelled"] == before + 1 and m["queue_length"] == 0


@pytest.fixture(scope="module")
def roofline_server(tmp_path_factory):
    """A flat suite with a tasks manifest: relu has a cost model (5e5 bytes: 0.5 ms at 1 GB/s)."""
    import json
    from conftest import TASK_SOURCE, ServerProcess
    d = tmp_path_factory.mktemp("roofline_suite")
    for op in ("relu", "tanh"):
        (d / f"{op}.py").write_text(TASK_SOURCE.format(op=op))
    (d / "manifest.json").write_text(json.dumps({"tasks": [{"path": "relu.py", "cost": {"bytes": 5e5, "flops": 0}}]}))
    server = ServerProcess(["--evaluator", "scripted", "--suite", str(d), "--roofline-bandwidth-gbs", "1",
                            "--roofline-peak-tflops", "1"])
    yield server
    server.stop()


def test_roofline_reward_from_the_suite_manifest(roofline_server):
    c = KgymClient(roofline_server.url, timeout=TIMEOUT)
    r = c.reset(task_id="relu", reward="roofline", single_turn=True)
    # eager 1 ms (scripted), candidate 1/1.6 ms, floor 0.5 ms: (1 - 0.625) / (1 - 0.5)
    assert c.submit_kernel(r.episode_id, script(speedup=1.6)).reward == pytest.approx(0.75)
    with pytest.raises(KgymError) as e:
        c.reset(task_id="tanh", reward="roofline")
    assert e.value.code == "VALIDATION_ERROR" and "roofline" in e.value.message
    r = c.reset(task_id="tanh", reward="roofline", roofline_floor_ms=0.25, single_turn=True)
    assert c.submit_kernel(r.episode_id, script(speedup=2)).reward == pytest.approx((1 - 0.5) / 0.75)
