"""The harness guard: the functions the timed loops (``timing.time_calls``,
``wallcheck.wall_calls``) call between the candidate's calls, taken by identity when this module
is imported (in the zygote, before any candidate code: zygote.py imports it) and checked after
every timed call (``HarnessGuard.check``). Each guarded name is listed with the module the loops
call it through, so that replacing it there is what the check sees.
"""
import sys
import time
import types

import torch

from . import contract, heap, integrity, loading, opwatch, spotcheck, timing, wallcheck

_GUARDED_NAMES = (  # (owner path, attribute): what the timed loops call between the candidate's calls
    ("loading", "output_tensors"), ("loading", "seed_all"), ("loading", "unseed"), ("timing", "synchronize"),
    ("loading", "make_inputs"), ("loading", "to_device"), ("loading", "transform_value"),
    ("timing", "launch_cover"), ("timing", "_keep_copy"), ("wallcheck", "wall_calls"), ("timing", "time_calls"),
    ("timing", "_warm_up"), ("timing", "_round_done"),
    ("heap", "warm_heap"), ("heap", "tensor_bytes"),
    ("wallcheck.OutputArena", "store"), ("wallcheck.Commitments", "add"), ("spotcheck.SpotSampler", "add"),
    ("spotcheck.SpotSampler", "positions"), ("torch", "take"), ("opwatch", "on"), ("opwatch", "off"),
    ("wallcheck.SharedInputs", "args"), ("wallcheck.SharedInputs", "tensor"),
    ("torch.Tensor", "copy_"), ("torch.Tensor", "clone"), ("torch.cuda", "synchronize"),
    ("torch.cuda.Event", "record"), ("torch.cuda.Event", "synchronize"), ("torch.cuda.Event", "elapsed_time"),
    ("time", "perf_counter"), ("time", "perf_counter_ns"), ("timing", "_CLOCK_NS"),
    ("time", "thread_time_ns"), ("wallcheck", "_THREAD_NS"),
    ("contract", "input_spans"), ("contract", "overlaps_inputs"), ("contract", "inputs_moved"),
    ("contract", "input_snapshot"), ("contract", "inputs_unchanged"), ("contract", "bits_view"))
_HARNESS_MODULES = ("contract", "heap", "loading", "spotcheck", "timing", "wallcheck")  # kgym_worker's, named in hit labels
_SHADOWABLE = ("store", "add", "done", "args", "tensor")  # instance attributes that would shadow a method


def _lookup(owner, attr):
    """``owner.attr`` without the descriptor protocol for a class's own entry (a staticmethod
    or function object as stored), else ``getattr``."""
    if isinstance(owner, type) and attr in owner.__dict__:
        return owner.__dict__[attr]
    return getattr(owner, attr)


class HarnessGuard:
    """The functions the timed loops (``time_calls``, ``wall_calls``) call between the
    candidate's calls, by identity (and, for Python functions, their code object), taken when
    this module was imported, before any candidate code ran. ``check`` after each call costs a
    few microseconds (the reference's calibration runs it as often, so the wall check subtracts
    it), unlike the full fingerprint of every trusted function (about 1 ms of Python, which on
    the CPU left every timed call cache-cold while eager's loop had none: red team rt24, honest
    candidates at 0.2x to 0.7x of eager's very operator). A replacement that lives only between
    two calls, inside one timed request, is what it catches: a candidate that swapped
    ``OutputArena.store`` and ``SharedInputs.args`` for no-copy versions in its first wall call
    skipped work the reference's calibration still paid (red team rt24: an eager ReLU passed at
    2.2x to 3.4x). ``hits`` collects what was found replaced."""

    def __init__(self):
        self.hits = []
        self.aliased = 0  # calls whose output storage overlapped an input's (wall_calls, time_calls)

    @staticmethod
    def _resolve(path: str):
        root, _, rest = path.partition(".")
        obj = {"torch": torch, "time": time, "opwatch": opwatch, "heap": heap, "loading": loading,
               "spotcheck": spotcheck, "timing": timing, "wallcheck": wallcheck, "contract": contract}[root]
        for part in rest.split(".") if rest else []:
            obj = getattr(obj, part)
        return obj

    @classmethod
    def snapshot(cls) -> tuple:
        items = []
        for path, attr in _GUARDED_NAMES:
            try:
                owner = cls._resolve(path)
                value = _lookup(owner, attr)
            except (AttributeError, KeyError):
                continue
            func = getattr(value, "__func__", value)
            items.append((path, attr, owner, value, getattr(func, "__code__", None)))
        return tuple(items) + cls._module_references()

    @staticmethod
    def _module_references() -> tuple:
        """Every module the harness reaches another module through, by identity: each global of a
        ``kgym_worker`` module whose value is a module (``wallcheck.loading``, ``timing.torch``,
        ``candidate.harness_guard``), and each ``kgym_worker`` entry of ``sys.modules`` (what a
        function-level ``from .x import y`` resolves). The guarded functions are looked up through
        these: a candidate that rebound ``timing.contract`` to a proxy ran its ReLU inside
        ``contract.input_spans``, on the harness's clock and before the timer's window, and no
        function of the list above changed (red team, session 24: 1.58x to 1.83x at eager's work,
        under profile off)."""
        items = []
        for name, mod in integrity.kgym_worker_modules():
            items.append(("sys.modules", name, sys.modules, mod, None))
            for attr, value in sorted(vars(mod).items(), key=lambda kv: kv[0]):
                if isinstance(value, types.ModuleType) and not attr.startswith("__"):
                    items.append((name, attr, mod, value, None))
        return tuple(items)

    def check(self, *instances) -> bool:
        """True when every guarded function is the one imported (and ``instances`` shadow none
        of their methods); else the replaced ones are added to ``hits``."""
        ok = True
        for path, attr, owner, value, code in _GUARD_SNAPSHOT:
            try:
                now = owner.get(attr) if isinstance(owner, dict) else _lookup(owner, attr)
            except AttributeError:
                now = None
            if now is not value or (code is not None and getattr(getattr(now, "__func__", now), "__code__", None) is not code):
                ok = False
                owner_name = f"kgym_worker.{path}" if path.partition(".")[0] in _HARNESS_MODULES else path
                label = (f"sys.modules[{attr!r}] replaced during a timed request" if path == "sys.modules" else
                         f"{owner_name}.{attr} replaced during a timed request")
                if label not in self.hits:
                    self.hits.append(label)
        for obj in instances:
            if obj is not None and any(k in getattr(obj, "__dict__", {}) for k in _SHADOWABLE):
                ok = False
                label = f"an instance attribute shadows a method of {type(obj).__name__} during a timed request"
                if label not in self.hits:
                    self.hits.append(label)
        return ok


_GUARD_SNAPSHOT = HarnessGuard.snapshot()  # at import: in the zygote, before any candidate code
_sealed = False


def seal() -> None:
    """Takes the snapshot again, once, with every ``kgym_worker`` module imported by then (the
    module references of modules imported after this one: candidate.py imports it first). Called
    by the zygote after its warm imports, before any fork, and by the candidate's executor before
    it runs the candidate's code (a process not forked from the zygote); later calls do nothing."""
    global _GUARD_SNAPSHOT, _sealed
    if not _sealed:
        _GUARD_SNAPSHOT = HarnessGuard.snapshot()
        _sealed = True
