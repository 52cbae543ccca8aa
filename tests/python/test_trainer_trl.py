"""A real TRL GRPOTrainer trains 2 optimisation steps with kgym's environment class
(`kgym_client.trl`, through `environment_factory`) against `kgym serve` with the real engine on
the CPU. The model is a tiny Qwen2 built here from a config and a tokenizer trained here (no
download); its completions are scripted (tests/python/tiny_lm.py): in each group one rollout
submits a known wrong ReLU (leaky: `incorrect`) and one the honest ReLU. The rewards the trainer
logs must be those kgym gives the same code (`kgym eval`), and the trainer's weights must move.

The trainer is built by executing the TRL snippet of docs/trainers.md as it stands."""
import json
import os
import sys
from pathlib import Path

import pytest

trl = pytest.importorskip("trl", reason="TRL is not installed (scripts/install.sh installs it)")

sys.path.insert(0, str(Path(__file__).parent))
from conftest import ROOT, kgym_eval  # noqa: E402
from doc_snippets import snippet  # noqa: E402

TASK = "L1/19_ReLU"
WRONG = (ROOT / "examples/candidates/19_ReLU/wrong_values.py").read_text()
HONEST = (ROOT / "examples/candidates/19_ReLU/honest.py").read_text()
CODES = [WRONG, HONEST]


def tool_call(code: str) -> str:
    return "<tool_call>\n" + json.dumps({"name": "submit_kernel", "arguments": {"code": code}}) + "\n</tool_call>"


def script(prompt_text: str, row: int) -> str:
    # First turn: row 0 of a group submits the wrong kernel, row 1 the honest one; after the tool's
    # answer, the rollout ends without another call.
    return "Done." if "<tool_response>" in prompt_text else tool_call(CODES[row % 2])


def test_grpo_trainer_environment_factory(engine_server, tmp_path, monkeypatch):
    import torch
    from datasets import Dataset
    from transformers import TrainerCallback
    from kgym_client import KgymClient
    from tiny_lm import build_model, build_tokenizer

    monkeypatch.setenv("TRL_EXPERIMENTAL_SILENCE", "1")
    client = KgymClient(engine_server.url, timeout=600)
    task_prompt = client.reset(task_id=TASK, policy_profile="off").observation["prompt"]
    tokenizer = build_tokenizer([tool_call(c) for c in CODES] + [task_prompt, "Write a fast ReLU. Done."])
    model = build_model(tokenizer, script)
    before = [p.detach().clone() for p in model.parameters()]
    dataset = Dataset.from_list([{"prompt": [{"role": "user", "content": "Write a fast ReLU."}], "task_id": TASK}] * 4)

    real_config = trl.GRPOConfig

    def test_config(**kw):  # the snippet's GRPOConfig plus what a CPU test needs
        kw.update(output_dir=str(tmp_path / "out"), per_device_train_batch_size=2, max_steps=2, use_cpu=True,
                  max_completion_length=512, report_to="none", save_strategy="no", logging_steps=1,
                  learning_rate=1e-2)
        return real_config(**kw)

    namespace = {"model": model, "tokenizer": tokenizer, "dataset": dataset, "URL": engine_server.url}
    code = snippet("trl").replace("trainer.train()", "")
    monkeypatch.setattr(trl, "GRPOConfig", test_config)
    exec(compile(code, "docs/trainers.md:trl", "exec"), namespace)
    trainer = namespace["trainer"]
    logged = []

    class Record(TrainerCallback):
        def on_step_end(self, args, state, control, **kw):
            logged.append((list(trainer._logs["completion"]), {k: list(v) for k, v in trainer._logs["rewards"].items()}))

    trainer.add_callback(Record())
    trainer.train()

    assert trainer.state.global_step == 2
    assert any(not torch.equal(a, b.detach()) for a, b in zip(before, model.parameters())), "no optimisation step"

    # The trainer's per-rollout rewards, matched to the code each rollout submitted.
    rewards = {"wrong": [], "honest": []}
    for completions, by_func in logged:
        [column] = by_func.values()
        assert len(completions) == len(column) == 2
        for completion, r in zip(completions, column):
            submitted = completion[0]["tool_calls"][0]["function"]["arguments"]["code"]
            rewards["wrong" if submitted == WRONG else "honest"].append(r)
            assert completion[1]["role"] == "tool" and "Outcome: " in completion[1]["content"]
    assert len(rewards["wrong"]) == 2 and len(rewards["honest"]) == 2

    verdicts = kgym_eval({"wrong": WRONG, "honest": HONEST}, TASK, tmp_path)
    assert verdicts["wrong"]["outcome"] == "incorrect" and verdicts["honest"]["outcome"] == "passed"
    # A wrong kernel earns kgym eval's reward exactly (0 under kevin).
    assert rewards["wrong"] == [verdicts["wrong"]["reward"]] * 2
    # A correct one earns kevin's 0.3 + speedup; the speedup is measured anew in each evaluation
    # (wall-clock timing on a loaded CPU), so each logged reward must be kevin's formula on the
    # speedup of that same evaluation, read back from the episode's state on the server.
    assert verdicts["honest"]["reward"] == pytest.approx(0.3 + verdicts["honest"]["speedup_eager"])
    for r in rewards["honest"]:
        assert r > 0.3
    served = [t for e in trainer._environment_pool[None] for t in _turns(client, e)]
    honest_turns = [t for t in served if t["outcome"] == "passed"]
    assert honest_turns, "the server judged no honest submission"
    for t in honest_turns:
        assert t["reward"] == pytest.approx(0.3 + t["speedup_eager"])
    # the trainer keeps rewards as float32
    for t in honest_turns:
        assert any(r == pytest.approx(t["reward"], rel=1e-6) for r in rewards["honest"]), (t, rewards)


def _turns(client, env):
    if env._episode is None:
        return []
    return client.state(env._episode)["turns"]
