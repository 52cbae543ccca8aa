"""The reference worker (trusted): loads tasks, makes secret cases, keeps the reference outputs,
compares candidate outputs with them and times the eager and torch.compile baselines.

Requests (``op``): info, load_task, make_case, compare, time, drop_task. Replies carry ``ok``;
a failure of the reference itself is ``{"ok": false, "error": ...}`` (the task is broken).
"""
import os
import platform
import traceback

import torch

from . import common, protocol, tensors


class ReferenceWorker:
    def __init__(self, device: str, workdir: str):
        self.device = device
        self.workdir = workdir
        self.tasks = {}  # key -> dict(module, model, cases, compiled)
        if device.startswith("cuda"):
            torch.cuda.set_device(torch.device(device))

    # -- requests ---------------------------------------------------------------------------
    def info(self, req, blobs):
        out = {"ok": True, "torch": torch.__version__, "python": platform.python_version(),
               "device": self.device, "cuda": torch.version.cuda}
        if self.device.startswith("cuda"):
            props = torch.cuda.get_device_properties(torch.device(self.device))
            out.update(device_name=props.name, sm_count=props.multi_processor_count,
                       l2_bytes=common.l2_bytes(self.device), total_memory=props.total_memory)
            try:
                import subprocess
                out["driver"] = subprocess.run(
                    ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                    capture_output=True, text=True, timeout=10).stdout.strip().splitlines()[0]
            except Exception:  # noqa: BLE001 - provenance is best effort
                pass
        else:
            out["device_name"] = platform.processor() or platform.machine()
        try:
            import triton
            out["triton"] = triton.__version__
        except Exception:  # noqa: BLE001
            pass
        return out

    def load_task(self, req, blobs):
        key = req["key"]
        if key in self.tasks:
            return {"ok": True, "scaled": self.tasks[key]["scaled"]}
        module = common.load_module(req["source"], "kgym_task", self.workdir)
        scaled = common.scale_sizes(module, float(req.get("scale", 1.0)))
        init_inputs = module.get_init_inputs()
        common.seed_all(int(req["init_seed"]))
        model = module.Model(*init_inputs).to(self.device)
        self.tasks[key] = {"module": module, "model": model, "cases": {}, "compiled": None,
                           "scaled": scaled}
        return {"ok": True, "scaled": scaled}

    def make_case(self, req, blobs):
        task = self.tasks[req["key"]]
        seed = int.from_bytes(os.urandom(8), "little") & ((1 << 63) - 1)
        common.seed_all(seed)
        inputs = task["module"].get_inputs()
        inputs = common.transform_value(inputs, req.get("transform", "nominal"))
        inputs = common.to_device(inputs, self.device)
        task["cases"][int(req["index"])] = {"inputs": inputs, "reference": None}
        out_blobs = []
        meta = tensors.encode(list(inputs), out_blobs)
        return {"ok": True, "seed": seed, "inputs": meta}, out_blobs

    def _reference_output(self, task, index):
        case = task["cases"][index]
        if case["reference"] is None:
            with torch.no_grad():
                case["reference"] = task["model"](*common.clone_value(case["inputs"]))
            common.synchronize(self.device)
        return case["reference"]

    def compare(self, req, blobs):
        task = self.tasks[req["key"]]
        index = int(req["index"])
        ref = self._reference_output(task, index)
        table = req["tolerances"]  # dtype name -> [atol, rtol], chosen by the judge
        rec = {"ok": True}
        ref_list = [ref] if isinstance(ref, torch.Tensor) else tensors.tensors_of(ref)
        metas = req["output"]
        metas = [metas] if metas["kind"] == "tensor" else metas.get("items", [])
        if len(metas) != len(ref_list) or any(m["kind"] != "tensor" for m in metas):
            rec.update(structure_matches=False,
                       detail=f"{len(metas)} outputs, expected {len(ref_list)} tensor(s)")
            return rec
        numel = 0
        max_abs = mean_sum = max_rel = ratio_max = 0.0
        mismatches = nonfinite = 0
        first = []
        ref_finite = True
        for k, (m, r) in enumerate(zip(metas, ref_list)):
            want_dtype = tensors.dtype_name(r.dtype)
            if m["dtype"] != want_dtype:
                rec.update(dtype_matches=False, detail=f"output {k}: dtype {m['dtype']}, expected {want_dtype}")
                return rec
            if [int(s) for s in m["shape"]] != list(r.shape):
                rec.update(shape_matches=False,
                           detail=f"output {k}: shape {list(m['shape'])}, expected {list(r.shape)}")
                return rec
            if torch.device(m["device"]).type != r.device.type:
                rec.update(device_matches=False,
                           detail=f"output {k}: device {m['device']}, expected {r.device}")
                return rec
            atol, rtol = (float(x) for x in table.get(want_dtype, table["float32"]))
            if k == 0:
                rec.update(atol=atol, rtol=rtol)
            o = tensors.decode(m, blobs, self.device)
            od, rd = o.double(), r.double()
            r_nan, o_nan = torch.isnan(rd), torch.isnan(od)
            r_fin, o_fin = torch.isfinite(rd), torch.isfinite(od)
            ref_finite = ref_finite and bool(r_fin.all())
            both_fin = r_fin & o_fin
            diff = torch.where(both_fin, (od - rd).abs(), torch.zeros_like(od))
            ratio = diff / (atol + rtol * rd.abs().where(r_fin, torch.zeros_like(rd)))
            nonfin_bad = (~o_fin) & r_fin
            special_bad = (r_nan & ~o_nan) | (torch.isinf(rd) & (od != rd))
            bad = (ratio > 1) | nonfin_bad | special_bad
            n = rd.numel()
            if n:
                max_abs = max(max_abs, float(diff.max()))
                mean_sum += float(diff.sum())
                max_rel = max(max_rel, float((diff / (rd.abs() + 1e-12)).where(both_fin, torch.zeros_like(rd)).max()))
                ratio_max = max(ratio_max, float(ratio.max()))
            nb = int(bad.sum())
            if nb and not first:
                flat = int(bad.reshape(-1).nonzero()[0])
                idx = []
                for dim in reversed(r.shape):
                    idx.append(flat % dim)
                    flat //= dim
                first = ([k] if len(ref_list) > 1 else []) + list(reversed(idx))
            mismatches += nb
            nonfinite += int(nonfin_bad.sum())
            numel += n
        rec.update(numel=numel, max_abs_error=max_abs, mean_abs_error=mean_sum / max(numel, 1),
                   max_rel_error=max_rel, tolerance_ratio=ratio_max, mismatches=mismatches,
                   nonfinite_mismatches=nonfinite, first_mismatch_index=first,
                   reference_finite=ref_finite)
        return rec

    def time(self, req, blobs):
        task = self.tasks[req["key"]]
        if not task["cases"]:
            return {"ok": False, "error": "no case to time on"}
        inputs = task["cases"][max(task["cases"])]["inputs"]
        model = task["model"]
        if req["kind"] == "compile":
            if task["compiled"] is None:
                task["compiled"] = torch.compile(model)
            model = task["compiled"]
        copies = [common.clone_value(inputs) for _ in range(int(req["options"].get("input_copies", 3)))]
        try:
            rec = common.time_calls(model, copies, self.device, req["options"])
        except Exception as exc:  # noqa: BLE001 - e.g. torch.compile unsupported here
            return {"ok": True, "timing": {"method": "", "times_ms": [], "failure": common.failure("timing", exc)}}
        return {"ok": True, "timing": rec}

    def drop_task(self, req, blobs):
        self.tasks.pop(req["key"], None)
        if self.device.startswith("cuda"):
            torch.cuda.empty_cache()
        return {"ok": True}


def serve(sock, device: str, workdir: str) -> None:
    worker = ReferenceWorker(device, workdir)
    while True:
        try:
            req, blobs = protocol.recv(sock)
        except protocol.ChannelClosed:
            return
        op = req.get("op")
        if op == "exit":
            return
        handler = getattr(worker, op, None) if op in (
            "info", "load_task", "make_case", "compare", "time", "drop_task") else None
        try:
            if handler is None:
                raise ValueError(f"unknown op {op!r}")
            reply = handler(req, blobs)
        except Exception as exc:  # noqa: BLE001 - the reference failed: report, keep serving
            reply = {"ok": False, "error": f"{type(exc).__name__}: {exc}",
                     "traceback": traceback.format_exc()[-8000:]}
        out_blobs = []
        if isinstance(reply, tuple):
            reply, out_blobs = reply
        protocol.send(sock, reply, out_blobs)
