"""Case inputs regenerated from the seed in the candidate worker: the fingerprint, the
regeneration for regular and other-shape cases, the fallback to bytes for a task whose
get_inputs is not reproducible from torch's seed, a candidate that patches the generator, and
the zero-copy transfer of the tensors that still travel."""
import json
import socket
import threading

import pytest
import torch

from kgym_worker import loading, protocol, tensors
from kgym_worker.candidate import CandidateExecutor
from kgym_worker.reference import ReferenceWorker

TOL = {"float32": [1e-4, 1e-4], "float16": [1e-2, 1e-2], "bfloat16": [1e-2, 1e-2], "float64": [1e-7, 1e-7]}

TASK = """
import pytest
import torch
import torch.nn as nn
class Model(nn.Module):
    def forward(self, x, y):
        return torch.relu(x) + y.float().mean()
batch = 32
dim = 48
def get_inputs():
    return [torch.randn(batch, dim), torch.randint(0, 9, (dim,), dtype=torch.int64)]
def get_init_inputs():
    return []
"""

# get_inputs draws from Python's `random` (seeded from OS entropy in each process): not
# reproducible from torch's seed, so the candidate worker must take the reference's bytes.
TASK_RANDOM = TASK.replace("import torch\n", "import random\nimport torch\n", 1).replace(
    "torch.randn(batch, dim)", "torch.randn(batch, dim) + random.random()")

HONEST = """
import torch, torch.nn as nn
class ModelNew(nn.Module):
    def forward(self, x, y):
        return x.clamp_min(0) + y.float().mean()
"""

# Replaces `torch` inside the task module of its own process (torch.randn itself is untouched,
# so the identity checks do not see it): the inputs it regenerates are zeros.
PATCHES_TASK_RNG = HONEST + """
import sys, types
class _Torch(types.ModuleType):
    def __getattr__(self, name):
        return getattr(torch, name)
_fake = _Torch("torch")
_fake.randn = lambda *size, **kw: torch.zeros(*size, **kw)
for _name, _mod in list(sys.modules.items()):
    if _name.startswith("kgym_task_") and hasattr(_mod, "get_inputs"):
        _mod.torch = _fake
"""

MUTATES = """
import torch, torch.nn as nn
class ModelNew(nn.Module):
    def forward(self, x, y):
        x.relu_()
        return x + y.float().mean()
"""


def _reference(tmp_path, source=TASK):
    ref = ReferenceWorker("cpu", str(tmp_path))
    assert ref.load_task({"key": "k", "source": source, "scale": 1.0, "init_seed": 1}, [])["ok"]
    return ref


def _executor(tmp_path, candidate, source=TASK):
    ex = CandidateExecutor("cpu", str(tmp_path), str(tmp_path / "log"))
    assert ex.load({"candidate_source": candidate, "task_source": source, "scale": 1.0, "init_seed": 1}, [])["ok"]
    return ex


def _wire(value):
    """The value after a JSON round trip (as it travels through the supervisor)."""
    return json.loads(json.dumps(value))


def _case(ref, ex, index, shape=None):
    """One case as the supervisor runs it: make_case, run_case with `regenerate`, and on
    need_inputs run_case again with the reference's bytes. Returns (reply, regenerated, compare)."""
    req = {"key": "k", "index": index, "transform": "scale3"}
    if shape:
        req["shape"] = shape
    made = _wire(ref.make_case(req, []))
    assert "inputs" not in made  # no bytes unless asked for
    reply = ex.run_case({"index": index, "regenerate": made["regenerate"], "tolerances": TOL}, [])
    regenerated = not (isinstance(reply, dict) and reply.get("need_inputs"))
    if not regenerated:
        sent, blobs = ref.case_inputs({"key": "k", "index": index}, [])
        reply = ex.run_case({"index": index, "inputs": _wire(sent["inputs"]), "tolerances": TOL},
                            [bytearray(memoryview(b).cast("B")) for b in blobs])
    rec, out_blobs = reply
    cmp = ref.compare({"key": "k", "index": index, "output": _wire(rec["output"]), "tolerances": TOL},
                      [bytearray(memoryview(b).cast("B")) for b in out_blobs])
    return rec, regenerated, cmp


def test_fingerprint_same_seed_same_value_one_change_differs():
    mod = loading.load_module_from_memory(TASK, "kgym_task_fp")
    a = loading.make_inputs(mod, 1234, "nominal", "cpu", on_device=True)
    b = loading.make_inputs(mod, 1234, "nominal", "cpu", on_device=True)
    fa = tensors.fingerprint(a)
    assert fa == tensors.fingerprint(b) == _wire(fa)
    assert tensors.fingerprint(loading.make_inputs(mod, 1235, "nominal", "cpu", on_device=True)) != fa
    assert tensors.fingerprint(loading.make_inputs(mod, 1234, "negate", "cpu", on_device=True)) != fa
    changed = [a[0].clone(), a[1]]
    changed[0][7, 3] = torch.nextafter(changed[0][7, 3], torch.tensor(1e30))  # one ulp
    assert tensors.fingerprint(changed) != fa
    swapped = [a[0].clone(), a[1]]
    swapped[0][0, 0], swapped[0][5, 1] = a[0][5, 1].item(), a[0][0, 0].item()
    assert tensors.fingerprint(swapped) != fa
    assert tensors.fingerprint([a[0].double(), a[1]]) != fa                    # dtype
    assert tensors.fingerprint([a[0].reshape(48, 32), a[1]]) != fa             # shape
    assert tensors.fingerprint([a[0].t().contiguous().t(), a[1]]) != fa        # layout


def test_word_sums_exact_across_chunks_and_catch_changes(monkeypatch):
    """The GPU digest, run on the CPU: exact, independent of the row width (rows of rows, a last
    partial row, fewer words than a row), and it sees one changed element, a swap and a negation
    (whose sign-bit flips cancel in arithmetic modulo 2^32)."""
    x = torch.randn(1000) * 1e6
    w = x.view(torch.int16).tolist()
    want = {"sum": sum(w), "weighted_sum": sum((i + 1) * v for i, v in enumerate(w)) % tensors.FINGERPRINT_MOD}
    for row in (3, 7, 64, 999, 2048, 1 << 22):
        monkeypatch.setattr(tensors, "FINGERPRINT_ROW", row)
        assert tensors._word_sums(x) == want
        y = x.clone()
        y[500] = torch.nextafter(y[500], torch.tensor(1e30))
        assert tensors._word_sums(y)["sum"] != want["sum"]
        y = x.clone()
        y[[3, 700]] = y[[700, 3]]
        assert tensors._word_sums(y)["weighted_sum"] != want["weighted_sum"]
        assert tensors._word_sums(-x) != want
    b = torch.tensor([7, 200, 3], dtype=torch.uint8)
    assert tensors._word_sums(b) == {"sum": 210, "weighted_sum": 7 + 400 + 9}


def test_regenerated_inputs_match_and_pass(tmp_path):
    ref, ex = _reference(tmp_path), _executor(tmp_path, HONEST)
    rec, regenerated, cmp = _case(ref, ex, 0)
    assert regenerated and rec["inputs_unchanged"] and cmp["mismatches"] == 0 and cmp["numel"] == 32 * 48
    # The candidate computed on the reference's values: its inputs are the reference's, bitwise.
    assert all(torch.equal(a, b) for a, b in zip(ex.inputs, ref.tasks["k"]["cases"][0]["inputs"]))
    rec, regenerated, cmp = _case(ref, ex, 1, shape="other")
    assert regenerated and tuple(ex.inputs[0].shape) == (25, 37) and cmp["mismatches"] == 0


def test_fallback_to_bytes_when_get_inputs_is_not_reproducible(tmp_path):
    ref, ex = _reference(tmp_path, TASK_RANDOM), _executor(tmp_path, HONEST, TASK_RANDOM)
    made = _wire(ref.make_case({"key": "k", "index": 0, "transform": "nominal"}, []))
    assert ex.run_case({"index": 0, "regenerate": made["regenerate"], "tolerances": TOL}, []) == \
        {"ok": True, "need_inputs": True}
    assert ex.calls == 0  # no candidate code ran on the unmatched inputs
    rec, regenerated, cmp = _case(ref, ex, 1)
    assert not regenerated and rec["inputs_unchanged"] and cmp["mismatches"] == 0
    assert all(torch.equal(a, b) for a, b in zip(ex.inputs, ref.tasks["k"]["cases"][1]["inputs"]))


def test_candidate_patching_the_generator_gets_the_reference_bytes(tmp_path):
    ref, ex = _reference(tmp_path), _executor(tmp_path, PATCHES_TASK_RNG)
    rec, regenerated, cmp = _case(ref, ex, 0)
    # Its regenerated inputs (zeros) did not match: it computed on the reference's bytes.
    assert not regenerated and cmp["mismatches"] == 0
    # Its timed inputs come from its own patched task module: zeros, which the recheck (on the
    # reference's regenerated inputs) rejects.
    args = ex._make_args(99)
    assert not bool(args[0].any())


def test_input_mutation_is_still_seen_on_regenerated_inputs(tmp_path):
    ref, ex = _reference(tmp_path), _executor(tmp_path, MUTATES)
    rec, regenerated, _ = _case(ref, ex, 0)
    assert regenerated and rec["inputs_unchanged"] is False


def test_numpy_blobs_travel_without_copies_and_decode_exactly():
    x = torch.randn(64, 33)
    blobs = []
    meta = tensors.encode([x, x[::2]], blobs)
    assert not isinstance(blobs[0], bytes)  # a view of the tensor, no tobytes() copy
    a, b = socket.socketpair()
    t = threading.Thread(target=protocol.send, args=(a, {"m": meta}, blobs))
    t.start()
    header, got = protocol.recv(b)
    t.join()
    back = tensors.decode(header["m"], got, "cpu")
    assert torch.equal(back[0], x) and torch.equal(back[1], x[::2])
    # New storage on the CPU, not the received buffer.
    raw = memoryview(got[0]).cast("B")
    assert back[0].data_ptr() != torch.frombuffer(raw, dtype=torch.uint8).data_ptr()


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_gpu_regeneration_and_word_sums(tmp_path):
    """On a GPU: inputs generated on the device from one seed twice have one fingerprint, the
    device's word sums equal the CPU's for the same bytes, and a case is regenerated end to end."""
    mod = loading.load_module_from_memory(TASK, "kgym_task_gpu")
    a = loading.make_inputs(mod, 99, "scale3", "cuda:0", on_device=True)
    b = loading.make_inputs(mod, 99, "scale3", "cuda:0", on_device=True)
    assert a[0].is_cuda and tensors.fingerprint(a) == tensors.fingerprint(b)
    big = torch.randn(3 * tensors.FINGERPRINT_ROW ** 2 + 5, device="cuda:0")
    assert tensors._word_sums(big) == tensors._word_sums(big.cpu())
    ref = ReferenceWorker("cuda:0", str(tmp_path))
    assert ref.load_task({"key": "k", "source": TASK, "scale": 1.0, "init_seed": 1}, [])["ok"]
    ex = CandidateExecutor("cuda:0", str(tmp_path), str(tmp_path / "log"))
    assert ex.load({"candidate_source": HONEST, "task_source": TASK, "scale": 1.0, "init_seed": 1}, [])["ok"]
    rec, regenerated, cmp = _case(ref, ex, 0)
    assert regenerated and cmp["mismatches"] == 0


def test_seed_all_matches_torch_manual_seed():
    """loading.seed_all sets the generator states torch.manual_seed sets (CPU, and every CUDA
    device where there is one), so inputs made by either are the same values."""
    for seed in (0, 7, 2**62 + 3):
        torch.manual_seed(seed)
        want_cpu = torch.get_rng_state()
        want_cuda = torch.cuda.get_rng_state_all() if torch.cuda.is_available() else []
        torch.manual_seed(seed + 1)  # move away, so that equality below is seed_all's doing
        loading.seed_all(seed)
        assert torch.equal(torch.get_rng_state(), want_cpu)
        for got, want in zip(torch.cuda.get_rng_state_all() if want_cuda else [], want_cuda):
            assert torch.equal(got, want)
        a = torch.randn(64)
        torch.manual_seed(seed)
        assert torch.equal(a, torch.randn(64))
