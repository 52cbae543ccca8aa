"""kgym as the environment of TRL's GRPOTrainer (huggingface/trl, `trl/trainer/grpo_trainer.py`).

Two ways in:

* `environment_factory`: `GRPOTrainer(..., environment_factory=kernel_env_factory(url))`. TRL makes
  one `KernelEnv` per rollout (pooled, reused across batches), calls `reset(**dataset_row)` (the
  row's `task_id` column picks the task; the returned prompt is appended to the last user
  message), exposes every public method except `reset`/`get_reward` as a tool (`submit_kernel`,
  `inspect_evaluation`, `finalize`, each with an `Args:` docstring as TRL requires), and sums
  `get_reward()` (the episode's return from its first turn: r1 + gamma r2 + ...) as a reward column.
  TRL runs tools rollout after rollout, so a blocking evaluation serialises the batch.
* `rollout_func`: `GRPOTrainer(..., rollout_func=kernel_rollout_func(url, task_of_prompt))`
  generates every rollout's turn at once and judges the whole group in one request per turn
  (`POST /step_many`); the environment's feedback tokens are masked from the loss (`env_mask`).
  Reward with `reward_funcs=[kgym_return_reward]`.

TRL itself is imported only inside the functions that need it; the module imports without it.
"""
from __future__ import annotations

import re
from typing import Callable, Optional

from .client import KgymClient
from .feedback import observation_text

_FENCE = re.compile(r"```[a-zA-Z0-9_+-]*\n(.*?)```", re.S)


class KernelEnv:
    """One kgym episode per rollout, for `GRPOTrainer(environment_factory=...)`.

    Class attributes (set them with `kernel_env_factory`): `url`, `reward` (per-turn reward name,
    e.g. "kevin"), `max_turns`, `gamma`, `budget_tokens` (length of a tool's answer, 1 token ~ 4
    characters), `timeout` (seconds per HTTP request), `task_column` (the dataset column naming
    the task).
    """

    url = "http://127.0.0.1:8000"
    reward = "kevin"
    max_turns = 2
    gamma = 0.4
    budget_tokens = 600
    timeout = 900.0
    task_column = "task_id"
    options: dict = {}

    def __init__(self):
        self._client = KgymClient(self.url, timeout=self.timeout)
        self._episode: Optional[str] = None
        self._done = False
        self._returns: Optional[dict] = None
        self._turns = 0

    def reset(self, **row) -> str:
        """Opens the episode of this rollout on the row's task; returns the task prompt (TRL
        appends it to the last user message). Closes the previous episode of this instance."""
        if self._episode is not None:
            self._client.close(self._episode)
        task = row.get(self.task_column)
        if not task:
            raise ValueError(f"the dataset row needs a `{self.task_column}` column naming a kgym task")
        r = self._client.reset(task_id=task, max_turns=self.max_turns, reward=self.reward, gamma=self.gamma,
                               **self.options)
        self._episode, self._done, self._returns, self._turns = r.episode_id, False, None, 0
        return r.observation["prompt"]

    def submit_kernel(self, code: str) -> str:
        """Submit a complete ModelNew module to be judged (policy, build, correctness, speed).

        Args:
            code: The full Python source of the module defining class ModelNew.

        Returns:
            The verdict: outcome, the first failing case and the timing.
        """
        if self._done:
            return "The episode has ended; no more submissions are judged."
        r = self._client.submit_kernel(self._episode, code)
        self._turns += 1
        self._done = r.done
        if r.done:
            self._returns = r.observation.get("returns")
        text = observation_text(r.feedback, self.budget_tokens)
        return text + ("\nThat was the last turn." if r.done else "")

    def inspect_evaluation(self, turn: int) -> str:
        """Show the full verdict of an earlier submission again.

        Args:
            turn: The 1-based number of a submission already made.

        Returns:
            That turn's verdict.
        """
        r = self._client.inspect_evaluation(self._episode, turn)
        return observation_text(r.feedback, self.budget_tokens)

    def finalize(self) -> str:
        """End the episode now; the best correct submission counts.

        Returns:
            A short summary of the episode's result.
        """
        self._end()
        rs = (self._returns or {}).get("rewards") or []
        return f"Episode ended after {len(rs)} submission(s); rewards per turn: {rs}."

    def get_reward(self) -> float:
        """The episode's return from its first turn (sum: r1 + gamma r2 + ...), computed by the gym;
        0.0 when nothing was submitted. Ends the episode if the model did not."""
        self._end()
        returns = (self._returns or {}).get("returns") or []
        return float(returns[0]) if returns else 0.0

    def _end(self) -> None:
        if self._episode is None:
            return
        if not self._done:
            r = self._client.finalize(self._episode)
            self._done, self._returns = True, r.observation.get("returns")


def kernel_env_factory(url: str, reward: str = "kevin", max_turns: int = 2, gamma: float = 0.4,
                       budget_tokens: int = 600, timeout: float = 900.0, task_column: str = "task_id",
                       **options) -> type:
    """A zero-argument factory (a KernelEnv subclass) bound to a server and episode settings, for
    `GRPOTrainer(environment_factory=...)`. `options` are further reset options (policy_profile, ...)."""
    return type("KernelEnv", (KernelEnv,), {
        "url": url, "reward": reward, "max_turns": max_turns, "gamma": gamma, "budget_tokens": budget_tokens,
        "timeout": timeout, "task_column": task_column, "options": dict(options), "__module__": __name__})


# ---- rollout_func: the whole group per turn in one request -----------------------------------------

def kgym_return_reward(completions, kgym_return=None, **kwargs) -> list:
    """Reward function for the rollout_func path: the episode returns the rollout computed."""
    if kgym_return is None:
        raise ValueError("kgym_return_reward needs the `kgym_return` column that kernel_rollout_func returns")
    return [float(x) for x in kgym_return]


def hf_generate(trainer, prompt_ids: list, max_new_tokens: int) -> tuple:
    """Samples one completion per prompt with the trainer's model through transformers' `generate`
    (no vLLM); returns (completion token ids, their log-probabilities) per prompt."""
    import torch

    model = trainer.accelerator.unwrap_model(trainer.model)
    tok = trainer.processing_class
    pad = tok.pad_token_id if tok.pad_token_id is not None else tok.eos_token_id
    width = max(len(p) for p in prompt_ids)
    ids = torch.tensor([[pad] * (width - len(p)) + p for p in prompt_ids], device=model.device)
    mask = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in prompt_ids], device=model.device)
    with torch.no_grad():
        out = model.generate(input_ids=ids, attention_mask=mask, max_new_tokens=max_new_tokens, do_sample=True,
                             temperature=trainer.temperature, pad_token_id=pad, return_dict_in_generate=True,
                             output_scores=True)
    new = out.sequences[:, width:]
    logps = torch.stack(out.scores, 1).float().log_softmax(-1).gather(-1, new.unsqueeze(-1)).squeeze(-1)
    completions, logprobs = [], []
    for row, lp in zip(new.tolist(), logps.tolist()):
        n = len(row)
        if tok.eos_token_id in row:
            n = row.index(tok.eos_token_id) + 1
        completions.append(row[:n])
        logprobs.append(lp[:n])
    return completions, logprobs


def _prompt_text(prompt) -> str:
    return prompt[-1]["content"] if isinstance(prompt, list) else str(prompt)


def kernel_rollout_func(url: str, task_of_prompt: Callable[[object], str], turns: int = 2, gamma: float = 0.4,
                        reward: str = "kevin", budget_tokens: int = 600, max_new_tokens: int = 1024,
                        generate: Optional[Callable] = None, timeout: float = 900.0, **options) -> Callable:
    """A TRL `rollout_func(prompts, trainer)`: `turns` turns per rollout; each turn generates every
    rollout's completion in one `generate` call and judges them in one `POST /step_many`; the
    gym's feedback becomes the next user message, its tokens masked (env_mask 0). The episode's
    return (sum, `gamma`: r1 + 0.4 r2 for two turns) goes to the `kgym_return` column.

    `task_of_prompt(prompt) -> task id` finds each prompt's task (e.g. a dict lookup on the prompt
    text built with the dataset); `generate(trainer, prompt_ids, max_new_tokens) -> (ids, logprobs)`
    samples completions (default `hf_generate`, transformers without vLLM)."""
    generate = generate or hf_generate
    client = KgymClient(url, timeout=timeout)

    def rollout_func(prompts: list, trainer) -> dict:
        tok = trainer.processing_class
        episodes = [client.reset(task_id=task_of_prompt(p), max_turns=turns, reward=reward, gamma=gamma,
                                 **options).episode_id for p in prompts]
        messages = [list(p) if isinstance(p, list) else [{"role": "user", "content": str(p)}] for p in prompts]
        prompt_ids = [tok.apply_chat_template(m, add_generation_prompt=True, tokenize=True, return_dict=False)
                      for m in messages]
        prompt_ids = [list(p["input_ids"]) if isinstance(p, dict) else list(p) for p in prompt_ids]
        completion_ids = [[] for _ in prompts]
        env_mask = [[] for _ in prompts]
        logprobs = [[] for _ in prompts]
        context = [list(p) for p in prompt_ids]
        done = [False] * len(prompts)
        for turn in range(turns):
            live = [i for i in range(len(prompts)) if not done[i]]
            if not live:
                break
            ids, lps = generate(trainer, [context[i] for i in live], max_new_tokens)
            texts = tok.batch_decode(ids, skip_special_tokens=True)
            results = client.step_many([(episodes[i], {"type": "submit_kernel", "code": texts[k]})
                                        for k, i in enumerate(live)])
            for k, i in enumerate(live):
                completion_ids[i] += ids[k]
                env_mask[i] += [1] * len(ids[k])
                logprobs[i] += lps[k]
                context[i] += ids[k]
                r = results[k]
                if isinstance(r, Exception):
                    raise r
                done[i] = r.done
                if r.done or turn == turns - 1:
                    continue
                feedback = tok(("\n" + observation_text(r.feedback, budget_tokens) +
                                "\nRevise the kernel and answer with the full ModelNew module.\n"),
                               add_special_tokens=False)["input_ids"]
                completion_ids[i] += feedback
                env_mask[i] += [0] * len(feedback)
                logprobs[i] += [0.0] * len(feedback)
                context[i] += feedback
        open_ones = [(e, {"type": "finalize"}) for e, d in zip(episodes, done) if not d]
        finals = client.step_many(open_ones) if open_ones else []
        ended = iter(finals)
        kgym_return = []
        for e, d in zip(episodes, done):
            r = client.state(e) if d else next(ended)
            if isinstance(r, Exception):
                raise r
            rets = (r.get("returns") if isinstance(r, dict) else r.observation.get("returns")) or {}
            kgym_return.append(float((rets.get("returns") or [0.0])[0]))
            client.close(e)
        return {"prompt_ids": prompt_ids, "completion_ids": completion_ids, "logprobs": logprobs,
                "env_mask": env_mask, "kgym_return": kgym_return}

    return rollout_func
