"""The candidate executor (untrusted side): one process per candidate, forked from the zygote.

It builds and runs the candidate on the inputs it is handed and returns outputs and contract
observations; it never sees reference outputs, case seeds or the verdict. Requests (``op``):
load, run_case, time, exit.
"""
import ast
import os
import time

import torch

from . import common, protocol, tensors

# Captured before any candidate code is imported.
_type = type
_Tensor = torch.Tensor
_equal = torch.equal
_perf = time.perf_counter


def _bits(t):
    """The tensor's bytes as a flat uint8 view (bitwise comparison: NaN == NaN, -0 != +0)."""
    flat = t.reshape(-1)
    return flat if flat.dtype == torch.bool else flat.view(torch.uint8)


class CandidateExecutor:
    def __init__(self, device: str, workdir: str, log_path: str):
        self.device = device
        self.workdir = workdir
        self.log_path = log_path
        self.model = None
        self.inputs = None
        if device.startswith("cuda"):
            torch.cuda.set_device(torch.device(device))

    def _log_tail(self) -> str:
        try:
            with open(self.log_path, errors="replace") as f:
                return f.read()[-8000:]
        except OSError:
            return ""

    def load(self, req, blobs):
        rec = {"ok": False, "parsed": False, "model_new_defined": False}
        source = req["candidate_source"]
        t0 = _perf()
        try:
            tree = ast.parse(source)
        except SyntaxError as exc:
            rec["failure"] = {"stage": "parse", "type": "SyntaxError",
                              "message": f"line {exc.lineno}, column {exc.offset}: {exc.msg}",
                              "traceback": ""}
            return rec
        rec["parsed"] = True
        rec["parse_ms"] = (_perf() - t0) * 1e3
        rec["model_new_defined"] = any(
            isinstance(n, ast.ClassDef) and n.name == "ModelNew" for n in tree.body)
        if not rec["model_new_defined"]:
            return rec
        t0 = _perf()
        try:
            task = common.load_module(req["task_source"], "kgym_task", self.workdir)
            common.scale_sizes(task, float(req.get("scale", 1.0)))
            init_inputs = task.get_init_inputs()
        except Exception as exc:  # noqa: BLE001 - the task itself failed here
            rec["failure"] = common.failure("task", exc)
            return rec
        try:
            module = common.load_module(source, "kgym_candidate", self.workdir)
            if not isinstance(getattr(module, "ModelNew", None), _type):
                raise TypeError("ModelNew is not a class after import")
        except BaseException as exc:  # noqa: BLE001 - SystemExit from a build counts too
            rec["failure"] = common.failure("import", exc, self._log_tail())
            return rec
        rec["import_ms"] = (_perf() - t0) * 1e3
        t0 = _perf()
        try:
            common.seed_all(int(req["init_seed"]))
            self.model = module.ModelNew(*init_inputs).to(self.device)
            common.synchronize(self.device)
        except BaseException as exc:  # noqa: BLE001
            rec["failure"] = common.failure("init", exc, self._log_tail())
            return rec
        rec["init_ms"] = (_perf() - t0) * 1e3
        rec["ok"] = True
        return rec

    def run_case(self, req, blobs):
        inputs = tensors.decode(req["inputs"], blobs, self.device)
        in_tensors = [t for t in tensors.tensors_of(inputs)]
        snapshots = [(t.shape, t.stride(), t.clone()) for t in in_tensors]
        self.inputs = inputs
        rec = {"ok": True}
        try:
            with torch.no_grad():
                common.synchronize(self.device)
                t0 = _perf()
                out = self.model(*inputs)
                common.synchronize(self.device)
                rec["call_ms"] = (_perf() - t0) * 1e3
        except BaseException as exc:  # noqa: BLE001
            rec["failure"] = common.failure("case", exc)
            return rec
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
        unchanged = True
        for t, (shape, stride, snap) in zip(in_tensors, snapshots):
            if _type(t) is not _Tensor or t.shape != shape or t.stride() != stride or \
                    not _equal(_bits(t), _bits(snap)):
                unchanged = False
        rec["inputs_unchanged"] = unchanged
        aliases = False
        for o in outs:
            if o.numel() == 0:
                continue
            os_, oe = o.untyped_storage().data_ptr(), o.untyped_storage().data_ptr() + o.untyped_storage().nbytes()
            for t in in_tensors:
                ts, te = t.untyped_storage().data_ptr(), t.untyped_storage().data_ptr() + t.untyped_storage().nbytes()
                if os_ < te and ts < oe and o.device == t.device:
                    aliases = True
        rec["output_aliases_input"] = aliases
        out_blobs = []
        rec["output"] = tensors.encode(outs[0] if len(outs) == 1 and _type(out) is _Tensor else outs, out_blobs)
        return rec, out_blobs

    def time(self, req, blobs):
        opts = req["options"]
        copies = [common.clone_value(self.inputs) for _ in range(int(opts.get("input_copies", 3)))]
        try:
            rec = common.time_calls(self.model, copies, self.device, opts)
        except BaseException as exc:  # noqa: BLE001
            return {"ok": True, "timing": {"method": "", "times_ms": [], "failure": common.failure("timing", exc)}}
        return {"ok": True, "timing": rec}


def serve(sock, device: str, workdir: str, log_path: str) -> None:
    ex = CandidateExecutor(device, workdir, log_path)
    handlers = {"load": ex.load, "run_case": ex.run_case, "time": ex.time}
    while True:
        try:
            req, blobs = protocol.recv(sock)
        except protocol.ChannelClosed:
            return
        op = req.get("op")
        if op == "exit":
            return
        if op not in handlers:
            protocol.send(sock, {"ok": False, "error": f"unknown op {op!r}"})
            continue
        try:
            reply = handlers[op](req, blobs)
        except Exception as exc:  # noqa: BLE001 - a harness error is reported, never silent
            reply = {"ok": False, "harness_error": f"{type(exc).__name__}: {exc}"}
        out_blobs = []
        if isinstance(reply, tuple):
            reply, out_blobs = reply
        protocol.send(sock, reply, out_blobs)
