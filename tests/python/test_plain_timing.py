"""bench/plain_timing.py's pure parts on a synthetic verdict file (the timing itself needs a GPU):
verdict parsing, defensive reading of measurements.phase_ms, overhead arithmetic, the table, and
the clear failure without CUDA."""
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "bench" / "plain_timing.py"
spec = importlib.util.spec_from_file_location("plain_timing", SCRIPT)
pt = importlib.util.module_from_spec(spec)
spec.loader.exec_module(pt)


def verdict(task, cand, outcome="passed", **extra):
    v = {"task_id": task, "candidate_id": cand, "outcome": outcome, "runtime_ms": 2.0, "ref_runtime_ms": 3.0,
         "compile_runtime_ms": 2.5, "speedup_eager": 1.5, "speedup_compile": 1.25, "messages": ["x"]}
    v.update(extra)
    return v


PHASES = {"load_task": 500.0, "cases": 1200.0, "other_shape": 100.0, "candidate_timing": 300.0,
          "rechecks": 50.0, "eager_timing": 250.0, "compile_timing": 4000.0, "wall_check": 100.0, "trace": 400.0,
          # parts of "cases" and "other_shape" (already in their totals; never added again)
          "cases/make": 300.0, "cases/run": 600.0, "cases/compare": 300.0, "other_shape/run": 60.0}


@pytest.fixture
def verdict_file(tmp_path):
    rows = [
        verdict("19_ReLU", "19_ReLU/triton.py",
                measurements={"phase_ms": PHASES, "init_seed": 7,
                              "candidate_timing": {"times_ms": [1.0] * 40},
                              "eager_timing": {"times_ms": [1.0] * 30}, "compile_timing": {"times_ms": []}}),
        verdict("L1/23_Softmax", "23_Softmax/triton.py"),  # no measurements at all
        verdict("21_Sigmoid", "21_Sigmoid/triton.py", measurements={"phase_ms": "garbage"}),
        verdict("26_GELU_", "26_GELU_/triton.py", outcome="incorrect"),
        verdict("1_Square_matrix_multiplication_", "1/a.py", outcome="runtime_error"),
    ]
    p = tmp_path / "v.jsonl"
    p.write_text("\n".join(json.dumps(r) for r in rows) + "\n\n")
    return p


def test_parse_verdicts_keeps_passed_only(verdict_file):
    rows = pt.parse_verdicts(verdict_file)
    assert [r["candidate_id"] for r in rows] == ["19_ReLU/triton.py", "23_Softmax/triton.py", "21_Sigmoid/triton.py"]


def test_parse_verdicts_later_line_wins(tmp_path):
    p = tmp_path / "v.jsonl"
    p.write_text(json.dumps(verdict("a", "a/x.py")) + "\n" + json.dumps(verdict("a", "a/x.py", outcome="timeout")) + "\n")
    assert pt.parse_verdicts(p) == []


def test_parse_verdicts_rejects_non_verdicts(tmp_path):
    p = tmp_path / "v.jsonl"
    p.write_text('{"hello": 1}\n')
    with pytest.raises(ValueError, match="not a kgym verdict"):
        pt.parse_verdicts(p)
    p.write_text("{not json\n")
    with pytest.raises(ValueError, match="not JSON"):
        pt.parse_verdicts(p)


def test_measurement_fields_read_defensively(verdict_file):
    relu, softmax, sigmoid = pt.parse_verdicts(verdict_file)
    assert pt.phase_ms_of(relu) == PHASES
    assert pt.phase_ms_of(softmax) == {} and pt.phase_ms_of(sigmoid) == {}
    assert pt.phase_ms_of({"measurements": {"phase_ms": {"cases": None, "trace": 5, "x": "y"}}}) == {"trace": 5.0}
    assert pt.timed_calls(relu, "candidate") == 40 and pt.timed_calls(relu, "eager") == 30
    assert pt.timed_calls(relu, "compile") == 100  # empty list: default
    assert pt.timed_calls(softmax, "candidate") == 100
    assert pt.task_stem("L1/23_Softmax") == "23_Softmax" and pt.task_level("L1/23_Softmax") == 1
    assert pt.task_level("19_ReLU") is None


def test_resolve_task_file(tmp_path):
    (tmp_path / "level1").mkdir()
    (tmp_path / "level1" / "23_Softmax.py").write_text("")
    (tmp_path / "19_ReLU.py").write_text("")
    assert pt.resolve_task_file(tmp_path, "L1/23_Softmax") == tmp_path / "level1" / "23_Softmax.py"
    assert pt.resolve_task_file(tmp_path, "19_ReLU") == tmp_path / "19_ReLU.py"
    with pytest.raises(FileNotFoundError):
        pt.resolve_task_file(tmp_path, "L1/40_LayerNorm")


PLAIN = {"plain_ms": 1.6, "plain_eager_ms": 3.2, "plain_compile_ms": 2.4, "speedup_eager": 2.0,
         "speedup_compile": 1.5, "cases_s": 0.5, "candidate_s": 0.4, "eager_s": 0.3, "compile_s": 3.0,
         "compile_warm_s": 2.5, "cases_passed": 5}


def test_build_row_overheads(verdict_file):
    relu = pt.parse_verdicts(verdict_file)[0]
    row = pt.build_row(relu, PLAIN)
    c = row["compare"]
    kgym_ex = 1200 + 100 + 300 + 50 + 250 + 100 + 400          # all phases but load_task, compile_timing
    assert c["kgym_wall_ms_excl_compile"] == pytest.approx(kgym_ex)
    assert c["kgym_wall_ms_incl_compile"] == pytest.approx(kgym_ex + 4000)
    assert c["plain_wall_ms_excl_compile"] == pytest.approx(1200.0)
    assert c["overhead"] == pytest.approx(kgym_ex / 1200.0 - 1)
    assert c["overhead_incl_compile"] == pytest.approx((kgym_ex + 4000) / 4200.0 - 1)
    assert c["runtime_ratio"] == pytest.approx(2.0 / 1.6)
    assert c["speedup_eager_ratio"] == pytest.approx(1.5 / 2.0)
    assert row["kgym"]["phase_ms"] == PHASES and row["kgym"]["timed_calls"]["candidate"] == 40


def test_first_call_build_left_out(verdict_file):
    """The first case's run beyond a later case's run (the JIT build) is not counted as
    overhead, as plain keeps its first call apart."""
    relu = pt.parse_verdicts(verdict_file)[0]
    phases = dict(PHASES, **{"cases/run_first": 2100.0, "cases/run": 400.0})
    relu["measurements"]["phase_ms"] = phases
    relu["measurements"]["cases"] = [{"index": i} for i in range(5)] + [{"index": 5, "shape_variant": "other"}]
    row = pt.build_row(relu, PLAIN)
    assert row["kgym"]["first_call_build_ms"] == pytest.approx(2100.0 - 400.0 / 4)
    kgym_ex = 1200 + 100 + 300 + 50 + 250 + 100 + 400 - (2100.0 - 100.0)
    assert row["compare"]["kgym_wall_ms_excl_compile"] == pytest.approx(kgym_ex)
    assert pt.kgym_first_call_build_ms({"cases/run_first": 50.0, "cases/run": 400.0}, 5) == 0.0
    assert pt.kgym_first_call_build_ms({"cases/run_first": 50.0}, 5) == 0.0
    # The other-shape case's compilation for its new sizes (session 14: 936 ms against 18 ms
    # when the cache held it) is left out the same way; a run no longer than a case's adds 0.
    assert pt.kgym_first_call_build_ms({"cases/run_first": 50.0, "cases/run": 400.0,
                                        "other_shape/run": 936.0}, 5) == pytest.approx(936.0 - 100.0)
    assert pt.kgym_first_call_build_ms({"cases/run_first": 50.0, "cases/run": 400.0,
                                        "other_shape/run": 80.0}, 5) == 0.0


def test_build_row_without_phase_ms_or_plain_numbers(verdict_file):
    softmax = pt.parse_verdicts(verdict_file)[1]
    row = pt.build_row(softmax, PLAIN)
    assert row["compare"]["overhead"] is None and row["compare"]["overhead_incl_compile"] is None
    failed = pt.build_row(softmax, {"error": "RuntimeError: boom"})
    assert failed["compare"]["runtime_ratio"] is None and failed["compare"]["plain_wall_ms_excl_compile"] is None


def test_render_markdown(verdict_file):
    relu, softmax, _ = pt.parse_verdicts(verdict_file)
    rows = [pt.build_row(relu, PLAIN), pt.build_row(softmax, {"error": "RuntimeError: boom"})]
    md = pt.render_markdown(rows)
    lines = md.splitlines()
    assert lines[0].startswith("| task | candidate | kgym ms | plain ms")
    relu_line = next(l for l in lines if l.startswith("| 19_ReLU "))
    cells = [c.strip() for c in relu_line.strip("|").split("|")]
    kgym_ex = 2400.0
    assert cells[2:8] == ["2.000", "1.600", "1.25", "1.50", "2.00", "0.75"]
    assert cells[10] == f"{100 * (kgym_ex / 1200 - 1):+.0f}%"
    assert cells[11] == f"{100 * ((kgym_ex + 4000) / 4200 - 1):+.0f}%"
    assert cells[12] == "5/5"
    soft_line = next(l for l in lines if l.startswith("| L1/23_Softmax "))
    assert "error: RuntimeError: boom" in soft_line and "| - |" in soft_line
    assert "2 passing verdicts" in md
    tf32 = pt.render_markdown([pt.build_row(relu, dict(PLAIN, cases_passed_default_flags=0))])
    assert "5/5 (default flags 0/5)" in tf32


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the message shown without CUDA")
def test_without_cuda_fails_clearly(verdict_file, tmp_path):
    proc = subprocess.run([sys.executable, str(SCRIPT), "--verdicts", str(verdict_file), "--suite", str(tmp_path),
                           "--candidates", str(tmp_path), "--out", str(tmp_path / "o.json")],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2
    assert "no CUDA device" in proc.stderr
    assert not (tmp_path / "o.json").exists()


BUILD_DIR_PROBE = """import os
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        # where kgym points this candidate's load_inline builds: made here so the test can find it
        os.makedirs(os.environ["TORCH_EXTENSIONS_DIR"], exist_ok=True)

    def forward(self, x):
        return torch.relu(x)
"""


def test_kgym_build_dir_matches_engine_layout(tmp_path):
    # The real engine names the build folder: a candidate creates the TORCH_EXTENSIONS_DIR kgym
    # gives it, and plain_timing.kgym_build_dir must name the folder that holds it.
    from conftest import kgym_binary
    kgym = kgym_binary()
    if not kgym.exists():
        pytest.fail(f"{kgym} is not built (scripts/build.sh)")
    cands = tmp_path / "c" / "19_ReLU"
    cands.mkdir(parents=True)
    (cands / "probe.py").write_text(BUILD_DIR_PROBE)
    cache = tmp_path / "cache"
    proc = subprocess.run([str(kgym), "eval", "--suite", str(ROOT / "examples" / "suite"), "--tasks", "L1/19",
                           "--candidates", str(tmp_path / "c"), "--profile", "off", "--cases", "1", "--no-timing",
                           "-q", "--out", str(tmp_path / "v.jsonl")],
                          capture_output=True, text=True, timeout=600,
                          env={**os.environ, "KGYM_CACHE_DIR": str(cache)})
    assert proc.returncode == 0, proc.stderr[-2000:]
    made = sorted(p.relative_to(cache) for p in (cache / "build").glob("*/torch_extensions"))
    assert made, f"no build folder under {cache / 'build'}: {proc.stderr[-500:]}"
    d = pt.kgym_build_dir(cache, BUILD_DIR_PROBE.encode())
    assert (d / "torch_extensions").is_dir(), (d, made)


def test_scaled_constants_from_provenance_or_rule():
    import types
    v = {"provenance": {"scale": 0.25, "scaled_constants": {"batch_size": [4096, 1024], "dim": [393216, 98304]}}}
    assert pt.scaled_constants(v) == {"batch_size": 1024, "dim": 98304}
    task = types.SimpleNamespace(batch_size=4096, dim=393216, kernel_size=3, _private=64, flag=True)
    assert pt.scaled_constants({}, 0.25, task) == {"batch_size": 1024, "dim": 98304}
    assert pt.scaled_constants({}, 1.0, task) == {}
    assert pt.scaled_constants({}, 0.0001, task) == {"batch_size": 1, "dim": 39}
