"""Run-time integrity primitives used by both runners (issue 4; docs/timing.md, docs/correctness.md).

- ``Fingerprints`` (D13): identity and bytecode hash of the harness and the torch/time functions it
  relies on, taken before candidate code is imported and re-checked after import and each call.
- ``precision_flags`` (H40): the process's global precision flags (TF32, reduced-precision
  reductions, float32 matmul precision); the candidate's must equal the baseline's.
- ``thread_census`` (D8): Python threads (``threading.enumerate``) and native threads
  (``/proc/self/task``) of this process.
- ``poison_free_memory`` (D4): fills the CUDA caching allocator's free blocks with a byte pattern
  (0xFF is NaN in every float format) so that a stale buffer never holds a plausible result.
- ``PersistingL2`` (D9): resets the persisting-L2 set-aside through the driver API
  (``cuCtxSetLimit(CU_LIMIT_PERSISTING_L2_CACHE_SIZE, 0)``, ``cuCtxResetPersistingL2Cache``) and
  reads it back after a call.
- ``kernel_trace`` (D7/D14): the GPU kernels of some calls, from ``torch.profiler`` (CUPTI via
  Kineto), with streams and start/end times relative to each call's window.
"""
import ctypes
import hashlib
import os
import re
import sys
import threading
import time
import types

import torch

from . import opwatch

# ---------------------------------------------------------------------------------------------
# D13: fingerprints of trusted functions


def _code_hash(obj) -> str:
    code = getattr(obj, "__code__", None)
    if code is None:
        func = getattr(obj, "__func__", None)
        code = getattr(func, "__code__", None)
    if code is None:
        return ""
    h = hashlib.sha256(code.co_code)
    h.update(repr(code.co_consts).encode(errors="replace"))
    h.update(repr(code.co_names).encode(errors="replace"))
    return h.hexdigest()[:16]


def _resolve(root, path: str):
    obj = root
    for part in path.split("."):
        obj = getattr(obj, part)
    return obj


TORCH_TRUSTED = [
    "cuda.synchronize", "cuda.Event", "cuda.Event.record", "cuda.Event.elapsed_time",
    "cuda.Event.synchronize", "cuda.Event.query", "cuda.current_stream", "cuda.memory_snapshot",
    "cuda.set_device", "cuda.empty_cache", "equal", "isnan", "isfinite", "manual_seed", "randn",
    "rand", "randint", "empty", "zeros", "no_grad", "Tensor.clone", "Tensor.copy_", "Tensor.fill_",
    "Tensor.contiguous", "Tensor.cpu", "Tensor.to", "Tensor.view", "Tensor.reshape",
    "Tensor.untyped_storage", "Tensor.data_ptr", "Tensor.numel", "Tensor.detach", "Tensor.double",
    "Tensor.abs", "Tensor.max", "Tensor.__eq__", "Tensor.__sub__", "autograd.profiler.record_function",
    "profiler.profile",
]
STDLIB_TRUSTED = [
    (time, "perf_counter"), (time, "perf_counter_ns"), (time, "monotonic"), (time, "sleep"),
    (os, "urandom"), (os, "listdir"), (threading, "enumerate"),
]


def kgym_worker_modules() -> list:
    """``(name, module)`` of every ``kgym_worker`` module imported so far, from ``sys.modules``,
    by name: what the harness guard and the full fingerprint hold by identity."""
    return sorted((n, m) for n, m in list(sys.modules.items())
                  if isinstance(m, types.ModuleType) and (n == "kgym_worker" or n.startswith("kgym_worker.")))


class Fingerprints:
    """Identity + bytecode hash of trusted callables. ``add_module`` covers every function and
    class method defined in a module (the kgym_worker modules, the task module)."""

    def __init__(self):
        self._entries = {}
        self._namespaces = []  # (prefix, module, its global names) of add_namespace
        self._dispatch_all = {}  # operator -> kernels at the snapshot (add_dispatcher)
        self._dispatch_watched = {}  # the part of it checked by every changed()

    def add(self, name: str, owner, attr: str) -> None:
        try:
            obj = owner[attr] if isinstance(owner, dict) else getattr(owner, attr)
        except (AttributeError, KeyError):
            return
        self._entries[name] = (owner, attr, obj, _code_hash(obj))

    def add_module_table(self) -> "Fingerprints":
        """Every ``kgym_worker`` entry of ``sys.modules`` by identity: what a function-level
        ``from .x import y`` in the harness resolves (``timing.time_calls`` takes its
        ``HarnessGuard`` so; a stand-in module there would hand the loop a guard that passes)."""
        for name, _ in kgym_worker_modules():
            self.add(f"sys.modules[{name!r}]", sys.modules, name)
        return self

    def add_torch(self) -> "Fingerprints":
        for path in TORCH_TRUSTED:
            parent, _, attr = ("torch." + path).rpartition(".")
            try:
                owner = _resolve(torch, parent.removeprefix("torch").lstrip(".")) if parent != "torch" else torch
            except AttributeError:
                continue
            self.add("torch." + path, owner, attr)
        for mod, attr in STDLIB_TRUSTED:
            self.add(f"{mod.__name__}.{attr}", mod, attr)
        return self

    def add_module(self, module, prefix: str = "") -> "Fingerprints":
        prefix = prefix or module.__name__
        for name, value in list(vars(module).items()):
            if name.startswith("__"):
                continue
            if isinstance(value, types.ModuleType):  # the module it calls through (harness_guard says why)
                self.add(f"{prefix}.{name}", module, name)
                continue
            if callable(value) and getattr(value, "__module__", None) == module.__name__:
                self.add(f"{prefix}.{name}", module, name)
                if isinstance(value, type):
                    for mname, mval in list(vars(value).items()):
                        if callable(mval) and not mname.startswith("__"):
                            self.add(f"{prefix}.{name}.{mname}", value, mname)
        return self

    def add_namespace(self, module, prefix: str = "") -> "Fingerprints":
        """``add_module``, plus every other global of ``module`` by identity (the ``torch`` it
        imported, its constants, ``__builtins__``), the set of its global names, and the torch
        functions its code names (``torch.tril``, ``F.normalize``: also by identity and bytecode).
        For the task module, whose ``get_inputs`` the harness runs to make every input, timed
        requests included: a candidate that rebound the task module's ``torch`` to a proxy did each
        call's matmul while the harness generated the inputs (rt2_precompute_in_make_inputs, 4.9x
        on the H200 in session 10, when a noisy wall-clock floor no longer caught it)."""
        prefix = prefix or module.__name__
        self.add_module(module, prefix)
        for name in list(vars(module)):
            if name != "__warningregistry__":  # the warnings machinery adds it
                self.add(f"{prefix}.{name}", module, name)
        self._namespaces.append((prefix, module, _global_names(module)))
        import torch.nn.functional as functional
        for name in sorted(_code_names(module)):
            for owner, label in ((torch, "torch"), (functional, "torch.nn.functional")):
                if not name.startswith("_") and callable(getattr(owner, name, None)):
                    self.add(f"{label}.{name}", owner, name)
        return self

    def add_dispatcher(self) -> "Fingerprints":
        """The aten operators' kernels as torch's dispatcher holds them now (``dispatcher_state``),
        to be taken before any candidate code runs. A kernel registered from Python
        (``torch.library.Library("aten", "IMPL").impl("randn", ...)``) or an extension sits below
        every identity check: red team rt14's replaced ``aten::randn`` did each call's matmul while
        the harness made the inputs, with the task module's ``torch`` untouched."""
        self._dispatch_all = dict(_BASELINE) if _BASELINE is not None else dispatcher_state()
        self.watch_ops(WATCHED_OPS)
        return self

    def watch_ops(self, ops) -> None:
        """Adds ``ops`` (operator names as ``dispatcher_state`` gives them) to those checked by
        every ``changed()`` (after each case and each timed call), as they were at the snapshot."""
        self._dispatch_watched.update({op: self._dispatch_all[op] for op in ops if op in self._dispatch_all})

    def changed(self, full: bool = False) -> list:
        """Names whose object was replaced or whose code object was swapped, namespaces
        (``add_namespace``) with globals added or removed, and aten operators whose kernels
        changed (``add_dispatcher``): the watched families each time, every aten operator with
        ``full``."""
        out = []
        held = self._dispatch_all if full else self._dispatch_watched
        if held:
            now = dispatcher_state(list(held))
            # Every change counts, wherever it says it was registered: a registration's origin
            # can be forged (red team rt15 compiled its code with a file name inside torch's
            # package). torch itself registered nothing new for these keys with torch.compile,
            # fake tensors or functorch in use (dev VM, CPU).
            replaced = sorted(op for op, kernels in held.items() if now.get(op) != kernels)
            if replaced:
                out.append("torch's dispatcher kernels of " + ", ".join(replaced[:5]) +
                           (f" (and {len(replaced) - 5} more)" if len(replaced) > 5 else "") +
                           " (a kernel registered for an aten operator)")
        for prefix, module, names in self._namespaces:
            now = _global_names(module)
            if now != names:
                diff = sorted(now ^ names)
                out.append(f"{prefix} (globals added or removed: {', '.join(diff[:5])})")
        for name, (owner, attr, obj, code) in self._entries.items():
            try:
                now = owner[attr] if isinstance(owner, dict) else getattr(owner, attr)
            except (AttributeError, KeyError):
                out.append(name)
                continue
            if now is not obj and not (getattr(now, "__func__", None) is getattr(obj, "__func__", 0)):
                out.append(name)
            elif code and _code_hash(now) != code:
                out.append(name)
        return out


# Dispatch keys not compared: torch fills them lazily (vmap registered FuncTorchBatched kernels for
# 8 aten operators at first use on the dev VM; torch.compile, fake tensors, autograd and complex
# views changed nothing else), and a kernel there computes no values kgym reads (Meta) or runs
# only under functorch transforms the harness never applies.
UNCOMPARED_KEY_PREFIXES = ("FuncTorch", "Batched", "Vmap", "Meta")


def _dispatch_key(line: str) -> str:
    """The dispatch key of a ``_dispatch_dump`` kernel line ("CPU", "CompositeImplicitAutograd"
    of "CompositeImplicitAutograd[alias]: registered at ...")."""
    return line.split(":", 1)[0].split("[", 1)[0].strip()


# The operators under every input generation (the generators' kernels, the allocations, the
# copies to the device), checked after every timed call together with the operators the task's
# own input generation calls (``watch_ops``, recorded at the first case); every aten operator is
# checked after the load, each case and each timing request. 20 us each on the dev VM.
WATCHED_OPS = frozenset((
    "aten::randn", "aten::rand", "aten::randint", "aten::randint.low", "aten::normal_", "aten::uniform_",
    "aten::random_", "aten::random_.from", "aten::random_.to", "aten::bernoulli_.float",
    "aten::empty.memory_format", "aten::empty_strided", "aten::copy_", "aten::_to_copy",
    "aten::fill_.Scalar", "aten::clone"))


class OpRecorder:
    """A context manager that records the aten operators (``aten::randn``,
    ``aten::randint.low``) dispatched inside it, as a TorchDispatchMode sees them (a composite's
    inner calls are its own kernel's business: the generators', allocations' and copies' kernels
    are in WATCHED_OPS), in ``ops``."""

    def __init__(self):
        from torch.utils._python_dispatch import TorchDispatchMode
        ops = self.ops = set()

        class Recorder(TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                name = str(func._schema.name)
                if func._overloadname != "default":
                    name += "." + func._overloadname
                ops.add(name)
                return func(*args, **(kwargs or {}))

        self._mode = Recorder()

    def __enter__(self):
        self._mode.__enter__()
        return self

    def __exit__(self, *exc):
        return self._mode.__exit__(*exc)


def input_ops(make) -> set:
    """The aten operators that ``make()`` dispatches (``OpRecorder``)."""
    with OpRecorder() as rec:
        make()
    return rec.ops


_BASELINE = None  # dispatcher_state() taken in the zygote before any fork (preload_dispatcher)


_TORCH_NAMESPACES = None  # operator namespaces torch registered before any candidate code ran


def torch_op_namespaces() -> frozenset:
    """The operator namespaces of torch itself ("aten", "mkldnn", "quantized", "prims", ...):
    those the dispatcher knew before any candidate code ran (taken in the zygote by
    ``preload_dispatcher``; in a process without it, now). A namespace the candidate's own
    ``TORCH_LIBRARY`` defines is never among them."""
    global _TORCH_NAMESPACES
    if _TORCH_NAMESPACES is None:
        _TORCH_NAMESPACES = frozenset(o.split("::", 1)[0] for o in torch._C._dispatch_get_all_op_names())
    return _TORCH_NAMESPACES


def preload_dispatcher() -> None:
    """Takes the dispatcher's state once in the zygote, before any worker is forked, so that each
    candidate worker's fingerprint starts from it at no cost (0.1 to 0.15 s per worker otherwise),
    and torch's own operator namespaces (``torch_op_namespaces``)."""
    global _BASELINE
    _BASELINE = dispatcher_state()
    torch_op_namespaces()


def dispatcher_state(ops=None) -> dict:
    """Operator name ("aten::randn", "aten::normal_") -> the kernel lines of
    ``torch._C._dispatch_dump`` but those of UNCOMPARED_KEY_PREFIXES, for ``ops`` or every aten operator (about 0.1 s for 3,200
    on the dev VM; 20 us each)."""
    if ops is None:
        ops = [o for o in torch._C._dispatch_get_all_op_names() if o.startswith("aten::")]
    out = {}
    for op in ops:
        try:
            dump = torch._C._dispatch_dump(op)
        except RuntimeError:
            dump = "(gone)"
        out[op] = tuple(line for line in dump.splitlines()
                        if "registered at" in line and not _dispatch_key(line).startswith(UNCOMPARED_KEY_PREFIXES))
    return out


def _global_names(module) -> frozenset:
    return frozenset(n for n in vars(module) if not (n.startswith("__") and n.endswith("__")))


def _code_names(module) -> set:
    """The names (co_names) that the code of ``module``'s functions and classes refers to,
    nested code objects included."""
    names, stack = set(), []
    for value in list(vars(module).values()):
        if getattr(value, "__module__", None) != module.__name__:
            continue
        if isinstance(value, type):
            stack.extend(getattr(v, "__code__", None) for v in vars(value).values())
        else:
            stack.append(getattr(value, "__code__", None))
    while stack:
        code = stack.pop()
        if code is None:
            continue
        names.update(code.co_names)
        stack.extend(c for c in code.co_consts if hasattr(c, "co_names"))
    return names


# ---------------------------------------------------------------------------------------------
# H40: precision flags


def precision_flags() -> dict:
    """Global precision settings that change fp32 results (all as strings)."""
    out = {"float32_matmul_precision": torch.get_float32_matmul_precision()}
    b = torch.backends
    for name, getter in (
            ("cuda.matmul.allow_tf32", lambda: b.cuda.matmul.allow_tf32),
            ("cudnn.allow_tf32", lambda: b.cudnn.allow_tf32),
            ("cuda.matmul.allow_fp16_reduced_precision_reduction",
             lambda: b.cuda.matmul.allow_fp16_reduced_precision_reduction),
            ("cuda.matmul.allow_bf16_reduced_precision_reduction",
             lambda: b.cuda.matmul.allow_bf16_reduced_precision_reduction)):
        try:
            out[name] = str(getter())
        except Exception:  # noqa: BLE001 - a flag this torch does not have
            pass
    # Not precision, but the same kind: the CPU thread pools. A candidate that raised them got
    # parallel CPU work against the one-thread baseline (red team, 2026-12-01).
    out["intra_op_threads"] = str(torch.get_num_threads())
    out["interop_threads"] = str(torch.get_num_interop_threads())
    return out


def restore_precision_flags(flags: dict) -> None:
    """Puts the flags back (after a candidate changed them; the change is still reported)."""
    b = torch.backends
    try:
        torch.set_float32_matmul_precision(flags["float32_matmul_precision"])
        b.cuda.matmul.allow_tf32 = flags.get("cuda.matmul.allow_tf32") == "True"
        b.cudnn.allow_tf32 = flags.get("cudnn.allow_tf32") == "True"
        b.cuda.matmul.allow_fp16_reduced_precision_reduction = \
            flags.get("cuda.matmul.allow_fp16_reduced_precision_reduction") == "True"
        b.cuda.matmul.allow_bf16_reduced_precision_reduction = \
            flags.get("cuda.matmul.allow_bf16_reduced_precision_reduction") == "True"
    except Exception:  # noqa: BLE001
        pass
    try:
        if "intra_op_threads" in flags and str(torch.get_num_threads()) != flags["intra_op_threads"]:
            torch.set_num_threads(int(flags["intra_op_threads"]))
    except Exception:  # noqa: BLE001
        pass


# ---------------------------------------------------------------------------------------------
# D8: thread census


def thread_census():
    """(set of live Python thread idents, number of native threads or -1)."""
    py = {t.ident for t in threading.enumerate() if t.is_alive()}
    try:
        native = len(os.listdir("/proc/self/task"))
    except OSError:
        native = -1
    return py, native


def census_leak(before, after) -> str:
    """A description of threads alive after a call that were not before it ('' if none).
    Python threads count always; native threads only when ``before`` says so (the caller
    exempts the first call, where libraries legitimately start their pools)."""
    py_new = after[0] - before[0]
    if py_new:
        names = [t.name for t in threading.enumerate() if t.ident in py_new]
        return f"{len(py_new)} Python thread(s) still running after the call returned: {names}"
    return ""


def native_growth(before, after) -> int:
    if before[1] < 0 or after[1] < 0:
        return 0
    return max(0, after[1] - before[1])


# ---------------------------------------------------------------------------------------------
# D4: poison the caching allocator's free blocks


def poison_free_memory(device: str, byte: int) -> bool:
    """Fills every free block the CUDA caching allocator holds with ``byte`` (so a buffer the
    candidate gets from ``torch.empty`` holds NaN or a sentinel, never an earlier result).
    Returns False on CPU (glibc's allocator cannot be walked; nothing of the reference ever
    lives in the candidate's process, see D10)."""
    if not device.startswith("cuda"):
        return False
    held = []
    try:
        for seg in torch.cuda.memory_snapshot():
            for blk in seg.get("blocks", []):
                if blk.get("state") == "inactive" and blk.get("size", 0) >= 512:
                    t = torch.empty(int(blk["size"]), dtype=torch.uint8, device=device)
                    t.fill_(byte)
                    held.append(t)
        torch.cuda.synchronize()
    finally:
        del held
    return True


RELEASE_SLACK_BYTES = 4 << 30  # cached-but-free device memory a worker keeps between requests
RELEASE_FREE_FRACTION = 0.5  # ... unless the device's free memory is at least this share of it


def release_device_memory(device: str, scrub: bool = False) -> bool:
    """Returns the CUDA caching allocator's free blocks to the driver when they exceed
    ``RELEASE_SLACK_BYTES`` and the device's free memory (``cudaMemGetInfo``: every process) is
    below ``RELEASE_FREE_FRACTION`` of its total, so that the other worker on the device
    (reference or candidate) can allocate. H200, a KernelBench level-1 ReLU at full size (6.4 GB
    per tensor): the reference ran out of memory in its first comparison while the candidate's
    process held 114 GiB, mostly cached by its allocator (task_error for an honest kernel). While
    half the device is free the blocks are kept: each worker's next request then reuses them
    instead of paying ``cudaFree`` and ``cudaMalloc`` for every multi-GB tensor (session 15, H200:
    the full-size ReLU's candidate process spent 7.6 s in ``empty_cache`` in one verdict), and
    either worker's next request still has half the device (a full-size level-1 request needs at
    most about 50 GB). With ``scrub`` (the reference worker) released blocks are zeroed first,
    so that no reference output reaches another process through the driver (kept blocks stay
    in the reference's process). Small tasks never reach the threshold: nothing changes for them.
    Never called inside the wall check's sequence (a timed request would then pay the
    allocations). Returns True when memory was released; False on CPU, below the slack, or with
    half the device free."""
    if not device.startswith("cuda"):
        return False
    slack = torch.cuda.memory_reserved() - torch.cuda.memory_allocated()
    if slack < RELEASE_SLACK_BYTES:
        return False
    free, total = torch.cuda.mem_get_info()
    if free >= RELEASE_FREE_FRACTION * total:
        return False
    if scrub:
        poison_free_memory(device, 0)
    torch.cuda.empty_cache()
    return True


# ---------------------------------------------------------------------------------------------
# D9: persisting L2


class PersistingL2:
    """Driver-API control of the persisting-L2 set-aside of the current context."""
    CU_LIMIT_PERSISTING_L2_CACHE_SIZE = 0x06

    def __init__(self):
        self.lib = None
        try:
            self.lib = ctypes.CDLL("libcuda.so.1")
        except OSError:
            self.lib = None

    def reset(self) -> bool:
        """Sets the limit to 0 and resets persisting lines; True when both calls succeeded."""
        if self.lib is None:
            return False
        ok = self.lib.cuCtxSetLimit(ctypes.c_int(self.CU_LIMIT_PERSISTING_L2_CACHE_SIZE), ctypes.c_size_t(0)) == 0
        ok = (self.lib.cuCtxResetPersistingL2Cache() == 0) and ok
        return ok

    def limit(self) -> int:
        """The current set-aside in bytes (-1 when it cannot be read)."""
        if self.lib is None:
            return -1
        v = ctypes.c_size_t(0)
        if self.lib.cuCtxGetLimit(ctypes.byref(v), ctypes.c_int(self.CU_LIMIT_PERSISTING_L2_CACHE_SIZE)) != 0:
            return -1
        return int(v.value)


# ---------------------------------------------------------------------------------------------
# D7/D14: kernel trace

# Library and ATen kernels (cuBLAS, cuDNN, CUTLASS, ATen native, Inductor-generated Triton).
_LIBRARY = re.compile(
    r"at::native|at_cuda_detail|\bat::|cutlass|xmma|cublas|cudnn|\bgemm|gemv|sgemm|hgemm|"
    r"ampere_|hopper_|sm\d\d_|nvjet|cunn_|implicit_convolve|winograd|fft|^triton_(poi|red|per|tem)_|"
    r"splitKreduce|Kernel2|cub::", re.IGNORECASE)
# ATen glue: allocation fills, copies, layout changes (not compute).
_GLUE = re.compile(r"FillFunctor|fill_kernel|copy_kernel|direct_copy|CatArrayBatched|"
                   r"nchwToNhwc|nhwcToNchw|transpose_readWrite|CopyFunctor", re.IGNORECASE)


def kernel_category(name: str) -> str:
    """own | library | glue | memory for a GPU activity name."""
    if name.startswith(("Memcpy", "Memset", "[memory]")):
        return "memory"
    if _GLUE.search(name):
        return "glue"
    if _LIBRARY.search(name):
        return "library"
    return "own"


def summarize_trace(kernels: list, windows: list, graph_launches: int, slack_us: float = 20.0) -> dict:
    """LaunchRecord (measurement.hpp) from GPU activities and call windows.

    ``kernels``: dicts name, stream, device, start_us, end_us (one clock with ``windows``);
    ``windows``: [start_us, end_us] of each call (call + device-wide sync). A kernel belongs to
    the window it starts in; one that starts or ends outside every window is counted in
    ``outside_window``."""
    rec = {"traced": True, "calls": len(windows), "own_ms": 0.0, "library_ms": 0.0, "glue_ms": 0.0,
           "memory_ms": 0.0, "outside_window": 0, "graph_launches": graph_launches, "kernels": [],
           "streams": [], "devices": []}
    streams, devices, listed = set(), set(), set()
    for k in kernels:
        cat = kernel_category(k["name"])
        dur = max(0.0, k["end_us"] - k["start_us"]) / 1e3
        call = -1
        for i, (ws, we) in enumerate(windows):
            if ws - slack_us <= k["start_us"] and k["end_us"] <= we + slack_us:
                call = i
                break
        if call < 0:
            rec["outside_window"] += 1
        rec[f"{cat}_ms"] += dur
        streams.add(int(k.get("stream", 0)))
        devices.add(int(k.get("device", 0)))
        key = (k["name"][:200], cat, call >= 0)
        if key not in listed and len(rec["kernels"]) < 48:
            listed.add(key)
            base = windows[call][0] if call >= 0 else (windows[0][0] if windows else 0.0)
            rec["kernels"].append({"name": k["name"][:200], "category": cat, "stream": int(k.get("stream", 0)),
                                   "device": int(k.get("device", 0)), "call": call,
                                   "start_us": k["start_us"] - base, "end_us": k["end_us"] - base})
    rec["streams"] = sorted(streams)
    rec["devices"] = sorted(devices)
    return rec


def warm_profiler(device: str) -> None:
    """One short torch.profiler session with CPU and CUDA activities (initialises CUPTI), so that
    kernel_trace later pays only its own calls. Errors are ignored: kernel_trace reports them."""
    try:
        from torch.profiler import ProfilerActivity, profile
        cuda = device.startswith("cuda")
        x = torch.zeros(1, device=device)
        with profile(activities=[ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])):
            x.add_(1)
            if cuda:
                torch.cuda.synchronize()
    except Exception:  # noqa: BLE001
        pass


def kernel_trace(fn, make_args, seeds, device: str, after_s: float = 0.05) -> dict:
    """Runs ``fn`` once per seed under ``torch.profiler`` (CPU + CUDA activities), each call in
    a ``kgym::call`` range that ends after a device-wide sync, then waits ``after_s`` (work a
    background thread launches after the return lands there) and summarizes (summarize_trace)."""
    from torch.profiler import ProfilerActivity, profile, record_function
    args_list = [make_args(s) for s in seeds]
    torch.cuda.synchronize()
    with torch.no_grad(), profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for i, args in enumerate(args_list):
            with record_function(f"kgym::call{i}"):
                opwatch.on()
                fn(*args)
                opwatch.off()
                torch.cuda.synchronize()
            time.sleep(0.002)
        time.sleep(after_s)
        torch.cuda.synchronize()
    kernels, windows, graph = [], {}, 0
    for ev in prof.profiler.kineto_results.events():
        name = ev.name()
        dev = str(ev.device_type())
        if "CUDA" in dev and not name.startswith("kgym::") and not ev.is_user_annotation():
            kernels.append({"name": name, "stream": ev.device_resource_id(), "device": ev.device_index(),
                            "start_us": ev.start_ns() / 1e3, "end_us": ev.end_ns() / 1e3})
        else:
            if name.startswith("kgym::call"):
                windows[int(name[len("kgym::call"):])] = [ev.start_ns() / 1e3, ev.end_ns() / 1e3]
            elif "GraphLaunch" in name:
                graph += 1
    ordered = [windows[i] for i in sorted(windows)]
    return summarize_trace(kernels, ordered, graph)


# ---------------------------------------------------------------------------------------------
# The CPU backstop of the launch gate: the ATen ops a call dispatches

# ATen ops that allocate, view, reshape, copy or read metadata: glue, not compute. Everything
# else (including ops not listed anywhere) counts as compute. The last line holds views and their
# _copy forms (red team rt34: an honest C++ ReLU that walked its input through Tensor::unfold was
# rejected by the link check).
ATEN_GLUE = frozenset("""
empty empty_like empty_strided new_empty new_empty_strided zeros zeros_like new_zeros ones ones_like
new_ones full full_like new_full fill_ zero_ resize_ resize_as_ set_ lift_fresh detach detach_ alias
view view_as _reshape_alias _unsafe_view reshape reshape_as flatten unflatten squeeze squeeze_ unsqueeze
unsqueeze_ permute transpose transpose_ t t_ expand expand_as as_strided as_strided_ contiguous clone
copy_ _copy_from _copy_from_and_resize to _to_copy type_as select slice narrow split split_with_sizes
chunk unbind movedim moveaxis swapaxes swapdims numpy_T mT mH matrix_H unfold_copy cat stack hstack
vstack _cat constant_pad_nd pad item _local_scalar_dense is_nonzero size stride numel dim sym_size
sym_stride sym_numel sym_storage_offset is_contiguous is_same_size result_type _has_compatible_shallow_copy_type
requires_grad_ retain_grad _version data _fw_primal output_nr _make_dual resolve_conj resolve_neg conj _conj
unfold diagonal view_as_real view_as_complex alias_copy view_copy expand_copy squeeze_copy unsqueeze_copy permute_copy transpose_copy t_copy as_strided_copy _reshape_copy lift_fresh_copy select_copy slice_copy split_copy split_with_sizes_copy narrow_copy unbind_copy diagonal_copy detach_copy
""".split())


OPWATCH_OVERFLOW = "<overflow>"  # opwatch.take's entry for ops that found no slot
NON_COMPUTE_NAMESPACES = frozenset({"profiler"})  # torch namespaces whose ops are bookkeeping


def aten_category(name: str) -> str:
    """glue | compute | other for a profiler op name. ATen ("aten::view"): glue when listed in
    ATEN_GLUE, else compute. Any other namespace of torch itself (``torch_op_namespaces``:
    ``mkldnn::_linear_pointwise``, oneDNN's GEMM, ``quantized::``, ``prims::`` ...) is compute
    too: under strict it passed as the candidate's own code (red team rt24, CPU: a oneDNN matmul
    and a oneDNN conv+ReLU called through ``torch.ops.mkldnn``). The candidate's own namespace
    (its ``TORCH_LIBRARY``) and names without a namespace are "other". The op watch's
    "<overflow>" (ops that found its table full, names unknown) is compute: fail closed (red team
    rt34 filled the table with ops of its own, then ran ATen's GEMM unseen)."""
    if name == OPWATCH_OVERFLOW:
        return "compute"
    ns, sep, rest = name.partition("::")
    if not sep:
        return "other"
    if ns == "aten":
        op = rest.split(".", 1)[0]
        return "glue" if op in ATEN_GLUE else "compute"
    if ns in torch_op_namespaces() and ns not in NON_COMPUTE_NAMESPACES:
        return "compute"
    return "other"


def summarize_aten_ops(names) -> dict:
    """The CPU fields of LaunchRecord from the ATen op names of the traced calls."""
    counts = {}
    for n in names:
        cat = aten_category(n)
        if cat == "other":
            continue
        key = (n, cat)
        counts[key] = counts.get(key, 0) + 1
    ops = [{"name": n, "category": c, "count": k} for (n, c), k in sorted(counts.items(), key=lambda kv: -kv[1])]
    return {"aten_traced": True,
            "aten_compute_calls": sum(o["count"] for o in ops if o["category"] == "compute"),
            "aten_glue_calls": sum(o["count"] for o in ops if o["category"] == "glue"),
            "aten_ops": ops[:48]}


def summarize_aten_counts(counts: dict) -> dict:
    """``summarize_aten_ops`` of {op name: count} (the op watch's ``opwatch.take``)."""
    names = []
    for n, k in counts.items():
        names.extend([n] * int(min(k, 1 << 20)))
    return summarize_aten_ops(names)


def merge_watched(rec: dict, counts: dict, status: str) -> dict:
    """Adds the op watch's counts (every timed, wall-clock and traced call of the verdict) to a
    launch record: its ATen fields summed with the CPU op trace's where both exist;
    ``op_watch`` says whether the watch ran (docs/timing.md, "Op watch")."""
    rec["op_watch"] = status
    if status != "on":
        return rec
    w = summarize_aten_counts(counts)
    if not rec.get("aten_traced"):
        rec.update(w)
        return rec
    merged = {}
    for o in list(rec.get("aten_ops", [])) + w["aten_ops"]:
        key = (o["name"], o["category"])
        merged[key] = merged.get(key, 0) + int(o["count"])
    rec["aten_compute_calls"] = int(rec.get("aten_compute_calls", 0)) + w["aten_compute_calls"]
    rec["aten_glue_calls"] = int(rec.get("aten_glue_calls", 0)) + w["aten_glue_calls"]
    rec["aten_ops"] = [{"name": n, "category": c, "count": k}
                       for (n, c), k in sorted(merged.items(), key=lambda kv: -kv[1])][:48]
    return rec


def cpu_op_trace(fn, make_args, seeds) -> dict:
    """Runs ``fn`` once per seed under ``torch.profiler`` with CPU activities and lists the ATen
    ops they dispatch (RecordFunction at the dispatcher: ops called from Python and from C++
    extensions alike). Inputs are made before the profiler starts, so every op seen is the
    candidate's. Nothing else the candidate's code can read is set around the traced calls: a
    ``warnings.catch_warnings()`` here told them apart (``warnings.filters[0]``), and under strict
    a candidate ran ATen ops the static list lacks everywhere else (red team rt25: a softmax, a
    matmul and a ReLU passed); the profiler's warnings go to the worker's log."""
    from torch.profiler import ProfilerActivity, profile
    args_list = [make_args(s) for s in seeds]
    with torch.no_grad(), profile(activities=[ProfilerActivity.CPU]) as prof:
        for args in args_list:
            opwatch.on()
            fn(*args)
            opwatch.off()
    names = [ev.name() for ev in prof.profiler.kineto_results.events()]
    rec = summarize_aten_ops(names)
    rec["calls"] = len(args_list)
    return rec
