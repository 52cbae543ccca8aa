"""A tiny causal LM and tokenizer built locally (no download), whose generation is scripted.

The tokenizer is a byte-level BPE trained here on the texts the test will see, wrapped as a
transformers fast tokenizer with TRL's Qwen2.5 chat template (so TRL parses `<tool_call>` blocks
with its Qwen response schema). The model is a randomly initialised 1-layer Qwen2; its `generate`
runs transformers' real generation loop with a logits processor that forces a scripted text per
row, so the trainer's loss, log-probabilities and optimiser steps are real while the completions are
known. `script(row_text, row_index) -> str` chooses each row's text.
"""
from __future__ import annotations

from pathlib import Path

import torch
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import LogitsProcessor, LogitsProcessorList, PreTrainedTokenizerFast, Qwen2Config, Qwen2ForCausalLM

SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<tool_call>", "</tool_call>", "<tool_response>",
           "</tool_response>"]


def build_tokenizer(corpus: list, vocab_size: int = 2000) -> PreTrainedTokenizerFast:
    import trl

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=SPECIAL,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(corpus, trainer)
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|im_end|>", pad_token="<|endoftext|>",
                                   additional_special_tokens=SPECIAL[1:])
    fast.chat_template = (Path(trl.__file__).parent / "chat_templates" / "qwen2_5.jinja").read_text(encoding="utf-8")
    return fast


class _Force(LogitsProcessor):
    """Makes row r emit targets[r][step] (then EOS/pad)."""

    def __init__(self, targets: list, start: int, pad_id: int):
        self.targets, self.start, self.pad_id = targets, start, pad_id

    def __call__(self, input_ids, scores):
        step = input_ids.shape[1] - self.start
        forced = torch.full_like(scores, float("-inf"))
        for r, t in enumerate(self.targets):
            forced[r, t[step] if step < len(t) else self.pad_id] = 0.0
        return forced


class ScriptedQwen2(Qwen2ForCausalLM):
    """Qwen2 whose generation emits `self.script(prompt_text, row_index)` through the real
    generation loop (see the module docstring)."""

    script = None
    tokenizer = None

    def generate(self, input_ids=None, attention_mask=None, generation_config=None, **kwargs):
        tok = self.tokenizer
        texts = tok.batch_decode(input_ids, skip_special_tokens=False)
        targets = [tok(self.script(t, i), add_special_tokens=False)["input_ids"] + [tok.eos_token_id]
                   for i, t in enumerate(texts)]
        longest = max(len(t) for t in targets)
        if generation_config is not None:
            generation_config = generation_config.__class__.from_dict(generation_config.to_dict())
            generation_config.max_new_tokens = longest
            generation_config.min_new_tokens = None
        procs = LogitsProcessorList([_Force(targets, input_ids.shape[1], tok.pad_token_id)])
        return super().generate(input_ids=input_ids, attention_mask=attention_mask, generation_config=generation_config,
                                logits_processor=procs, max_new_tokens=longest, **kwargs)


def build_model(tokenizer, script) -> ScriptedQwen2:
    torch.manual_seed(0)
    config = Qwen2Config(vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                         num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=16384,
                         tie_word_embeddings=True, pad_token_id=tokenizer.pad_token_id,
                         eos_token_id=tokenizer.eos_token_id, bos_token_id=None)
    model = ScriptedQwen2(config)
    model.script = script
    model.tokenizer = tokenizer
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    return model
