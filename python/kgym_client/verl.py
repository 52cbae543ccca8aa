"""kgym in verl (verl-project/verl): a multi-turn agent loop and a single-turn `compute_score`.

* Agent loop: `KgymAgentLoop`, a subclass of verl's `AgentLoopBase`
  (`verl/experimental/agent_loop/agent_loop.py`) registered as "kgym_agent". Its
  `async run(sampling_params, **row)` opens an episode on the row's task, asks verl's server
  manager for each turn's completion, submits it, appends the gym's feedback (response_mask 0 on
  those tokens) and answers an `AgentLoopOutput` whose `reward_score` is the episode's return
  from its first turn (r1 + gamma r2 + ...). The class is built on first access, so this module
  imports without verl; select it with `agent_name: kgym_agent` in the data and an agent loop
  config naming `kgym_client.verl.KgymAgentLoop` (examples/trainers/verl_kgym.yaml).
* Reward function: `compute_score(data_source, solution_str, ground_truth, extra_info)` (async;
  `custom_reward_function.path` = this file's path, `name: compute_score`): one single-turn
  evaluation of the solution on the task named by `ground_truth`; answers a dict with `score`.

Settings (environment variables, read at call time): KGYM_URL (default http://127.0.0.1:8000),
KGYM_REWARD (kevin), KGYM_MAX_TURNS (2), KGYM_GAMMA (0.4), KGYM_BUDGET_TOKENS (600),
KGYM_TIMEOUT (900 s per request; evaluations that take longer are polled, never dropped).
"""
from __future__ import annotations

import os
from uuid import uuid4

from .aio import AsyncKgymClient
from .feedback import observation_text


def _settings() -> dict:
    return {"url": os.environ.get("KGYM_URL", "http://127.0.0.1:8000"),
            "reward": os.environ.get("KGYM_REWARD", "kevin"),
            "max_turns": int(os.environ.get("KGYM_MAX_TURNS", "2")),
            "gamma": float(os.environ.get("KGYM_GAMMA", "0.4")),
            "budget_tokens": int(os.environ.get("KGYM_BUDGET_TOKENS", "600")),
            "timeout": float(os.environ.get("KGYM_TIMEOUT", "900"))}


async def compute_score(data_source, solution_str, ground_truth, extra_info=None, **kwargs) -> dict:
    """verl's custom reward function: `ground_truth` is the kgym task id; the solution's last
    fenced code block (or all of it) is the candidate. Answers {"score": reward, "outcome",
    "speedup_eager", "correct"}; a trusted-side failure raises (verl reports it) instead of
    scoring 0 silently."""
    s = _settings()
    client = AsyncKgymClient(s["url"], timeout=s["timeout"])
    options = dict((extra_info or {}).get("kgym_options") or {})
    options.setdefault("reward", s["reward"])
    [result] = await client.evaluate_many(ground_truth, [solution_str], **options)
    if isinstance(result, Exception):
        raise result
    fb = result.feedback or {}
    return {"score": float(result.reward or 0.0), "outcome": fb.get("outcome"),
            "speedup_eager": fb.get("speedup_eager"), "correct": bool(fb.get("correct"))}


def task_of_row(row: dict) -> str:
    """The task of a verl data row: `extra_info.task_id`, else `reward_model.ground_truth`."""
    task = (row.get("extra_info") or {}).get("task_id") or (row.get("reward_model") or {}).get("ground_truth")
    if not task:
        raise ValueError("a kgym row needs extra_info.task_id or reward_model.ground_truth naming the task")
    return task


async def run_episode(loop, sampling_params: dict, row: dict):
    """The body of KgymAgentLoop.run (apart from verl's classes, so it can be read alone):
    returns (prompt_ids, response_ids, response_mask, response_logprobs, reward_score, num_turns,
    extra_fields)."""
    s = _settings()
    client = AsyncKgymClient(s["url"], timeout=s["timeout"])
    episode = await client.reset(task_id=task_of_row(row), max_turns=s["max_turns"], reward=s["reward"],
                                 gamma=s["gamma"])
    messages = list(row.get("raw_prompt") or [{"role": "user", "content": episode.observation["prompt"]}])
    prompt_ids = list(loop.tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=True,
                                                         return_dict=False))
    response_ids, mask, logprobs = [], [], []
    turns, done, returns = 0, False, None
    try:
        while not done:
            out = await loop.server_manager.generate(request_id=uuid4().hex, prompt_ids=prompt_ids + response_ids,
                                                     sampling_params=sampling_params)
            ids = list(out.token_ids)
            response_ids += ids
            mask += [1] * len(ids)
            logprobs += list(out.log_probs) if getattr(out, "log_probs", None) else [0.0] * len(ids)
            turns += 1
            r = await client.submit_kernel(episode.episode_id, loop.tokenizer.decode(ids, skip_special_tokens=True))
            done = r.done
            if done:
                returns = r.observation.get("returns")
                break
            fb = loop.tokenizer.encode("\n" + observation_text(r.feedback, s["budget_tokens"]) +
                                       "\nRevise the kernel and answer with the full ModelNew module.\n",
                                       add_special_tokens=False)
            response_ids += fb
            mask += [0] * len(fb)
            logprobs += [0.0] * len(fb)
        reward = float(((returns or {}).get("returns") or [0.0])[0])
    finally:
        await client.close(episode.episode_id)
    return prompt_ids, response_ids, mask, logprobs, reward, turns, {"kgym_returns": returns}


def _build():
    from verl.experimental.agent_loop.agent_loop import AgentLoopBase, AgentLoopOutput, register

    class KgymAgentLoop(AgentLoopBase):
        """kgym episodes as a verl agent loop (see the module docstring)."""

        async def run(self, sampling_params, **kwargs):
            prompt_ids, response_ids, mask, logprobs, reward, turns, extra = await run_episode(
                self, sampling_params, kwargs)
            return AgentLoopOutput(prompt_ids=prompt_ids, response_ids=response_ids, response_mask=mask,
                                   response_logprobs=logprobs, reward_score=reward, num_turns=2 * turns + 1,
                                   metrics={}, extra_fields=extra)

    # importable as kgym_client.verl.KgymAgentLoop (verl's registry and Ray pickle it by that name)
    KgymAgentLoop.__module__, KgymAgentLoop.__qualname__ = __name__, "KgymAgentLoop"
    return register("kgym_agent")(KgymAgentLoop)


_built = {}


def __getattr__(name):
    # Built on first access so that importing this module needs no verl.
    if name == "KgymAgentLoop":
        if name not in _built:
            _built[name] = _build()
        return _built[name]
    raise AttributeError(name)
