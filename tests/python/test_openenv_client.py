"""The real `kgym serve` binary driven by openenv-core's own client (GenericEnvClient over /ws)."""
import asyncio

import pytest

openenv_core = pytest.importorskip("openenv.core", reason="openenv-core is installed by scripts/install.sh")
from openenv.core import GenericEnvClient  # noqa: E402


def script(**kv) -> str:
    return "# kgym-script: " + " ".join(f"{k}={v}" for k, v in kv.items()) + "\nclass ModelNew:\n    pass\n"


def test_openenv_async_client_runs_a_multi_turn_episode(scripted_server):
    async def run():
        async with GenericEnvClient(base_url=scripted_server.url, message_timeout_s=30) as env:
            r = await env.reset(task_id="relu", max_turns=2, reward="stepped")
            assert "torch.relu" in r.observation["prompt"] and r.done is False
            r1 = await env.step({"type": "submit_kernel", "code": script(outcome="incorrect")})
            assert r1.reward == 0.25 and r1.observation["feedback"]["outcome"] == "incorrect"
            state = await env.state()
            assert state["turns_used"] == 1 and state["step_count"] == 1
            r2 = await env.step({"type": "submit_kernel", "code": script(speedup=2)})
            assert r2.done and r2.reward == 1.0
            assert r2.observation["returns"]["returns"] == pytest.approx([0.25 + 0.4, 1.0])
            with pytest.raises(RuntimeError, match="EPISODE_DONE"):
                await env.step({"type": "submit_kernel", "code": script()})

    asyncio.run(asyncio.wait_for(run(), 120))


def test_openenv_sync_client(scripted_server):
    env = GenericEnvClient(base_url=scripted_server.url, message_timeout_s=30).sync()
    with env:
        r = env.reset(task_id="tanh", single_turn=True)
        assert r.observation["task_id"] == "tanh"
        with pytest.raises(RuntimeError, match="VALIDATION_ERROR"):
            env.step({"type": "teleport"})
        r = env.step({"type": "submit_kernel", "code": script(speedup=1.5)})
        assert r.done and r.observation["feedback"]["speedup_eager"] == 1.5
