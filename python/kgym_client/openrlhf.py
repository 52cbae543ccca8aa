"""kgym in OpenRLHF (OpenRLHF/OpenRLHF, `openrlhf/utils/agent.py`).

* Multi-turn: `--agent_func_path` a file containing
  `from kgym_client.openrlhf import AgentInstance, AgentExecutor`. `AgentInstance` (an
  `AgentInstanceBase`) opens an episode on the sample's label (a kgym task id) in
  `async reset(states)` and answers `async step(states)` with {"rewards", "scores",
  "environment_feedback", "done", "sampling_params", "extra_logs"}: the turn's reward (a tensor,
  as OpenRLHF calls `.item()`), the feedback as the next user message (empty when done) and, at
  the end, the episode's return from the first turn as `scores`.
* Single-turn: `--remote_rm_url http://HOST:PORT/reward` and `--label_key task_id`; kgym's
  `POST /reward` answers OpenRLHF's format itself (docs/trainers.md).

Settings from the environment: KGYM_URL, KGYM_REWARD (kevin), KGYM_MAX_TURNS (2), KGYM_GAMMA
(0.4), KGYM_BUDGET_TOKENS (600), KGYM_TIMEOUT (900). Classes are built on first access so the
module imports without OpenRLHF.
"""
from __future__ import annotations

from .aio import AsyncKgymClient
from .feedback import observation_text
from .verl import _settings


class KgymAgentLogic:
    """reset/step of the agent instance, apart from OpenRLHF's base class."""

    def __init__(self, *args, **kwargs):
        s = _settings()
        self.settings = s
        self.client = AsyncKgymClient(s["url"], timeout=s["timeout"])
        self.episode_id = None

    async def reset(self, states: dict, **kwargs) -> dict:
        s = self.settings
        r = await self.client.reset(task_id=states["label"], max_turns=s["max_turns"], reward=s["reward"],
                                    gamma=s["gamma"])
        self.episode_id = r.episode_id
        return {"observation": states["observation"]}

    async def step(self, states: dict, **kwargs) -> dict:
        import torch

        r = await self.client.submit_kernel(self.episode_id, states["action_text"])
        fb = r.feedback or {}
        returns = r.observation.get("returns") or {}
        score = float((returns.get("returns") or [r.reward or 0.0])[0])
        feedback = "" if r.done else ("\n" + observation_text(fb, self.settings["budget_tokens"]) +
                                      "\nRevise the kernel and answer with the full ModelNew module.\n")
        if r.done:
            await self.client.close(self.episode_id)
        return {"rewards": torch.tensor(float(r.reward or 0.0)), "scores": torch.tensor(score),
                "environment_feedback": feedback, "done": r.done, "sampling_params": states.get("sampling_params"),
                "extra_logs": {"kgym_passed": torch.tensor(1.0 if fb.get("outcome") == "passed" else 0.0)}}


def _build():
    from openrlhf.utils.agent import AgentInstanceBase, MultiTurnAgentExecutor

    class AgentInstance(KgymAgentLogic, AgentInstanceBase):
        def __init__(self, *args, **kwargs):
            KgymAgentLogic.__init__(self, *args, **kwargs)

    class AgentExecutor(MultiTurnAgentExecutor):
        def __init__(self):
            super().__init__(AgentInstance)

    AgentInstance.__module__ = AgentExecutor.__module__ = __name__
    AgentInstance.__qualname__, AgentExecutor.__qualname__ = "AgentInstance", "AgentExecutor"
    return {"AgentInstance": AgentInstance, "AgentExecutor": AgentExecutor}


_built = {}


def __getattr__(name):
    if name in ("AgentInstance", "AgentExecutor"):
        if not _built:
            _built.update(_build())
        return _built[name]
    raise AttributeError(name)
