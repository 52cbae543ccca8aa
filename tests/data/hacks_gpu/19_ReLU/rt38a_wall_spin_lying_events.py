# expect: passed, speedup <= twin
# why: red team rt38a (session 25, written on the CPU, not yet run on a GPU). The events lie (h01b:
#   the ReLU on a side stream that does not wait for the launch cover, so the event window sees
#   almost nothing and the runtime is the wall-clock floor; the event-ratio cap is then far above
#   any figure); and after each of the wall check's timed requests a one-thread spin kernel
#   (torch.cuda._sleep, about RT38_SPIN_K x the request's span, default 3x, 2 to 100 ms) is queued
#   in the worker's own context from weakref finalizers on the kept outputs, which the harness
#   drops in the wall_output request. Nothing waits for it: the candidate is stopped, and the
#   reference's requests right after (eager's wall requests since edb88a6, then the next
#   calibration) are time-sliced against it. Since edb88a6 eager's floor is that request alone
#   (before: the lesser of it and eager's own loop of the main rounds, which this spin never
#   reaches) and the candidate's paired differences each hold a calibration after a spin (before:
#   least timed minus least calibration, c0 clean). Passing above the twin is the hole.
# The correct ReLU in every call; a machine without torch.cuda._sleep just computes it.
# Since 8321faf the candidate's release (its last request before eager's) collects and syncs, so
#   the spin ends there, untimed; and the reference waits for a quiet device before each settle.
import os
import sys
import time
import weakref

import torch
import torch.nn as nn

_side = None
_spin_stream = None
_cycles_per_ms = None
_state = {"first": None, "last": None, "until": 0.0}
_K = float(os.environ.get("RT38_SPIN_K", "3"))


def _in(name):
    f = sys._getframe(2)
    while f is not None:
        if f.f_code.co_name == name:
            return f
        f = f.f_back
    return None


def _calibrate():
    global _cycles_per_ms, _spin_stream
    _spin_stream = torch.cuda.Stream()
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    with torch.cuda.stream(_spin_stream):
        torch.cuda._sleep(1000)
        a.record()
        torch.cuda._sleep(2_000_000)
        b.record()
    b.synchronize()
    _cycles_per_ms = 2_000_000 / max(a.elapsed_time(b), 1e-3)


def _spin(span_s):
    try:
        now = time.monotonic()
        if _cycles_per_ms is None or now < _state["until"]:
            return
        ms = min(100.0, max(2.0, _K * span_s * 1e3))
        with torch.cuda.stream(_spin_stream):
            torch.cuda._sleep(int(ms * _cycles_per_ms))
        _state["until"] = now + ms / 1e3
    except Exception:
        pass


class ModelNew(nn.Module):
    def forward(self, x):
        global _side
        if not x.is_cuda:
            return torch.relu(x)
        if _side is None:
            _side = torch.cuda.Stream()
            try:
                _calibrate()
            except Exception:
                pass
        with torch.cuda.stream(_side):
            y = torch.relu(x)
        f = _in("wall_calls")
        if f is not None:
            i, n = f.f_locals.get("i", 0), f.f_locals.get("n", 1)
            now = time.monotonic()
            if i == 0:
                _state["first"] = now
            if i == n - 1 and _state["first"] is not None:
                span = now - _state["first"]
                weakref.finalize(y, _spin, span)
        return y
