"""Outputs sent device to device (kgym_worker.devicecopy): what the reference does with a
descriptor it cannot read (CPU, always), and a real transfer between two processes (GPU only)."""
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch

from kgym_worker import devicecopy, tensors
from kgym_worker.reference import ReferenceWorker, read_output

PYTHON_DIR = str(Path(__file__).resolve().parents[2] / "python")
TOL = {"float32": [1e-4, 1e-4], "float64": [1e-7, 1e-7], "float16": [1e-2, 1e-2], "bfloat16": [1e-2, 1e-2]}
TASK = '''import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.relu(x)

def get_inputs():
    return [torch.randn(32, 48)]

def get_init_inputs():
    return []
'''
GOOD_HANDLE = "ab" * devicecopy.HANDLE_BYTES


def _compare_meta(tmp_path, meta, blobs):
    ref = ReferenceWorker("cpu", str(tmp_path))
    assert ref.load_task({"key": "k", "source": TASK, "scale": 1.0, "init_seed": 1}, [])["ok"]
    ref.make_case({"key": "k", "index": 0, "transform": "nominal"}, [])
    return ref.compare({"key": "k", "index": 0, "tolerances": TOL, "output": meta, "audit": False}, blobs)


def test_an_output_the_reference_cannot_read_fails_its_case_and_is_not_a_task_error(tmp_path):
    # Before: tensors.decode raised inside the reference (IndexError, KeyError) and the reply was
    # {"ok": false}, which the supervisor judges as the task's failure (task_error).
    base = {"kind": "tensor", "dtype": "float32", "shape": [32, 48], "device": "cpu"}
    forged = [
        dict(base, blob=3),  # a blob that was never sent
        dict(base),  # neither bytes nor a transfer
        dict(base, ipc={"handle": GOOD_HANDLE, "offset": 0, "bytes": 32 * 48 * 4}),  # no GPU here
        dict(base, ipc={"handle": "zz" * 64, "offset": 0, "bytes": 32 * 48 * 4}),
        dict(base, ipc={"handle": GOOD_HANDLE, "offset": -1, "bytes": 32 * 48 * 4}),
        dict(base, ipc={"handle": GOOD_HANDLE, "offset": 0, "bytes": 4}),
        dict(base, ipc="not an object"),
    ]
    for meta in forged:
        rec = _compare_meta(tmp_path, meta, [])
        assert rec["ok"] and rec.get("structure_matches") is False, (meta, rec)
        assert "cannot be read" in rec["detail"], rec


def test_transfer_descriptors_are_validated_before_any_driver_call():
    n = 16
    cases = [
        ({"handle": "ab", "offset": 0, "bytes": n}, "128 hex digits"),
        ({"handle": "zz" * 64, "offset": 0, "bytes": n}, "not hexadecimal"),
        ({"handle": GOOD_HANDLE, "offset": 1.5, "bytes": n}, "non-negative integers"),
        ({"handle": GOOD_HANDLE, "offset": 0, "bytes": n + 1}, f"need {n}"),
        ({"handle": GOOD_HANDLE, "offset": 0, "bytes": n}, "without a GPU"),
        ([1, 2], "not an object"),
    ]
    for desc, why in cases:
        with pytest.raises(devicecopy.TransferError, match=why):
            devicecopy.fetch(desc, n, "cpu")


def test_cpu_tensors_never_travel_as_transfers_and_the_reference_never_exports():
    exports, blobs = [], []
    meta = tensors.encode(torch.ones(1 << 19), blobs, exports)  # 2 MiB, above SHARED_MIN_BYTES
    assert "ipc" not in meta and meta["blob"] == 0 and exports == []
    assert devicecopy.enabled("cpu") is False
    assert read_output(meta, blobs, "cpu").sum().item() == 1 << 19
    # The reference's own encode calls (case_inputs) pass no export list.
    import inspect
    from kgym_worker import reference
    assert "exports" not in inspect.getsource(reference.ReferenceWorker)


def test_the_host_switch_turns_transfers_off(monkeypatch):
    monkeypatch.setenv("KGYM_DEVICE_TRANSFER", "host")
    assert devicecopy.enabled("cuda:0") is False
    monkeypatch.delenv("KGYM_DEVICE_TRANSFER")
    assert devicecopy.enabled("cuda:0") is True


EXPORTER = textwrap.dedent('''
    import json, sys, torch
    from kgym_worker import tensors
    g = torch.Generator(device="cuda").manual_seed(7)
    values = [torch.randn(1 << 20, device="cuda", generator=g),
              torch.randn(512, 1024, device="cuda", generator=g).t(),  # not contiguous: a copy is exported
              torch.randint(-2**62, 2**62, (1 << 18,), device="cuda", generator=g),
              torch.randn(1 << 18, dtype=torch.complex64, device="cuda", generator=g),
              torch.rand(1 << 21, device="cuda", generator=g) > 0.5]
    exports, blobs = [], []
    meta = tensors.encode(values, blobs, exports)
    torch.save([v.cpu() for v in values], sys.argv[1])
    print(json.dumps(meta), flush=True)
    sys.stdin.readline()  # alive until the other process has copied
''')


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a GPU (CUDA IPC between two processes)")
def test_outputs_travel_device_to_device_between_processes(tmp_path):
    env = dict(os.environ, PYTHONPATH=PYTHON_DIR)
    env.pop("KGYM_DEVICE_TRANSFER", None)
    saved = tmp_path / "values.pt"
    p = subprocess.Popen([sys.executable, "-c", EXPORTER, str(saved)], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, text=True, env=env)
    try:
        meta = json.loads(p.stdout.readline())
        assert all("ipc" in m and "blob" not in m for m in meta["items"]), meta
        got = tensors.decode(meta, [], "cuda")
        want = torch.load(saved)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert g.dtype == w.dtype and g.shape == w.shape and g.is_cuda
            assert torch.equal(g.cpu(), w)
        # Forged descriptors of a live export: out of range, wrong size, another handle.
        first = meta["items"][0]["ipc"]
        n = first["bytes"]
        with pytest.raises(devicecopy.TransferError, match="outside the exported allocation"):
            devicecopy.fetch(dict(first, offset=first["offset"] + (1 << 40)), n, "cuda")
        with pytest.raises(devicecopy.TransferError, match="need"):
            devicecopy.fetch(dict(first, bytes=n * 2), n, "cuda")
        with pytest.raises(devicecopy.TransferError, match="cuIpcOpenMemHandle"):
            devicecopy.fetch(dict(first, handle="00" * 64), n, "cuda")
        bad = dict(meta["items"][0], ipc=dict(first, handle="00" * 64))
        assert "cannot be read" in read_output(bad, [], "cuda")
        # The same handle opened again after a close (a tuple's outputs in one allocation).
        assert torch.equal(tensors.decode(meta["items"][0], [], "cuda").cpu(), want[0])
    finally:
        p.stdin.write("done\n")
        p.stdin.close()
        p.wait(timeout=60)
    assert p.returncode == 0


def test_a_done_case_frees_its_inputs_and_all_but_the_first_reference_output(tmp_path):
    """Full-size RMSNorm on the H200 (session 10): the reference kept every case's inputs and
    output (6 x 15 GB) and the candidate's wall-check request ran out of memory beside them."""
    ref = ReferenceWorker("cpu", str(tmp_path))
    assert ref.load_task({"key": "k", "source": TASK, "scale": 1.0, "init_seed": 1}, [])["ok"]
    for i in range(3):
        ref.make_case({"key": "k", "index": i, "transform": "nominal"}, [])
        x = ref.tasks["k"]["cases"][i]["inputs"][0]
        blobs = []
        meta = tensors.encode(torch.relu(x), blobs)
        rec = ref.compare({"key": "k", "index": i, "tolerances": TOL, "output": meta, "done": True}, blobs)
        assert rec["mismatches"] == 0
    cases = ref.tasks["k"]["cases"]
    assert all(c["inputs"] is None for c in cases.values())
    assert cases[0]["reference"] is not None and cases[1]["reference"] is None and cases[2]["reference"] is None
    # The wall check's calibration still has its stand-in output.
    assert ref.wall_calibration({"key": "k", "n": 3, "seed": 5, "sync_each": True, "commit": True}, [])["ok"]


def test_forged_output_descriptions_fail_the_case_in_compare_and_recheck(tmp_path):
    """Red team rt14: a candidate's process wrote its own run_case / time replies; these
    descriptions raised inside the reference (task_error, the candidate not blamed)."""
    base = {"kind": "tensor", "dtype": "float32", "shape": [32, 48], "device": "cpu", "blob": 0}
    good = bytearray(32 * 48 * 4)
    forged = [
        (dict(base, device="bogus"), [good]),
        (base, [bytearray(3)]),  # a short blob
        (5, [good]),  # not an object
        ({"kind": "tensor", "shape": [32, 48], "device": "cpu", "blob": 0}, [good]),  # no dtype
        ({"kind": "list", "items": [7]}, [good]),
        ({"kind": "list", "items": 7}, [good]),
        (dict(base, shape=[32, -48]), [good]),
        (dict(base, shape="32x48"), [good]),
        (dict(base, dtype="float128"), [good]),
        (dict(base, blob="0"), [good]),
        ({"kind": "weird"}, [good]),
    ]
    for meta, blobs in forged:
        rec = _compare_meta(tmp_path, meta, blobs)
        assert rec["ok"] and rec.get("structure_matches") is False, (meta, rec)
        assert "cannot be read" in rec["detail"], rec
    ref = ReferenceWorker("cpu", str(tmp_path))
    assert ref.load_task({"key": "k", "source": TASK, "scale": 1.0, "init_seed": 1}, [])["ok"]
    # (the short blob needs its own blob list: left out here, where every item shares [good])
    items = [{"index": k, "seed": 11 + k, "output": meta} for k, (meta, b) in enumerate(forged) if b[0] is good]
    res = ref.recheck({"key": "k", "items": items, "tolerances": TOL}, [good])["results"]
    assert len(res) == len(forged) - 1
    assert all(r["ok"] and r.get("structure_matches") is False for r in res), res
    # An honest description still passes the same gate.
    x = torch.ones(32, 48)
    assert tensors.meta_problem(tensors.encode(x, blobs := []), blobs) is None
    assert tensors.meta_problem({"kind": "invalid", "type": "int"}, []) is None
