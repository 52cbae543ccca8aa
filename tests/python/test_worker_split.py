"""The Python workers split by trust: the candidate's side (candidate.py, the format loaders) does
not import the trusted reference module; both compare through comparison.py; the sandbox is its
own module; a candidate's format picks its loader."""
import ast
from pathlib import Path

import pytest

from kgym_worker import comparison, formats, reference, sandbox, zygote

PKG = Path(__file__).resolve().parents[2] / "python" / "kgym_worker"
UNTRUSTED = [PKG / "candidate.py", *sorted((PKG / "formats").rglob("*.py"))]


def imported_modules(path: Path) -> set:
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(a.name.split(".")[-1] for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.module:
                names.add(node.module.split(".")[-1])
            names.update(a.name for a in node.names)
    return names


@pytest.mark.parametrize("path", UNTRUSTED, ids=lambda p: p.relative_to(PKG).as_posix())
def test_untrusted_side_does_not_import_the_reference(path):
    assert "reference" not in imported_modules(path), f"{path} imports the trusted reference module"


def test_both_sides_compare_through_one_module():
    assert "comparison" in imported_modules(PKG / "candidate.py")
    for name in ("scaled_atol", "flat_slices", "moments", "output_stats", "output_stats_torch"):
        assert getattr(reference, name) is getattr(comparison, name), name


def test_sandbox_is_its_own_module():
    assert zygote._restrict_writes is sandbox.restrict_writes
    assert zygote._scope_signals is sandbox.scope_signals
    assert zygote._restrict_process_calls is sandbox.restrict_process_calls
    assert "def seccomp_program" not in (PKG / "zygote.py").read_text()


def test_format_loaders():
    assert formats.loader(formats.DEFAULT) is formats.LOADERS["kernelbench_module"]
    with pytest.raises(ValueError, match=r"unknown candidate format 'cuda_native'; known: kernelbench_module"):
        formats.loader("cuda_native")
    fmt = formats.loader("kernelbench_module")
    rec = {"parsed": False, "model_new_defined": False}
    assert not fmt.parse("class ModelNew(:\n", rec) and not rec["parsed"] and rec["failure"]["stage"] == "parse"
    rec = {"parsed": False, "model_new_defined": False}
    assert not fmt.parse("class Model: pass\n", rec) and rec["parsed"] and not rec["model_new_defined"]
    rec = {"parsed": False, "model_new_defined": False}
    assert fmt.parse("class ModelNew: pass\n", rec) and rec["model_new_defined"]


def test_load_request_with_an_unknown_format_is_refused(tmp_path):
    from kgym_worker import candidate
    ex = candidate.CandidateExecutor("cpu", str(tmp_path), str(tmp_path / "log"))
    rec = ex.load({"format": "cuda_native", "candidate_source": "class ModelNew: pass\n", "task_source": "",
                   "scale": 1.0, "init_seed": 1}, [])
    assert not rec["ok"] and "unknown candidate format 'cuda_native'" in rec["failure"]["message"]
