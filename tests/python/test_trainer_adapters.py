"""kgym_client's trainer adapters against `kgym serve` (scripted evaluator: deterministic verdicts).

- SkyRL: the real `skyrl_gym` (BaseTextEnv, register, make), installed by scripts/install.sh.
- verl and OpenRLHF do not install on the CPU CI machine (verl pins transformers < 5.11, which the
  TRL test's release does not accept, and needs ray[default]; OpenRLHF pins deepspeed, flash-attn
  (CUDA build) and ray): their base classes are stood in by modules with the exact signatures read
  in their sources (verl 0.9.1 `verl/experimental/agent_loop/agent_loop.py`: AgentLoopBase.__init__
  (trainer_config, server_manager, tokenizer, processor, dataset_cls, data_config, ...), async
  run(sampling_params, **kwargs) -> AgentLoopOutput, server_manager.generate(request_id=, prompt_ids=,
  sampling_params=) -> token_ids/log_probs, register(name); OpenRLHF 0.11.2 `openrlhf/utils/agent.py`:
  AgentInstanceBase with abstract __init__ and async step, async reset(states),
  MultiTurnAgentExecutor(agent_instance_cls) asserting the subclass, step answers with
  rewards.item()).
- The feedback text (outcome, first failing case, timing with its interval, token budget).
- The package: `pip install ./python` and that the base imports no trainer.
"""
import asyncio
import json
import subprocess
import sys
import types
from pathlib import Path

import pytest

from kgym_client import KgymClient
from kgym_client.feedback import observation_text

sys.path.insert(0, str(Path(__file__).parent))
from conftest import ROOT  # noqa: E402
from doc_snippets import snippet  # noqa: E402


def script(**kv) -> str:
    return "# kgym-script: " + " ".join(f"{k}={v}" for k, v in kv.items()) + "\nclass ModelNew:\n    pass\n"


WRONG = script(outcome="incorrect", cases="2/5")
FAST = script(outcome="passed", speedup=2.0)


class ByteTokenizer:
    """Token = byte; enough of a tokenizer for the agent loops."""
    eos_token_id = 0

    def encode(self, text, add_special_tokens=False):
        return list(text.encode())

    def decode(self, ids, skip_special_tokens=True):
        return bytes(ids).decode()

    def apply_chat_template(self, messages, add_generation_prompt=True, tokenize=True, return_dict=False):
        return self.encode("".join(m["content"] for m in messages) + "\nassistant:")

    def __call__(self, text, add_special_tokens=False, return_tensors=None):
        import torch
        ids = self.encode(text)
        return {"input_ids": torch.tensor([ids]) if return_tensors == "pt" else ids}


# ---- SkyRL (real package) -------------------------------------------------------------------------

def test_skyrl_env_registered_and_stepped(scripted_server):
    skyrl_gym = pytest.importorskip("skyrl_gym", reason="skyrl-gym is not installed (scripts/install.sh installs it)")
    from skyrl_gym.envs.base_text_env import BaseTextEnv

    namespace = {"URL": scripted_server.url, "completion": WRONG}
    # the doc's task id becomes the scripted suite's task "relu"
    code = snippet("skyrl").replace('"L1/19_ReLU"', '"relu"')
    exec(compile(code, "docs/trainers.md:skyrl", "exec"), namespace)
    env, prompt, out = namespace["env"], namespace["prompt"], namespace["out"]
    assert isinstance(env, BaseTextEnv)
    assert "torch.relu" in prompt[0]["content"] and prompt[0]["role"] == "user"
    assert out["done"] is False and out["reward"] == 0.0 and out["metadata"]["outcome"] == "incorrect"
    assert out["observations"][0]["role"] == "user"
    assert out["observations"][0]["content"].startswith("Outcome: incorrect")
    assert "First failing case" in out["observations"][0]["content"]
    last = env.step("```python\n" + FAST + "```")
    assert last["done"] is True and last["reward"] == pytest.approx(2.3) and last["observations"] == []
    assert last["metadata"]["returns"]["returns"][0] == pytest.approx(0.0 + 0.4 * 2.3)  # kevin: 0.3 + speedup
    env.close()


# ---- verl (stand-in with verl 0.9.1's signatures) -----------------------------------------------

def install_verl_standin(monkeypatch):
    from pydantic import BaseModel

    registry = {}

    class AgentLoopMetrics(BaseModel):
        generate_sequences: float = 0.0
        tool_calls: float = 0.0

    class AgentLoopOutput(BaseModel):
        prompt_ids: list
        response_ids: list
        response_mask: list
        response_logprobs: list | None = None
        reward_score: float | None = None
        num_turns: int = 0
        metrics: AgentLoopMetrics
        extra_fields: dict = {}

    class AgentLoopBase:
        def __init__(self, trainer_config, server_manager, tokenizer, processor, dataset_cls, data_config,
                     hf_model_type=None, **kwargs):
            self.config, self.server_manager, self.tokenizer = trainer_config, server_manager, tokenizer

        async def run(self, sampling_params, **kwargs):
            raise NotImplementedError

    def register(agent_name):
        def decorator(cls):
            registry[agent_name] = {"_target_": f"{cls.__module__}.{cls.__qualname__}"}
            return cls
        return decorator

    mod = types.ModuleType("verl.experimental.agent_loop.agent_loop")
    mod.AgentLoopBase, mod.AgentLoopOutput, mod.register = AgentLoopBase, AgentLoopOutput, register
    for name in ("verl", "verl.experimental", "verl.experimental.agent_loop"):
        monkeypatch.setitem(sys.modules, name, types.ModuleType(name))
    monkeypatch.setitem(sys.modules, "verl.experimental.agent_loop.agent_loop", mod)
    return mod, registry


def test_verl_agent_loop_and_compute_score(scripted_server, monkeypatch):
    mod, registry = install_verl_standin(monkeypatch)
    monkeypatch.setenv("KGYM_URL", scripted_server.url)
    monkeypatch.setenv("KGYM_MAX_TURNS", "2")
    import kgym_client.verl as kv
    monkeypatch.setattr(kv, "_built", {})
    loop_cls = kv.KgymAgentLoop
    assert issubclass(loop_cls, mod.AgentLoopBase)
    assert registry["kgym_agent"] == {"_target_": "kgym_client.verl.KgymAgentLoop"}
    tok = ByteTokenizer()
    answers = iter([WRONG, FAST])

    class ServerManager:
        async def generate(self, request_id, prompt_ids, sampling_params, **kw):
            ids = tok.encode(next(answers))
            return types.SimpleNamespace(token_ids=ids, log_probs=[-0.5] * len(ids))

    loop = loop_cls(trainer_config=None, server_manager=ServerManager(), tokenizer=tok, processor=None,
                    dataset_cls=None, data_config=None)
    row = {"raw_prompt": [{"role": "user", "content": "Write ModelNew."}], "extra_info": {"task_id": "relu"}}
    out = asyncio.run(loop.run({"temperature": 1.0}, **row))
    assert isinstance(out, mod.AgentLoopOutput)
    n1, n2 = len(tok.encode(WRONG)), len(tok.encode(FAST))
    feedback_len = len(out.response_ids) - n1 - n2
    assert feedback_len > 0
    assert out.response_mask == [1] * n1 + [0] * feedback_len + [1] * n2
    assert out.response_logprobs[:n1] == [-0.5] * n1 and out.response_logprobs[n1:n1 + feedback_len] == [0.0] * feedback_len
    assert "Outcome: incorrect" in tok.decode(out.response_ids[n1:n1 + feedback_len])
    assert out.reward_score == pytest.approx(0.0 + 0.4 * 2.3)  # kevin, r1 + 0.4 r2
    # compute_score: the snippet of docs/trainers.md
    lines = snippet("verl").replace('"L1/19_ReLU"', '"relu"').splitlines()
    code = "async def _snippet():\n" + "".join("    " + line + "\n" for line in lines) + \
           "    return score\n"
    namespace = {"URL": scripted_server.url, "completion": "Answer:\n```python\n" + FAST + "```"}
    exec(compile(code, "docs/trainers.md:verl", "exec"), namespace)
    score = asyncio.run(namespace["_snippet"]())
    assert score["score"] == pytest.approx(2.3) and score["outcome"] == "passed" and score["correct"] is True


# ---- OpenRLHF (stand-in with OpenRLHF 0.11.2's signatures) ----------------------------------------

def install_openrlhf_standin(monkeypatch):
    from abc import ABC, abstractmethod

    class AgentInstanceBase(ABC):
        @abstractmethod
        def __init__(self, *args, **kwargs):
            pass

        async def reset(self, states: dict, **kwargs):
            return states

        @abstractmethod
        async def step(self, state_dict: dict, **kwargs):
            raise NotImplementedError

    class MultiTurnAgentExecutor:
        def __init__(self, agent_instance_cls):
            assert issubclass(agent_instance_cls, AgentInstanceBase)
            self.agent_instance_cls = agent_instance_cls

    mod = types.ModuleType("openrlhf.utils.agent")
    mod.AgentInstanceBase, mod.MultiTurnAgentExecutor = AgentInstanceBase, MultiTurnAgentExecutor
    for name in ("openrlhf", "openrlhf.utils"):
        monkeypatch.setitem(sys.modules, name, types.ModuleType(name))
    monkeypatch.setitem(sys.modules, "openrlhf.utils.agent", mod)
    return mod


def test_openrlhf_agent_instance(scripted_server, monkeypatch):
    mod = install_openrlhf_standin(monkeypatch)
    monkeypatch.setenv("KGYM_URL", scripted_server.url)
    monkeypatch.setenv("KGYM_MAX_TURNS", "2")
    import kgym_client.openrlhf as ko
    monkeypatch.setattr(ko, "_built", {})
    namespace = {}
    exec(compile(snippet("openrlhf"), "docs/trainers.md:openrlhf", "exec"), namespace)
    AgentInstance, AgentExecutor = namespace["AgentInstance"], namespace["AgentExecutor"]
    assert issubclass(AgentInstance, mod.AgentInstanceBase) and AgentExecutor().agent_instance_cls is AgentInstance

    async def episode():
        agent = AgentInstance()
        first = await agent.reset({"observation": "Write ModelNew.", "label": "relu"})
        s1 = await agent.step({"observation_text": first["observation"], "action_text": WRONG, "label": "relu",
                               "sampling_params": None})
        s2 = await agent.step({"observation_text": "...", "action_text": FAST, "label": "relu",
                               "sampling_params": None})
        return first, s1, s2

    first, s1, s2 = asyncio.run(episode())
    assert first == {"observation": "Write ModelNew."}
    assert {"rewards", "scores", "environment_feedback", "done", "sampling_params", "extra_logs"} <= set(s1)
    assert s1["rewards"].item() == 0.0 and not s1["done"] and "Outcome: incorrect" in s1["environment_feedback"]
    assert s2["rewards"].item() == pytest.approx(2.3) and s2["done"] and s2["environment_feedback"] == ""
    assert s2["scores"].item() == pytest.approx(0.4 * 2.3)
    assert s2["extra_logs"]["kgym_passed"].item() == 1.0


def test_openrlhf_remote_url_of_the_doc_is_the_reward_route(scripted_server):
    import urllib.request
    path = snippet("openrlhf-remote").split("--remote_rm_url ")[1].split()[0].split("8000", 1)[1]
    body = {"query": ["p" + FAST], "prompts": ["p"], "labels": ["relu"]}
    req = urllib.request.Request(scripted_server.url + path, data=json.dumps(body).encode(), method="POST")
    with urllib.request.urlopen(req, timeout=60) as r:
        out = json.loads(r.read())
    assert out["rewards"] == [1.0] and out["scores"] == [1.0] and "kgym_passed" in out["extra_logs"]


# ---- feedback within a token budget ---------------------------------------------------------------

FEEDBACK = {"outcome": "passed", "gate": "timing", "correct": True, "cases_passed": 6, "cases_total": 6,
            "messages": ["passed: correct on 6 cases; 1.8x eager"], "log_excerpt": "x" * 3000,
            "failing_case": None,
            "timing": {"runtime_ms": 0.5, "spread": 0.02, "calls": 100, "ref_runtime_ms": 0.9},
            "speedup_eager": 1.8, "speedup_eager_ci": [1.6, 2.0]}


def test_observation_carries_outcome_case_timing_interval_within_budget(scripted_server):
    text = observation_text(FEEDBACK, budget_tokens=60)
    assert len(text) <= 240
    assert text.startswith("Outcome: passed (gate: timing; correct on 6/6 cases)")
    assert "speedup over eager 1.8x (95% interval 1.6x to 2x)" in text
    assert text.endswith("[...cut to the token budget]")
    no_ci = dict(FEEDBACK, speedup_eager_ci=None)
    assert "interval" not in observation_text(no_ci, 200)
    # a real failing verdict from the server: the first failing case is kept
    c = KgymClient(scripted_server.url, timeout=30)
    r = c.submit_kernel(c.reset(task_id="relu").episode_id, WRONG)
    text = observation_text(r.feedback, budget_tokens=40)
    assert len(text) <= 160 and text.startswith("Outcome: incorrect")
    assert "First failing case: #" in observation_text(r.feedback, 400)
    with pytest.raises(ValueError):
        observation_text(FEEDBACK, 0)


# ---- the pip package ------------------------------------------------------------------------------

def test_pip_install_and_lazy_trainer_imports(tmp_path):
    import shutil
    src, target = tmp_path / "python", tmp_path / "site"  # a copy, so the build leaves nothing in the checkout
    shutil.copytree(ROOT / "python", src, ignore=shutil.ignore_patterns("__pycache__", "build", "*.egg-info"))
    proc = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation",
                           "--target", str(target), str(src)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert (target / "kgym_client" / "trl.py").exists() and not (target / "kgym_worker").exists()
    check = ("import sys, kgym_client, kgym_client.trl, kgym_client.verl, kgym_client.skyrl, kgym_client.openrlhf\n"
             "assert kgym_client.__file__.startswith(sys.argv[1]), kgym_client.__file__\n"
             "loaded = {'trl', 'verl', 'skyrl_gym', 'openrlhf', 'torch', 'transformers'} & set(sys.modules)\n"
             "assert not loaded, loaded\n"
             "print(kgym_client.KgymClient.evaluate_many.__doc__.split()[0])\n")
    proc = subprocess.run([sys.executable, "-c", check, str(target)], capture_output=True, text=True, timeout=120,
                          env={"PYTHONPATH": str(target), "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == "Judges"


# ---- TRL rollout_func (the group per turn in one request) -----------------------------------------

def test_trl_rollout_func_masks_feedback_and_returns_r1_plus_04_r2(scripted_server):
    pytest.importorskip("trl", reason="TRL is not installed (scripts/install.sh installs it)")
    from kgym_client.trl import kernel_rollout_func, kgym_return_reward
    from tiny_lm import build_tokenizer

    tok = build_tokenizer([WRONG, FAST, "Write ModelNew. Outcome: passed incorrect"], vocab_size=400)
    plan = {0: [WRONG, FAST], 1: [FAST, WRONG]}  # rollout -> its two turns
    calls = []

    def generate(trainer, prompt_ids, max_new_tokens):
        turn = len(calls)
        calls.append(len(prompt_ids))
        ids = [tok(plan[i][turn], add_special_tokens=False)["input_ids"] for i in range(len(prompt_ids))]
        return ids, [[-1.0] * len(x) for x in ids]

    before = KgymClient(scripted_server.url).metrics()["evaluations"]["submitted"]
    rollout = kernel_rollout_func(scripted_server.url, lambda p: "relu", turns=2, gamma=0.4, reward="kevin",
                                  generate=generate)
    trainer = types.SimpleNamespace(processing_class=tok)
    out = rollout([[{"role": "user", "content": "Write ModelNew."}]] * 2, trainer)
    assert calls == [2, 2]  # each turn: the whole group in one generate call
    assert KgymClient(scripted_server.url).metrics()["evaluations"]["submitted"] - before == 4
    for i in range(2):
        n1 = len(tok(plan[i][0], add_special_tokens=False)["input_ids"])
        n2 = len(tok(plan[i][1], add_special_tokens=False)["input_ids"])
        mask = out["env_mask"][i]
        fb = len(mask) - n1 - n2
        assert fb > 0 and mask == [1] * n1 + [0] * fb + [1] * n2
        assert len(out["completion_ids"][i]) == len(out["logprobs"][i]) == len(mask)
        assert "Outcome: " in tok.decode(out["completion_ids"][i][n1:n1 + fb])
    # kevin: WRONG 0, FAST 0.3 + 2.0; return r1 + 0.4 r2
    assert out["kgym_return"] == [pytest.approx(0.4 * 2.3), pytest.approx(2.3)]
    assert kgym_return_reward([None, None], kgym_return=out["kgym_return"]) == out["kgym_return"]
