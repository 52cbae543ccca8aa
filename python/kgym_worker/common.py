"""Shared by both runners: loading modules from source, size scaling, value transforms, timing.

The timing method is the same for the candidate and the references (docs/timing.md): warm-up
calls, then timed calls each on the next of a rotating set of input copies; on CUDA an L2 flush
(a write of >= 2x the L2 size) and a device-wide sync before each call, CUDA events around the
call with ``torch.cuda.synchronize()`` before the end event; on CPU ``time.perf_counter_ns``.
"""
import hashlib
import importlib.util
import os
import sys
import time

import torch

SCALE_MIN = 16  # module-level ints >= this are size constants that --scale multiplies


def load_module(source: str, name: str, directory: str):
    """Writes ``source`` to a real file (Triton needs one) and imports it as module ``name``."""
    digest = hashlib.sha256(source.encode()).hexdigest()[:16]
    path = os.path.join(directory, f"{name}_{digest}.py")
    with open(path, "w") as f:
        f.write(source)
    spec = importlib.util.spec_from_file_location(f"{name}_{digest}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def scale_sizes(module, factor: float) -> dict:
    """Multiplies the module's int constants >= SCALE_MIN by ``factor`` (min 1); returns
    {name: [old, new]} for every changed constant."""
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
    """Applies a value transform (nominal, scale3, scale001, negate, abs) to float tensors."""
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


def seed_all(seed: int) -> None:
    torch.manual_seed(seed)  # also seeds every CUDA device


def synchronize(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def l2_bytes(device: str) -> int:
    props = torch.cuda.get_device_properties(torch.device(device))
    return int(getattr(props, "L2_cache_size", 0) or 0) or (64 << 20)


def time_calls(fn, arg_sets, device: str, opts: dict) -> dict:
    """Times ``fn(*args)`` over rotating ``arg_sets``; returns a TimingRecord dict (wall_ms is
    filled by the supervisor). ``opts``: warmup, min_calls, max_calls, budget_ms, target_spread,
    l2_flush."""
    cuda = device.startswith("cuda")
    warmup, min_calls, max_calls = int(opts["warmup"]), int(opts["min_calls"]), int(opts["max_calls"])
    budget_ms, target = float(opts["budget_ms"]), float(opts["target_spread"])
    flush = None
    if cuda and opts.get("l2_flush", True):
        flush = torch.empty(2 * l2_bytes(device) // 4 + 1, dtype=torch.int32, device=device)
    with torch.no_grad():
        for i in range(warmup):
            fn(*arg_sets[i % len(arg_sets)])
        synchronize(device)
        times = []
        began = time.perf_counter()
        if cuda:
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
        while len(times) < max_calls:
            args = arg_sets[len(times) % len(arg_sets)]
            if cuda:
                if flush is not None:
                    flush.fill_(len(times))
                torch.cuda.synchronize()
                start.record()
                fn(*args)
                torch.cuda.synchronize()  # device-wide: work on any stream is inside the window
                end.record()
                end.synchronize()
                times.append(float(start.elapsed_time(end)))
            else:
                t0 = time.perf_counter_ns()
                fn(*args)
                times.append((time.perf_counter_ns() - t0) / 1e6)
            if len(times) >= min_calls:
                if (time.perf_counter() - began) * 1e3 > budget_ms:
                    break
                s = sorted(times)
                n = len(s)
                med = s[n // 2]
                iqr = s[(3 * n) // 4] - s[n // 4]
                if med > 0 and iqr / med < target:
                    break
    return {"method": "cuda_events" if cuda else "monotonic_clock", "times_ms": times,
            "warmup": warmup, "l2_flushed": flush is not None}


def failure(stage: str, exc: BaseException, log: str = "") -> dict:
    """A Failure record (measurement.hpp) for an exception."""
    import traceback
    tb = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    message = str(exc).strip()
    if len(message) > 2000:
        message = message[:2000] + " ..."
    if log:
        tb = tb + "\n--- build/import log (tail) ---\n" + log[-8000:]
    return {"stage": stage, "type": type(exc).__name__, "message": message, "traceback": tb[-20000:]}
