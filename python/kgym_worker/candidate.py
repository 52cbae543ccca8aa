"""The candidate executor (untrusted side): one process per candidate, forked from the zygote.

It builds and runs the candidate on the inputs of each case (regenerated from the case's seed,
which it is given only when the case starts, and checked against the reference's fingerprint;
else the reference's bytes) and returns outputs and contract observations; it never sees
reference outputs or the verdict. Requests (``op``): load, run_case, time (``audit_dispatcher``: every
aten operator's kernels checked too), wall (``calibrate``: the request without the calls), wall_output,
release, warm_profiler (its reply carries ``tampered``), trace, exit.
"""
import ast
import contextlib
import os
import sys
import threading
import time

import torch

from . import (comparison, contract, devicecopy, failures, formats, harness_guard, heap, integrity, loading,
               opwatch, parameters, protocol, scaling, spotcheck, tensors, timing, wallcheck)
from .comparison import flat_slices as _flat_slices
from .comparison import scaled_atol as _scaled_atol

# Captured before any candidate code is imported.
_type = type
_Tensor = torch.Tensor
_equal = torch.equal
_perf = time.perf_counter
# The depth of the worker thread's torch function-mode and dispatch-mode stacks, read through
# references taken before any candidate code runs.
_function_modes = torch._C._len_torch_function_stack
_dispatch_modes = torch._C._len_torch_dispatch_stack
_getprofile, _gettrace = sys.getprofile, sys.gettrace
_thread_getprofile = getattr(threading, "getprofile", lambda: None)
_thread_gettrace = getattr(threading, "gettrace", lambda: None)
_monitoring = getattr(sys, "monitoring", None)


def _hooks() -> list:
    """Candidate code hooked into the worker's own execution: profile and trace functions (the
    process-wide ones and those for new threads) and sys.monitoring tools. A sys.setprofile hook
    saw the harness copy the outputs it would recheck and computed exactly those (red team rt2,
    54.8x)."""
    found = []
    if _getprofile() is not None:
        found.append("a profile function (sys.setprofile)")
    if _gettrace() is not None:
        found.append("a trace function (sys.settrace)")
    if _thread_getprofile() is not None or _thread_gettrace() is not None:
        found.append("a profile or trace function for new threads (threading.setprofile / settrace)")
    if _monitoring is not None:
        for tool in range(6):
            name = _monitoring.get_tool(tool)
            if name is not None:
                found.append(f"a sys.monitoring tool ({name!r})")
    return found
_sleep = time.sleep


def _harness_fingerprints():
    """D13: the harness's own functions and the torch/time functions it relies on."""
    import sys
    fp = integrity.Fingerprints().add_torch().add_dispatcher()
    from . import fastcompare
    mods = [loading, timing, contract, spotcheck, heap, wallcheck, harness_guard, failures, comparison, devicecopy,
            integrity, protocol, tensors, fastcompare, formats,
            *formats.LOADERS.values(), sys.modules[__name__]]
    # The trusted module is not imported here, but the zygote forked this process with it loaded:
    # its functions are fingerprinted too when present.
    if "kgym_worker.reference" in sys.modules:
        mods.append(sys.modules["kgym_worker.reference"])
    for mod in mods:
        fp.add_module(mod)
    return fp.add_module_table()


STABILITY_DELAY_S = 0.02  # output re-read after this delay must be unchanged (D8)


_bits = contract.bits_view  # (captured at import, as _equal)


def _rerun_mismatch(outs1, frozen, table: dict) -> tuple:
    """How far a case's first run (``outs1``, its output tensors, or None) lies from its second
    (``frozen``), the two runs made on different poison patterns of the free device memory (D4):
    ``(ratio, nonfinite)``, the largest |a - b| / (atol + rtol |b|) over the finite elements (atol
    scaled by the output's magnitude, from the dtype's entry of the tolerance ``table``; inf for
    another count, shape, dtype or integer value) and the count of NaN/inf elements where the runs
    differ. Compared in float64 slices, so memory does not grow with the output; outputs with the
    same bits take one pass."""
    ratio, nonfin = 0.0, 0
    if outs1 is None or len(outs1) != len(frozen):
        return float("inf"), 0
    for a, b in zip(outs1, frozen):
        if a.shape != b.shape or a.dtype != b.dtype:
            return float("inf"), nonfin
        if not a.is_floating_point():
            if not _equal(a, b):
                ratio = float("inf")
            continue
        if _equal(_bits(a), _bits(b)):
            continue
        atol, rtol = table.get(tensors.dtype_name(b.dtype), table.get("float32", [1e-4, 1e-4]))
        atol = _scaled_atol(float(atol), b, fused=False)
        af, bf = a.reshape(-1), b.reshape(-1)
        for lo, hi in _flat_slices(bf.numel()):
            ad, bd = af[lo:hi].double(), bf[lo:hi].double()
            fin = torch.isfinite(ad) & torch.isfinite(bd)
            nonfin += int((torch.isnan(ad) != torch.isnan(bd)).sum()) + int((torch.isinf(ad) & (ad != bd)).sum())
            if fin.any():
                r = ((ad - bd).abs() / (atol + rtol * bd.abs()))[fin]
                ratio = max(ratio, float(r.max()) if bool((r == r).all()) else float("inf"))
            del ad, bd, fin
    return ratio, nonfin


class CandidateExecutor:
    def __init__(self, device: str, workdir: str, log_path: str):
        self.device = device
        self.workdir = workdir
        self.log_path = log_path
        self.model = None
        self.inputs = None
        self.task = None
        self.task_source = None
        self.scale = 1.0
        self.other_tasks = {}  # size changes (JSON) -> task module with those sizes
        self.calls = 0
        self.fingerprints = _harness_fingerprints()
        self.threads_at_start = {t.ident for t in threading.enumerate()} | set(sys._current_frames())
        self.flags = integrity.precision_flags()
        # Outputs sent device to device (devicecopy): the exported tensors stay alive here until
        # the next request starts, by when the reference has copied them. None: the host path.
        self.exports = [] if devicecopy.enabled(device) else None
        if device.startswith("cuda"):
            torch.cuda.set_device(torch.device(device))

    def _tampered(self, full: bool = False) -> list:
        """Harness functions replaced, precision flags changed since start (flags restored), and
        torch modes left on the worker thread's stacks: a TorchFunctionMode or
        TorchDispatchMode that the candidate's import or call entered and never exited sees
        every later torch call of the harness too (it filled a lazy output the first time the
        harness touched it: red team rt2, 27.5x; torch.set_default_device is such a mode too)."""
        bad = self.fingerprints.changed(full=full)
        bad += [h + " installed: it runs inside the harness; remove it" for h in _hooks()]
        modes = (_function_modes(), _dispatch_modes())
        if modes != (0, 0):
            bad.append(f"{modes[0]} torch function mode(s) and {modes[1]} dispatch mode(s) left active after the "
                       "candidate's code returned; exit every mode (and torch.set_default_device) before returning")
        now = integrity.precision_flags()
        flags = [f"precision flag {k}={now.get(k)} (was {v})" for k, v in self.flags.items() if now.get(k) != v]
        if flags:
            integrity.restore_precision_flags(self.flags)
        return bad + flags

    def _log_tail(self) -> str:
        try:
            with open(self.log_path, errors="replace") as f:
                return f.read()[-8000:]
        except OSError:
            return ""

    def load(self, req, blobs):
        harness_guard.seal()  # (before the candidate's code runs; done already in a zygote's worker)
        rec = {"ok": False, "parsed": False, "model_new_defined": False}
        source = req["candidate_source"]
        try:
            fmt = formats.loader(req.get("format", formats.DEFAULT))
        except ValueError as exc:
            rec["failure"] = {"stage": "parse", "type": "ValueError", "message": str(exc), "traceback": ""}
            return rec
        t0 = _perf()
        go_on = fmt.parse(source, rec)
        if rec["parsed"]:
            rec["parse_ms"] = (_perf() - t0) * 1e3
        if not go_on:
            return rec
        t0 = _perf()
        try:
            task, _ = loading.load_task(req["task_source"], "kgym_task", float(req.get("scale", 1.0)), self.workdir)
            init_inputs = task.get_init_inputs()
            self.task = task
            self.task_source, self.scale = req["task_source"], float(req.get("scale", 1.0))
            self.fingerprints.add_namespace(task, "task")
        except Exception as exc:  # noqa: BLE001 - the task itself failed here
            rec["failure"] = failures.failure("task", exc)
            return rec
        try:
            # The candidate's own copies of the task's size constants (a ModelNew that reads
            # `batch_size` from its module, as KernelBench L3/33's reference does) take the
            # scaled values too (scaling.plan of the task; only names the task scales).
            overrides = {}
            if self.scale != 1.0:
                overrides = scaling.plan(req["task_source"], self.scale)[0]
                mine = scaling.bound_names(ast.parse(source))
                overrides = {k: v for k, v in overrides.items() if k in mine}
            built = fmt.build(source, self.workdir, overrides)
        except BaseException as exc:  # noqa: BLE001 - SystemExit from a build counts too
            rec["failure"] = failures.failure("import", exc, self._log_tail())
            return rec
        rec["import_ms"] = (_perf() - t0) * 1e3
        t0 = _perf()
        try:
            loading.seed_all(int(req["init_seed"]))
            self.model = fmt.construct(built, init_inputs, self.device)
            timing.synchronize(self.device)
        except BaseException as exc:  # noqa: BLE001
            rec["failure"] = failures.failure("init", exc, self._log_tail())
            return rec
        rec["init_ms"] = (_perf() - t0) * 1e3
        rec["parameters"] = parameters.summary(self.model)  # for the message only (parameters.py)
        rec["tampered"] = self._tampered(full=True)
        # H02 from import time: a Python thread the import or ModelNew() left running can do a
        # call's work after the call returned, and the per-call census sees it before and after.
        # Garbage is collected first (and what is left frozen, see protocol.serve): a finalizer on
        # a cycle left by the import would otherwise start its thread after this check, in the
        # collection after the reply (red team, 2026-12-01); _call refuses such threads too.
        protocol.settle(freeze=True)
        started = self._stray_threads()
        if started:
            rec["tampered"].append("a Python thread started while importing or constructing the candidate is "
                                   "still running: " + ", ".join(started))
        rec["ok"] = True
        return rec

    def _stray_threads(self) -> list:
        """Names of live Python threads that were not alive when this worker started (sorted): those
        ``threading`` knows and those it does not (``_thread.start_new_thread``: no Thread object,
        so ``threading.enumerate`` leaves it out, but it runs Python and has a frame: one started at
        import could queue GPU work right after the worker's last request,
        tests/data/hacks_gpu/19_ReLU/rt38d_raw_thread_spin_after_release.py)."""
        live = {t.ident: t.name for t in threading.enumerate() if t.is_alive()}
        for ident in sys._current_frames():
            live.setdefault(ident, f"a raw thread {ident} (not a threading.Thread)")
        return sorted(name for ident, name in live.items() if ident not in self.threads_at_start)

    def _call(self, inputs, first: bool):
        """One observed call: census before/after, device sync, identity check after.
        Returns (output, thread-leak description or '')."""
        before = integrity.thread_census()
        # A Python thread started between calls (a finalizer in a garbage collection, a timer)
        # can do a call's work while no census looks.
        stray = self._stray_threads()
        with torch.no_grad():
            timing.synchronize(self.device)
            out = self.model(*inputs)
            timing.synchronize(self.device)
        after = integrity.thread_census()
        leak = integrity.census_leak(before, after)
        if stray and not leak:
            leak = f"Python thread(s) started outside any call are running: {stray}"
        if not leak and not first and integrity.native_growth(before, after):
            leak = f"native thread count grew from {before[1]} to {after[1]} during the call"
        self.calls += 1
        return out, leak

    def _sized_task(self, sizes: dict):
        """The task module, or (other-shape case) a copy with the given size constants."""
        if not sizes:
            return self.task
        key = repr(sorted(sizes.items()))
        if key not in self.other_tasks:
            module, _ = loading.load_task(self.task_source, "kgym_task_other", self.scale, self.workdir)
            for name, (_, new) in sizes.items():
                setattr(module, name, int(new))
            self.other_tasks[key] = module
        return self.other_tasks[key]

    def _regenerate(self, spec):
        """The case's inputs regenerated from its seed as the reference made them (on the device),
        or None when they do not match the reference's fingerprint (or cannot be made here)."""
        try:
            inputs = loading.make_inputs(self._sized_task(spec.get("sizes") or {}), int(spec["seed"]),
                                         spec["transform"], self.device, on_device=True)
            if tensors.fingerprint(inputs) == spec["fingerprint"]:
                return inputs
        except Exception:  # noqa: BLE001 - e.g. get_inputs fails in this process: take the bytes
            pass
        return None

    def run_case(self, req, blobs):
        """Runs the candidate twice on copies of the case's inputs, the caching allocator's free
        blocks poisoned with a different pattern before each run (D4), threads counted around
        each (D8); the second output is snapshotted as the call returns (the snapshot is returned) and
        re-read after a device-wide sync, after a 20 ms delay when ``stability_wait`` (D8). Contract:
        plain tensors, inputs unchanged (bitwise), no output storage overlapping an input.

        The inputs are regenerated from ``regenerate`` (seed, transform, sizes, the reference's
        fingerprint); when they do not match, the reply is ``need_inputs`` (no candidate code ran)
        and the supervisor sends the request again with the reference's ``inputs`` as bytes."""
        if "regenerate" in req:
            if not self._ops_watched:
                # The operators of the task's input generation, checked after every timed call
                # from now on (integrity.Fingerprints.watch_ops); recorded on one regeneration.
                self._ops_watched = True
                try:
                    spec = req["regenerate"]
                    self.fingerprints.watch_ops(integrity.input_ops(lambda: loading.make_inputs(
                        self._sized_task(spec.get("sizes") or {}), int(spec["seed"]), spec["transform"],
                        self.device, on_device=True)))
                except Exception:  # noqa: BLE001 - the fixed set is still watched
                    pass
            inputs = self._regenerate(req["regenerate"])
            if inputs is None:
                return {"ok": True, "need_inputs": True}
        else:
            inputs = tensors.decode(req["inputs"], blobs, self.device)
        in_tensors = [t for t in tensors.tensors_of(inputs)]
        snapshots = [(t.shape, t.stride(), t.clone()) for t in in_tensors]
        first_copy = loading.clone_value(inputs)
        first_tensors = tensors.tensors_of(first_copy)
        self.inputs = inputs
        table = req.get("tolerances") or {}
        rec = {"ok": True, "reruns": 2}
        try:
            rec["poisoned"] = integrity.poison_free_memory(self.device, 0xFF)
            out1, leak1 = self._call(first_copy, self.calls == 0)
            integrity.poison_free_memory(self.device, 0x7F)
            t0 = _perf()
            out, leak2 = self._call(inputs, False)
            rec["call_ms"] = (_perf() - t0) * 1e3
        except BaseException as exc:  # noqa: BLE001
            rec["failure"] = failures.failure("case", exc)
            return rec
        rec["tampered"] = self._tampered()  # (the dispatcher: input generation's and the checks' operators)
        if leak1 or leak2:
            rec["threads_leaked"] = True
            rec["thread_detail"] = leak1 or leak2
        # Exact contract: plain tensors only; never call methods of anything else.
        if _type(out) is _Tensor:
            outs = [out]
        elif _type(out) in (tuple, list) and all(_type(o) is _Tensor for o in out):
            outs = list(out)
        else:
            bad = out
            if _type(out) in (tuple, list):
                bad = next(o for o in out if _type(o) is not _Tensor)
            rec.update(output_plain_tensor=False,
                       output_type=f"{_type(bad).__module__}.{_type(bad).__qualname__}")
            return rec
        # The harness's own checks below: on the first case, the aten operators they dispatch
        # are recorded and checked after every later case and timed call (a kernel registered
        # for aten::equal would otherwise fake "inputs unchanged"; integrity.add_dispatcher).
        recorder = integrity.OpRecorder() if not self._harness_ops_watched else contextlib.nullcontext()
        with recorder:
            # Stability: the output must not change after the call returned. The snapshot is what the
            # reference compares; the supervisor asks for the wait in one secret case (engine.cpp).
            frozen = [o.detach().clone() for o in outs]
            if req.get("stability_wait", True):
                _sleep(STABILITY_DELAY_S)
            timing.synchronize(self.device)
            rec["output_stable"] = all(_equal(_bits(a), _bits(b)) for a, b in zip(frozen, outs))
            unchanged = True
            for ts in (in_tensors, first_tensors):
                for t, (shape, stride, snap) in zip(ts, snapshots):
                    if _type(t) is not _Tensor or t.shape != shape or t.stride() != stride or \
                            not _equal(_bits(t), _bits(snap)):
                        unchanged = False
            rec["inputs_unchanged"] = unchanged
            # (the timed loops' check; the inputs' storage and layout were compared just above)
            rec["output_aliases_input"] = contract.overlaps_inputs(outs, contract.input_spans(in_tensors))
            # Run 1 vs run 2 (different poison): a read of uninitialised memory shows up here.
            outs1 = loading.output_tensors(out1)
            ratio, nonfin = _rerun_mismatch(outs1, frozen, table)
            rec["rerun_tolerance_ratio"] = min(ratio, 1e300)  # JSON has no Infinity
            rec["rerun_nonfinite_mismatches"] = nonfin
        if not self._harness_ops_watched:
            self._harness_ops_watched = True
            self.fingerprints.watch_ops(recorder.ops)
        del out1, outs1, first_copy
        if self._output_spec is None:  # the first case's (nominal sizes, as the reference's stand-in)
            self._output_spec = [(list(o.shape), o.dtype) for o in frozen]
        out_blobs = []
        rec["output"] = tensors.encode(frozen[0] if len(frozen) == 1 and _type(out) is _Tensor else frozen, out_blobs,
                                       self.exports)
        return rec, out_blobs

    def _make_args(self, seed):
        return loading.make_inputs(self.task, int(seed), "nominal", self.device, on_device=True)

    def time(self, req, blobs):
        """Timed calls on fresh inputs per call (seeds chosen by the supervisor); the outputs of
        the calls in ``keep`` (secret to the candidate code) are returned for a recheck (D3), and
        with ``spot`` ({seed, k}) the samples of every timed output (``spotcheck.SpotSampler``)."""
        opts = req["options"]
        spot_req = req.get("spot")
        spot = spotcheck.SpotSampler(spot_req["seed"], spot_req["k"], self.device) if spot_req else None
        try:
            rec, kept = timing.time_calls(self.model, self._make_args, [int(x) for x in req["seeds"]],
                                          self.device, opts, keep=req.get("keep", []), guard=self._tampered,
                                          spot=spot)
        except BaseException as exc:  # noqa: BLE001
            return {"ok": True, "timing": {"method": "", "times_ms": [], "failure": failures.failure("timing", exc)}}
        rec["precision_flags"] = integrity.precision_flags()
        # Every aten operator's kernels in the last timing request (the supervisor asks; the
        # watched ones were checked after every call): about 0.1 s, once per verdict.
        if req.get("audit_dispatcher"):
            rec["tampered"] = sorted(set(rec.get("tampered", [])) | set(self._tampered(full=True)))
        out_blobs, kept_meta = [], []
        for index in sorted(kept):
            value = kept[index]
            if isinstance(value, list) and all(_type(o) is _Tensor for o in value):
                meta = tensors.encode(value[0] if len(value) == 1 else value, out_blobs, self.exports)
            else:
                meta = {"kind": "invalid", "type": _type(value).__name__}
            kept_meta.append({"index": index, "output": meta})
        reply = {"ok": True, "timing": rec, "kept": kept_meta}
        if spot is not None:
            reply["spot"] = spot.encode()
        return reply, out_blobs

    def wall(self, req, blobs):
        """``n`` iterations, each generating a fresh input set (seed + i) and, when ``call``,
        one call on it, synchronised after each call or (``sync_each`` false, on the GPU) only
        after the last: the supervisor times the request with and without the calls and takes
        the difference, so the calls run on fresh inputs as the timed ones do (a reused input is
        cache-warm: red team, 2026-11-30)."""
        if req.get("calibrate"):
            return self._calibrate(req)
        commit = bool(req.get("commit", False)) and bool(req.get("call", True))
        outs = [] if commit else None
        fps = wallcheck.Commitments() if commit else None  # made as each output is kept
        self._wall_outputs = None
        if req.get("map"):  # CPU, untimed: the shared input file (wallcheck.SharedInputs)
            self._shared.open(str(req["map"]["path"]), int(req["map"]["bytes"]))
        make_args, seed = self._make_args, int(req["seed"])
        # The request's own work is reported only where it is all kgym's code: inputs read from
        # the shared file (generated here, they come from the task module's get_inputs, which a
        # candidate under profile off can replace: red team, a proxy computing the matmul there).
        harness = None
        if req.get("layout") is not None and self._shared.buf is not None:
            layout, shared = req["layout"], self._shared  # the inputs come from the shared file
            # (through the class, whose entry the harness guard checks: an instance attribute
            # ``args`` on the shared object would shadow it unseen)
            make_args = lambda s: loading.unseed() or wallcheck.SharedInputs.args(shared, layout[s - seed])  # noqa: E731
            harness = {}
        guard = harness_guard.HarnessGuard()
        host_ms = wallcheck.wall_calls(self.model, make_args, seed, int(req["n"]),
                                       bool(req.get("call", True)), self.device,
                                       sync_each=bool(req.get("sync_each", True)), keep=outs,
                                       arena=self._arena if commit else None,
                                       commit=fps, guard=guard, harness=harness)
        # (CPU: the request's own work as this process measured it; the supervisor bounds it by
        # the reference's calibrations before taking it out: docs/timing.md "Wall check, CPU")
        rec = {"ok": True, "host_ms": host_ms, "harness_ms": harness.get("ms") if harness is not None else None}
        # What the per-call checks found (replaced loop functions, outputs in an input's storage),
        # and, in the untimed request, the full fingerprint of the trusted functions: a
        # replacement left in place from a timed request is found in the next one (red team rt24).
        tampered = list(guard.hits)
        if guard.aliased:
            tampered.append(f"{guard.aliased} wall-check call(s) returned an output whose storage overlaps an "
                            "input (an in-place result) or gave an input other storage or layout; every call "
                            "must return new storage and leave its inputs as they were")
        if not req.get("call", True):
            tampered += self._tampered()
        if tampered:
            rec["tampered"] = tampered
        if not req.get("call", True):
            # The untimed request before a timed one: the blocks of the outputs the timed request
            # keeps alive reserved in the caching allocator, no collection left pending for it.
            self._reserve(int(req.get("reserve_n", 0)), int(req.get("reserve_bytes", 0)))
            protocol.settle()
        if commit:
            # The commitment to every call's output, inside the timed request: the supervisor then
            # asks for the outputs of secret calls (wall_output) and the reference checks them
            # against these fingerprints and against the task (docs/timing.md, "Wall-clock floor").
            rec["fingerprints"] = fps.done()
            self._wall_outputs = outs
        return rec

    def _calibrate(self, req):
        """GPU: the committed wall request without the calls, in this process (``n`` input sets
        of seeds ``seed`` + i, synchronised once, and ``n`` commitments of a stand-in output
        shaped like this candidate's last case output). The supervisor times it as the
        reference's calibration and takes the larger of the two floors it gives
        (runner::WallCheckSeries::candidate_calls_ms): this process only ever raises its own
        floor with it."""
        like = None
        if self._output_spec:
            like = [torch.empty(shape, dtype=dtype, device=self.device) for shape, dtype in self._output_spec]
            like = like[0] if len(like) == 1 else like
        commits = wallcheck.Commitments() if like is not None else None
        host_ms = wallcheck.wall_calls(None, self._make_args, int(req["seed"]), int(req["n"]), False, self.device,
                                       sync_each=False, commit=commits, stand_in=like,
                                       guard=harness_guard.HarnessGuard())
        if commits is not None:
            commits.done()
        return {"ok": True, "host_ms": host_ms}

    _output_spec = None  # [(shape, dtype)] of the last case's outputs (the calibration's stand-in)
    _ops_watched = False  # whether the input generation's operators were recorded
    _harness_ops_watched = False  # whether the harness checks' operators were recorded
    _arena = None
    _shared = wallcheck.SharedInputs()  # one executor per worker process

    def _reserve(self, n: int, nbytes: int) -> None:
        """GPU: ``n`` device blocks of ``nbytes`` allocated and freed (they stay in torch's cache).
        CPU: an output arena of ``n`` slots of ``nbytes`` (``wallcheck.OutputArena``, kept while it
        fits), into which the timed request copies its outputs."""
        if n <= 0 or nbytes <= 0 or n * nbytes > (4 << 30):
            return
        try:
            if not self.device.startswith("cuda"):
                if self._arena is None or not self._arena.fits(n, nbytes):
                    self._arena = None
                    self._arena = wallcheck.OutputArena(n, nbytes)
                return
            blocks = [torch.empty(nbytes, dtype=torch.uint8, device=self.device) for _ in range(n)]
            del blocks
        except RuntimeError:  # out of memory: the timed request allocates as it goes
            pass

    def wall_output(self, req, blobs):
        """The outputs of the given calls of the last committed wall request (then forgotten)."""
        outs, self._wall_outputs = getattr(self, "_wall_outputs", None) or [], None
        metas, out_blobs = [], []
        for k in req["indices"]:
            k = int(k)
            value = outs[k] if 0 <= k < len(outs) else None
            ts = loading.output_tensors(value) if value is not None else None
            if ts is None:
                metas.append({"kind": "invalid", "type": type(value).__name__})
            else:
                ts = [t.detach().contiguous() for t in ts]
                metas.append(tensors.encode(ts[0] if len(ts) == 1 and _type(value) is _Tensor else ts, out_blobs,
                                            self.exports))
        del outs
        rec = {"ok": True, "outputs": metas}
        tampered = self._tampered()  # untimed: the full check, after the timed request
        if tampered:
            rec["tampered"] = tampered
        return rec, out_blobs

    def release(self, req, blobs):
        """The outputs exported device to device (``self.exports``) were copied by the reference:
        dropped now (the serve loop clears them when a request starts) and, after the reply, the
        cached device memory goes back to the driver.

        The supervisor sends it last before every stretch in which the reference is timed with
        this process stopped (the baselines' rounds, the wall check's calibrations and eager's
        wall requests): so the process's device work ends here. What the dropped objects'
        finalizers and a collection of garbage queue runs now, and the device-wide sync waits for
        it. GPU work queued before the stop keeps running while the process is stopped, and a
        context of its own time-slices the device against the reference's: a spin kernel queued
        from weakref finalizers on its kept outputs (dropped in ``wall_output``, or with
        ``time_calls``' frame) would inflate eager's requests and events timed right after
        (tests/data/hacks_gpu/19_ReLU/rt38a-c)."""
        protocol.settle()
        timing.synchronize(self.device)
        return {"ok": True}

    def warm_profiler(self, req, blobs):
        """Starts the profiler's CUDA tracing (CUPTI) with one short session, so that the kernel
        trace pays only its own calls; the supervisor asks for it after the timing and the wall
        check (CUPTI stays attached and slows every later launch) and outside the device lock
        (the first session in a process costs seconds of CPU)."""
        # Every aten operator's kernels against the snapshot taken before the candidate's code ran
        # (integrity.Fingerprints.add_dispatcher): here, outside the device lock, on a GPU; before
        # the profiler starts, so that nothing it may register is taken for the candidate's.
        tampered = self._tampered(full=True)
        integrity.warm_profiler(self.device)
        return {"ok": True, "tampered": tampered}

    def trace(self, req, blobs):
        """The kernels of a few calls on the GPU; on the CPU, the ATen ops they dispatch (there
        are no kernels to trace there)."""
        if not self.device.startswith("cuda"):
            rec = {"traced": False, "skipped": "cpu: no kernel trace"}
            try:
                rec.update(integrity.cpu_op_trace(self.model, self._make_args, [int(x) for x in req["seeds"]]))
            except BaseException as exc:  # noqa: BLE001 - the profiler is ours; report, don't judge
                rec["skipped"] = f"cpu: no kernel trace; op trace failed: {type(exc).__name__}: {exc}"
            return {"ok": True, "launch": integrity.merge_watched(rec, opwatch.take(), opwatch.status())}
        try:
            rec = integrity.kernel_trace(self.model, self._make_args, [int(x) for x in req["seeds"]], self.device)
        except BaseException as exc:  # noqa: BLE001 - the profiler is ours; report, don't judge
            rec = {"traced": False, "skipped": f"trace failed: {type(exc).__name__}: {exc}"}
        # The ATen ops of every timed, wall-clock and traced call (the op watch), on the GPU too.
        return {"ok": True, "launch": integrity.merge_watched(rec, opwatch.take(), opwatch.status())}


def serve(sock, device: str, workdir: str, log_path: str) -> None:
    ex = CandidateExecutor(device, workdir, log_path)
    handlers = {"load": ex.load, "run_case": ex.run_case, "time": ex.time, "wall": ex.wall,
                "wall_output": ex.wall_output, "release": ex.release,
                "warm_profiler": ex.warm_profiler, "trace": ex.trace}

    def after_exports_read(handler):
        # The supervisor sends the next request only once the reference has answered about the
        # last reply's outputs: the exported ones may go back to the allocator now.
        def run(req, blobs):
            if ex.exports:
                ex.exports.clear()
            return handler(req, blobs)
        return run

    handlers = {op: after_exports_read(h) for op, h in handlers.items()}
    # Cached device memory goes back after the requests that end a stretch of the candidate's
    # work (the reference runs next), never inside the wall check's sequence.
    release_after = {"run_case", "time", "wall_output", "release", "trace"}
    protocol.serve(sock, handlers,
                   lambda exc: {"ok": False, "harness_error": f"{type(exc).__name__}: {exc}"},
                   after=lambda req: req.get("op") in release_after and integrity.release_device_memory(ex.device),
                   requests=protocol.CANDIDATE_REQUESTS)
