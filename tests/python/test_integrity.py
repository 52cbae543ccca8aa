"""Run-time integrity primitives (issue 4): identity checks, precision flags, thread census,
kernel-trace summary, magnitude-scaled tolerance, float64 cross-check, trivial-answer audit,
timed-output recheck, other-shape case and the executor's reruns."""
import threading
import sys
import time
import types

import pytest
import torch

from kgym_worker import harness_guard, integrity, loading, tensors, timing, wallcheck
from kgym_worker.candidate import CandidateExecutor
from kgym_worker.reference import ReferenceWorker

TOL = {"float32": [1e-4, 1e-4], "float16": [1e-2, 1e-2], "bfloat16": [1e-2, 1e-2], "float64": [1e-7, 1e-7]}

TASK = """
import torch
import torch.nn as nn
class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x)
batch = 32
dim = 48
def get_inputs():
    return [torch.randn(batch, dim)]
def get_init_inputs():
    return []
"""

SOFTMAX_WIDE = """
import torch
import torch.nn as nn
class Model(nn.Module):
    def forward(self, x):
        return torch.softmax(x, dim=1)
batch = 4
dim = 65536
def get_inputs():
    return [torch.randn(batch, dim)]
def get_init_inputs():
    return []
"""


def test_fingerprints_see_replacement_and_code_swap():
    mod = types.ModuleType("victim")
    exec("def f(x):\n    return x + 1\ndef g(x):\n    return x * 2\n", mod.__dict__)
    fp = integrity.Fingerprints().add_module(mod, "victim")
    assert fp.changed() == []
    original = mod.f
    mod.f = lambda x: x
    assert fp.changed() == ["victim.f"]
    mod.f = original
    mod.g.__code__ = (lambda x: 0).__code__
    assert fp.changed() == ["victim.g"]


def test_fingerprints_cover_torch_timers():
    fp = integrity.Fingerprints().add_torch()
    saved = torch.cuda.Event.elapsed_time
    try:
        torch.cuda.Event.elapsed_time = lambda self, end: 1e-3
        assert "torch.cuda.Event.elapsed_time" in fp.changed()
    finally:
        torch.cuda.Event.elapsed_time = saved
    assert fp.changed() == []


def test_precision_flags_change_and_restore():
    before = integrity.precision_flags()
    torch.set_float32_matmul_precision("medium")
    try:
        assert integrity.precision_flags() != before
    finally:
        integrity.restore_precision_flags(before)
    assert integrity.precision_flags() == before


def test_thread_census_sees_running_thread():
    before = integrity.thread_census()
    stop = threading.Event()
    t = threading.Thread(target=stop.wait, daemon=True)
    t.start()
    after = integrity.thread_census()
    assert "Python thread" in integrity.census_leak(before, after)
    stop.set()
    t.join()
    assert integrity.census_leak(before, integrity.thread_census()) == ""


def test_kernel_categories():
    assert integrity.kernel_category("my_relu_kernel(float const*, float*, int)") == "own"
    assert integrity.kernel_category("relu_kernel_0d1d") == "own"
    assert integrity.kernel_category("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>") == "glue"
    assert integrity.kernel_category("void at::native::reduce_kernel<512, 1>") == "library"
    assert integrity.kernel_category("sm90_xmma_gemm_f32f32_tf32f32_f32_tn_n_tilesize128x128x32") == "library"
    assert integrity.kernel_category("ampere_sgemm_128x64_nn") == "library"
    assert integrity.kernel_category("triton_poi_fused_relu_0") == "library"
    assert integrity.kernel_category("Memcpy DtoD (Device -> Device)") == "memory"


def test_summarize_trace_windows_and_shares():
    windows = [[0.0, 100.0], [200.0, 300.0]]
    kernels = [
        {"name": "my_kernel", "stream": 7, "device": 0, "start_us": 10.0, "end_us": 60.0},
        {"name": "ampere_sgemm_128x64_nn", "stream": 7, "device": 0, "start_us": 210.0, "end_us": 230.0},
        {"name": "my_kernel", "stream": 13, "device": 0, "start_us": 150.0, "end_us": 170.0},  # between calls
        {"name": "my_kernel", "stream": 7, "device": 0, "start_us": 290.0, "end_us": 400.0},  # runs past the end
    ]
    rec = integrity.summarize_trace(kernels, windows, graph_launches=1)
    assert rec["outside_window"] == 2 and rec["graph_launches"] == 1 and rec["calls"] == 2
    assert abs(rec["own_ms"] - (0.05 + 0.02 + 0.11)) < 1e-9 and abs(rec["library_ms"] - 0.02) < 1e-9
    assert rec["streams"] == [7, 13]
    inside = [k for k in rec["kernels"] if k["call"] == 1]
    assert inside and inside[0]["start_us"] == 10.0


def _ref(tmp_path, source=TASK):
    ref = ReferenceWorker("cpu", str(tmp_path))
    reply = ref.load_task({"key": "k", "source": source, "scale": 1.0, "init_seed": 1}, [])
    assert reply["ok"]
    return ref, reply


def _make_case(ref, req):
    """make_case, then the case's inputs as the fallback path transfers them."""
    made = ref.make_case(req, [])
    assert "inputs" not in made and made["regenerate"]["seed"] == made["seed"]
    meta, blobs = ref.case_inputs({"key": req["key"], "index": req["index"]}, [])
    return tensors.decode(meta["inputs"], blobs, "cpu")


def _compare(ref, index, out, audit=True):
    blobs = []
    meta = tensors.encode(out, blobs)
    return ref.compare({"key": "k", "index": index, "tolerances": TOL, "output": meta, "audit": audit}, blobs)


def test_roofline_counts_bytes_and_flops(tmp_path):
    _, reply = _ref(tmp_path)
    roof = reply["roofline"]
    assert roof["bytes"] == 2 * 32 * 48 * 4 and roof["applied"] is False  # CPU: recorded, not applied
    mm = TASK.replace("return torch.relu(x)", "return x @ x.T")
    _, reply = _ref(tmp_path, mm)
    assert reply["roofline"]["flops"] == 2 * 32 * 32 * 48


def test_roofline_leaves_out_flops_a_mostly_zero_operand_makes_avoidable(tmp_path):
    # CUDA-L1's L1/12 reference: torch.diag(A) @ B. Its honest row-scaling kernel measured below
    # the floor set by the dense matmul's FLOPs on the H200 (timing_invalid); the floor now counts
    # only ops whose operands are mostly non-zero.
    from kgym_worker.reference import count_flops
    a, b = torch.randn(64), torch.randn(64, 48)
    total, dense, avoided, out = count_flops(lambda a, b: torch.diag(a) @ b, [a, b])
    assert total == 2 * 64 * 64 * 48 and dense == 0 and set(avoided) == {"aten.mm"}
    assert torch.allclose(out, a.unsqueeze(1) * b)
    # A dense matmul and a half-zero one (a triangular or ReLU'd operand) count in full.
    total, dense, avoided, _ = count_flops(lambda x, y: x @ y, [torch.randn(32, 16), torch.randn(16, 8)])
    assert total == dense == 2 * 32 * 16 * 8 and not avoided
    tri = torch.triu(torch.randn(32, 32))
    total, dense, _, _ = count_flops(lambda x, y: x @ y, [tri, torch.randn(32, 8)])
    assert dense == total == 2 * 32 * 32 * 8
    # Through the reference worker: the note names the op, `flops` is the floor's.
    diag = TASK.replace("return torch.relu(x)", "return torch.diag(x[:, 0]) @ x")
    _, reply = _ref(tmp_path, diag)
    roof = reply["roofline"]
    assert roof["flops"] == 0 and roof["total_flops"] > 0 and "aten.mm" in roof["note"]


def test_magnitude_scaled_atol_rejects_zeros_on_tiny_outputs(tmp_path):
    ref, _ = _ref(tmp_path, SOFTMAX_WIDE)
    x = _make_case(ref, {"key": "k", "index": 0, "transform": "nominal"})[0]
    rec = _compare(ref, 0, torch.zeros_like(x))
    assert rec["mismatches"] > 0  # max |ref| ~ 1e-4: an unscaled atol of 1e-4 would accept zeros
    assert rec["atol"] < 1e-5
    assert "zeros" not in rec["trivial_passing"]
    good = _compare(ref, 0, torch.softmax(x, dim=1))
    assert good["mismatches"] == 0 and good["fp64_checked"]


def test_fp64_cross_check_records_errors(tmp_path):
    ref, _ = _ref(tmp_path)
    x = _make_case(ref, {"key": "k", "index": 0, "transform": "nominal"})[0]
    exact = _compare(ref, 0, torch.relu(x))
    assert exact["fp64_checked"] and exact["fp64_error"] == 0 and exact["fp64_reference_error"] == 0
    truncated = (torch.relu(x).view(torch.int32) & ~((1 << 9) - 1)).view(torch.float32)
    rec = _compare(ref, 0, truncated)
    assert rec["mismatches"] == 0  # inside the tolerance ...
    # ... and its error against float64 recorded as it is (the gate's precision floor judges it:
    # tests/data/candidates/19_ReLU/truncated_mantissa.py through kgym eval, test_eval_outcomes.sh)
    ref64 = torch.relu(x.double())
    assert rec["fp64_error"] == pytest.approx(float((truncated.double() - ref64).abs().max()), rel=1e-12)
    assert rec["fp64_scale"] == pytest.approx(float(ref64.abs().max()), rel=1e-12)
    assert rec["dtype_eps"] == torch.finfo(torch.float32).eps


def test_trivial_audit_names_passing_answers(tmp_path):
    ident = TASK.replace("return torch.relu(x)", "return x * 1.0")
    ref, _ = _ref(tmp_path, ident)
    x = _make_case(ref, {"key": "k", "index": 0, "transform": "nominal"})[0]
    rec = _compare(ref, 0, x.clone())
    assert rec["trivial_passing"] == ["input"]


def test_trivial_constant_is_one_value_for_every_case(tmp_path):
    # A scalar output (the default suite's cross-entropy tasks): each case's own mean is the
    # answer itself, so the audit called those tasks weak; a constant must fit every case.
    # (A sum: its cases differ by about 50 against a tolerance of about 0.01, so two cases'
    # values fall within one tolerance about once in 10,000 draws; the mean of x * x, 1 +- 0.04
    # against 2e-4, did once in a few hundred and failed the suite.)
    scalar = TASK.replace("return torch.relu(x)", "return x.sum()")
    ref, _ = _ref(tmp_path, scalar)
    outs = []
    for i in range(2):
        x = _make_case(ref, {"key": "k", "index": i, "transform": "nominal"})[0]
        outs.append(_compare(ref, i, x.sum()))
    assert "constant" in outs[0]["trivial_passing"]  # one case alone: some constant fits it
    assert "constant" not in outs[1]["trivial_passing"]  # two different losses: none fits both
    # A constant output still is found: every case gives 2.0.
    const = TASK.replace("return torch.relu(x)", "return torch.full_like(x, 2.0)")
    ref, _ = _ref(tmp_path, const)
    for i in range(3):
        x = _make_case(ref, {"key": "k", "index": i, "transform": "nominal"})[0]
        assert "constant" in _compare(ref, i, torch.full_like(x, 2.0))["trivial_passing"]


def test_other_shape_case(tmp_path):
    ref, _ = _ref(tmp_path)
    made = ref.make_case({"key": "k", "index": 5, "transform": "nominal", "shape": "other"}, [])
    assert made["sizes"] == {"batch": [32, 25], "dim": [48, 37]}
    assert made["regenerate"]["sizes"] == made["sizes"]
    meta, blobs = ref.case_inputs({"key": "k", "index": 5}, [])
    x = tensors.decode(meta["inputs"], blobs, "cpu")[0]
    assert tuple(x.shape) == (25, 37)
    assert _compare(ref, 5, torch.relu(x), audit=False)["mismatches"] == 0
    linear = TASK.replace("def get_init_inputs():\n    return []", "def get_init_inputs():\n    return [dim]") \
        .replace("class Model(nn.Module):", "class Model(nn.Module):\n    def __init__(self, d):\n        super().__init__()")
    ref2 = ReferenceWorker("cpu", str(tmp_path))
    ref2.load_task({"key": "k", "source": linear, "scale": 1.0, "init_seed": 1}, [])
    reply = ref2.make_case({"key": "k", "index": 0, "transform": "nominal", "shape": "other"}, [])
    assert "init inputs" in reply["skipped"]


def test_recheck_regenerates_from_seed(tmp_path):
    ref, _ = _ref(tmp_path)
    module = ref.tasks["k"]["module"]
    good = torch.relu(loading.make_inputs(module, 77, "nominal", "cpu", on_device=True)[0])
    stale = torch.relu(loading.make_inputs(module, 78, "nominal", "cpu", on_device=True)[0])
    blobs = []
    items = [{"index": 0, "seed": 77, "output": tensors.encode(good, blobs)},
             {"index": 1, "seed": 77, "output": tensors.encode(stale, blobs)}]
    res = ref.recheck({"key": "k", "items": items, "tolerances": TOL}, blobs)["results"]
    assert res[0]["mismatches"] == 0 and res[1]["mismatches"] > 0


HONEST = """
import torch, torch.nn as nn
class ModelNew(nn.Module):
    def forward(self, x):
        return x.clamp_min(0)
"""


def _executor(tmp_path, source):
    ex = CandidateExecutor("cpu", str(tmp_path), str(tmp_path / "log"))
    rec = ex.load({"candidate_source": source, "task_source": TASK, "scale": 1.0, "init_seed": 1}, [])
    return ex, rec


def _run(ex, x):
    blobs = []
    meta = tensors.encode([x], blobs)
    reply = ex.run_case({"index": 0, "inputs": meta, "tolerances": TOL}, blobs)
    return reply[0] if isinstance(reply, tuple) else reply


def test_executor_reruns_and_stability(tmp_path):
    ex, rec = _executor(tmp_path, HONEST)
    assert rec["ok"] and rec["tampered"] == []
    out = _run(ex, torch.randn(4, 4))
    assert out["reruns"] == 2 and out["rerun_tolerance_ratio"] == 0 and out["output_stable"]
    assert not out.get("threads_leaked") and out["tampered"] == []
    noisy = HONEST.replace("return x.clamp_min(0)", "return x.clamp_min(0) + torch.rand(()).item()")
    ex, _ = _executor(tmp_path, noisy)
    assert _run(ex, torch.randn(4, 4))["rerun_tolerance_ratio"] > 1


def test_executor_sees_thread_and_late_write(tmp_path):
    # A thread started by the call keeps writing the returned output until the test stops it: both
    # the leaked thread and the write after the call returned (the stability re-read) are named.
    late = HONEST.replace("return x.clamp_min(0)", """y = x.clamp_min(0)
        import threading, time
        stop = self.__dict__.setdefault("stop", threading.Event())
        def fill():
            end = time.monotonic() + 120
            while not stop.is_set() and time.monotonic() < end:
                y.add_(1.0)
                time.sleep(0.001)
        threading.Thread(target=fill, daemon=True).start()
        return y""")
    ex, _ = _executor(tmp_path, late)
    try:
        out = _run(ex, torch.randn(4, 4))
    finally:
        ex.model.stop.set()
    assert out["threads_leaked"] and "Python thread" in out["thread_detail"]
    assert out["output_stable"] is False, out
    time.sleep(0.1)


def test_a_raw_thread_left_by_the_import_is_named(tmp_path):
    # Red team rt38d: a thread of _thread.start_new_thread has no threading.Thread object, so
    # threading.enumerate (the load's stray-thread check, the per-call census) did not list it.
    raw = "import _thread, time, threading\nSTOP = threading.Event()\n" \
          "_thread.start_new_thread(lambda: STOP.wait(120), ())\n" + HONEST
    ex, rec = _executor(tmp_path, raw)
    try:
        assert rec["ok"] and any("raw thread" in t for t in rec["tampered"]), rec["tampered"]
        out = _run(ex, torch.randn(4, 4))
        assert out["threads_leaked"] and "raw thread" in out["thread_detail"]
    finally:
        sys.modules[type(ex.model).__module__].STOP.set()
    ex, rec = _executor(tmp_path, HONEST)
    assert rec["ok"] and rec["tampered"] == []


def test_executor_reports_tampering(tmp_path):
    real = wallcheck.wall_calls  # put back after (a reload would leave harness_guard's snapshot stale)
    patch = "import sys\nsys.modules['kgym_worker.wallcheck'].wall_calls = lambda *a: None\n" + HONEST
    ex, rec = _executor(tmp_path, patch)
    try:
        assert rec["ok"] and any("wall_calls" in t for t in rec["tampered"])
    finally:
        wallcheck.wall_calls = real
    flag = "import torch\ntorch.set_float32_matmul_precision('medium')\n" + HONEST
    ex, rec = _executor(tmp_path, flag)
    assert any("float32_matmul_precision" in t for t in rec["tampered"])
    assert torch.get_float32_matmul_precision() == "highest"  # restored


def test_executor_times_fresh_inputs_and_returns_kept_outputs(tmp_path):
    ex, _ = _executor(tmp_path, HONEST)
    opts = {"warmup": 1, "min_calls": 4, "max_calls": 4, "budget_ms": 1000, "target_spread": 0.0, "l2_flush": True}
    reply, blobs = ex.time({"options": opts, "seeds": [11, 12, 13, 14, 15], "keep": [2]}, [])
    assert len(reply["timing"]["times_ms"]) == 4 and reply["timing"]["fresh_inputs"]
    kept = reply["kept"]
    assert [k["index"] for k in kept] == [2, 3]  # the requested one and, always, the last call
    out = tensors.decode(kept[0]["output"], blobs, "cpu")
    want = loading.make_inputs(ex.task, 14, "nominal", "cpu", on_device=True)[0].clamp_min(0)
    assert torch.equal(out, want)
    launch = ex.trace({"seeds": [1, 2]}, [])["launch"]
    assert launch["traced"] is False  # no kernels on the CPU
    # ... but the ATen ops of the calls are listed: this plain-PyTorch candidate computes in ATen.
    assert launch["aten_traced"] and launch["aten_compute_calls"] >= 2 and launch["calls"] == 2
    assert any(o["category"] == "compute" for o in launch["aten_ops"]), launch["aten_ops"]


def test_aten_op_categories():
    for glue in ("aten::empty_like", "aten::empty_strided", "aten::view", "aten::copy_", "aten::as_strided",
                 "aten::_to_copy", "aten::fill_", "aten::zero_", "aten::contiguous", "aten::clone"):
        assert integrity.aten_category(glue) == "glue", glue
    for compute in ("aten::relu", "aten::clamp_min", "aten::addmm", "aten::sum", "aten::mul", "aten::where"):
        assert integrity.aten_category(compute) == "compute", compute
    assert integrity.aten_category("kgym::call0") == "other"
    # torch's other operator namespaces are library compute too (red team rt24: oneDNN's GEMM
    # through torch.ops.mkldnn passed strict), the profiler's bookkeeping and a namespace torch
    # did not register (the candidate's own TORCH_LIBRARY) are not
    for compute in ("mkldnn::_linear_pointwise", "mkldnn::_convolution_pointwise", "quantized::linear",
                    "prims::mul"):
        assert integrity.aten_category(compute) == "compute", compute
    assert integrity.aten_category("profiler::_record_function_enter_new") == "other"
    assert integrity.aten_category("my_candidate_ops::relu") == "other"
    rec = integrity.summarize_aten_ops(["aten::empty_like", "aten::relu", "aten::relu", "kgym::call0"])
    assert rec["aten_compute_calls"] == 2 and rec["aten_glue_calls"] == 1
    assert rec["aten_ops"][0] == {"name": "aten::relu", "category": "compute", "count": 2}


def test_comparison_in_slices_matches_the_whole_tensor(tmp_path):
    # The comparison reads outputs in float64 slices (COMPARE_CHUNK elements), so that its memory
    # does not grow with the output (a full-size KernelBench ReLU ran the reference out of the
    # H200's memory). Slices of 7 elements (none aligned with the 48-wide rows) must give the
    # whole-tensor figures: mismatch counts, the first mismatch's index, NaN handling, errors,
    # the float64 cross-check, the scaled atol and the trivial-answer audit.
    ident = TASK.replace("return torch.relu(x)", "return x * 1.0")
    ref, _ = _ref(tmp_path, ident)
    x = _make_case(ref, {"key": "k", "index": 0, "transform": "nominal"})[0]
    bad = x.clone()
    bad[5, 17] += 1.0
    bad[20, 3] = float("nan")
    truncated = (x.view(torch.int32) & ~((1 << 9) - 1)).view(torch.float32)
    results = {1 << 25: [], 7: []}
    for out in (x.clone(), bad, truncated, torch.zeros_like(x)):
        for chunk in results:
            ref.compare_chunk = chunk
            results[chunk].append(_compare(ref, 0, out))
    whole, sliced = results[1 << 25], results[7]
    for a, b in zip(whole, sliced):
        for key in ("mismatches", "nonfinite_mismatches", "first_mismatch_index", "numel", "max_abs_error",
                    "reference_finite", "fp64_checked", "fp64_error", "fp64_reference_error", "fp64_scale",
                    "trivial_passing"):
            assert a.get(key) == b.get(key), key
        for key in ("max_rel_error", "tolerance_ratio"):  # (divisions: vectorised in another order)
            assert b[key] == pytest.approx(a[key], rel=1e-12), key
        assert b["atol"] == pytest.approx(a["atol"], rel=1e-12)
        assert b["mean_abs_error"] == pytest.approx(a["mean_abs_error"], rel=1e-9)
    assert sliced[0]["mismatches"] == 0 and sliced[0]["trivial_passing"] == ["input"]
    assert sliced[1]["mismatches"] == 2 and sliced[1]["first_mismatch_index"] == [5, 17]
    assert sliced[1]["nonfinite_mismatches"] == 1
    assert sliced[2]["mismatches"] == 0 and sliced[2]["fp64_error"] > 0
    assert sliced[3]["mismatches"] > 0


def test_cached_device_memory_is_kept_on_cpu():
    from kgym_worker import integrity
    assert integrity.release_device_memory("cpu") is False
    assert integrity.release_device_memory("cpu", scrub=True) is False


def test_comparison_makes_no_float64_tensor_larger_than_a_slice(tmp_path):
    # What the slices are for: the comparison's float64 tensors stay within COMPARE_CHUNK
    # elements whatever the output's size (the whole-tensor comparison made 12.8 GB copies of a
    # full-size ReLU output and ran the H200 out of memory). A dispatch mode records every new
    # float64 tensor (views of existing ones aside) made while the reference compares; the float64 reference itself (the task
    # run in float64, made once per case) is made before.
    from torch.utils._python_dispatch import TorchDispatchMode

    class Largest(TorchDispatchMode):
        numel = 0

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            for t in (out if isinstance(out, (tuple, list)) else [out]):
                if isinstance(t, torch.Tensor) and t.dtype == torch.float64 and not func.is_view:
                    Largest.numel = max(Largest.numel, t.numel())
            return out

    ident = TASK.replace("return torch.relu(x)", "return x * 1.0")
    ref, _ = _ref(tmp_path, ident)
    x = _make_case(ref, {"key": "k", "index": 0, "transform": "nominal"})[0]
    ref64 = ref._reference64(ref.tasks["k"], ref.tasks["k"]["cases"][0]["inputs"])
    assert ref64 is not None and ref64.numel() == x.numel()
    ref._reference64 = lambda task, inputs: ref64
    ref.compare_chunk = 100
    bad = x.clone()
    bad[7, 9] += 1.0
    with Largest():
        rec = _compare(ref, 0, bad)
    assert rec["mismatches"] == 1 and rec["first_mismatch_index"] == [7, 9] and rec["fp64_checked"]
    assert 0 < Largest.numel <= 100, Largest.numel  # 1536 elements compared, never more than a slice


def test_reference_returns_cached_memory_after_the_right_requests():
    from kgym_worker.reference import releases_after
    for op in ("load_task", "make_case", "compare", "recheck", "time", "drop_task"):
        assert releases_after({"op": op})
    assert releases_after({"op": "wall_calibration", "call": "eager"})  # its N kept outputs
    assert not releases_after({"op": "wall_calibration", "n": 5})  # inside the wall check's sequence
    assert not releases_after({"op": "settle"})


def test_integer_and_complex_outputs_are_compared_exactly_and_in_full(tmp_path):
    # Red team rt13 (session 9): the comparison converted outputs to float64, which rounds int64
    # values above 2^53 together and drops a complex output's imaginary part: both wrong outputs
    # below had 0 mismatches.
    big = TASK.replace("return torch.relu(x)", "return torch.full(x.shape, 2 ** 53, dtype=torch.int64)")
    ref, _ = _ref(tmp_path, big)
    x = _make_case(ref, {"key": "k", "index": 0, "transform": "nominal"})[0]
    out = torch.full(x.shape, 2 ** 53, dtype=torch.int64)
    assert _compare(ref, 0, out, audit=False)["mismatches"] == 0
    out[3, 4] += 1
    rec = _compare(ref, 0, out, audit=False)
    assert rec["mismatches"] == 1 and rec["first_mismatch_index"] == [3, 4]
    cplx = TASK.replace("return torch.relu(x)", "return torch.complex(x, 2 * x)")
    ref, _ = _ref(tmp_path, cplx)
    x = _make_case(ref, {"key": "k", "index": 0, "transform": "nominal"})[0]
    good = torch.complex(x, 2 * x)
    assert _compare(ref, 0, good, audit=False)["mismatches"] == 0
    bad = good.clone()
    bad[5, 6] += 5j
    rec = _compare(ref, 0, bad, audit=False)
    assert rec["mismatches"] == 1 and rec["first_mismatch_index"] == [5, 6]


def test_the_task_modules_globals_and_the_torch_functions_it_names_are_fingerprinted():
    """rt2_precompute_in_make_inputs (4.9x on the H200, session 10): the candidate rebound the
    task module's `torch` to a proxy whose randn did the call's work while the harness made the
    inputs. Every global of the task module is now held by identity, and the torch functions its
    code names too."""
    src = TASK.replace("return [torch.randn(batch, dim)]", "return [torch.tril(torch.randn(batch, dim))]")
    assert src != TASK
    mod = loading.load_module_from_memory(src, "kgym_task_ns")
    fp = integrity.Fingerprints().add_namespace(mod, "task")
    assert fp.changed() == []
    real = mod.torch
    mod.torch = types.ModuleType("torch")
    assert "task.torch" in fp.changed()
    mod.torch = real
    assert fp.changed() == []
    mod.helper = lambda: None  # a new global (shadowing a builtin would look like this)
    assert any("globals added or removed: helper" in c for c in fp.changed())
    del mod.helper
    original = torch.tril
    try:
        torch.tril = lambda *a, **k: original(*a, **k)
        assert "torch.tril" in fp.changed()
    finally:
        torch.tril = original
    assert fp.changed() == []


def test_kernels_registered_for_aten_operators_are_tampering():
    """Red team rt14: a kernel for aten::randn registered through torch.library did each call's
    matmul while the harness made the inputs, below every Python identity check. A watched
    operator (input generation) is caught by every check, any other aten operator by the full one
    (after the load, each case and each timing request)."""
    fp = integrity.Fingerprints().add_dispatcher()
    assert fp.changed() == [] and fp.changed(full=True) == []
    lib = torch.library.Library("aten", "IMPL")
    try:
        lib.impl("randn", lambda *a, **k: torch.zeros(a[0]), "CPU")
        assert any("aten::randn" in c for c in fp.changed())
    finally:
        lib._destroy()
    assert fp.changed(full=True) == []
    lib = torch.library.Library("aten", "IMPL")
    try:
        lib.impl("tanh", lambda x: x, "CPU")
        assert fp.changed() == []  # not watched per call
        assert any("aten::tanh" in c for c in fp.changed(full=True))
    finally:
        lib._destroy()
    assert fp.changed(full=True) == []


def test_the_operators_of_the_tasks_input_generation_are_watched_after_the_first_case(tmp_path):
    """The per-call dispatcher check covers the generators' kernels and, from the first case on,
    the operators the task's get_inputs calls (here aten::tril, outside the fixed set)."""
    src = TASK.replace("return [torch.randn(batch, dim)]", "return [torch.tril(torch.randn(batch, dim))]")
    ref, ex = _ref(tmp_path, src)[0], CandidateExecutor("cpu", str(tmp_path), str(tmp_path / "log"))
    assert ex.load({"candidate_source": src.replace("class Model(", "class ModelNew("), "task_source": src,
                    "scale": 1.0, "init_seed": 1}, [])["ok"]
    assert "aten::tril" not in ex.fingerprints._dispatch_watched
    made = ref.make_case({"key": "k", "index": 0, "transform": "nominal"}, [])
    ex.run_case({"index": 0, "regenerate": made["regenerate"], "tolerances": TOL}, [])
    assert "aten::tril" in ex.fingerprints._dispatch_watched
    lib = torch.library.Library("aten", "IMPL")
    try:
        lib.impl("tril", lambda x, diagonal=0: x, "CPU")
        assert any("aten::tril" in c for c in ex._tampered())
    finally:
        lib._destroy()
    assert ex._tampered() == []


def test_a_kernel_whose_origin_claims_torchs_own_files_is_still_tampering():
    """Red team rt15: code compiled with a file name inside torch's package registered a kernel
    for aten::t (outside the watched operators) and passed a check that trusted registrations
    from torch's own files. Every change counts now."""
    import os
    fp = integrity.Fingerprints().add_dispatcher()
    fake = os.path.join(os.path.dirname(torch.__file__), "library.py")
    scope = {"torch": torch}
    exec(compile("lib = torch.library.Library('aten', 'IMPL')\n"
                 "lib.impl('t', lambda x: x, 'CompositeImplicitAutograd')\n", fake, "exec"), scope)
    try:
        assert any("aten::t" in c for c in fp.changed(full=True))
    finally:
        scope["lib"]._destroy()
    assert fp.changed(full=True) == []


def test_every_timed_call_keeps_the_call_contract():
    """Red team rt24 (C1): outside the correctness cases a ReLU worked in place and returned its
    input. time_calls now finds an output in an input's storage in any timed call, and a
    changed input in a rechecked one; eager-like out-of-place calls are clean."""
    opts = {"warmup": 1, "min_calls": 4, "max_calls": 4, "budget_ms": 1e9, "target_spread": 0.0,
            "l2_flush": False}
    make = lambda s: (torch.randn(64, generator=torch.Generator().manual_seed(s)),)  # noqa: E731
    seeds = list(range(1, 6))
    rec, _ = timing.time_calls(torch.relu, make, seeds, "cpu", opts, keep=[1])
    assert not rec["tampered"], rec["tampered"]
    rec, _ = timing.time_calls(lambda x: x.relu_(), make, seeds, "cpu", opts, keep=[1])
    assert any("overlaps an input" in t for t in rec["tampered"]), rec["tampered"]
    assert any("changed their inputs" in t for t in rec["tampered"]), rec["tampered"]

    def scratch(x):  # a new output, but the input used as scratch space
        y = torch.relu(x)
        x.zero_()
        return y
    def set_storage(x):  # red team rt25: relu in place, the storage returned, the input emptied
        x.relu_()
        out = x.detach()
        x.set_()
        return out
    rec, _ = timing.time_calls(set_storage, make, seeds, "cpu", opts, keep=[])
    assert any("overlaps an input" in t for t in rec["tampered"]), rec["tampered"]
    guard = harness_guard.HarnessGuard()
    wallcheck.wall_calls(set_storage, make, 1, 3, True, "cpu", keep=[], guard=guard)
    assert guard.aliased == 3
    rec, _ = timing.time_calls(scratch, make, seeds, "cpu", opts, keep=[2])
    assert [t for t in rec["tampered"] if "changed their inputs" in t] and \
        not [t for t in rec["tampered"] if "overlaps" in t], rec["tampered"]


def test_harness_guard_finds_a_loop_function_replaced_inside_a_request():
    """Red team rt24 (T2): in its first wall call a candidate swapped OutputArena.store for a
    no-copy version (the reference's calibration still paid the copy). The guard, checked after
    every call of wall_calls, names it; an instance attribute shadowing the method too; nothing
    when the harness is intact."""
    arena = wallcheck.OutputArena(4, 1024)
    make = lambda s: (torch.randn(16),)  # noqa: E731
    clean = harness_guard.HarnessGuard()
    wallcheck.wall_calls(torch.relu, make, 1, 4, True, "cpu", keep=[], arena=arena, guard=clean)
    assert clean.hits == [] and clean.aliased == 0
    original = wallcheck.OutputArena.store

    def patching(x):
        wallcheck.OutputArena.store = lambda self, i, out: out
        return torch.relu(x)
    guard = harness_guard.HarnessGuard()
    try:
        wallcheck.wall_calls(patching, make, 1, 3, True, "cpu", keep=[], arena=arena, guard=guard)
    finally:
        wallcheck.OutputArena.store = original
    assert any("OutputArena.store" in h for h in guard.hits), guard.hits
    assert len(guard.hits) == len(set(guard.hits)), guard.hits  # each finding once, not once per call

    def shadowing(x):
        arena.store = lambda i, out: out
        return torch.relu(x)
    guard = harness_guard.HarnessGuard()
    wallcheck.wall_calls(shadowing, make, 1, 2, True, "cpu", keep=[], arena=arena, guard=guard)
    del arena.store
    assert any("shadows a method of OutputArena" in h for h in guard.hits), guard.hits
    guard = harness_guard.HarnessGuard()
    wallcheck.wall_calls(lambda x: x.relu_(), make, 1, 3, True, "cpu", keep=[], guard=guard)
    assert guard.aliased == 3



def test_harness_guard_holds_each_name_where_the_loops_call_it(monkeypatch):
    """Every guarded name is in the snapshot taken at import (none dropped as missing), no other
    kgym_worker module of the loops holds its own binding of one (a loop calling that copy would
    go unwatched), and replacing one in its module is a hit naming that module."""
    from kgym_worker import contract, heap, spotcheck
    names = harness_guard._GUARDED_NAMES
    listed = harness_guard._GUARD_SNAPSHOT[:len(names)]  # (the module references follow them)
    assert [(path, attr) for path, attr, *_ in listed] == list(names)
    own = {"loading": loading, "timing": timing, "contract": contract, "spotcheck": spotcheck, "heap": heap,
           "wallcheck": wallcheck}
    for path, attr in names:
        root = path.partition(".")[0]
        if root not in harness_guard._HARNESS_MODULES:
            continue
        assert root in own
        if path == root:
            for name, mod in own.items():
                assert name == root or attr not in vars(mod), (name, attr)
        owner = harness_guard.HarnessGuard._resolve(path)
        with monkeypatch.context() as m:
            m.setattr(owner, attr, lambda *a, **k: None)
            guard = harness_guard.HarnessGuard()
            assert not guard.check()
        assert guard.hits == [f"kgym_worker.{path}.{attr} replaced during a timed request"], guard.hits
    assert harness_guard.HarnessGuard().check()


def test_harness_guard_holds_the_module_references_the_loops_call_through(monkeypatch):
    """Red team rt37: rebinding timing.contract (a module reference) to a proxy whose input_spans
    did the call's work passed at 1.58x to 1.83x doing eager's work, with no guarded function
    changed. Every module-valued global of a kgym_worker module and every kgym_worker entry of
    sys.modules is held by identity: replacing one is a hit for the per-call guard and a change for
    the full fingerprint."""
    import sys
    import types
    from kgym_worker import contract, integrity
    harness_guard.seal()
    held = {(path, attr) for path, attr, *_ in harness_guard._GUARD_SNAPSHOT}
    for mod in (timing, wallcheck, loading, contract, harness_guard):
        for attr, value in vars(mod).items():
            if isinstance(value, types.ModuleType) and not attr.startswith("__"):
                assert (mod.__name__, attr) in held, (mod.__name__, attr)
    assert ("sys.modules", "kgym_worker.harness_guard") in held
    proxy = types.ModuleType("kgym_worker.contract")
    for owner, attr, label in ((timing, "contract", "kgym_worker.timing.contract"),
                               (wallcheck, "loading", "kgym_worker.wallcheck.loading"),
                               (timing, "torch", "kgym_worker.timing.torch")):
        fp = integrity.Fingerprints().add_module(owner)
        with monkeypatch.context() as m:
            m.setattr(owner, attr, proxy)
            guard = harness_guard.HarnessGuard()
            assert not guard.check()
            assert fp.changed() == [f"{owner.__name__}.{attr}"], fp.changed()
        assert guard.hits == [f"{label} replaced during a timed request"], guard.hits
        assert fp.changed() == []
    fp = integrity.Fingerprints().add_module_table()
    with monkeypatch.context() as m:
        m.setitem(sys.modules, "kgym_worker.harness_guard", proxy)
        guard = harness_guard.HarnessGuard()
        assert not guard.check()
        assert fp.changed() == ["sys.modules['kgym_worker.harness_guard']"], fp.changed()
    assert guard.hits == ["sys.modules['kgym_worker.harness_guard'] replaced during a timed request"], guard.hits
    assert harness_guard.HarnessGuard().check() and fp.changed() == []


def test_input_generation_leaves_no_seed_to_read():
    """Red team rt24 (P3): torch.initial_seed() after make_inputs told the evaluation's phases
    apart (cases repeat a seed, the wall check counts up). The generators are reseeded from OS
    entropy once the inputs are made; the inputs themselves still follow the seed."""
    mod = loading.load_module_from_memory(
        "import torch\ndef get_inputs():\n    return [torch.rand(8)]\ndef get_init_inputs():\n    return []\n",
        "kgym_task_unseed")
    a = loading.make_inputs(mod, 7, "nominal", "cpu")
    s1 = torch.initial_seed()
    b = loading.make_inputs(mod, 7, "nominal", "cpu")
    s2 = torch.initial_seed()
    assert torch.equal(a[0], b[0])
    assert s1 != 7 and s2 != 7 and s1 != s2


def test_the_full_tamper_check_runs_once_per_round_not_per_call():
    """Red team rt24 (B1): the full fingerprint (about 1 ms of Python) after every timed call left
    each CPU call cache-cold while eager's loop ran warm: honest candidates read 0.2x to 0.7x of
    eager's very operator. time_calls now runs it once, after the round; the per-call check is
    HarnessGuard's few identities."""
    calls = []
    opts = {"warmup": 1, "min_calls": 6, "max_calls": 6, "budget_ms": 1e9, "target_spread": 0.0,
            "l2_flush": False}
    rec, _ = timing.time_calls(torch.relu, lambda s: (torch.randn(8),), list(range(7)), "cpu", opts,
                               guard=lambda: calls.append(1) or [])
    assert len(rec["times_ms"]) == 6 and len(calls) == 1


def test_wall_per_call_gives_no_figure_when_the_calls_are_lost_in_the_loops_noise():
    """The own loop's per-call figure needs the calls to stand out of the loop's own work (5% of
    the timed loop, the supervisor's GPU rule): at 256x256 on the H200 it read 0.0003 ms for a
    0.012 ms matmul, eager's floor then, and an identical candidate got 0.007x (session 16)."""
    def spin(seconds):
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            pass

    def make_args(seed):
        spin(0.005)  # the loop's own work: 5 ms per input set
        return [torch.zeros(2)]

    per_call, _ = wallcheck.wall_per_call(lambda x: x + 1, make_args, 7, 5, "cpu")
    assert per_call == 0.0
    per_call, _ = wallcheck.wall_per_call(lambda x: spin(0.004) or x + 1, make_args, 7, 5, "cpu")
    assert 3.0 < per_call < 20.0  # ms
