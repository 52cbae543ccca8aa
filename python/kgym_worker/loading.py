"""The task module and its values: loading a module from source (from memory for the trusted
reference, from a file for the candidate, whose Triton kernels need one), the size scaling of
``--scale``, the value transforms, the seeding of torch's generators, and the inputs and outputs
of a call (``make_inputs``, ``output_tensors``).

Both workers make a call's inputs here, so the same (seed, device) gives the same values on both
sides: the reference rechecks a timed output from its seed alone. The timed loops (timing.py,
wallcheck.py) call ``make_inputs`` and ``output_tensors`` between the candidate's calls, through
this module: harness_guard.py watches them here.
"""
import hashlib
import importlib.util
import os
import sys

import torch

from . import scaling

SCALE_MIN = scaling.SCALE_MIN  # module-level ints >= this are size constants that --scale multiplies


def load_module_from_memory(source: str, name: str, overrides: dict | None = None):
    """Executes ``source`` as a new module without touching the file system: no file is read,
    so nothing planted on disk (a .py or .pyc in a shared folder) can replace it. The trusted
    reference worker loads tasks this way. The source is registered with linecache for
    tracebacks. ``overrides`` ({name: int}) replaces those top-level constant assignments before
    the code runs (``scaling.rewrite``), so constants derived from them are derived again."""
    import linecache
    import types
    digest = hashlib.sha256(source.encode()).hexdigest()[:16]
    filename = f"<kgym {name} {digest}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    module = types.ModuleType(f"{name}_{digest}")
    module.__file__ = filename
    sys.modules[module.__name__] = module
    code = scaling.rewrite(source, overrides) if overrides else source
    exec(compile(code, filename, "exec"), module.__dict__)  # noqa: S102 - the trusted task source
    return module


def load_module(source: str, name: str, directory: str, overrides: dict | None = None):
    """Writes ``source`` to a real file (Triton needs one) and imports it as module ``name``;
    ``overrides`` as in ``load_module_from_memory`` (the file keeps the original source, so
    line numbers and Triton's source lookup still match)."""
    digest = hashlib.sha256(source.encode()).hexdigest()[:16]
    path = os.path.join(directory, f"{name}_{digest}.py")
    with open(path, "w") as f:
        f.write(source)
    spec = importlib.util.spec_from_file_location(f"{name}_{digest}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    if overrides:
        exec(compile(scaling.rewrite(source, overrides), path, "exec"), module.__dict__)  # noqa: S102
    else:
        spec.loader.exec_module(module)
    return module


def load_task(source: str, name: str, factor: float, directory: str | None = None):
    """The task module at size ``factor`` (``--scale``): its size constants scaled by
    ``scaling.plan`` and every constant derived from them derived again. Returns (module,
    scaled): ``scaled`` maps each changed constant to [old, new], each re-derived constant to
    its new value under ``derived``, and the rules that raised a size under ``notes``. Without
    ``directory`` the module is loaded from memory (the trusted reference worker)."""
    overrides, changed, notes = scaling.plan(source, float(factor))
    if directory is None:
        module = load_module_from_memory(source, name, overrides)
    else:
        module = load_module(source, name, directory, overrides)
    scaled = dict(changed)
    again = scaling.derived(module, source, overrides)
    if again:
        scaled["derived"] = again
    if notes:
        scaled["notes"] = notes
    return module, scaled


def scale_sizes(module, factor: float) -> dict:
    """Multiplies the module's int constants >= SCALE_MIN by ``factor`` (min 1) in place, without
    the rules of ``scaling.plan`` and without deriving constants again; returns {name: [old,
    new]} for every changed constant. The workers load tasks with ``load_task`` instead."""
    changed = {}
    if factor == 1.0:
        return changed
    for name, value in list(vars(module).items()):
        if name.startswith("_") or type(value) is not int or value < SCALE_MIN:
            continue
        new = max(1, int(round(value * factor)))
        if new != value:
            setattr(module, name, new)
            changed[name] = [value, new]
    return changed


def transform_value(value, transform: str):
    """Applies a value transform (nominal, scale3, scale001, negate, abs; scale100 and cube for
    tasks whose cases a trivial answer passes) to float tensors."""
    if isinstance(value, (list, tuple)):
        out = [transform_value(v, transform) for v in value]
        return tuple(out) if isinstance(value, tuple) else out
    if not isinstance(value, torch.Tensor) or not value.is_floating_point():
        return value
    if transform == "nominal":
        return value
    if transform == "scale3":
        return value * 3
    if transform == "scale001":
        return value * 0.01
    if transform == "negate":
        return -value
    if transform == "abs":
        return value.abs()
    if transform == "scale100":  # strengthening transforms (trivial-answer audit)
        return value * 100
    if transform == "cube":      # heavy-tailed values, same sign
        return value * value * value
    raise ValueError(f"unknown value transform {transform!r}")


def to_device(value, device: str):
    if isinstance(value, torch.Tensor):
        return value.to(device)
    if isinstance(value, (list, tuple)):
        out = [to_device(v, device) for v in value]
        return tuple(out) if isinstance(value, tuple) else out
    return value


def clone_value(value):
    if isinstance(value, torch.Tensor):
        return value.clone()
    if isinstance(value, (list, tuple)):
        out = [clone_value(v) for v in value]
        return tuple(out) if isinstance(value, tuple) else out
    return value


_CPU_GENERATOR = torch.default_generator  # captured at import, before any candidate code runs


def seed_all(seed: int) -> None:
    """Seeds the CPU generator and every CUDA device's generator with ``seed``: the generator
    states ``torch.manual_seed(seed)`` sets for these devices, without its cost. torch.manual_seed
    also seeds the XPU and MTIA backends, which are never initialised here, so each call queues
    their seeding through ``_lazy_call`` with a formatted Python stack trace (two per call, with a
    stat() of every source file on the stack): about 0.5 ms per input set on the H200's host,
    most of a baseline timing request's time when every call gets fresh inputs."""
    seed = int(seed)
    _CPU_GENERATOR.manual_seed(seed)
    if torch.cuda.is_available():
        if not torch.cuda.default_generators:
            torch.cuda.init()
        for gen in torch.cuda.default_generators:
            gen.manual_seed(seed)


def unseed() -> None:
    """The generators seeded from OS entropy, right after an input set was made: what the
    candidate's code can read of them (``torch.initial_seed()``, a draw) then says nothing about
    the seed its inputs came from. Cases repeat a seed, timed calls draw fresh ones and the wall
    check's requests use consecutive ones, so the seed told the candidate which phase it was in:
    under strict a candidate ran ATen compute everywhere but in the op trace's calls (red team
    rt24: a softmax and a matmul passed)."""
    seed_all(int.from_bytes(os.urandom(8), "little") >> 1)


def make_inputs(module, seed: int, transform: str, device: str, on_device: bool = False):
    """The task's inputs for ``seed``: ``get_inputs()`` under ``seed_all(seed)``, the value
    transform, moved to ``device``. With ``on_device`` the factory calls of ``get_inputs`` run
    on the device (fast, for the fresh inputs of every timed call); both runners generate the
    same values for the same (seed, device), which is what lets the reference recheck a timed
    output from the seed alone."""
    seed_all(seed)
    if on_device and device != "cpu":
        with torch.device(device):
            inputs = module.get_inputs()
    else:
        inputs = module.get_inputs()
    inputs = to_device(transform_value(list(inputs), transform), device)
    unseed()
    return inputs


def output_tensors(out):
    """The output's tensors (a tensor or a list/tuple of tensors), else None."""
    if type(out) is torch.Tensor:
        return [out]
    if type(out) in (tuple, list) and all(type(o) is torch.Tensor for o in out):
        return list(out)
    return None
