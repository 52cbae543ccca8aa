"""Checks Triton candidates against their KernelBench task on the CPU with Triton's interpreter
(run with TRITON_INTERPRET=1; used by test_honest_gpu_interp.py, runnable by hand):

    TRITON_INTERPRET=1 python3 tests/python/honest_interp.py SUITE_LEVEL_DIR CANDIDATES_DIR

For each `<task stem>/<name>.py` under CANDIDATES_DIR: shrink the task's module-level sizes
(SMALL below: a nominal small shape and an odd one), construct Model and ModelNew under the same
seed, and per case compare with the tolerances kgym uses for fp32 (allclose atol=rtol=1e-4 and
the float64 cross-check: error <= max(32 x the fp32 reference's own error, 64 eps max|ref64|)),
on the value transforms nominal, negated, x3, x0.01, abs. Also: same dtype/shape, inputs
unchanged, output storage not shared with an input, and a case with every parameter randomised
identically in both models (LayerNorm's affine, conv weights) and one with extra init arguments
(stride/padding/dilation/groups/bias for the convolutions). Prints one JSON line per case:
{"candidate", "case", "ok", "detail"}.
"""
import importlib.util
import json
import pathlib
import sys

import torch

# Module-level overrides per task stem: (nominal small shape, odd shape). Sizes are picked so that
# every kernel runs more than one program and a partial (masked) block.
SMALL = {
    "19_ReLU": ({"batch_size": 3, "dim": 1500}, {"batch_size": 5, "dim": 999}),
    "21_Sigmoid": ({"batch_size": 3, "dim": 1500}, {"batch_size": 5, "dim": 999}),
    "26_GELU_": ({"batch_size": 3, "dim": 1500}, {"batch_size": 5, "dim": 999}),
    "88_MinGPTNewGelu": ({"batch_size": 3, "dim": 1500}, {"batch_size": 5, "dim": 999}),
    "47_Sum_reduction_over_a_dimension": ({"batch_size": 2, "dim1": 50, "dim2": 300},
                                          {"batch_size": 3, "dim1": 33, "dim2": 17}),
    "48_Mean_reduction_over_a_dimension": ({"batch_size": 2, "dim1": 50, "dim2": 300},
                                           {"batch_size": 3, "dim1": 33, "dim2": 17}),
    "49_Max_reduction_over_a_dimension": ({"batch_size": 2, "dim1": 50, "dim2": 300},
                                          {"batch_size": 3, "dim1": 33, "dim2": 17}),
    "23_Softmax": ({"batch_size": 3, "dim": 5000}, {"batch_size": 2, "dim": 37}),
    "24_LogSoftmax": ({"batch_size": 3, "dim": 5000}, {"batch_size": 2, "dim": 37}),
    "36_RMSNorm_": ({"batch_size": 2, "features": 5, "dim1": 20, "dim2": 30},
                    {"batch_size": 1, "features": 3, "dim1": 7, "dim2": 9}),
    "40_LayerNorm": ({"batch_size": 2, "features": 3, "dim1": 40, "dim2": 50},
                     {"batch_size": 3, "features": 2, "dim1": 17, "dim2": 33}),
    "1_Square_matrix_multiplication_": ({"N": 150}, {"N": 45}),
    "2_Standard_matrix_multiplication_": ({"M": 150, "K": 70, "N": 130}, {"M": 45, "K": 33, "N": 17}),
    "4_Matrix_vector_multiplication_": ({"M": 5, "K": 5000}, {"M": 3, "K": 1234}),
    "67_conv_standard_1D": ({"batch_size": 2, "in_channels": 5, "out_channels": 70, "length": 200},
                            {"batch_size": 1, "in_channels": 3, "out_channels": 17, "length": 45}),
    "87_conv_pointwise_2D": ({"batch_size": 2, "in_channels": 5, "out_channels": 130, "width": 20, "height": 7},
                             {"batch_size": 1, "in_channels": 3, "out_channels": 17, "width": 5, "height": 9}),
}

# Extra init arguments (instead of the task's get_init_inputs, with the small shape and these
# module overrides) for the general paths of a candidate.
EXTRA_INIT = {
    # stride 2, padding 1, dilation 2, groups 2, bias
    "67_conv_standard_1D": ({"in_channels": 6}, [6, 70, 3, 2, 1, 2, 2, True]),
    "87_conv_pointwise_2D": ({}, [5, 130, True]),                # bias
    "24_LogSoftmax": ({}, [0]),                                  # reduce over dim 0 (strided rows)
    "47_Sum_reduction_over_a_dimension": ({}, [2]),              # reduce the last dim
    "48_Mean_reduction_over_a_dimension": ({}, [0]),
    "49_Max_reduction_over_a_dimension": ({}, [2]),
}

TRANSFORMS = {
    "nominal": lambda t: t,
    "neg": lambda t: -t,
    "x3": lambda t: t * 3,
    "x0.01": lambda t: t * 0.01,
    "abs": lambda t: t.abs(),
}


def numpy_compat() -> None:
    """Triton 3.6's interpreter turns a scalar (a 1-element array) into a loop bound with
    int(array), which NumPy >= 2.4 refuses for arrays with ndim > 0 ("only 0-dimensional arrays
    can be converted to Python scalars"). Re-register that one conversion with .item()."""
    from triton.runtime import interpreter
    if getattr(interpreter, "_kgym_numpy_compat", False):
        return
    original = interpreter._patch_lang_tensor

    def patched(tensor, scope):
        original(tensor, scope)
        scope.set_attr(tensor, "__index__", lambda self: int(self.handle.data.reshape(-1)[0]))

    interpreter._patch_lang_tensor = patched
    interpreter._kgym_numpy_compat = True


def load(path: pathlib.Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def compare(out, ref, ref64) -> str:
    """'' when `out` passes kgym's fp32 checks against `ref` (fp32) and `ref64` (float64), else why."""
    if type(out) is not torch.Tensor:
        return f"output type {type(out).__name__}"
    if out.dtype != ref.dtype or out.shape != ref.shape:
        return f"dtype/shape {out.dtype}{tuple(out.shape)} vs {ref.dtype}{tuple(ref.shape)}"
    if not torch.allclose(out, ref, atol=1e-4, rtol=1e-4):
        return f"allclose: max abs error {(out - ref).abs().max().item():.3e}"
    err = (out.double() - ref64).abs().max().item()
    own = (ref.double() - ref64).abs().max().item()
    bound = max(32 * own, 64 * torch.finfo(ref.dtype).eps * ref64.abs().max().item())
    if err > bound:
        return f"float64 cross-check: error {err:.3e} > bound {bound:.3e} (fp32 reference's own {own:.3e})"
    return ""


def run_case(task, cand, init, seed, transform, randomise_params=False) -> str:
    torch.manual_seed(1234)
    model = task.Model(*init)
    torch.manual_seed(1234)
    new = cand.ModelNew(*init)
    if randomise_params:
        gen = torch.Generator().manual_seed(seed)
        with torch.no_grad():
            for p, q in zip(model.parameters(), new.parameters()):
                if p.shape == q.shape:
                    v = torch.rand(p.shape, generator=gen) * 2 - 1
                    p.copy_(v)
                    q.copy_(v)
    for p, q in zip(model.parameters(), new.parameters()):
        if p.shape != q.shape or not torch.equal(p, q):
            return "parameters differ from the reference's under the same seed"
    torch.manual_seed(seed)
    inputs = [TRANSFORMS[transform](t) if isinstance(t, torch.Tensor) and t.is_floating_point() else t
              for t in task.get_inputs()]
    saved = [t.clone() if isinstance(t, torch.Tensor) else t for t in inputs]
    with torch.no_grad():
        ref = model(*[t.clone() if isinstance(t, torch.Tensor) else t for t in inputs])
        out = new(*inputs)
        ref64 = model.double()(*[t.double() if isinstance(t, torch.Tensor) and t.is_floating_point() else t
                                 for t in inputs])
    for a, b in zip(inputs, saved):
        if isinstance(a, torch.Tensor) and not torch.equal(a, b):
            return "an input was modified"
    if isinstance(out, torch.Tensor):
        for a in inputs:
            if isinstance(a, torch.Tensor) and a.untyped_storage().data_ptr() == out.untyped_storage().data_ptr():
                return "the output shares storage with an input"
    return compare(out, ref, ref64)


def main() -> int:
    suite, candidates = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
    numpy_compat()
    failed = 0
    for path in sorted(candidates.glob("*/*.py")):
        stem = path.parent.name
        cid = f"{stem}/{path.name}"
        shapes = SMALL.get(stem)
        if shapes is None:
            print(json.dumps({"candidate": cid, "case": "setup", "ok": False, "detail": "no small shape"}))
            failed += 1
            continue
        task = load(suite / f"{stem}.py", f"task_{stem}")
        cand = load(path, f"cand_{stem}_{path.stem}")
        cases = [(0, t, None, False) for t in TRANSFORMS] + [(1, "nominal", None, False), (1, "neg", None, False),
                                                            (0, "nominal", None, True)]
        if stem in EXTRA_INIT:
            cases.append((0, "neg", EXTRA_INIT[stem], True))
        for k, (which, transform, extra, randomise) in enumerate(cases):
            overrides = dict(shapes[which], **(extra[0] if extra else {}))
            for name, value in overrides.items():
                setattr(task, name, value)
            init = extra[1] if extra else None
            args = init if init is not None else task.get_init_inputs()
            label = f"{['small', 'odd'][which]}/{transform}" + ("/params" if randomise else "") + \
                    ("/init" + repr(init) if init is not None else "")
            detail = run_case(task, cand, args, 100 + k, transform, randomise)
            failed += bool(detail)
            print(json.dumps({"candidate": cid, "case": label, "ok": not detail, "detail": detail}), flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
