"""The fused comparison kernels (kgym_worker.fastcompare) against the torch path they replace on a
GPU (reference.output_stats_torch): the same figures for the same outputs, NaN, infinities,
every floating dtype, sizes that are not a multiple of the block, one-constant answers, with and
without the float64 reference. On the CPU through Triton's interpreter (TRITON_INTERPRET=1, set
in a child process before Triton is imported); on a GPU also compiled (skipped without one)."""
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch

PYTHON_DIR = str(Path(__file__).resolve().parents[2] / "python")

CHECK = textwrap.dedent('''
    import json, math, sys
    import torch
    from kgym_worker import fastcompare, reference

    device = sys.argv[1]
    report = {"available": fastcompare.available(torch.zeros(1, device=device)), "mismatch": [], "checked": 0,
              "warm": fastcompare.warm(device)}

    def same(a, b):
        if isinstance(a, float) or isinstance(b, float):
            if math.isnan(a) or math.isnan(b):
                return math.isnan(a) and math.isnan(b)
            return a == b or abs(a - b) <= 1e-12 * max(abs(a), abs(b))
        return a == b

    def check(label, r, o, r64, atol, rtol):
        fast = fastcompare.stats(r, o, r64, atol, rtol)
        slow = reference.output_stats_torch(r.cpu(), o.cpu() if isinstance(o, torch.Tensor) else o,
                                            None if r64 is None else r64.cpu(), atol, rtol, chunk=1000)
        report["checked"] += 1
        for key in slow:
            # sum_abs: the same terms summed in another order
            ok = same(fast[key], slow[key]) if key != "sum_abs" else \\
                abs(fast[key] - slow[key]) <= 1e-9 * max(1.0, abs(slow[key]))
            if not ok:
                report["mismatch"].append(f"{label} {key}: fused {fast[key]!r}, torch {slow[key]!r}")

    g = torch.Generator().manual_seed(7)
    for dtype in (torch.float32, torch.float16, torch.bfloat16, torch.float64):
        for n in (1, 255, 257, 1024, 5000):
            r = torch.randn(n, generator=g).to(dtype)
            eps = torch.finfo(dtype).eps
            o = (r.double() + torch.randn(n, generator=g, dtype=torch.float64) * eps * 4).to(dtype)
            if n > 100:
                r[3], o[3] = float("nan"), float("nan")      # both NaN: fine
                o[5] = float("nan")                          # NaN where the reference is finite
                r[9], o[9] = float("inf"), float("inf")      # the same infinity: fine
                r[11], o[11] = float("-inf"), float("inf")   # the other infinity
                r[13] = float("nan")                         # a number where the reference is NaN
                o[40] = o[40] + 1                            # plainly wrong
                o[n - 1] = float("-inf")
            r64 = r.double() + torch.randn(n, generator=g, dtype=torch.float64) * 1e-9
            for atol, rtol in ((1e-4, 1e-4), (1e-2, 0.0), (0.0, 1e-3)):
                args = [t.to(device) for t in (r, o, r64)]
                check(f"{dtype} n={n} tol={atol},{rtol}", args[0], args[1], args[2], atol, rtol)
                check(f"{dtype} n={n} tol={atol},{rtol} no64", args[0], args[1], None, atol, rtol)
                check(f"{dtype} n={n} tol={atol},{rtol} equal", args[0], args[0].clone(), args[2], atol, rtol)
            for const in (0.0, 0.25, float("nan")):
                check(f"{dtype} n={n} constant {const}", r.to(device), const, None, 1e-4, 1e-4)
    # Few programs, each looping over many blocks (as at full size, where blocks outnumber
    # MAX_PROGRAMS), the last step partly masked.
    saved, fastcompare.MAX_PROGRAMS = fastcompare.MAX_PROGRAMS, 3
    for n in (5000, 769):
        r = torch.randn(n, generator=g)
        o = r + torch.randn(n, generator=g) * 1e-6
        o[n // 2] = float("nan")
        o[n - 2] += 1
        r64 = r.double()
        check(f"looping n={n}", r.to(device), o.to(device), r64.to(device), 1e-4, 1e-4)
        check(f"looping n={n} constant", r.to(device), 0.5, None, 1e-4, 1e-4)
        sq, count, total = fastcompare.moments(o.to(device))
        od = o.double()
        report["checked"] += 1
        if count != n - 1 or not math.isnan(total):
            report["mismatch"].append(f"looping moments n={n}: {(sq, count, total)}")
    fastcompare.MAX_PROGRAMS = saved
    # A reference without tolerance (atol = rtol = 0) and zeros: exact equality passes.
    z = torch.zeros(2000, device=device)
    check("zero tolerance, equal", z, z.clone(), None, 0.0, 0.0)
    check("zero tolerance, differs", z, z + 1e-30, None, 0.0, 0.0)
    # Another layout: a transposed reference and a candidate output of another dtype (trivial "input").
    m = torch.randn(37, 53, generator=g).to(device)
    check("transposed", m.t(), m.t().contiguous() * 1.00001, None, 1e-4, 1e-4)
    check("other dtype", m, m.half(), None, 1e-4, 1e-4)
    for dtype in (torch.float32, torch.float16, torch.float64):
        x = torch.randn(3001, generator=g).to(dtype)
        x[17] = float("inf")
        sq, count, total = fastcompare.moments(x.to(device))
        xd = x.double()
        fin = xd[torch.isfinite(xd)]
        want = (float(fin.square().sum()), fin.numel(), float(xd.sum()))
        report["checked"] += 1
        if not (abs(sq - want[0]) <= 1e-9 * want[0] and count == want[1] and total == want[2]):
            report["mismatch"].append(f"moments {dtype}: fused {(sq, count, total)}, torch {want}")
    print(json.dumps(report))
''')


def _run(device: str, interpret: bool) -> dict:
    env = dict(os.environ, PYTHONPATH=PYTHON_DIR)
    if interpret:
        env["TRITON_INTERPRET"] = "1"
        env["KGYM_FASTCOMPARE_INTERPRET"] = "1"
    else:
        env.pop("TRITON_INTERPRET", None)
    proc = subprocess.run([sys.executable, "-W", "ignore", "-c", CHECK, device], env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _have_triton() -> bool:
    try:
        import triton  # noqa: F401
        return True
    except Exception:  # noqa: BLE001
        return False


@pytest.mark.skipif(not _have_triton(), reason="Triton is not installed (scripts/install.sh installs it)")
def test_the_fused_kernels_give_the_torch_paths_figures_under_tritons_interpreter():
    report = _run("cpu", interpret=True)
    assert report["available"], "TRITON_INTERPRET=1 with KGYM_FASTCOMPARE_INTERPRET=1 should make the fused path apply to CPU tensors"
    assert report["warm"] == "on"
    assert report["checked"] >= 190
    assert report["mismatch"] == []


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_the_compiled_kernels_give_the_torch_paths_figures_on_a_gpu():
    report = _run("cuda", interpret=False)
    assert report["available"]
    assert report["warm"] == "on"
    assert report["checked"] >= 190
    assert report["mismatch"] == []


def test_without_a_gpu_or_the_interpreter_the_torch_path_is_used():
    from kgym_worker import fastcompare
    if os.environ.get("TRITON_INTERPRET") == "1":
        pytest.skip("the interpreter is on in this process")
    assert not fastcompare.available(torch.zeros(3))
    assert not fastcompare.available(torch.zeros(3, dtype=torch.int64))


def test_a_failing_fused_kernel_turns_the_fused_path_off_and_the_torch_path_answers(monkeypatch):
    """A Triton failure (compile or launch) must not become a task error: the comparison is
    answered by the torch path, and the fused path stays off in that process."""
    from kgym_worker import fastcompare, reference

    def broken(*args, **kwargs):
        raise RuntimeError("triton: out of resources")

    monkeypatch.setattr(fastcompare, "available", lambda *t: fastcompare._broken is None)
    monkeypatch.setattr(fastcompare, "stats", broken)
    monkeypatch.setattr(fastcompare, "moments", broken)
    monkeypatch.setattr(fastcompare, "_broken", None)
    r = torch.randn(100)
    o = r.clone()
    o[5] += 1
    st = reference.output_stats(r, o, None, 1e-4, 1e-4)
    assert st["bad"] == 1 and st["first"] == 5
    assert fastcompare.status().startswith("off (RuntimeError: triton: out of resources")
    assert reference.scaled_atol(1e-4, r) > 0
