"""The wall-clock check's commitment (red team, 2026-12-01): the timed `wall` request commits
to every call's output, `wall_output` returns secret calls' outputs, and the reference's recheck
accepts an output only when it matches its commitment and the task; the reference measures the
request's cost without the calls (`wall_calibration`)."""
import pytest
import torch

from kgym_worker import harness_guard, protocol, tensors, wallcheck
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
    assert wallcheck.commitment(a) == wallcheck.commitment(a.clone())
    b = a.clone()
    b[2, 3] += 1e-6
    assert wallcheck.commitment(a) != wallcheck.commitment(b)
    assert wallcheck.commitment(a.t()) == wallcheck.commitment(a.t().contiguous())  # layout-free
    assert wallcheck.commitment(3) == {"invalid": "int"}


def test_honest_wall_outputs_match_commitment_and_task(tmp_path):
    ref, ex = _reference(tmp_path), _executor(tmp_path, HONEST)
    _first_case(ref)
    seed, n = 1234, 6
    rec = ex.wall({"n": n, "seed": seed, "call": True, "sync_each": True, "commit": True}, [])
    assert len(rec["fingerprints"]) == n
    res = _recheck(ref, ex, seed, n, [1, 4], rec["fingerprints"])["results"]
    assert all(r.get("structure_matches", True) and r["mismatches"] == 0 for r in res), res
    assert ref.wall_calibration({"key": "k", "n": n, "seed": seed, "sync_each": True, "commit": True}, [])["ok"]
    # The baselines' requests with their calls (their floors by the candidate's rule, GPU): the
    # eager one runs; a torch.compile baseline not made yet is named, not faked.
    eager = ref.wall_calibration({"key": "k", "n": n, "seed": seed, "call": "eager"}, [])
    assert eager["ok"] and len(eager["fingerprints"]) == n
    assert "unsupported" in ref.wall_calibration({"key": "k", "n": n, "seed": seed, "call": "compile"}, [])


def test_the_candidates_own_calibration_keeps_the_committed_outputs(tmp_path):
    """The candidate's own calibration (GPU; the supervisor's larger floor rule) runs between the
    timed request and wall_output: it generates the inputs and commits to a stand-in of its first
    case's output shape, and leaves the timed request's outputs for the recheck."""
    from test_case_inputs import _case
    ref, ex = _reference(tmp_path), _executor(tmp_path, HONEST)
    _first_case(ref)
    assert ex._output_spec is None
    _case(ref, ex, 1)
    assert ex._output_spec and ex._output_spec[0][1] == torch.float32
    seed, n = 4321, 5
    rec = ex.wall({"n": n, "seed": seed, "call": True, "sync_each": True, "commit": True}, [])
    cal = ex.wall({"calibrate": True, "n": n, "seed": seed + 100}, [])
    assert cal["ok"] and cal["host_ms"] == 0.0 and "fingerprints" not in cal
    res = _recheck(ref, ex, seed, n, [0, 3], rec["fingerprints"])["results"]
    assert all(r.get("structure_matches", True) and r["mismatches"] == 0 for r in res), res


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


def test_release_runs_the_finalizers_then_drains_the_device(tmp_path, monkeypatch):
    """The last request before the reference is timed with the candidate stopped: what the dropped
    outputs' finalizers (and a collection) queue runs inside it, and the device-wide sync after
    waits for it (red team rt38: a spin kernel queued from a finalizer in wall_output ran on
    through eager's wall requests and the next calibration)."""
    import gc
    import weakref
    from kgym_worker import candidate as candidate_mod

    class Node:
        pass

    ex = _executor(tmp_path, HONEST)
    order = []
    collecting = gc.isenabled()
    gc.disable()  # as in the worker's serve loop: no collection but those it asks for
    try:
        ex.wall({"n": 3, "seed": 1, "call": True, "sync_each": True, "commit": True}, [])
        weakref.finalize(ex._wall_outputs[2], lambda: order.append("finalizer"))
        junk = Node()
        junk.me = junk  # a cycle: only a collection frees it
        weakref.finalize(junk, lambda: order.append("cycle"))
        del junk
        real_settle = protocol.settle
        monkeypatch.setattr(candidate_mod.protocol, "settle",
                            lambda *a, **k: (real_settle(*a, **k), order.append("settle")))
        monkeypatch.setattr(candidate_mod.timing, "synchronize", lambda device: order.append("sync"))
        ex.wall_output({"indices": [0]}, [])
        assert order == ["finalizer"]
        assert ex.release({}, [])["ok"]
        assert order == ["finalizer", "cycle", "settle", "sync"]
    finally:
        if collecting:
            gc.enable()


def test_shared_inputs_match_the_generated_ones_and_are_rechecked(tmp_path):
    """CPU: the reference writes the timed request's inputs into the shared file; the candidate
    maps it read-only and calls on the same values make_inputs gives (so the recheck, which
    regenerates them from the seeds, accepts an honest output), copying its outputs into the
    arena made in the untimed request."""
    ref, ex = _reference(tmp_path), _executor(tmp_path, HONEST)
    _first_case(ref)
    seed, n = 4321, 5
    ref.settle({"reserve_n": n, "reserve_bytes": 4 * 32 * 48}, [])
    made = ref.wall_inputs({"key": "k", "n": n, "seed": seed}, [])
    assert made["created"] and "unsupported" not in made
    assert len(made["layout"]) == n
    ex.wall({"n": 1, "seed": 1, "call": False, "sync_each": True, "reserve_n": n, "reserve_bytes": 4 * 32 * 48,
             "map": {"path": made["path"], "bytes": made["bytes"]}}, [])
    assert ex._shared.buf is not None and ex._arena is not None
    for i in range(n):  # the same bytes as the candidate's own generation
        generated = ex._make_args(seed + i)
        mapped = ex._shared.args(made["layout"][i])
        assert all(torch.equal(a, b) for a, b in zip(generated, mapped))
    rec = ex.wall({"n": n, "seed": seed, "call": True, "sync_each": True, "commit": True,
                   "layout": made["layout"]}, [])
    outs = ex._wall_outputs
    assert all(o.data_ptr() >= ex._arena.data.data_ptr() for o in outs)  # copies in the arena
    res = _recheck(ref, ex, seed, n, [0, 3], rec["fingerprints"])["results"]
    assert all(r.get("structure_matches", True) and r["mismatches"] == 0 for r in res), res
    assert ref.wall_calibration({"key": "k", "n": n, "seed": seed, "sync_each": True, "commit": True,
                                 "shared": True}, [])["ok"]
    # the next request's values replace these in place: the candidate's mapping sees them
    again = ref.wall_inputs({"key": "k", "n": n, "seed": seed + 100}, [])
    assert not again["created"]
    assert torch.equal(ex._shared.args(again["layout"][0])[0], ex._make_args(seed + 100)[0])
    assert ref.settle({"release": True}, [])["ok"] and ref._arena is None


def test_cpu_baseline_wall_request_is_the_candidates(tmp_path, monkeypatch):
    """CPU, issue 33: eager's wall request (``wall_calibration`` with ``call``) does what the
    candidate's timed request does: its calls on the shared file's input sets (no generation in
    the request), each output copied into the output arena and committed to at once, a sync
    after each call, the harness guard's checks."""
    from kgym_worker import reference as reference_mod
    ref = _reference(tmp_path)
    _first_case(ref)
    seed, n = 777, 4
    ref.settle({"reserve_n": n, "reserve_bytes": 4 * 32 * 48}, [])
    made = ref.wall_inputs({"key": "k", "n": n, "seed": seed}, [])
    seen = {}
    real = wallcheck.wall_calls

    def spy(fn, make_args, s, count, call, device, **kw):
        seen.update(kw, fn=fn, call=call, args=[make_args(s + i) for i in range(count)])
        return real(fn, make_args, s, count, call, device, **kw)

    monkeypatch.setattr(reference_mod.wallcheck, "wall_calls", spy)
    generated = []
    monkeypatch.setattr(ref, "_timed_inputs", lambda task: (lambda sd: generated.append(sd)))
    assert ref.wall_calibration({"key": "k", "n": n, "seed": seed, "sync_each": True, "commit": True,
                                 "shared": True, "call": "eager"}, [])["ok"]
    assert seen["call"] and seen["fn"] is ref.tasks["k"]["model"]
    assert seen["arena"] is ref._arena and seen["arena"] is not None
    assert isinstance(seen["commit"], wallcheck.Commitments) and seen["sync_each"] is True
    assert seen["guard"] is not None and isinstance(seen["keep"], list)
    assert not generated  # the inputs came from the shared file ...
    for i in range(n):    # ... the very sets the candidate's request got
        assert all(torch.equal(a, b) for a, b in zip(seen["args"][i], ref._shared.args(made["layout"][i])))


def _shared_wall(tmp_path, seed: int, n: int):
    """A reference and an honest candidate's executor set up as the supervisor sets them up for a
    CPU wall check: the reference's arena reserved and ``n`` input sets written to the shared
    file, the candidate's untimed request mapping it. Returns (ref, ex, the wall_inputs reply, the
    header of a committed timed request on those sets)."""
    ref, ex = _reference(tmp_path), _executor(tmp_path, HONEST)
    _first_case(ref)
    ref.settle({"reserve_n": n, "reserve_bytes": 4 * 32 * 48}, [])
    made = ref.wall_inputs({"key": "k", "n": n, "seed": seed}, [])
    ex.wall({"n": 1, "seed": 1, "call": False, "sync_each": True, "reserve_n": n, "reserve_bytes": 4 * 32 * 48,
             "map": {"path": made["path"], "bytes": made["bytes"]}}, [])
    return ref, ex, made, {"n": n, "seed": seed, "sync_each": True, "commit": True, "layout": made["layout"]}


def test_every_cpu_wall_request_exchanges_the_candidates_messages(tmp_path):
    """CPU, issue 33: the supervisor's clock holds each wall request's messages, so the
    reference's calibration and eager's request carry what the candidate's timed request
    carries: the shared inputs' layout in the request (read from there, as the candidate reads
    it) and the N commitments in the reply, of the same size. Before, both answered
    {"ok": true} to a short request, and the candidate alone paid about 0.7 ms per request of
    encoding and parsing (a renamed reference read 0.77x to 0.89x of eager on the check)."""
    import json
    ref, ex, made, head = _shared_wall(tmp_path, 2468, 5)
    seed, n = head["seed"], head["n"]
    cand = ex.wall(dict(head, call=True), [])
    used = []
    real = ref._request_layout
    ref._request_layout = lambda req, count: used.append(req.get("layout")) or real(req, count)
    cal = ref.wall_calibration(dict(head, key="k", shared=True), [])
    eager = ref.wall_calibration(dict(head, key="k", shared=True, call="eager"), [])
    assert used == [made["layout"], made["layout"]]
    size = len(json.dumps(cand["fingerprints"]))
    for reply in (cal, eager):
        assert reply["ok"] and len(reply["fingerprints"]) == n
        assert abs(len(json.dumps(reply["fingerprints"])) - size) <= n * 8  # (shapes' digits may differ)
    assert eager["fingerprints"] == cand["fingerprints"]  # the same operator on the same inputs
    assert ref.settle({"release": True}, [])["ok"]


def test_every_cpu_wall_request_reports_its_own_work_only_for_shared_inputs(tmp_path):
    """CPU, issue 33: each request of the wall check (the candidate's timed one, the
    calibration, eager's) reports ``harness_ms``, its process's CPU time in the request's own
    work outside the calls (reading the shared input sets, committing to the arena copies), which
    the supervisor takes out of that side's pairs (runner::without_harness_work). It is above zero
    and below the request's own duration; where the inputs are generated in the request (the task
    module's get_inputs, which a candidate under profile off can replace) none is reported."""
    import time as _time
    ref, ex, made, head = _shared_wall(tmp_path, 4321, 6)
    seed, n = head["seed"], head["n"]
    for serve in (lambda: ex.wall(dict(head, call=True), []),
                  lambda: ref.wall_calibration(dict(head, key="k", shared=True), []),
                  lambda: ref.wall_calibration(dict(head, key="k", shared=True, call="eager"), [])):
        t0 = _time.perf_counter()
        reply = serve()
        took_ms = (_time.perf_counter() - t0) * 1e3
        assert reply["ok"] and isinstance(reply["harness_ms"], float), reply
        assert 0 < reply["harness_ms"] < took_ms, (reply["harness_ms"], took_ms)
    # Generated inputs (no layout, not shared): nothing reported on either side.
    plain = {"n": n, "seed": seed, "sync_each": True, "commit": True}
    assert ex.wall(dict(plain, call=True), [])["harness_ms"] is None
    assert ref.wall_calibration(dict(plain, key="k"), [])["harness_ms"] is None
    assert ref.wall_calibration(dict(plain, key="k", call="eager"), [])["harness_ms"] is None
    assert ref.settle({"release": True}, [])["ok"]


def test_wall_calls_own_work_leaves_out_the_calls_objects(monkeypatch):
    """CPU: ``harness["ms"]`` counts only kgym's own work. The inputs are dropped outside the
    clocked work, so a finalizer the call attached to them runs outside it (a review of session
    23: dropped when the next set's spans were taken, it ran inside the clock and its work was
    taken out of the candidate's pairs); an output that does not fit its arena slot is hashed as
    the call's own object, so the request reports no figure at all."""
    reads = []
    real = wallcheck._THREAD_NS
    monkeypatch.setattr(wallcheck, "_THREAD_NS", lambda: reads.append(1) or real())
    inside = []

    class Finalizer:
        def __del__(self):
            inside.append(len(reads) % 2 == 1)  # an odd number of clock reads: inside a window

    def call(x):
        x.hook = Finalizer()  # noqa: attached to the harness's input
        return x * 2

    make = lambda s: (torch.full((64,), float(s)),)  # noqa: E731
    harness = {}
    wallcheck.wall_calls(call, make, 0, 4, True, "cpu", keep=[], arena=wallcheck.OutputArena(4, 64 * 4),
                         commit=wallcheck.Commitments(), guard=harness_guard.HarnessGuard(), harness=harness)
    assert len(inside) == 4 and not any(inside), inside
    assert isinstance(harness["ms"], float) and harness["ms"] > 0
    small = {}  # slots of 64 bytes for outputs of 256: store hands the output itself back
    wallcheck.wall_calls(lambda x: x * 2, make, 0, 3, True, "cpu", keep=[], arena=wallcheck.OutputArena(3, 16),
                         commit=wallcheck.Commitments(), harness=small)
    assert small["ms"] is None


def test_output_arena_copies_or_keeps():
    arena = wallcheck.OutputArena(3, 64)
    x = torch.arange(10, dtype=torch.float32)
    stored = arena.store(1, x)
    assert torch.equal(stored, x) and stored.data_ptr() == arena.data.data_ptr() + arena.slot_bytes
    pair = arena.store(2, (x[:4], x[4:].to(torch.float64)))
    assert [t.dtype for t in pair] == [torch.float32, torch.float64] and torch.equal(pair[0], x[:4])
    big = torch.zeros(100)
    assert arena.store(0, big) is big  # does not fit: kept as it is
    assert arena.store(0, 3) == 3      # not tensors: kept as it is


HOOKED = '''
import sys, torch, torch.nn as nn
sys.setprofile(lambda frame, event, arg: None)
class ModelNew(nn.Module):
    def forward(self, x, y):
        return x + y
'''

MODE = '''
import torch, torch.nn as nn
from torch.overrides import TorchFunctionMode
class Passing(TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))
Passing().__enter__()
class ModelNew(nn.Module):
    def forward(self, x, y):
        return x + y
'''


def test_hooks_and_modes_left_by_the_candidate_are_tampering(tmp_path):
    """A profile function or a torch mode left installed runs inside the harness (red team rt2:
    it filled exactly the outputs the harness was about to recheck)."""
    import sys
    for source, what in ((HOOKED, "profile function"), (MODE, "torch function mode")):
        ex = _executor(tmp_path, source)
        found = ex._tampered()
        assert any(what in f for f in found), found
        sys.setprofile(None)
        while torch._C._len_torch_function_stack():
            torch._C._pop_torch_function_stack()
    assert not _executor(tmp_path, HONEST)._tampered()


def test_shared_input_file_without_room_is_a_clear_error(tmp_path):
    """A file system without room for the shared inputs is an OSError naming the problem, not a
    SIGBUS in the reference later (a file-size limit stands in for a full disk)."""
    import subprocess
    import sys
    code = (
        "import os, resource, signal, sys\n"
        "sys.path.insert(0, sys.argv[1])\n"
        "from kgym_worker import wallcheck\n"
        "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
        "resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, 1 << 20))\n"
        "w = wallcheck.SharedInputs()\n"
        "try:\n"
        "    w.write([], [], 64 << 20, sys.argv[2])\n"
        "except OSError as exc:\n"
        "    print('ERR', exc)\n"
        "print('LEFT', sorted(os.listdir(sys.argv[2])))\n")
    import kgym_worker
    pkg = str(__import__("pathlib").Path(kgym_worker.__file__).parent.parent)
    out = subprocess.run([sys.executable, "-c", code, pkg, str(tmp_path)], capture_output=True, text=True,
                         timeout=120).stdout
    assert "ERR" in out and "no room for the wall check's shared inputs" in out, out
    assert "LEFT []" in out, out  # the half-made file is gone


@pytest.mark.skipif(not torch.cuda.is_available(), reason="the GPU commitment (word sums) needs CUDA")
def test_gpu_commitment_depends_on_values_not_layout():
    """The GPU digest picks its word size from the byte size only: a view at an unaligned
    offset, an odd size, a 0-d tensor and bools commit like their fresh copies (the reference
    recomputes the commitment on a decoded, freshly allocated copy); and it sees a change."""
    base = torch.randn(1001, device="cuda")
    for t in (base[1:], base[1:].half(), base.half()[1:], base[:7], torch.tensor(2.5, device="cuda"),
              base > 0, base.double()[1:].reshape(10, 100)[:, 1:]):
        assert wallcheck.commitment(t) == wallcheck.commitment(t.clone()), t.dtype
    even = base[:1000]  # 4000 bytes: 64-bit words
    c = wallcheck.Commitments()
    c.add(even)
    changed = even.clone()
    changed[500] += 1
    c.add(changed)
    first, second = c.done()
    assert first != second and first[0]["words"] == "int64"


def test_the_reference_waits_until_the_device_is_its_own():
    """Red team rt38: GPU work the candidate queued before it was stopped time-slices the device
    against the reference's timing; the reference waits (bounded) until a kernel's round trip says
    no other context's work runs."""
    from kgym_worker import timing
    assert timing.wait_device_quiet("cpu") == 0.0
    assert timing.wait_device_quiet("cuda", probe=lambda: 0.02) == 0.0
    trips = iter([2.0] * 10 + [0.02, 0.02, 2.0] + [0.02] * 3)  # one slow of three: still busy
    calls = []
    waited = timing.wait_device_quiet("cuda", probe=lambda: calls.append(1) or next(trips))
    assert waited > 0 and len(calls) == 16  # until QUIET_PROBES spaced round trips were all quiet
    began = __import__("time").perf_counter()
    assert timing.wait_device_quiet("cuda", limit_s=0.05, probe=lambda: 2.0) >= 50
    assert __import__("time").perf_counter() - began < 1.0  # bounded


def test_the_reference_says_when_it_gave_up_waiting(tmp_path, monkeypatch):
    from kgym_worker import timing
    ref = _reference(tmp_path)
    assert ref.settle({}, []) == {"ok": True}  # the CPU: nothing waited
    monkeypatch.setattr(timing, "wait_device_quiet", lambda device: 12.0)
    assert ref._quiet() == {"quiet_wait_ms": 12.0, "quiet_timeout": False}
    monkeypatch.setattr(timing, "wait_device_quiet", lambda device: timing.QUIET_WAIT_S * 1e3 + 1)
    assert ref.settle({}, [])["quiet_timeout"] is True
