"""kgym in SkyRL (NovaSky-AI/SkyRL): `KgymTextEnv`, a `skyrl_gym` `BaseTextEnv`
(`skyrl-gym/skyrl_gym/envs/base_text_env.py`), registered as "kgym" by `register()`.

SkyRL builds an env per trajectory with `(env_config, extras)`: `extras["task_id"]` (or
`extras["reward_spec"]["ground_truth"]`) names the task; `env_config` may carry `url`, `reward`,
`max_turns`, `gamma`, `budget_tokens`, `timeout` (defaults: KGYM_URL or http://127.0.0.1:8000,
kevin, 2, 0.4, 600, 900). `init(prompt)` opens the episode (an empty prompt is replaced by the
gym's task prompt); `step(action)` submits the action (its last fenced block is the kernel) and
answers {observations: the feedback as the next user message, reward: this turn's reward, done,
metadata: outcome, speedup and, at the end, the episode's returns}. SkyRL runs steps in a thread
pool, so the blocking client parallelises across trajectories.
"""
from __future__ import annotations

import os

from .client import KgymClient
from .feedback import observation_text

ENV_ID = "kgym"


def _cfg(env_config, key, default):
    if env_config is None:
        return default
    getter = getattr(env_config, "get", None)
    value = getter(key, None) if getter else getattr(env_config, key, None)
    return default if value is None else value


def _build():
    from skyrl_gym.envs.base_text_env import BaseTextEnv, BaseTextEnvStepOutput

    class KgymTextEnv(BaseTextEnv):
        """One kgym episode per trajectory (see the module docstring)."""

        def __init__(self, env_config=None, extras: dict = None):
            super().__init__()
            extras = extras or {}
            self.task_id = extras.get("task_id") or (extras.get("reward_spec") or {}).get("ground_truth")
            if not self.task_id:
                raise ValueError("kgym env needs extras['task_id'] or extras['reward_spec']['ground_truth']")
            self.client = KgymClient(_cfg(env_config, "url", os.environ.get("KGYM_URL", "http://127.0.0.1:8000")),
                                     timeout=float(_cfg(env_config, "timeout", 900)))
            self.reward_name = _cfg(env_config, "reward", "kevin")
            self.max_turns = int(_cfg(env_config, "max_turns", 2))
            self.gamma = float(_cfg(env_config, "gamma", 0.4))
            self.budget_tokens = int(_cfg(env_config, "budget_tokens", 600))
            self.episode_id = None

        def init(self, prompt):
            r = self.client.reset(task_id=self.task_id, max_turns=self.max_turns, reward=self.reward_name,
                                  gamma=self.gamma)
            self.episode_id = r.episode_id
            if not prompt:
                prompt = [{"role": "user", "content": r.observation["prompt"]}]
            return prompt, {"task_id": r.observation["task_id"], "episode_id": self.episode_id}

        def step(self, action: str):
            self.turns += 1
            r = self.client.submit_kernel(self.episode_id, action)
            fb = r.feedback or {}
            meta = {"outcome": fb.get("outcome"), "speedup_eager": fb.get("speedup_eager"),
                    "returns": r.observation.get("returns")}
            obs = [] if r.done else [{"role": "user", "content": observation_text(fb, self.budget_tokens)}]
            return BaseTextEnvStepOutput(observations=obs, reward=float(r.reward or 0.0), done=r.done, metadata=meta)

        def close(self):
            if self.episode_id is not None:
                self.client.close(self.episode_id)
                self.episode_id = None

    KgymTextEnv.__module__, KgymTextEnv.__qualname__ = __name__, "KgymTextEnv"
    return KgymTextEnv


_built = {}


def __getattr__(name):
    # Built on first access so that importing this module needs no skyrl_gym.
    if name == "KgymTextEnv":
        if name not in _built:
            _built[name] = _build()
        return _built[name]
    raise AttributeError(name)


def register(env_id: str = ENV_ID) -> str:
    """Registers KgymTextEnv with skyrl_gym under `env_id` (use it as the data's `env_class`)."""
    import skyrl_gym

    skyrl_gym.register(id=env_id, entry_point=f"{__name__}:KgymTextEnv")
    return env_id
