"""Checks exported generated tasks with PyTorch on the CPU: each reference runs, its inputs and
output have the shapes and dtypes the metadata states, and its outputs are finite on the value
transforms (nominal, x3, x0.01, negated, absolute). Whether an honest solution or a trivial answer
is correct is the real gate's decision (`kgym tasks audit`, test_taskgen.sh and
test_taskgen_audit.sh), with its tolerances: none is copied here.

Usage: python3 taskgen_check.py DIR   (DIR from `kgym tasks export DIR`)
Exit status 0 when every check holds, 1 otherwise (each failure is printed).
"""
import importlib.util
import json
import pathlib
import sys

import torch

TRANSFORMS = ["nominal", "scale3", "scale001", "negate", "abs"]


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def transform(t, how):
    if not (torch.is_tensor(t) and t.is_floating_point()):
        return t
    return {"nominal": t, "scale3": t * 3, "scale001": t * 0.01, "negate": -t, "abs": t.abs()}[how]


def cases(ref):
    for i, how in enumerate(TRANSFORMS):
        torch.manual_seed(1000 + i)
        yield how, [transform(t, how) for t in ref.get_inputs()]


def run(module, cls, init, inputs):
    torch.manual_seed(42)
    model = getattr(module, cls)(*init)
    with torch.no_grad():
        return model(*[t.clone() if torch.is_tensor(t) else t for t in inputs])


def main(root):
    root = pathlib.Path(root)
    manifest = json.loads((root / "manifest.json").read_text())
    failures, checked = [], 0
    torch.set_num_threads(1)
    for task in manifest["tasks"]:
        path = root / task["path"]
        tid = task["id"]
        ref = load(path, "ref")
        init = ref.get_init_inputs()
        torch.manual_seed(1000)
        inputs = ref.get_inputs()
        for spec, t in zip(task["inputs"], inputs):
            if list(t.shape) != spec["shape"] or str(t.dtype) != "torch." + spec["dtype"]:
                failures.append(f"{tid}: input {spec['name']} is {tuple(t.shape)} {t.dtype}, metadata says {spec}")
        ref_outs = [(how, inp, run(ref, "Model", init, inp)) for how, inp in cases(ref)]
        out0 = ref_outs[0][2]
        if list(out0.shape) != task["output"]["shape"] or str(out0.dtype) != "torch." + task["output"]["dtype"]:
            failures.append(f"{tid}: output is {tuple(out0.shape)} {out0.dtype}, metadata says {task['output']}")
        for how, _, out in ref_outs:
            if out.is_floating_point() and not torch.isfinite(out).all():
                failures.append(f"{tid}: reference output not finite on case {how}")
        checked += 1
    for f in failures:
        print("FAIL", f)
    print(f"checked {checked} tasks, {len(failures)} failures")
    return 1 if failures or checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
