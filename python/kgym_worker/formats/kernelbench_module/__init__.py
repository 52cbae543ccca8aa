"""The ``kernelbench_module`` format: a Python module defining ``ModelNew`` (KernelBench's
convention), whose custom kernels are built when it is imported (``load_inline``, Triton, C++
extensions). Loaded in the candidate's process (formats/__init__.py gives the contract)."""
import ast

from ... import loading

_type = type  # captured before any candidate code is imported


def parse(source: str, rec: dict) -> bool:
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        rec["failure"] = {"stage": "parse", "type": "SyntaxError",
                          "message": f"line {exc.lineno}, column {exc.offset}: {exc.msg}", "traceback": ""}
        return False
    rec["parsed"] = True
    rec["model_new_defined"] = any(isinstance(n, ast.ClassDef) and n.name == "ModelNew" for n in tree.body)
    return rec["model_new_defined"]


def build(source: str, workdir: str, overrides: dict | None = None):
    module = loading.load_module(source, "kgym_candidate", workdir, overrides)
    if not isinstance(getattr(module, "ModelNew", None), _type):
        raise TypeError("ModelNew is not a class after import")
    return module.ModelNew


def construct(model_class, init_inputs, device: str):
    return model_class(*init_inputs).to(device)
