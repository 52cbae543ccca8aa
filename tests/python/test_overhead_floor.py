"""bench/overhead_floor.py on the CPU: its pure parts (pairing, kgym's scale rule as it uses it, the overhead
arithmetic, the table) and one end-to-end run of both harnesses on the examples' honest ReLU, whose
correctness checks must hold; the measurement itself is for the GPU machine."""
import importlib.util
import json
import subprocess
import sys
import types
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "bench" / "overhead_floor.py"
spec = importlib.util.spec_from_file_location("overhead_floor", SCRIPT)
of = importlib.util.module_from_spec(spec)
spec.loader.exec_module(of)


def test_scale_constants_follows_kgyms_rule():
    """The script scales each task by kgym's own rule (loading.scale_sizes, imported, not copied)."""
    sys.path.insert(0, str(ROOT / "python"))
    from kgym_worker import loading
    assert "loading.scale_sizes(task, args.scale)" in SCRIPT.read_text()
    m = types.ModuleType("t")
    m.N, m.small, m._hidden, m.flag = 4096, 8, 4096, True
    assert loading.scale_sizes(m, 0.1) == {"N": [4096, 410]}
    assert (m.N, m.small, m._hidden) == (410, 8, 4096)
    assert loading.scale_sizes(m, 1.0) == {}


def test_overhead_and_totals():
    assert of.overhead(1.3, 1.0) == pytest.approx(0.3)
    assert of.overhead(None, 1.0) is None and of.overhead(1.0, 0.0) is None
    row = {"plain_s": {"cases": 1.0, "timing": 1.0},
           "floor_s": {"cases": 2.0, "other": 0.5, "timing": 1.5, "recheck": 0.5}, "trace_s": 0.5}
    t = of.row_totals(row)
    assert t["plain"] == 2.0 and t["floor"] == 4.5
    assert t["overhead"] == pytest.approx(1.25) and t["overhead_with_trace"] == pytest.approx(1.5)
    assert t["busy_overhead"] is None
    row["trace_s"] = None
    assert of.row_totals(row)["overhead_with_trace"] is None
    row["plain_busy_s"] = {"cases": 0.1, "timing": 0.1}
    row["floor_busy_s"] = {"cases": 0.2, "other": 0.05, "timing": 0.2, "recheck": 0.05}
    assert of.row_totals(row)["busy_overhead"] == pytest.approx(1.5)


def test_find_pairs_matches_stems_and_globs(tmp_path):
    suite, cands = tmp_path / "s", tmp_path / "c"
    suite.mkdir()
    for stem in ("19_ReLU", "23_Softmax"):
        (suite / f"{stem}.py").write_text("")
        (cands / stem).mkdir(parents=True)
        (cands / stem / "triton.py").write_text("")
    (cands / "99_Missing").mkdir()
    (cands / "99_Missing" / "x.py").write_text("")
    pairs = of.find_pairs(suite, cands)
    assert [(t.stem, c.parent.name) for t, c in pairs] == [("19_ReLU", "19_ReLU"), ("23_Softmax", "23_Softmax")]
    assert [t.stem for t, _ in of.find_pairs(suite, cands, "23_*")] == ["23_Softmax"]


def test_markdown_sums_rows_and_names_errors():
    rows = [{"task": "a", "candidate": "a/x.py", "plain_s": {"cases": 1.0, "timing": 1.0},
             "floor_s": {"cases": 2.0, "other": 0.4, "timing": 1.2, "recheck": 0.4}, "trace_s": None},
            {"task": "b", "candidate": "b/x.py", "error": "RuntimeError: boom"}]
    md = of.render_markdown(rows, {"device": "cpu", "torch": "t", "calls": 10, "repeats": 2})
    assert "| +100% | - | - |" in md and "error: RuntimeError: boom" in md
    assert "plain 2.00 s, floor 4.00 s: overhead **+100%**" in md


def test_end_to_end_on_the_cpu(tmp_path):
    cands = tmp_path / "c" / "19_ReLU"
    cands.mkdir(parents=True)
    (cands / "honest.py").write_text((ROOT / "examples" / "candidates" / "19_ReLU" / "honest.py").read_text())
    out = tmp_path / "o.json"
    r = subprocess.run([sys.executable, str(SCRIPT), "--suite", str(ROOT / "examples" / "suite" / "level1"),
                        "--candidates", str(tmp_path / "c"), "--device", "cpu", "--calls", "5", "--repeats", "1",
                        "--out", str(out), "--md", str(tmp_path / "o.md")], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    row = json.loads(out.read_text())["rows"][0]
    assert "error" not in row, row.get("error")
    checks = row["checks"]
    assert checks["plain_cases_passed"] == 5 and checks["rechecks_passed"] == 2
    assert [c["close"] and c["unchanged"] for c in checks["floor_cases"]] == [True] * 5
    assert set(row["floor_s"]) == set(of.FLOOR_PHASES) and all(v > 0 for v in row["floor_s"].values())


def test_without_cuda_it_says_where_to_run(tmp_path):
    import torch
    if torch.cuda.is_available():
        pytest.skip("a CUDA device is present")
    r = subprocess.run([sys.executable, str(SCRIPT), "--suite", str(tmp_path), "--candidates", str(tmp_path),
                        "--out", str(tmp_path / "o.json")], capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "no CUDA device" in r.stderr
