"""The wall-clock check's commitment (red team, 2026-12-01): the timed `wall` request commits
to every call's output, `wall_output` returns secret calls' outputs, and the reference's recheck
accepts an output only when it matches its commitment and the task; the reference measures the
request's cost without the calls (`wall_calibration`)."""
import torch

from kgym_worker import common, protocol, tensors
from test_case_inputs import HONEST, TASK, TOL, _executor, _reference

# Returns garbage; the commitment is of that garbage, so the recheck finds it incorrect.
GARBAGE = """
import torch, torch.nn as nn
class ModelNew(nn.Module):
    def forward(self, x, y):
        return torch.full_like(x, 7.0)
"""


def _first_case(ref):
    made = ref.make_case({"key": "k", "index": 0, "transform": "nominal"}, [])
    ref._reference_output(ref.tasks["k"], 0)
    return made


def _recheck(ref, ex, seed, n, indices, fps):
    got, blobs = ex.wall_output({"indices": indices}, [])
    items = [{"index": k, "seed": seed + k, "fingerprint": fps[k], "output": m}
             for k, m in zip(indices, got["outputs"])]
    return ref.recheck({"key": "k", "items": items, "tolerances": TOL}, [protocol_read(b) for b in blobs])


def protocol_read(b):
    return b.read() if isinstance(b, protocol.SharedBlob) else b


def test_commitment_is_exact_and_order_free():
    a = torch.randn(5, 7)
    assert common.commitment(a) == common.commitment(a.clone())
    b = a.clone()
    b[2, 3] += 1e-6
    assert common.commitment(a) != common.commitment(b)
    assert common.commitment(a.t()) == common.commitment(a.t().contiguous())  # layout-free
    assert common.commitment(3) == {"invalid": "int"}


def test_honest_wall_outputs_match_commitment_and_task(tmp_path):
    ref, ex = _reference(tmp_path), _executor(tmp_path, HONEST)
    _first_case(ref)
    seed, n = 1234, 6
    rec = ex.wall({"n": n, "seed": seed, "call": True, "sync_each": True, "commit": True}, [])
    assert len(rec["fingerprints"]) == n
    res = _recheck(ref, ex, seed, n, [1, 4], rec["fingerprints"])["results"]
    assert all(r.get("structure_matches", True) and r["mismatches"] == 0 for r in res), res
    assert ref.wall_calibration({"key": "k", "n": n, "seed": seed, "sync_each": True, "commit": True}, [])["ok"]


def test_output_differing_from_commitment_is_caught(tmp_path):
    ref, ex = _reference(tmp_path), _executor(tmp_path, HONEST)
    _first_case(ref)
    seed, n = 99, 5
    rec = ex.wall({"n": n, "seed": seed, "call": True, "sync_each": True, "commit": True}, [])
    fps = list(rec["fingerprints"])
    fps[2] = fps[3]  # a commitment that is not call 2's output
    res = _recheck(ref, ex, seed, n, [2], fps)["results"]
    assert res[0]["structure_matches"] is False and "committed" in res[0]["detail"]


def test_garbage_wall_outputs_are_incorrect(tmp_path):
    ref, ex = _reference(tmp_path), _executor(tmp_path, GARBAGE)
    _first_case(ref)
    rec = ex.wall({"n": 5, "seed": 7, "call": True, "sync_each": True, "commit": True}, [])
    res = _recheck(ref, ex, 7, 5, [0], rec["fingerprints"])["results"]
    assert res[0]["mismatches"] > 0


def test_wall_output_forgets_after_one_fetch(tmp_path):
    ex = _executor(tmp_path, HONEST)
    ex.wall({"n": 3, "seed": 1, "call": True, "sync_each": True, "commit": True}, [])
    ex.wall_output({"indices": [0]}, [])
    again, _ = ex.wall_output({"indices": [0]}, [])
    assert again["outputs"][0]["kind"] == "invalid"
