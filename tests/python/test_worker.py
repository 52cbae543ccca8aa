"""The Python runners, in-process: wire format, tensor transfer, scaling, comparison statistics
and the candidate executor's contract observations."""
import os
import socket
import sys
import threading

import pytest
import torch

from kgym_worker import loading, protocol, tensors, timing
from kgym_worker.candidate import CandidateExecutor
from kgym_worker.reference import ReferenceWorker

TASK = """
import torch
import torch.nn as nn
class Model(nn.Module):
    def __init__(self, k):
        super().__init__()
        self.k = k
    def forward(self, x):
        return torch.relu(x) * self.k
batch = 32
dim = 48
def get_inputs():
    return [torch.randn(batch, dim)]
def get_init_inputs():
    return [2.0]
"""

TOL = {"float32": [1e-4, 1e-4], "float16": [1e-2, 1e-2], "bfloat16": [1e-2, 1e-2], "float64": [1e-7, 1e-7]}


def test_frames_round_trip():
    a, b = socket.socketpair()
    payload = [b"\x00\x01\x02", bytes(100_000)]
    t = threading.Thread(target=protocol.send, args=(a, {"op": "x", "v": [1, 2.5, None]}, payload))
    t.start()
    header, blobs = protocol.recv(b)
    t.join()
    assert header == {"op": "x", "v": [1, 2.5, None]}
    assert [bytes(x) for x in blobs] == payload
    a.close()
    with pytest.raises(protocol.ChannelClosed):
        protocol.recv(b)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int64, torch.bool, torch.float16])
def test_tensor_transfer_is_exact(dtype):
    x = (torch.randn(3, 5, 7) * 10).to(dtype)
    blobs = []
    meta = tensors.encode([x, 3, (x[0].contiguous(), None)], blobs)
    back = tensors.decode(meta, blobs, "cpu")
    assert torch.equal(back[0], x) and back[1] == 3 and torch.equal(back[2][0], x[0])
    assert back[0].data_ptr() != x.data_ptr()


def test_transfer_refuses_other_objects():
    with pytest.raises(TypeError):
        tensors.encode(object(), [])


def test_scale_sizes(tmp_path):
    mod = loading.load_module(TASK, "t", str(tmp_path))
    changed = loading.scale_sizes(mod, 0.5)
    assert changed == {"batch": [32, 16], "dim": [48, 24]}
    assert mod.get_inputs()[0].shape == (16, 24)


def test_transforms():
    x = torch.tensor([-1.0, 2.0])
    assert torch.equal(loading.transform_value([x], "negate")[0], -x)
    assert torch.equal(loading.transform_value([x], "abs")[0], x.abs())
    assert torch.equal(loading.transform_value([torch.tensor([3])], "scale3")[0], torch.tensor([3]))
    with pytest.raises(ValueError):
        loading.transform_value([x], "bogus")


def _reference(tmp_path):
    ref = ReferenceWorker("cpu", str(tmp_path))
    assert ref.load_task({"key": "k", "source": TASK, "scale": 1.0, "init_seed": 1}, [])["ok"]
    ref.make_case({"key": "k", "index": 0, "transform": "nominal"}, [])
    reply, blobs = ref.case_inputs({"key": "k", "index": 0}, [])
    return ref, reply, blobs


def _compare(ref, out):
    blobs = []
    meta = tensors.encode(out, blobs)
    return ref.compare({"key": "k", "index": 0, "tolerances": TOL, "output": meta}, blobs)


def test_compare_statistics(tmp_path):
    ref, reply, blobs = _reference(tmp_path)
    x = tensors.decode(reply["inputs"], blobs, "cpu")[0]
    good = torch.relu(x) * 2.0
    rec = _compare(ref, good)
    assert rec["mismatches"] == 0 and rec["tolerance_ratio"] == 0.0 and rec["numel"] == x.numel()
    bad = good.clone()
    bad[3, 4] += 1.0
    rec = _compare(ref, bad)
    assert rec["mismatches"] == 1 and rec["first_mismatch_index"] == [3, 4]
    assert rec["max_abs_error"] == pytest.approx(1.0)
    nan = good.clone()
    nan[0, 0] = float("nan")
    rec = _compare(ref, nan)
    assert rec["nonfinite_mismatches"] == 1 and rec["mismatches"] == 1
    rec = _compare(ref, good.double())
    assert rec["dtype_matches"] is False
    rec = _compare(ref, good.reshape(-1))
    assert rec["shape_matches"] is False
    rec = _compare(ref, (good, good))
    assert rec["structure_matches"] is False


def _executor(tmp_path, candidate_source):
    ex = CandidateExecutor("cpu", str(tmp_path), str(tmp_path / "log"))
    rec = ex.load({"candidate_source": candidate_source, "task_source": TASK, "scale": 1.0, "init_seed": 1}, [])
    return ex, rec


def _run(ex, x):
    blobs = []
    meta = tensors.encode([x], blobs)
    reply = ex.run_case({"index": 0, "inputs": meta}, blobs)
    return reply[0] if isinstance(reply, tuple) else reply


HONEST = """
import torch, torch.nn as nn
class ModelNew(nn.Module):
    def __init__(self, k):
        super().__init__()
        self.k = k
    def forward(self, x):
        return x.clamp_min(0) * self.k
"""


def test_executor_honest(tmp_path):
    ex, rec = _executor(tmp_path, HONEST)
    assert rec["ok"] and rec["parsed"] and rec["model_new_defined"]
    out = _run(ex, torch.randn(4, 4))
    assert out["output_aliases_input"] is False and out["inputs_unchanged"] is True
    assert out["output"]["kind"] == "tensor"


def test_executor_parse_and_missing_model_new(tmp_path):
    _, rec = _executor(tmp_path, "def f(:\n")
    assert rec["parsed"] is False and rec["failure"]["type"] == "SyntaxError"
    _, rec = _executor(tmp_path, "class Other: pass\n")
    assert rec["parsed"] is True and rec["model_new_defined"] is False and rec["ok"] is False


def test_executor_sees_subclass_mutation_and_alias(tmp_path):
    sub = HONEST.replace("return x.clamp_min(0) * self.k",
                         "class L(torch.Tensor): pass\n        return (x.clamp_min(0) * self.k).as_subclass(L)")
    ex, _ = _executor(tmp_path, sub)
    out = _run(ex, torch.randn(4, 4))
    assert out["output_plain_tensor"] is False and out["output_type"].endswith("L")
    assert "output" not in out  # nothing of a subclass is touched or sent
    mut = HONEST.replace("return x.clamp_min(0) * self.k", "y = x.clamp_min(0) * self.k\n        x.add_(1)\n        return y")
    ex, _ = _executor(tmp_path, mut)
    assert _run(ex, torch.randn(4, 4))["inputs_unchanged"] is False
    alias = HONEST.replace("return x.clamp_min(0) * self.k", "return x[:2]")
    ex, _ = _executor(tmp_path, alias)
    assert _run(ex, torch.randn(4, 4))["output_aliases_input"] is True


def test_executor_reports_exceptions(tmp_path):
    ex, _ = _executor(tmp_path, HONEST.replace("return x.clamp_min(0) * self.k", "raise KeyError('boom')"))
    out = _run(ex, torch.randn(2))
    assert out["failure"]["type"] == "KeyError" and out["failure"]["stage"] == "case"
    _, rec = _executor(tmp_path, HONEST.replace("self.k = k", "raise RuntimeError('bad init')"))
    assert rec["failure"]["stage"] == "init"


def test_time_calls_cpu_fresh_inputs_and_kept_outputs():
    seen = []

    def make_args(seed):
        torch.manual_seed(seed)
        return (torch.randn(10),)

    def fn(x):
        seen.append(x.clone())
        return x + 1
    seeds = list(range(100, 109))
    rec, kept = timing.time_calls(fn, make_args, seeds, "cpu",
                                  {"warmup": 1, "min_calls": 5, "max_calls": 8, "budget_ms": 1000,
                                   "target_spread": 0.0}, keep=[0, 3])
    assert rec["method"] == "monotonic_clock" and 5 <= len(rec["times_ms"]) <= 8
    assert all(t > 0 for t in rec["times_ms"]) and rec["l2_flushed"] is False and rec["fresh_inputs"]
    # every call saw different values (no output cache can hit)
    assert len({tuple(x.tolist()) for x in seen}) == len(seen) == 1 + len(rec["times_ms"])
    last = len(rec["times_ms"]) - 1  # the last timed call is always kept too
    assert sorted(kept) == sorted({0, 3, last})
    assert torch.equal(kept[3][0], make_args(seeds[1 + 3])[0] + 1)
    assert torch.equal(kept[last][0], make_args(seeds[1 + last])[0] + 1)
    with pytest.raises(ValueError):
        timing.time_calls(fn, make_args, seeds[:3], "cpu", {"warmup": 1, "min_calls": 5, "max_calls": 8,
                                                              "budget_ms": 1000, "target_spread": 0.0})


def test_zero_dim_output_and_input(tmp_path):
    """A scalar (0-dim) output, as loss tasks return, is transferred and compared."""
    blobs = []
    meta = tensors.encode(torch.tensor(3.5), blobs)
    assert meta["shape"] == [] and float(tensors.decode(meta, blobs, "cpu")) == 3.5
    src = HONEST.replace("return x.clamp_min(0) * self.k", "return (x.clamp_min(0) * self.k).sum()")
    ex, _ = _executor(tmp_path, src)
    out = _run(ex, torch.tensor(2.0))
    assert out["inputs_unchanged"] is True and out["output"]["shape"] == []
