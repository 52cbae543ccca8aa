"""The reference probe: before any candidate of a task is judged, the reference runs once on a
probe input of the task at the chosen scale. A task whose reference cannot run there (its input
shrank below its kernel, a derived constant no longer matches) is the task's failure: every
candidate of it gets ``task_error`` naming the task, the scale and the reference's error, never a
``runtime_error`` of its own. The probe input is not secret (a fixed seed, the nominal
transform): it is never a correctness case and its output is not kept.

``probe(...)`` runs it on a loaded module and model; ``load_and_probe(...)`` loads the task too
(``kgym tasks audit --scale F``). The reference worker caches the result per (task source,
scale); the device is the worker's own.
"""
import torch

from . import loading, timing

PROBE_SEED = 0x9B0BE  # fixed and public: the probe input is not a correctness case


class TaskNotRunnable(Exception):
    """The task's reference fails at this scale (the message names the task, the scale and the
    reference's error)."""


def _where(task_id: str, scale: float) -> str:
    return f"task {task_id or '(unnamed)'} at scale {scale:g}"


def probe(module, model, device: str, task_id: str, scale: float) -> dict:
    """Runs ``model`` once on the task's probe input on ``device``. Returns {"output": the output
    tensors' shapes, "input_elements": the largest input tensor's element count}; raises TaskNotRunnable when the inputs cannot be made or the
    reference raises."""
    try:
        inputs = loading.make_inputs(module, PROBE_SEED, "nominal", device)
    except Exception as exc:  # noqa: BLE001 - the task's own get_inputs failed
        raise TaskNotRunnable(f"{_where(task_id, scale)} cannot run: its get_inputs() fails on the probe: "
                              f"{type(exc).__name__}: {exc}") from exc
    # The model's buffers (BatchNorm's running statistics) are put back afterwards: the probe
    # leaves the reference as the candidate's model is.
    buffers = {name: b.detach().clone() for name, b in model.named_buffers()}
    try:
        with torch.no_grad():
            out = model(*inputs)
            for name, b in model.named_buffers():
                if name in buffers and b.shape == buffers[name].shape:
                    b.copy_(buffers[name])
        timing.synchronize(device)
    except (torch.OutOfMemoryError, MemoryError):
        # Not the task's verdict: memory is shared with the candidate's processes, which may hold
        # it on purpose; raised as it is, it is not cached as "the task cannot run".
        raise
    except Exception as exc:  # noqa: BLE001 - the reference itself failed
        raise TaskNotRunnable(f"{_where(task_id, scale)} cannot run: the reference fails on the probe input: "
                              f"{type(exc).__name__}: {exc}") from exc
    tensors = loading.output_tensors(out)
    shape = [list(t.shape) for t in tensors] if tensors else type(out).__name__
    largest = max([t.numel() for t in inputs if isinstance(t, torch.Tensor)] + [0])
    return {"output": shape, "input_elements": largest}


def construct(module, device: str, init_seed: int, task_id: str, scale: float):
    """``Model(*get_init_inputs())`` on ``device`` under ``init_seed``; raises TaskNotRunnable
    naming the task and scale when the task's own construction fails (8 groups for 1 channel)."""
    try:
        init_inputs = module.get_init_inputs()
        loading.seed_all(int(init_seed))
        model = module.Model(*init_inputs).to(device)
        return init_inputs, model
    except Exception as exc:  # noqa: BLE001
        raise TaskNotRunnable(f"{_where(task_id, scale)} cannot run: the reference cannot be constructed: "
                              f"{type(exc).__name__}: {exc}") from exc


def load_and_probe(source: str, device: str, task_id: str, scale: float) -> dict:
    """Loads the task at ``scale``, constructs its reference and probes it. Returns {"runs": true,
    "scaled": ..., "output": ...} or {"runs": false, "reason": str, "scaled": ...}; never raises
    for the task's failure."""
    scaled = {}
    try:
        try:
            module, scaled = loading.load_task(source, "kgym_task_probe", float(scale))
        except Exception as exc:  # noqa: BLE001
            raise TaskNotRunnable(f"{_where(task_id, scale)} cannot run: the task does not load: "
                                  f"{type(exc).__name__}: {exc}") from exc
        _, model = construct(module, device, PROBE_SEED, task_id, scale)
        out = probe(module, model, device, task_id, scale)
        return {"runs": True, "scaled": scaled, **out}
    except TaskNotRunnable as exc:
        return {"runs": False, "reason": str(exc), "scaled": scaled}
